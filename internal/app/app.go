// Package app is the arena's composition root: from a loaded configuration
// it builds the store, the forecast and trading tracks, the oracle, the
// tamper-evident log, the scheduled jobs of `arena serve` and the HTTP
// handler. `arena serve`, `arena demo` and every command that needs the
// arena's services build them here, in one call, so each is wired one
// way.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"golang.org/x/sync/errgroup"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/polymarket"
	"github.com/forecast-arena/arena/internal/ratelimit"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/tlog"
)

// Deps is what a program gives the arena beyond its configuration: what a
// config file cannot hold (API keys, a logger, an open database, a clock)
// and the parts a program fixes in code.
type Deps struct {
	// Environ holds the model providers' API keys, which model registries
	// name.
	Environ []string
	Logger  *slog.Logger // nil: discard
	// DB is an already-open store (the demo opens its own to set its clock
	// and deployment identifier first); New takes it over when it
	// succeeds. Nil: New opens the configured database.
	DB *store.DB
	// Now is every service's clock (nil: the wall clock).
	Now func() time.Time
	// Rules are the market selection rules of round creation (nil: the
	// configured rules file, else the built-in rules).
	Rules *rounds.Rules
	// Lineup is the trading track's lineup; given, the track is served.
	// Nil: the LLM agents of the configured registry (ARENA_AGENTS) whose
	// keys are set.
	Lineup []arena.LineupEntry
	// AgentRetries are the corrections a trading agent is asked for after
	// an unusable model answer (0: the default; negative: none);
	// ProviderLimit and MaxAttempts bound concurrent decisions per
	// provider and the claims of a failing decision (0: the engine's
	// defaults).
	AgentRetries, ProviderLimit, MaxAttempts int
	// LLMOptions are added to every trading agent's model client.
	LLMOptions []llm.Option
	// Panel is the oracle's resolver panel (nil: the configured registry's,
	// ARENA_ORACLE_AGENTS, if any).
	Panel *oracle.Panel
	// Evidence is where the configured registry's panel gathers evidence
	// (nil: the question's own text, cached in the data directory).
	Evidence *Evidence
	// Log is what the program does with the tamper-evident log (zero:
	// LogRead).
	Log LogMode
	// RunsOracle says the program runs the resolver panel itself ('arena
	// oracle resolve'): a panel that cannot be built fails New, before
	// the log key is read or made, instead of waiting in OracleErr.
	RunsOracle bool
}

// App is the arena's parts, wired: complete once New returns, with
// nothing left to open or attach.
type App struct {
	Config  config.Options
	DB      *store.DB
	Logger  *slog.Logger
	Metrics *metrics.Metrics
	// TLog is the tamper-evident log: opened with its key under LogWrite,
	// else read from the store without it.
	TLog   *tlog.Log
	Rounds *rounds.Service
	Oracle *oracle.Service
	// OracleErr is why the configured resolver panel (ARENA_ORACLE_AGENTS)
	// could not be built, a missing API key say: only the oracle's runs
	// need it, so New leaves the oracle without a panel and the commands
	// that run it (serve, 'arena oracle resolve') report this.
	OracleErr error

	deps       Deps
	closers    []func() error
	polymarket *polymarket.Client // the benchmarks' and the sync's (nil with ARENA_NO_SYNC)
	pub        *tlog.Publisher    // the log's checkpoint publisher (nil under LogRead)
	// exports publishes the exports of the log's checkpoints into the
	// database (followExports).
	exports export.Publisher

	// mu guards trading, built on first use (see Trading).
	mu      sync.Mutex
	trading *TradingTrack

	handlerOnce sync.Once
	handler     http.Handler
	web         *web.Server // built with handler; Close waits for its background work
	// boards are the backtest and human boards the handler serves, built
	// with it; stopComputations closes them.
	boards     *backtest.Boards
	handlerErr error
}

