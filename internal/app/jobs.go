package app

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/polymarket"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/strategy"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/safefile"
)

// simSyncEvery is how often `arena serve` observes a recorded simulated
// world: often enough that every commit deadline has a price point within
// the benchmark tolerance (±300 s).
const simSyncEvery = time.Minute

// Jobs are the scheduled jobs of `arena serve`, in this order: the rate
// buckets' pruning, the syncs of ARENA_SYNC_VENUES (unless
// ARENA_NO_SYNC), the simulated world's (when the database records one),
// the forecast track's rounds, the chain relayer (with ARENA_CHAIN_RPC
// and ARENA_CHAIN_ARENA), the trading track's cohorts (with ARENA_AGENTS
// or a lineup given), the hosted forecast agents (with
// ARENA_FORECAST_AGENTS; they talk to the server at baseURL), the oracle
// (with ARENA_ORACLE_AGENTS) and the published exports' pruning and file
// copy, on the services New built. A broken registry or chain is an
// error here, so serve fails at start-up; so is a log opened to read
// only, as serve publishes its exports.
func (a *App) Jobs(ctx context.Context, baseURL string) ([]jobs.Job, error) {
	o := a.Config
	if a.pub == nil {
		return nil, errReadOnlyLog
	}
	if a.Rounds.RulesErr != nil {
		return nil, a.Rounds.RulesErr
	}
	js := []jobs.Job{a.pruneJob()}
	vj, err := a.syncJobs()
	if err != nil {
		return nil, err
	}
	js = append(js, vj...)
	sj, err := a.simJobs(ctx)
	if err != nil {
		return nil, err
	}
	js = append(js, sj...)
	fjs, err := rounds.Jobs(a.Rounds, rounds.JobsConfig{NoRounds: o.NoRounds, RoundEvery: o.RoundEvery, CommitIn: o.RoundCommitIn,
		RevealDelay: o.RoundRevealDelay, RevealWindow: o.RoundRevealWin, RetryEvery: o.RoundRetryEvery, RetryFor: cmp.Or(o.RoundRetryFor, -1)})
	if err != nil {
		return nil, err
	}
	js = append(js, fjs...)
	cj, err := a.relayJobs(ctx)
	if err != nil {
		return nil, err
	}
	js = append(js, cj...)
	if o.AgentsFile != "" || a.deps.Lineup != nil {
		tj, err := a.tradingJobs(ctx)
		if err != nil {
			return nil, err
		}
		js = append(js, tj...)
	}
	if o.ForecastAgents != "" {
		hj, err := a.hostedJob(ctx, baseURL)
		if err != nil {
			return nil, err
		}
		js = append(js, hj)
	}
	if o.OracleAgents != "" {
		if a.OracleErr != nil {
			return nil, a.OracleErr
		}
		js = append(js, a.oracleJob())
	}
	ej, err := a.exportJob()
	if err != nil {
		return nil, err
	}
	return append(js, ej...), nil
}

// Polymarket is the client of the configured Gamma and CLOB APIs.
func Polymarket(o config.Options, logger *slog.Logger) *polymarket.Client {
	c := polymarket.NewClient(o.GammaURL, o.CLOBURL)
	c.Logger = logger
	return c
}

// pruneJob drops idle rate buckets: one idle for a minute has refilled,
// so pruning those idle for ten keeps the table as small as the set of
// recent clients.
func (a *App) pruneJob() jobs.Job {
	return jobs.Job{Name: "rate-bucket-prune", Schedule: jobs.Every(10 * time.Minute),
		Run: func(ctx context.Context, period time.Time) error {
			_, err := a.DB.PruneRateBuckets(ctx, period.Add(-10*time.Minute))
			return err
		}}
}

// simJobs continues the simulated world that `arena sync --source sim`
// recorded in the database, if any: on the clock, its prices move, its
// markets close and resolve, so rounds on it are benchmarked and scored
// like rounds on Polymarket.
func (a *App) simJobs(ctx context.Context) ([]jobs.Job, error) {
	cfg, ok, err := sim.Recorded(ctx, a.DB)
	if err != nil || !ok {
		return nil, err
	}
	world, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("recorded sim world: %w", err)
	}
	run := func(ctx context.Context, _ time.Time) error {
		now := a.now().Truncate(time.Second)
		ms := world.LiveMarkets(now.Add(-time.Hour), now)
		res, err := a.DB.SaveMarkets(ctx, ms)
		if err != nil {
			return fmt.Errorf("sim sync: %w", err)
		}
		a.Logger.Debug("sim sync", "markets", len(ms), "updated", res.Updated, "prices", res.Prices)
		return nil
	}
	a.Logger.Info("continuing the simulated world", "seed", cfg.Seed, "start", cfg.Start.Format(time.RFC3339))
	return []jobs.Job{{Name: "sim-sync", Schedule: jobs.Every(simSyncEvery), Run: run}}, nil
}

