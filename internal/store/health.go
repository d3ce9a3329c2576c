package store

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/forecast-arena/arena"
)

var _ arena.HealthStore = (*DB)(nil)

// Schema implements arena.HealthStore.
func (d *DB) Schema(ctx context.Context) (arena.SchemaHealth, error) {
	return schemaOf(ctx, d.db)
}

// schemaOf reads schema_migrations of db against the embedded migrations.
func schemaOf(ctx context.Context, db *sql.DB) (arena.SchemaHealth, error) {
	names, err := migrationNames()
	if err != nil {
		return arena.SchemaHealth{}, fmt.Errorf("store: list migrations: %w", err)
	}
	rows, err := db.QueryContext(ctx, `SELECT name FROM schema_migrations ORDER BY name`)
	if err != nil {
		return arena.SchemaHealth{}, fmt.Errorf("store: read schema_migrations: %w", err)
	}
	defer rows.Close()
	var h arena.SchemaHealth
	applied := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return h, fmt.Errorf("store: read schema_migrations: %w", err)
		}
		applied[n] = true
		h.Applied++
	}
	if err := rows.Err(); err != nil {
		return h, fmt.Errorf("store: read schema_migrations: %w", err)
	}
	known := map[string]bool{}
	for _, name := range names {
		base := strings.TrimPrefix(name, "migrations/")
		known[base] = true
		if !applied[base] {
			h.Pending = append(h.Pending, base)
		}
	}
	for n := range applied {
		if !known[n] {
			h.Unknown = append(h.Unknown, n)
		}
	}
	slices.Sort(h.Unknown)
	return h, nil
}

// JobHealth implements arena.HealthStore: per job, the last run finished
// without error, the last that failed, and whether a run is claimed and
// unfinished now.
func (d *DB) JobHealth(ctx context.Context) ([]arena.JobHealth, error) {
	out, err := queryAll(ctx, d.r(), `SELECT job,
		MAX(CASE WHEN finished_at IS NOT NULL AND error IS NULL THEN finished_at END),
		MAX(CASE WHEN error IS NOT NULL THEN finished_at END),
		SUM(CASE WHEN finished_at IS NULL THEN 1 ELSE 0 END)
		FROM job_runs GROUP BY job ORDER BY job`, nil, func(sc scanner) (arena.JobHealth, error) {
		var h arena.JobHealth
		var ok, failed sql.NullInt64
		var running int64
		err := sc.Scan(&h.Job, &ok, &failed, &running)
		h.LastSuccess, h.LastFailure, h.Running = fromMicros(ok), fromMicros(failed), running > 0
		return h, err
	})
	if err != nil {
		return nil, fmt.Errorf("store: job health: %w", err)
	}
	return out, nil
}

// Collector exports the connection pool's statistics (open, in use, idle,
// waits) for Prometheus, labelled with the engine's name.
func (d *DB) Collector() prometheus.Collector {
	return collectors.NewDBStatsCollector(d.db, d.Engine())
}