// New builds the arena's services from o, complete: the store (d.DB, else
// o.DB opened), the forecast track on this deployment's EIP-712 domain
// with Polymarket's price history as its benchmark source (unless
// ARENA_NO_SYNC), the oracle with its panel, wired to both tracks, and the
// tamper-evident log as d.Log says. The trading track is built when first
// used (see Trading), so a broken model registry fails only what trades;
// a broken resolver panel waits in OracleErr unless d.RunsOracle.
func New(ctx context.Context, o config.Options, d Deps) (*App, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	a := &App{Config: o, DB: d.DB, Logger: d.Logger, deps: d, Metrics: metrics.New()}
	if a.Logger == nil {
		a.Logger = slog.New(slog.DiscardHandler)
	}
	if a.DB == nil {
		db, err := store.Open(ctx, o.DB)
		if err != nil {
			return nil, err
		}
		a.DB = db
		a.closers = append(a.closers, db.Close)
	}
	if err := a.build(ctx); err != nil {
		a.Close()
		return nil, err
	}
	if d.DB != nil {
		a.closers = append(a.closers, d.DB.Close)
	}
	return a, nil
}

func (a *App) build(ctx context.Context) error {
	o, db, d := a.Config, a.DB, a.deps
	if err := a.Metrics.Register(db.Collector()); err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	dom, err := Domain(ctx, o, db)
	if err != nil {
		return err
	}
	// Broken selection rules fail only what creates rounds by them (Jobs,
	// 'arena round create' without --rules).
	var rules rounds.Rules
	var rulesErr error
	if d.Rules != nil {
		rules = *d.Rules
	} else {
		rules, rulesErr = SelectionRules(ctx, db, o, o.RoundRules, "--round-rules")
	}
	a.Rounds = &rounds.Service{Store: db, Domain: dom, Now: d.Now, Logger: a.Logger, K: o.RoundK, Rules: rules, RulesErr: rulesErr, Grace: o.RoundGrace,
		Method: ScoringMethod(o),
		Admission: rounds.Admission{Store: db, MaxAgentsPerRound: o.MaxAgentsPerRound, MaxNewAgentsHour: o.MaxNewAgentsPerHour,
			ProfileUpdatesPerDay: o.ProfileUpdatesPerDay}}
	if !o.NoSync {
		a.polymarket = Polymarket(o, a.Logger)
		a.Rounds.Lookup = BenchmarkLookup(o, a.Logger, a.polymarket)
	}
	a.Oracle = WireOracle(&oracle.Service{Store: db, Policy: oraclePolicy(o), Now: d.Now, Logger: a.Logger, Metrics: a.Metrics})
	if err := a.buildPanel(); err != nil {
		if d.Panel != nil {
			return err // the program's own panel: a bug
		}
		a.OracleErr = fmt.Errorf("resolver panel %s: %w", o.OracleAgents, err)
		if d.RunsOracle {
			return a.OracleErr
		}
	}
	// Last: a start refused above reads, makes and binds no log key.
	return a.initLog(ctx)
}

// Close releases what the app holds, in the reverse order of opening: its
// chain connection, then the store.
func (a *App) Close() error {
	// What runs in the background stops before the store closes under it:
	// the analyses and boards being computed and the rate limiter's
	// settlements.
	a.stopComputations()
	if a.web != nil {
		a.web.Wait()
	}
	var errs []error
	for i := len(a.closers) - 1; i >= 0; i-- {
		errs = append(errs, a.closers[i]())
	}
	a.closers = nil
	return errors.Join(errs...)
}

// stopComputations cancels the tracks' analyses and boards under way, and
// the HTTP API's, and waits for them to end; reads that need another
// computation then fail.
func (a *App) stopComputations() {
	if a.Rounds != nil {
		a.Rounds.Stop()
	}
	a.mu.Lock()
	if a.trading != nil {
		a.trading.Engine.Stop()
	}
	a.mu.Unlock()
	if a.boards != nil {
		a.boards.Close()
	}
}

