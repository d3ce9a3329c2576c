package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"
)

// ScoredVersion counts the scored (triggered, not invalidated) rounds and
// returns the latest trigger time: together they change whenever the set
// of scored forecasts does, so readers can cache what they derive from it.
func (d *DB) ScoredVersion(ctx context.Context) (int, time.Time, error) {
	var n int
	var last sql.NullInt64
	err := d.r().QueryRowContext(ctx, `SELECT COUNT(*), MAX(triggered_at) FROM rounds WHERE triggered_at IS NOT NULL AND NOT invalidated`).Scan(&n, &last)
	if err != nil {
		return 0, time.Time{}, fmt.Errorf("store: scored version: %w", err)
	}
	var t time.Time
	if last.Valid {
		t = time.UnixMicro(last.Int64).UTC()
	}
	return n, t, nil
}
