package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"time"

	"github.com/forecast-arena/arena"
)

// addPrices appends price points, ignoring ones already stored (same
// market, outcome, source and time), and returns how many were new.
func (d *DB) addPrices(ctx context.Context, tx *sql.Tx, pts []arena.PricePoint) (int, error) {
	if len(pts) == 0 {
		return 0, nil
	}
	st, err := tx.PrepareContext(ctx, d.rebind(`INSERT INTO price_points (market_id, outcome, at, source, price, fetched_at, flagged)
		VALUES (?,?,?,?,?,?,?) ON CONFLICT (market_id, outcome, source, at) DO NOTHING`))
	if err != nil {
		return 0, fmt.Errorf("store: prepare price insert: %w", err)
	}
	defer st.Close()
	n := 0
	for _, p := range pts {
		if p.Time.IsZero() || p.Outcome == "" || p.Source == "" || math.IsNaN(p.Price) || p.Price < 0 || p.Price > 1 {
			return 0, arena.Errorf(arena.EINVALID, "store: invalid price point %+v for market %d", p, p.MarketID)
		}
		fetched := p.FetchedAt
		if fetched.IsZero() {
			fetched = p.Time
		}
		r, err := st.ExecContext(ctx, p.MarketID, p.Outcome, p.Time.UnixMicro(), string(p.Source), p.Price, fetched.UnixMicro(), p.Flagged)
		if err != nil {
			return 0, fmt.Errorf("store: insert price of market %d: %w", p.MarketID, err)
		}
		k, _ := r.RowsAffected()
		n += int(k)
	}
	return n, nil
}

// PriceHistory implements arena.MarketStore.
func (d *DB) PriceHistory(ctx context.Context, marketID int64, outcome string, from, to time.Time) ([]arena.PricePoint, error) {
	rows, err := d.db.QueryContext(ctx, d.rebind(`SELECT outcome, at, source, price, fetched_at, flagged FROM price_points
		WHERE market_id = ? AND outcome = ? AND at >= ? AND at <= ? ORDER BY at, source`),
		marketID, outcome, from.UnixMicro(), to.UnixMicro())
	if err != nil {
		return nil, fmt.Errorf("store: price history of market %d: %w", marketID, err)
	}
	defer rows.Close()
	var out []arena.PricePoint
	for rows.Next() {
		var p arena.PricePoint
		var at, fetched int64
		var src string
		if err := rows.Scan(&p.Outcome, &at, &src, &p.Price, &fetched, &p.Flagged); err != nil {
			return nil, fmt.Errorf("store: price history of market %d: %w", marketID, err)
		}
		p.MarketID, p.Time, p.FetchedAt, p.Source = marketID, time.UnixMicro(at).UTC(), time.UnixMicro(fetched).UTC(), arena.PriceSource(src)
		out = append(out, p)
	}
	return out, rows.Err()
}
