package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/polymarket"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/tlog"
)

func init() {
	register("serve", "run the API, dashboard and scheduler", runServe)
}

// serveKeys are the settings `arena serve` takes as flags.
var serveKeys = []string{"ARENA_ADDR", "ARENA_ADMIN_TOKEN", "ARENA_ADMIN_TOKEN_NEXT", "ARENA_ALLOW_SHORT_ADMIN_TOKEN",
	"ARENA_SYNC_EVERY", "ARENA_NO_SYNC", "ARENA_AGENTS", "ARENA_FORECAST_LEAD_TIME", "ARENA_LOG_KEY",
	"ARENA_NO_ROUNDS", "ARENA_ROUND_EVERY", "ARENA_ROUND_COMMIT_IN", "ARENA_ROUND_REVEAL_DELAY", "ARENA_ROUND_REVEAL_WINDOW",
	"ARENA_ROUND_K", "ARENA_ROUND_GRACE", "ARENA_ROUND_RETRY_EVERY", "ARENA_ROUND_RULES"}

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "[--db URL] [--addr HOST:PORT] [--admin-token T] [--admin-token-next T] [--sync-every D] [--no-sync] [--no-rounds] [--round-every D] [--commit-in D] [--reveal-delay D] [--reveal-window D] [--round-k N]")
	cf := addConfigFlags(fs, true, serveKeys...)
	if err := parseAll(fs, args); err != nil {
		return err
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	logger := newLogger(env, o.LogLevel)
	db, err := store.Open(ctx, o.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	// One server per SQLite file, for its lifetime: a second would split
	// the jobs, and restore must not replace the file under it.
	if err := db.ClaimServer(); err != nil {
		return err
	}
	m := metrics.New()
	if err := m.Register(db.Collector()); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Addr, err)
	}
	var lookup forecast.PriceLookup // benchmarks from Polymarket's CLOB history when syncing
	if !o.NoSync {
		pc := polymarket.NewClient(o.GammaURL, o.CLOBURL)
		pc.Logger = logger
		lookup = forecast.TokenLookup(pc.BenchmarkAt)
	}
	sjobs, err := simJobs(ctx, db, logger)
	if err != nil {
		return err
	}
	// The chain, when configured, fixes the EIP-712 domain before the
	// forecast service is built.
	cjobs, closeChain, err := chainRelayJob(ctx, &o, db, logger)
	if err != nil {
		return err
	}
	defer closeChain()
	fsvc, fjobs, err := forecastSetup(ctx, o, db, logger, lookup)
	if err != nil {
		return err
	}
	lg, err := openLog(ctx, o, o.LogKey, db, logger)
	if err != nil {
		return err
	}
	fsvc.Log = lg
	fsvc.Method = scoringMethod(o)
	fsvc.Admission = forecast.Admission{Store: db, MaxAgentsPerRound: o.MaxAgentsPerRound, MaxNewAgentsHour: o.MaxNewAgentsPerHour}
	js := append(append(append(serveJobs(o, db, logger, !o.NoSync), sjobs...), fjobs...), cjobs...)
	// The trading track runs when a model registry names its agents.
	var eng *trading.Engine
	if o.AgentsFile != "" {
		var tjobs []jobs.Job
		if eng, tjobs, err = tradingJobs(o, db, env.Environ, logger, m); err != nil {
			return err
		}
		js = append(js, tjobs...)
	}
	if o.ForecastAgents != "" && fsvc != nil {
		hj, err := hostedForecastJob(ctx, o, db, env.Environ, "http://"+ln.Addr().String(), o.ForecastLeadTime, logger, m)
		if err != nil {
			return err
		}
		js = append(js, hj)
	}
	if o.OracleAgents != "" {
		oj, err := oracleJob(o, db, fsvc, env.Environ, logger, m)
		if err != nil {
			return err
		}
		js = append(js, oj)
	}
	srv := newServer(db, o.AdminToken, logger, fsvc, eng, lg)
	srv.Metrics, srv.AdminTokenNext = m, o.AdminTokenNext
	proxies, err := o.TrustedProxyPrefixes()
	if err != nil {
		return err
	}
	srv.Rates, srv.Limits = db, web.RateLimits{PerIP: perMinute(o.RateIPPerMin), PerAgent: perMinute(o.RateAgentPerMin), TrustedProxies: proxies,
		IPv6Prefix: o.RateIPv6Prefix}
	sched := &jobs.Scheduler{Store: db, Logger: logger, Jobs: js, Metrics: m}
	logger.Info("serving", "addr", ln.Addr().String(), "db", redact.String(o.DB), "engine", db.Engine())
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return web.Serve(gctx, ln, srv.Handler()) })
	g.Go(func() error { return sched.Run(gctx) })
	if fsvc != nil {
		// Compute the leaderboard analysis now, not on the first reader's
		// request (on a large database it takes seconds).
		go func() {
			if _, err := fsvc.Analysis(gctx); err != nil && gctx.Err() == nil {
				logger.Warn("forecast: analysis at start-up", "err", err)
			}
		}()
	}
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	logger.Info("stopped")
	return err
}

// newServer wires the HTTP server from its parts: the one composition
// `serve` and `demo` share. A nil track is not served.
func newServer(db *store.DB, adminToken string, logger *slog.Logger, fsvc *forecast.Service, eng *trading.Engine, lg *tlog.Log) *web.Server {
	osvc := wireOracle(&oracle.Service{Store: db, Logger: logger}, fsvc)
	srv := web.Build(web.Parts{Markets: db, DB: db, AdminToken: adminToken, Logger: logger, Forecast: fsvc, Trading: eng, Forecasters: db, Oracle: osvc, Health: db})
	if lg != nil {
		srv.RegisterLog(lg)
	}
	return srv
}

// perMinute is a limit of n requests a minute, n of them at once.
func perMinute(n int) arena.RateLimit {
	return arena.RateLimit{Burst: float64(n), PerSecond: float64(n) / 60}
}

// serveJobs lists the scheduled jobs.
func serveJobs(o config.Options, db *store.DB, logger *slog.Logger, sync bool) []jobs.Job {
	// A rate bucket idle for a minute has refilled: pruning those idle for
	// ten keeps the table as small as the set of recent clients.
	js := []jobs.Job{{Name: "rate-bucket-prune", Schedule: jobs.Every(10 * time.Minute),
		Run: func(ctx context.Context, period time.Time) error {
			_, err := db.PruneRateBuckets(ctx, period.Add(-10*time.Minute))
			return err
		}}}
	if sync {
		client := polymarket.NewClient(o.GammaURL, o.CLOBURL)
		client.Logger = logger
		js = append(js, jobs.Job{Name: "polymarket-sync", Schedule: jobs.Every(o.SyncEvery),
			Run: func(ctx context.Context, _ time.Time) error {
				rep, err := polymarket.Sync(ctx, db, client, o.SyncLimit)
				if err != nil {
					return err
				}
				logger.Info("polymarket sync", "report", rep.String())
				return nil
			}})
	}
	return js
}
