package store

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.RateStore = (*DB)(nil)

// takeTokenSQL refills the bucket for the time since its last request (up
// to the burst), then takes one token if a whole one is there. It is one
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
	q := `INSERT INTO rate_buckets (key, tokens, granted, updated_at) VALUES (?, CAST(? AS DOUBLE PRECISION), 1, ?)
		ON CONFLICT (key) DO UPDATE SET
			granted = CASE WHEN {R} >= 1 THEN 1 ELSE 0 END,
			tokens = CASE WHEN {R} >= 1 THEN {R} - 1 ELSE {R} END,
			updated_at = {G}(rate_buckets.updated_at, CAST(? AS BIGINT))
		RETURNING tokens, granted`
	return d.rebind(strings.NewReplacer("{R}", refill, "{G}", greatest).Replace(q))
}

// TakeToken implements arena.RateStore.
func (d *DB) TakeToken(ctx context.Context, key string, l arena.RateLimit, now time.Time) (arena.RateDecision, error) {
	us := now.UnixMicro()
	perMicro := l.PerSecond / 1e6
	r := []any{l.Burst, us, perMicro}
	args := []any{key, l.Burst - 1, us}
	for i := 0; i < 4; i++ { // R appears four times in the SET clauses
		args = append(args, r...)
	}
	args = append(args, us)
	var dec arena.RateDecision
	var granted int
	if err := d.db.QueryRowContext(ctx, d.takeTokenSQL(), args...).Scan(&dec.Remaining, &granted); err != nil {
		return dec, fmt.Errorf("store: take rate token %s: %w", key, err)
	}
	dec.Allowed = granted == 1
	return dec, nil
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
