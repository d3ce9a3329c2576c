package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store"
)

// simSyncEvery is how often `arena serve` observes a recorded simulated
// world: often enough that every commit deadline has a price point within
// the benchmark tolerance (±300 s).
const simSyncEvery = time.Minute

// simJobs continues the simulated world that `arena sync --source sim`
// recorded in the database, if any: on the wall clock, its prices move,
// its markets close and resolve, so rounds on it are benchmarked and
// scored like rounds on Polymarket.
func simJobs(ctx context.Context, db *store.DB, logger *slog.Logger) ([]jobs.Job, error) {
	cfg, ok, err := sim.Recorded(ctx, db)
	if err != nil || !ok {
		return nil, err
	}
	world, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("recorded sim world: %w", err)
	}
	run := func(ctx context.Context, _ time.Time) error {
		now := time.Now().UTC().Truncate(time.Second)
		ms := world.LiveMarkets(now.Add(-time.Hour), now)
		res, err := db.SaveMarkets(ctx, ms)
		if err != nil {
			return fmt.Errorf("sim sync: %w", err)
		}
		logger.Debug("sim sync", "markets", len(ms), "updated", res.Updated, "prices", res.Prices)
		return nil
	}
	logger.Info("continuing the simulated world", "seed", cfg.Seed, "start", cfg.Start.Format(time.RFC3339))
	return []jobs.Job{{Name: "sim-sync", Schedule: jobs.Every(simSyncEvery), Run: run}}, nil
}