// now is the app's clock.
func (a *App) now() time.Time {
	return arena.Clock(a.deps.Now)().UTC()
}

// WireOracle connects the oracle to both tracks: a change of a market's
// resolution re-scores the forecast rounds and re-settles the trading
// positions it touches, and every resolution the oracle applies, every
// arbiter's decision and every dispute goes to the tamper-evident log,
// all in the transaction that records it.
func WireOracle(svc *oracle.Service) *oracle.Service {
	svc.Tracks = []arena.ResolutionHook{rounds.Rescore, trading.Resettle, rounds.LogResolution}
	svc.DisputeHooks = []arena.DisputeHook{rounds.LogDispute}
	return svc
}

func oraclePolicy(o config.Options) arena.OraclePolicy {
	return arena.OraclePolicy{Architecture: o.OracleArch, AutoMinScore: o.OracleAutoMinScore, RequireUnanimous: o.OracleRequireUnanimous}
}

// ScoringMethod is the leaderboard's scoring method with the configured
// entry rules.
func ScoringMethod(o config.Options) scoring.Method {
	m := scoring.DefaultMethod()
	m.MinForecasts, m.MaxPerOrganisation = o.LeaderboardMinForecasts, o.LeaderboardMaxPerOrganisation
	return m
}

// Domain is the EIP-712 domain of the configuration (ARENA_CHAIN_ID,
// ARENA_CONTRACT); with a chain mirrored to (ARENA_CHAIN_RPC and
// ARENA_CHAIN_ARENA) and neither set, that chain's, as arena serve signs
// under; without a chain, this deployment's own identifier (see
// forecast.LocalDomain).
func Domain(ctx context.Context, o config.Options, db arena.SettingStore) (forecast.Domain, error) {
	if o.ChainRPC != "" && o.ChainArena != "" && o.ChainID == 0 && common.HexToAddress(o.Contract) == (common.Address{}) {
		return chainDomain(ctx, o)
	}
	if o.ChainID < 0 {
		return forecast.Domain{}, fmt.Errorf("chain id %d: must not be negative", o.ChainID)
	}
	if !common.IsHexAddress(o.Contract) {
		return forecast.Domain{}, fmt.Errorf("contract %q: want a 0x-prefixed 20-byte address", o.Contract)
	}
	return forecast.LocalDomain(ctx, forecast.Domain{ChainID: uint64(o.ChainID), Contract: common.HexToAddress(o.Contract)}, db)
}

// NewLogger is the arena's logger: text lines on w at level (validated by
// config), secrets redacted, and the request id on lines logged with a
// request's context.
func NewLogger(w io.Writer, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level))
	return slog.New(web.LogHandler(redact.Handler(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l}))))
}

// tradingServed reports whether the dashboard shows the trading track: a
// lineup given in code, a model registry configured, or cohorts already
// in the database (a demo's, served afterwards without --agents).
func (a *App) tradingServed(ctx context.Context) (bool, error) {
	if a.deps.Lineup != nil || a.Config.AgentsFile != "" {
		return true, nil
	}
	cs, err := a.DB.Cohorts(ctx, "")
	return len(cs) > 0, err
}

// Handler is the HTTP API and dashboard over every part, with the
// configured admin tokens, rate limits and metrics, and, with the log
// opened for writing (LogWrite), the log's routes, its checkpoints and
// tiles under /log/ and the published exports under /exports/; the same
// handler on every call.
func (a *App) Handler() (http.Handler, error) {
	a.handlerOnce.Do(func() { a.handler, a.handlerErr = a.buildHandler() })
	return a.handler, a.handlerErr
}

