package main

import (
	"context"
	"flag"
	"fmt"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/polymarket"
	"github.com/forecast-arena/arena/sim"
	"github.com/forecast-arena/arena/store"
)

func init() {
	register("sync", "fetch markets from a source (polymarket or sim) into the store", runSync)
}

// Flags that belong to one source only; giving them to the other is a
// mistake worth reporting rather than ignoring.
var (
	polymarketOnly = []string{"limit", "gamma-url", "clob-url"}
	simOnly        = []string{"seed", "markets", "start", "now"}
)

// tuneSyncClient lets tests shorten retry backoff; production leaves the
// client's defaults alone.
var tuneSyncClient = func(*polymarket.Client) {}

func runSync(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "sync", "--source polymarket [--limit N] | --source sim [--seed N] [--markets N] [--start T] [--now T]")
	cf := addConfigFlags(fs, true)
	source := fs.String("source", arena.SourcePolymarket, "market source: polymarket or sim")
	limit := fs.Int("limit", 0, "polymarket: markets kept, by volume (default ARENA_SYNC_LIMIT or 500)")
	seed := fs.Int64("seed", 1, "sim: world seed (same seed, same world)")
	nMarkets := fs.Int("markets", 0, fmt.Sprintf("sim: number of markets (default %d)", sim.DefaultMarkets))
	startStr := fs.String("start", "", "sim: start of the world's horizon, RFC 3339 (default "+sim.DefaultStart.Format(time.RFC3339)+")")
	nowStr := fs.String("now", "", "sim: the instant the world is observed at, RFC 3339 (default: the wall clock)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := noArgs(fs); err != nil {
		return err
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	misplaced := func(names []string) error {
		for _, n := range names {
			if set[n] {
				return fmt.Errorf("--%s does not apply to --source %s", n, *source)
			}
		}
		return nil
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	log := newLogger(env, o.LogLevel)

	// Everything that can be checked without the store is checked first, so
	// a bad invocation never opens (or creates) a database.
	var run func(ctx context.Context, db *store.DB) (string, error)
	switch *source {
	case arena.SourcePolymarket:
		if err := misplaced(simOnly); err != nil {
			return err
		}
		n := o.SyncLimit
		if set["limit"] {
			n = *limit
		}
		if n <= 0 {
			return fmt.Errorf("--limit %d: must be positive", n)
		}
		client := &polymarket.Client{GammaURL: o.GammaURL, CLOBURL: o.CLOBURL, Logger: log}
		tuneSyncClient(client)
		run = func(ctx context.Context, db *store.DB) (string, error) {
			rep, err := polymarket.Sync(ctx, db, client, n)
			if err != nil {
				return "", err
			}
			return rep.String(), nil
		}
	case arena.SourceSim:
		if err := misplaced(polymarketOnly); err != nil {
			return err
		}
		cfg := sim.Config{Seed: *seed, Markets: *nMarkets}
		if set["markets"] && *nMarkets <= 0 {
			return fmt.Errorf("--markets %d: must be positive", *nMarkets)
		}
		if *startStr != "" {
			if cfg.Start, err = syncTimeFlag("start", *startStr); err != nil {
				return err
			}
		}
		now := time.Now().UTC()
		if *nowStr != "" {
			if now, err = syncTimeFlag("now", *nowStr); err != nil {
				return err
			}
		}
		world, err := sim.New(cfg)
		if err != nil {
			return err
		}
		run = func(ctx context.Context, db *store.DB) (string, error) {
			ms := world.MarketsAt(now)
			res, err := db.SaveMarkets(ctx, ms)
			if err != nil {
				return "", fmt.Errorf("save %d sim markets: %w", len(ms), err)
			}
			return fmt.Sprintf("sim: seed %d, %d markets at %s; saved %d new, %d updated, %d unchanged, %d price points",
				*seed, len(ms), now.Format(time.RFC3339), res.Inserted, res.Updated, res.Unchanged, res.Prices), nil
		}
	default:
		return fmt.Errorf("unknown source %q (want polymarket or sim)", *source)
	}

	db, undo, err := openOrUndo(ctx, o.DB)
	if err != nil {
		return err
	}
	summary, err := run(ctx, db)
	if err != nil {
		undo()
		return err
	}
	defer db.Close()
	fmt.Fprintln(env.Stdout, summary)
	return nil
}

func syncTimeFlag(name, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time such as 2026-01-05T00:00:00Z", name, v)
	}
	return t.UTC(), nil
}
