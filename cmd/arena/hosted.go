package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/retrieve"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/strategy"
)

// searchRetriever builds the searchWeb provider of --search (exa or
// dir:PATH), behind the durable evidence cache in cacheDir/search; ""
// means no search.
func searchRetriever(spec, cacheDir string, cacheOnly bool, logger *slog.Logger) (arena.Retriever, error) {
	if spec == "" {
		return nil, nil
	}
	if spec == "question" {
		return nil, fmt.Errorf("--search %q: want exa or dir:PATH", spec)
	}
	r, provider, err := retrieve.New(spec, retrieve.Options{})
	if err != nil {
		return nil, err
	}
	return &retrieve.Cache{Next: r, Provider: provider, Store: llm.DirStore{Dir: filepath.Join(cacheDir, "search")}, CacheOnly: cacheOnly, Logger: logger}, nil
}

// dataDir is ARENA_DATA_DIR, else the SQLite database's directory.
func dataDir(o config.Options) (string, error) {
	if o.DataDir != "" {
		return o.DataDir, nil
	}
	if p, ok := strings.CutPrefix(o.DB, "sqlite:"); ok {
		return filepath.Dir(p), nil
	}
	return "", fmt.Errorf("hosted forecast agents need a data directory for their keys: set ARENA_DATA_DIR")
}

// hostedForecastJob forecasts every open round for each agent of
// ARENA_FORECAST_AGENTS within lead of the commit deadline, through the
// server's own API at base.
func hostedForecastJob(ctx context.Context, o config.Options, db *store.DB, environ []string, base string, lead time.Duration, logger *slog.Logger, m llm.Metrics) (jobs.Job, error) {
	dir, err := dataDir(o)
	if err != nil {
		return jobs.Job{}, err
	}
	reg, err := llm.LoadRegistry(o.ForecastAgents)
	if err != nil {
		return jobs.Job{}, err
	}
	h, skipped, err := strategy.NewHosted(ctx, strategy.HostedConfig{Registry: reg, Getenv: llm.EnvLookup(environ), Server: base,
		DataDir: dir, LeadTime: lead, Store: db, Logger: logger, Metrics: m})
	if err != nil {
		return jobs.Job{}, err
	}
	for _, sk := range skipped {
		logger.Warn("hosted forecast agent skipped", "agent", sk.ID, "reason", sk.Reason)
	}
	return jobs.Job{Name: "forecast-agents", Schedule: jobs.Every(time.Minute),
		Run: func(ctx context.Context, _ time.Time) error { return h.RunOnce(ctx) }}, nil
}