func (a *App) buildHandler() (http.Handler, error) {
	o := a.Config
	proxies, err := o.TrustedProxyPrefixes()
	if err != nil {
		return nil, err
	}
	p := web.Parts{Markets: a.DB, DB: a.DB, AdminToken: o.AdminToken, AdminTokenNext: o.AdminTokenNext, Logger: a.Logger,
		Forecast: a.Rounds, Forecasters: a.DB, Oracle: a.Oracle, Metrics: a.Metrics, Health: a.DB, Rates: a.DB,
		Limits: ratelimit.Limits{PerIP: perMinute(o.RateIPPerMin), PerAgent: perMinute(o.RateAgentPerMin), TrustedProxies: proxies, IPv6Prefix: o.RateIPv6Prefix}}
	ctx := context.Background()
	if ok, err := a.tradingServed(ctx); err != nil {
		return nil, err
	} else if ok {
		tr, err := a.Trading(ctx)
		if err != nil {
			return nil, err
		}
		p.Trading = tr.Engine
	}
	// The backtest track is scored as the forecast track is.
	var m scoring.Method
	if a.Rounds != nil {
		m = a.Rounds.ScoringMethod()
	}
	a.boards = backtest.NewBoards(a.DB, m, a.Logger)
	p.Boards = a.boards
	if pub := a.pub; pub != nil {
		p.Log, p.LogVKey, p.PublicURL = a.TLog, pub.VerifierKey(), o.PublicURL
		p.Mounts = map[string]http.Handler{
			// The log's C2SP checkpoint, verifier key, hash tiles and
			// entry bundles.
			"/log/": pub.Handler(),
			// Every checkpoint's export, from the database: the same on
			// every replica.
			"/exports/": export.StoreHandler(a.DB),
		}
	}
	srv := web.New(p)
	a.web = srv
	return srv.Handler(), nil
}

// perMinute is a limit of n requests a minute, n of them at once.
func perMinute(n int) arena.RateLimit {
	return arena.RateLimit{Burst: float64(n), PerSecond: float64(n) / 60}
}

// ServeHandler answers HTTP on ln with a handler that is not an arena's
// (a witness) until ctx ends: the same connection timeouts and graceful
// shutdown as the arena's server.
func ServeHandler(ctx context.Context, ln net.Listener, h http.Handler) error {
	return web.Serve(ctx, ln, h)
}

// Serve answers HTTP on ln with Handler and runs js on the scheduler
// until ctx ends, which is a clean stop. It needs the log opened for
// writing: a server publishes its checkpoints and exports.
func (a *App) Serve(ctx context.Context, ln net.Listener, js []jobs.Job) error {
	pub, err := a.Publisher()
	if err != nil {
		return err
	}
	h, err := a.Handler()
	if err != nil {
		return err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return web.Serve(gctx, ln, h) })
	if len(js) > 0 {
		sched := &jobs.Scheduler{Store: a.DB, Logger: a.Logger, Jobs: js, Metrics: a.Metrics}
		g.Go(func() error { return sched.Run(gctx) })
	}
	// Every replica publishes: the checkpoint store refuses a checkpoint
	// that contradicts the saved one, so replicas agree on one per size.
	// Each checkpoint serve signs is signed with its export, of the same
	// state.
	g.Go(func() error { a.followExports(gctx, pub); return nil })
	// On shutdown the analyses and boards under way stop at once rather
	// than when the app closes: a request waiting for one would hold the
	// web server's shutdown until it ended (Close stops them again, which
	// does nothing more).
	g.Go(func() error {
		<-gctx.Done()
		a.stopComputations()
		return nil
	})
	// Compute the leaderboard analysis now, not on the first reader's
	// request (on a large database it takes seconds), and again whenever
	// a write, by any process, moves what it reads.
	g.Go(func() error {
		if _, err := a.Rounds.Analysis(gctx); err != nil && gctx.Err() == nil {
			a.Logger.Warn("forecast: analysis at start-up", "err", err)
		}
		a.Rounds.Follow(gctx, rounds.FollowEvery)
		return nil
	})
	err = g.Wait()
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}
