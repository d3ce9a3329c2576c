package app

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/retrieve"
	"github.com/forecast-arena/arena/internal/trading"
)

// TradingTrack is the trading track, built by Trading.
type TradingTrack struct {
	Engine *trading.Engine
	// Deciders are the trading agents of each cohort's frozen lineup.
	Deciders trading.DecidersFunc
	// Skipped are the configured registry's agents left out of the
	// lineup, with the reason (a missing API key).
	Skipped []llm.Skipped
}

// Trading is the trading track, built on the first call (see
// buildTrading): only what trades or serves the track reads the model
// registry and the active cohorts, so a broken registry (ARENA_AGENTS)
// fails those alone. A failed build is tried again by the next call.
func (a *App) Trading(ctx context.Context) (*TradingTrack, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.trading == nil {
		tr, err := a.buildTrading(ctx)
		if err != nil {
			return nil, err
		}
		a.trading = tr
	}
	return a.trading, nil
}

// buildTrading builds the trading engine with its lineup and the deciders
// of its cohorts: the lineup the program gave, else the agents of the
// configured model registry (ARENA_AGENTS) whose API keys are set (the
// others are kept in Skipped). A decision is bounded by the slowest
// model of the lineup and of every active cohort's frozen lineup.
func (a *App) buildTrading(ctx context.Context) (*TradingTrack, error) {
	o, d := a.Config, a.deps
	getenv := llm.EnvLookup(d.Environ)
	f := &agent.Factory{Getenv: getenv, LLMOptions: append([]llm.Option{llm.WithLogger(a.Logger)}, d.LLMOptions...),
		Metrics: a.Metrics, Logger: a.Logger, Retries: d.AgentRetries}
	tr := &TradingTrack{}
	lineup := d.Lineup
	if o.AgentsFile != "" {
		reg, err := llm.LoadRegistry(o.AgentsFile)
		if err != nil {
			return nil, err
		}
		f.Registry = reg
		if lineup == nil {
			if lineup, tr.Skipped, err = agent.LLMLineup(reg, getenv); err != nil {
				return nil, err
			}
		}
	}
	active, err := a.DB.Cohorts(ctx, arena.CohortActive)
	if err != nil {
		return nil, fmt.Errorf("app: active cohorts: %w", err)
	}
	all := lineup
	for _, c := range active {
		all = append(all[:len(all):len(all)], c.Lineup...)
	}
	tr.Engine = &trading.Engine{Store: a.DB, Lineup: lineup, Now: d.Now, Logger: a.Logger, ModelTimeout: f.ModelTimeout(all),
		ProviderLimit: d.ProviderLimit, MaxAttempts: d.MaxAttempts}
	tr.Deciders = a.deciders(f)
	return tr, nil
}

// deciders builds each cohort's deciders from its frozen lineup. An LLM
// agent without one (its key unset since the cohort started) is warned of
// once per cohort and decided by a later run once it can be; a simulated
// agent needs nothing from the environment, so one without a decider is a
// bug, and an error.
func (a *App) deciders(f *agent.Factory) trading.DecidersFunc {
	var warned sync.Map // deciders are rebuilt every period
	return func(_ context.Context, c *arena.Cohort) (map[string]trading.Decider, error) {
		ds, skipped := f.Deciders(c.Lineup)
		for _, sk := range skipped {
			if i := slices.IndexFunc(c.Lineup, func(e arena.LineupEntry) bool { return e.AgentID == sk.ID }); i >= 0 && c.Lineup[i].Kind == agent.KindSim {
				return nil, fmt.Errorf("app: cohort %d: simulated agent %s has no decider: %s", c.ID, sk.ID, sk.Reason)
			}
			if _, dup := warned.LoadOrStore(fmt.Sprintf("%d/%s", c.ID, sk.ID), true); !dup {
				a.Logger.Warn("trading agent has no decider", "cohort", c.ID, "agent", sk.ID, "reason", sk.Reason)
			}
		}
		return ds, nil
	}
}

// PanelOptions are how a resolver panel of a model registry runs.
type PanelOptions struct {
	// Environ holds the API keys the registry names.
	Environ  []string
	Evidence Evidence
	// CacheOnly answers from the calls cached in Evidence.CacheDir only.
	CacheOnly bool
	RetryBase time.Duration // first wait between attempts of a failed call (0: the client's)
	Workers   int           // questions in flight (0: one per resolver)
	// Deliberate adds the second, deliberative round.
	Deliberate bool
	LLMOptions []llm.Option
	Metrics    llm.Metrics // counts the resolvers' calls (may be nil)
}

// PanelCaches are a panel's caches, for their counts: one per resolver's
// calls, and the evidence's (nil when none is kept).
type PanelCaches struct {
	Calls    []*llm.Cache
	Evidence *retrieve.Cache
}

// Panel is the resolver panel of the model registry reg: its calls
// cached in opts.Evidence.CacheDir and its evidence in CacheDir/evidence
// (none kept when CacheDir is empty).
func Panel(o config.Options, reg *llm.Registry, opts PanelOptions) (*oracle.Panel, PanelCaches, error) {
	e := opts.Evidence
	pc := oracle.PanelConfig{Registry: reg, Getenv: llm.EnvLookup(opts.Environ), CacheDir: e.CacheDir, CacheOnly: opts.CacheOnly,
		RetryBase: opts.RetryBase, LLMOptions: opts.LLMOptions, Metrics: opts.Metrics}
	resolvers, calls, err := pc.Resolvers()
	if err != nil {
		return nil, PanelCaches{}, err
	}
	if e.CacheDir != "" {
		e.CacheDir = filepath.Join(e.CacheDir, "evidence")
	}
	e.CacheOnly = opts.CacheOnly
	ret, evidence, err := Retriever(o, e)
	if err != nil {
		return nil, PanelCaches{}, arena.Errorf(arena.EINVALID, "evidence: %v", err)
	}
	workers := opts.Workers
	if workers <= 0 {
		workers = len(resolvers)
	}
	return &oracle.Panel{Resolvers: resolvers, Retriever: ret, Workers: workers, Deliberate: opts.Deliberate, Now: e.Now},
		PanelCaches{Calls: calls, Evidence: evidence}, nil
}