// tradingJobs runs the trading track: cohort start Sunday 00:00 UTC with
// the lineup (the registry's agents whose key is missing are skipped with
// a warning), decision runs from 00:05 (resumed every 10 minutes while an
// agent is undecided), snapshots every 10 minutes, settlement hourly under
// ARENA_TRADING_POLICY. Existing cohorts are decided with their frozen
// lineups, simulated ones included.
func (a *App) tradingJobs(ctx context.Context) ([]jobs.Job, error) {
	policy, err := trading.ParsePolicy(a.Config.TradingPolicy)
	if err != nil {
		return nil, err
	}
	tr, err := a.Trading(ctx)
	if err != nil {
		return nil, err
	}
	for _, sk := range tr.Skipped {
		a.Logger.Warn("trading agent skipped", "agent", sk.ID, "name", sk.Name, "reason", sk.Reason)
	}
	return trading.Jobs(tr.Engine, trading.JobsConfig{Deciders: tr.Deciders, Policy: policy}), nil
}

// hostedJob forecasts every open round for each agent of
// ARENA_FORECAST_AGENTS within ARENA_FORECAST_LEAD_TIME of the commit
// deadline, through the server's own API at base. Their keys live in the
// data directory.
func (a *App) hostedJob(ctx context.Context, base string) (jobs.Job, error) {
	dir, ok := a.Config.DataDirectory()
	if !ok {
		return jobs.Job{}, fmt.Errorf("hosted forecast agents need a data directory for their keys: set ARENA_DATA_DIR")
	}
	reg, err := llm.LoadRegistry(a.Config.ForecastAgents)
	if err != nil {
		return jobs.Job{}, err
	}
	h, skipped, err := strategy.NewHosted(ctx, strategy.HostedConfig{Registry: reg, Getenv: llm.EnvLookup(a.deps.Environ), Server: base,
		DataDir: dir, LeadTime: a.Config.ForecastLeadTime, Store: a.DB, Now: a.deps.Now, Logger: a.Logger, Metrics: a.Metrics})
	if err != nil {
		return jobs.Job{}, err
	}
	for _, sk := range skipped {
		a.Logger.Warn("hosted forecast agent skipped", "agent", sk.ID, "reason", sk.Reason)
	}
	return jobs.Job{Name: "forecast-agents", Schedule: jobs.Every(time.Minute),
		Run: func(ctx context.Context, _ time.Time) error { return h.RunOnce(ctx) }}, nil
}

// oracleJob runs the oracle hourly over the markets waiting for it, with
// the panel New built from ARENA_ORACLE_AGENTS.
func (a *App) oracleJob() jobs.Job {
	return jobs.Job{Name: "oracle", Schedule: jobs.Every(time.Hour), Run: func(ctx context.Context, _ time.Time) error {
		n, err := a.Oracle.RunPending(ctx)
		if n > 0 {
			a.Logger.Info("oracle run", "markets", n)
		}
		return err
	}}
}

// maxRulesBytes bounds a selection rules file, which holds a few lines of
// JSON.
const maxRulesBytes = 1 << 20

// SelectionRules are the market selection rules of round creation: the
// complete rules in file (named by flag in errors), or else the built-in
// ones over the venues o syncs (rounds.DefaultRulesFor), which take
// simulated markets too when the database holds a simulated world, so
// that 'arena sync --source sim' is enough for rounds (its named venues
// sharing rounds equally with the live ones).
func SelectionRules(ctx context.Context, db *store.DB, o config.Options, file, flag string) (rounds.Rules, error) {
	if file == "" {
		venues, err := o.Venues()
		if err != nil {
			return rounds.Rules{}, err
		}
		rules := rounds.DefaultRulesFor(venues)
		world, simWorld, err := sim.Recorded(ctx, db)
		if err != nil {
			return rounds.Rules{}, err
		}
		if simWorld {
			rules.Sources = append(rules.Sources, arena.SourceSim)
		}
		if world.Venues != "" { // the simulated markets' venues share rounds as live ones do
			rules.ShareEqually(append(venues, strings.Split(world.Venues, ",")...))
		}
		return rules, nil
	}
	var rules rounds.Rules // the file holds the complete rules
	b, err := safefile.ReadFile(file, maxRulesBytes)
	if err != nil {
		return rounds.Rules{}, fmt.Errorf("%s: %w", flag, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&rules); err != nil {
		return rounds.Rules{}, arena.Errorf(arena.EINVALID, "%s %s: %v", flag, file, err)
	}
	if err := rules.Validate(); err != nil {
		return rounds.Rules{}, fmt.Errorf("%s %s: %w", flag, file, err)
	}
	return rules, nil
}
