package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/kalshi"
	"github.com/forecast-arena/arena/internal/manifold"
	"github.com/forecast-arena/arena/internal/metaculus"
	"github.com/forecast-arena/arena/internal/polymarket"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/venue"
)

// Syncer fetches one venue's markets into st, keeping the limit most
// traded, and says what it did in one line; on error st is unchanged.
type Syncer func(ctx context.Context, st arena.MarketStore, limit int) (string, error)

// Source is the source of a venue other than Polymarket (Kalshi,
// Manifold, Metaculus) on the configured base URL, with Metaculus's
// token; it is also the venue's benchmark source (venue.Benchmarker).
// Metaculus without a token is metaculus.ErrNoToken.
func Source(o config.Options, logger *slog.Logger, name string) (venue.Source, error) {
	switch name {
	case arena.SourceKalshi:
		c := kalshi.NewClient(o.KalshiURL)
		c.Logger = logger
		return c, nil
	case arena.SourceManifold:
		c := manifold.NewClient(o.ManifoldURL)
		c.Logger = logger
		return c, nil
	case arena.SourceMetaculus:
		if o.MetaculusToken == "" {
			return nil, metaculus.ErrNoToken
		}
		c := metaculus.NewClient(o.MetaculusURL, o.MetaculusToken)
		c.Logger = logger
		return c, nil
	}
	return nil, arena.Errorf(arena.EINVALID, "unknown venue %q (want one of %v)", name, arena.Venues)
}

// BenchmarkLookup is where a round's market without a local price at the
// commit deadline finds one: its own venue's history, Polymarket's CLOB
// through pm, another venue's through its Source (Metaculus only with a
// token).
func BenchmarkLookup(o config.Options, logger *slog.Logger, pm *polymarket.Client) rounds.PriceLookup {
	by := map[string]rounds.PriceLookup{arena.SourcePolymarket: rounds.TokenLookup(pm.BenchmarkAt)}
	for _, name := range arena.Venues {
		if src, err := Source(o, logger, name); err == nil {
			if b, ok := src.(venue.Benchmarker); ok {
				by[name] = b.BenchmarkAt
			}
		}
	}
	return rounds.VenueLookup(by)
}

// VenueSyncer is the sync of a venue, one of arena.Venues: Polymarket's
// with its Gamma and CLOB clients, the others' through venue.Sync.
func VenueSyncer(o config.Options, logger *slog.Logger, name string) (Syncer, error) {
	if name == arena.SourcePolymarket {
		return PolymarketSyncer(Polymarket(o, logger)), nil
	}
	src, err := Source(o, logger, name)
	if err != nil {
		return nil, err
	}
	return func(ctx context.Context, st arena.MarketStore, limit int) (string, error) {
		rep, err := venue.Sync(ctx, st, src, limit, logger)
		if err != nil {
			return "", err
		}
		return rep.String(), nil
	}, nil
}

// PolymarketSyncer is the sync of Polymarket with the client c.
func PolymarketSyncer(c *polymarket.Client) Syncer {
	return func(ctx context.Context, st arena.MarketStore, limit int) (string, error) {
		rep, err := polymarket.Sync(ctx, st, c, limit)
		if err != nil {
			return "", err
		}
		return rep.String(), nil
	}
}

// syncJobs are serve's syncs of ARENA_SYNC_VENUES, one job each
// ("polymarket-sync", "kalshi-sync", …) every ARENA_SYNC_EVERY; none
// with ARENA_NO_SYNC. Polymarket's uses the app's client, the benchmarks'.
func (a *App) syncJobs() ([]jobs.Job, error) {
	o := a.Config
	if o.NoSync {
		return nil, nil
	}
	names, err := o.Venues()
	if err != nil {
		return nil, err
	}
	var js []jobs.Job
	for _, name := range names {
		var sync Syncer
		if name == arena.SourcePolymarket && a.polymarket != nil {
			sync = PolymarketSyncer(a.polymarket)
		} else if sync, err = VenueSyncer(o, a.Logger, name); err != nil {
			return nil, err
		}
		js = append(js, jobs.Job{Name: name + "-sync", Schedule: jobs.Every(o.SyncEvery),
			Run: func(ctx context.Context, _ time.Time) error {
				summary, err := sync(ctx, a.DB, o.SyncLimit)
				if err != nil {
					return fmt.Errorf("%s sync: %w", name, err)
				}
				a.Logger.Info(name+" sync", "report", summary)
				return nil
			}})
	}
	return js, nil
}
