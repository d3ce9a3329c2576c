package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// addPrices appends price points in multi-row statements, ignoring ones
// already stored (same market, outcome, source and time), and returns how
// many were new.
func (d *DB) addPrices(ctx context.Context, tx *sql.Tx, pts []arena.PricePoint) (int, error) {
	n := 0
	for lo := 0; lo < len(pts); {
		// The rows go in statements of a power of two rows each, the
		// largest that fits: eleven statements in all, each prepared once
		// and not parsed again for every batch of every sync.
		size := len(priceInserts) - 1
		for 1<<size > len(pts)-lo {
			size--
		}
		hi := lo + 1<<size
		args := make([]any, 0, 7*(hi-lo))
		for _, p := range pts[lo:hi] {
			if p.Time.IsZero() || p.Outcome == "" || p.Source == "" || math.IsNaN(p.Price) || p.Price < 0 || p.Price > 1 {
				return 0, arena.Errorf(arena.EINVALID, "store: invalid price point %+v for market %d", p, p.MarketID)
			}
			fetched := p.FetchedAt
			if fetched.IsZero() {
				fetched = p.Time
			}
			args = append(args, p.MarketID, p.Outcome, p.Time.UnixMicro(), string(p.Source), p.Price, fetched.UnixMicro(), p.Flagged)
		}
		st, err := d.prepared(ctx, tx, priceInserts[size])
		if err != nil {
			return 0, err
		}
		r, err := st.ExecContext(ctx, args...)
		if err != nil {
			return 0, fmt.Errorf("store: insert prices: %w", err)
		}
		k, _ := r.RowsAffected()
		n += int(k)
		lo = hi
	}
	return n, nil
}

// priceInserts[k] inserts 2^k price points; 1,024 rows of 7 parameters
// stay under SQLite's and PostgreSQL's bounds on a statement's parameters.
var priceInserts = func() (qs [11]string) {
	for k := range qs {
		qs[k] = `INSERT INTO price_points (market_id, outcome, at, source, price, fetched_at, flagged) VALUES ` +
			strings.Repeat("(?,?,?,?,?,?,?),", 1<<k-1) + `(?,?,?,?,?,?,?) ON CONFLICT (market_id, outcome, source, at) DO NOTHING`
	}
	return qs
}()

// PriceHistory implements arena.MarketStore.
func (d *DB) PriceHistory(ctx context.Context, marketID int64, outcome string, from, to time.Time) ([]arena.PricePoint, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT outcome, at, source, price, fetched_at, flagged FROM price_points
		WHERE market_id = ? AND outcome = ? AND at >= ? AND at <= ? ORDER BY at, source`),
		[]any{marketID, outcome, from.UnixMicro(), to.UnixMicro()}, func(sc scanner) (arena.PricePoint, error) {
			var p arena.PricePoint
			var at, fetched int64
			var src string
			err := sc.Scan(&p.Outcome, &at, &src, &p.Price, &fetched, &p.Flagged)
			p.MarketID, p.Time, p.FetchedAt, p.Source = marketID, time.UnixMicro(at).UTC(), time.UnixMicro(fetched).UTC(), arena.PriceSource(src)
			return p, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: price history of market %d: %w", marketID, err)
	}
	return out, nil
}
