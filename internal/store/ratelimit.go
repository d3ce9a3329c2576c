package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.RateStore = (*DB)(nil)

// takeTokenSQL refills the bucket for the time since its last request (up
// to the burst), subtracts what the process spent on its own since it
// last settled (down to minus the burst at most: a debt later refills
// pay back), then, when asked, takes one token if a whole one is left. It is one
// INSERT … ON CONFLICT DO UPDATE, atomic on both engines, so replicas
// sharing a PostgreSQL database share every bucket; every SET expression
// reads the row as it was before the statement.
func (d *DB) takeTokenSQL() string {
	least, greatest := "min", "max"
	if d.dialect == postgres {
		least, greatest = "LEAST", "GREATEST"
	}
	// Concurrent requests can reach the database out of their clocks'
	// order: an earlier stamp refills nothing (never a negative refill)
	// and does not move the bucket's clock back.
	refill := least + "(CAST(? AS DOUBLE PRECISION), rate_buckets.tokens + " + greatest + "(0, CAST(? AS BIGINT) - rate_buckets.updated_at) * CAST(? AS DOUBLE PRECISION))"
	left := "(" + refill + " - CAST(? AS DOUBLE PRECISION))"
	q := `INSERT INTO rate_buckets (key, tokens, granted, updated_at) VALUES (?, CAST(? AS DOUBLE PRECISION), ?, ?)
		ON CONFLICT (key) DO UPDATE SET
			granted = CASE WHEN ? = 1 AND {L} >= 1 THEN 1 ELSE 0 END,
			tokens = CASE WHEN ? = 1 AND {L} >= 1 THEN {L} - 1 ELSE {G}(CAST(? AS DOUBLE PRECISION), {L}) END,
			updated_at = {G}(rate_buckets.updated_at, CAST(? AS BIGINT))
		RETURNING tokens, granted`
	return d.rebind(strings.NewReplacer("{L}", left, "{G}", greatest).Replace(q))
}

// SettleTokens implements arena.RateStore. A batch is one transaction
// (one commit, one fsync) with its buckets in key order, so that replicas
// settling the same buckets lock them in the same order.
func (d *DB) SettleTokens(ctx context.Context, ss []arena.RateSettlement) ([]arena.RateDecision, error) {
	order := make([]int, len(ss))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(ss[a].Key, ss[b].Key) })
	out := make([]arena.RateDecision, len(ss))
	err := d.tx(ctx, func(tx *sql.Tx) error {
		q := d.takeTokenSQL()
		for _, i := range order {
			s := ss[i]
			dec, err := settle(ctx, tx, q, s)
			if err != nil {
				return fmt.Errorf("store: settle rate bucket %s: %w", s.Key, err)
			}
			out[i] = dec
		}
		return nil
	})
	return out, err
}

func settle(ctx context.Context, tx *sql.Tx, q string, s arena.RateSettlement) (arena.RateDecision, error) {
	us, l := s.At.UnixMicro(), s.Limit
	// A new bucket starts full.
	first := takeFrom(l.Burst-float64(s.Spent), l.Burst, s.Take)
	granted0, take1 := 0, 0
	if first.Allowed {
		granted0 = 1
	}
	if s.Take {
		take1 = 1
	}
	left := []any{l.Burst, us, l.PerSecond / 1e6, float64(s.Spent)}
	args := []any{s.Key, first.Remaining, granted0, us, take1}
	args = append(args, left...) // granted
	args = append(args, take1)
	args = append(args, left...) // tokens: the test
	args = append(args, left...) // tokens: what is left after the take
	args = append(args, -l.Burst)
	args = append(args, left...) // tokens: the debt
	args = append(args, us)
	var dec arena.RateDecision
	var granted int
	if err := tx.QueryRowContext(ctx, q, args...).Scan(&dec.Remaining, &granted); err != nil {
		return dec, err
	}
	dec.Allowed = granted == 1
	return dec, nil
}

// takeFrom is the SQL's rule in Go, for a bucket's first request: one
// token if asked and a whole one is left, else what is left, down to
// minus the burst.
func takeFrom(left, burst float64, take bool) arena.RateDecision {
	if take && left >= 1 {
		return arena.RateDecision{Allowed: true, Remaining: left - 1}
	}
	return arena.RateDecision{Remaining: max(-burst, left)}
}

// PruneRateBuckets deletes buckets untouched since before: a bucket idle
// long enough to have refilled is the same as no bucket.
func (d *DB) PruneRateBuckets(ctx context.Context, before time.Time) (int64, error) {
	r, err := d.db.ExecContext(ctx, d.rebind(`DELETE FROM rate_buckets WHERE updated_at < ?`), before.UnixMicro())
	if err != nil {
		return 0, fmt.Errorf("store: prune rate buckets: %w", err)
	}
	return r.RowsAffected()
}
