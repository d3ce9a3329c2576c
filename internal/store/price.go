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
	const chunk = 1000 // 7 parameters a row
	n := 0
	for lo := 0; lo < len(pts); lo += chunk {
		hi := min(lo+chunk, len(pts))
		args := make([]any, 0, 7*(hi-lo))
		vals := make([]string, 0, hi-lo)
		for _, p := range pts[lo:hi] {
			if p.Time.IsZero() || p.Outcome == "" || p.Source == "" || math.IsNaN(p.Price) || p.Price < 0 || p.Price > 1 {
				return 0, arena.Errorf(arena.EINVALID, "store: invalid price point %+v for market %d", p, p.MarketID)
			}
			fetched := p.FetchedAt
			if fetched.IsZero() {
				fetched = p.Time
			}
			vals = append(vals, "(?,?,?,?,?,?,?)")
			args = append(args, p.MarketID, p.Outcome, p.Time.UnixMicro(), string(p.Source), p.Price, fetched.UnixMicro(), p.Flagged)
		}
		q := `INSERT INTO price_points (market_id, outcome, at, source, price, fetched_at, flagged)
			VALUES ` + strings.Join(vals, ",") + ` ON CONFLICT (market_id, outcome, source, at) DO NOTHING`
		// A full chunk's statement is always the same: prepared once, it
		// is not parsed again for every chunk of every sync.
		var r sql.Result
		var err error
		if hi-lo == chunk {
			var st *sql.Stmt
			if st, err = d.prepared(ctx, tx, q); err != nil {
				return 0, err
			}
			r, err = st.ExecContext(ctx, args...)
		} else {
			r, err = tx.ExecContext(ctx, d.rebind(q), args...)
		}
		if err != nil {
			return 0, fmt.Errorf("store: insert prices: %w", err)
		}
		k, _ := r.RowsAffected()
		n += int(k)
	}
	return n, nil
}

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
