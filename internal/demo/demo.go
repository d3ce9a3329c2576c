// Package demo runs Forecast Arena offline, end to end: a fresh SQLite
// store, the simulator on an accelerated clock, and every round
// through the real protocol path — agents sign commits and reveals and send
// them over HTTP to the real server, which verifies, stores and scores them.
package demo

import (
	"cmp"
	"context"
	"crypto/ecdsa"
	"encoding/binary"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"golang.org/x/sync/errgroup"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/strategy"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/participant"
)

// Config sets up a demo run.
type Config struct {
	Seed    int64
	Rounds  int
	Markets int       // simulator markets (default 200)
	Start   time.Time // simulated start (default the simulator's)
	Dir     string    // working directory for the database and agent state (default: a new temp dir)
	// DB, when set, is the database URL to play on instead of a SQLite
	// file in Dir (an empty PostgreSQL schema, for tests of several
	// servers on one database); the log key is then Dir's log.key.
	DB string
	// Agents are simulator agents that take part through the API.
	Agents []string
	// Venues names the simulator's markets after venues (see
	// sim.ParseVenues: "kalshi,manifold,polymarket"), so its rounds mix
	// them; "" names none. The world, its prices and outcomes, and so
	// every score, are the same either way.
	Venues string
	Logger *slog.Logger
	// Progress, when set, is told how much of a stage is done, of a total
	// known from its start: StageRounds, the rounds played; then
	// StageSettle, the clock's steps until the markets still pending have
	// resolved (it may end a few steps early, once every round is scored
	// and every position settled).
	Progress func(stage string, done, total int)
}

// The stages of a demo run, as Progress names them.
const (
	StageRounds = "rounds"
	StageSettle = "settling steps"
)

// DefaultAgents take part in every demo round next to the server's random
// and market baselines.
var DefaultAgents = []string{"informed-0.02", "informed-0.05", "informed-0.10", "overconfident", "stale"}

// Result is a finished demo.
type Result struct {
	Dir         string
	DBURL       string
	Rounds      int
	Scored      int
	Leaderboard scoring.Board
	// Cohorts is how many weekly trading cohorts ran; Trading is the
	// trading track's leaderboard across them, by mean return.
	Cohorts int
	Trading []trading.LeaderRowJSON
	// App is the arena the demo ran, built as arena serve builds its own;
	// its Handler and DB stay usable for serving the dashboard, and Close
	// releases them.
	App     *app.App
	Handler http.Handler
	DB      *store.DB
	Clock   *clock.Manual // the accelerated clock every component reads
	// Oracle counts the disputed markets and how they were resolved.
	Oracle OracleSummary
}

// Close releases the store.
func (r *Result) Close() error { return r.App.Close() }

// Round schedule on the simulated clock.
const (
	roundEvery   = 24 * time.Hour
	commitIn     = time.Hour
	revealGap    = time.Minute
	revealWindow = 2 * time.Hour
	grace        = 8 * 24 * time.Hour // longer than any market's close after the reveal (MaxCloseAfter): rounds wait for every outcome
	settleStep   = 6 * time.Hour      // the clock's step once every round is played
)

// Run plays cfg.Rounds forecast rounds and scores them.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if cfg.Rounds <= 0 {
		return nil, arena.Errorf(arena.EINVALID, "demo: rounds must be positive, got %d", cfg.Rounds)
	}
	if cfg.Agents == nil {
		cfg.Agents = DefaultAgents
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	venues, err := sim.ParseVenues(cfg.Venues)
	if err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	world, err := sim.New(sim.Config{Seed: cfg.Seed, Markets: cfg.Markets, Start: cfg.Start, Venues: venues})
	if err != nil {
		return nil, err
	}
	wc := world.Config()
	// serve's round job creates one round a UTC day, at the day's first
	// step: a start later in the day would see two days in one round's
	// steps.
	if !wc.Start.Equal(wc.Start.Truncate(roundEvery)) {
		return nil, arena.Errorf(arena.EINVALID, "demo: the start %s must be at 00:00 UTC (a round is created each UTC day)", wc.Start.Format(time.RFC3339))
	}
	if max := int(wc.Horizon / roundEvery); cfg.Rounds > max {
		return nil, arena.Errorf(arena.EINVALID, "demo: at most %d rounds fit the simulator's %s horizon", max, wc.Horizon)
	}
	temp := cfg.Dir == ""
	if temp {
		if cfg.Dir, err = os.MkdirTemp("", "arena-demo-"); err != nil {
			return nil, fmt.Errorf("demo: %w", err)
		}
	} else if err := os.MkdirAll(cfg.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("demo: %w", err)
	}
	res, err := play(ctx, cfg, world)
	if err == nil || ctx.Err() == nil {
		return res, err
	}
	// Stopped by its caller (Ctrl-C): a half-played world in a directory
	// of its own is of no use, one the user chose is theirs.
	stop := &Interrupted{Dir: cfg.Dir, Removed: temp}
	if temp && os.RemoveAll(cfg.Dir) != nil {
		stop.Removed = false
	}
	return nil, stop
}

// play opens the demo's database in cfg.Dir and plays the world on it.
func play(ctx context.Context, cfg Config, world *sim.World) (*Result, error) {
	// A demo plays a fresh world from its start; on top of an earlier run
	// its rounds and cohorts would collide with the stored ones.
	path := filepath.Join(cfg.Dir, "arena.db")
	if _, err := os.Stat(path); err == nil && cfg.DB == "" {
		return nil, arena.Errorf(arena.ECONFLICT, "demo: %s already holds an arena database; remove it or choose another --dir", path)
	}
	dbURL := cmp.Or(cfg.DB, "sqlite:"+path)
	// A demo's database is a throwaway: its commits are not flushed to
	// disk one by one (the output says so).
	db, err := store.Open(ctx, dbURL, store.Unsynced())
	if err != nil {
		return nil, err
	}
	// The demo serves its database until Close, as arena serve would.
	if err := db.ClaimServer(); err != nil {
		db.Close()
		return nil, err
	}
	res := &Result{Dir: cfg.Dir, DBURL: dbURL, DB: db, Clock: &clock.Manual{}}
	if err := run(ctx, cfg, world, res); err != nil {
		if res.App != nil {
			res.App.Close()
		} else {
			db.Close()
		}
		return nil, err
	}
	return res, nil
}

// Interrupted is Run's error when its context ended before the demo did.
type Interrupted struct {
	Dir     string
	Removed bool // the directory was Run's own temporary one, now removed
}

func (e *Interrupted) Error() string {
	if e.Removed {
		return "demo: interrupted; its temporary directory " + e.Dir + " is removed"
	}
	return "demo: interrupted; its files are kept in " + e.Dir
}

// options are the demo's settings: the defaults, on its database, with its
// rounds' schedule and grace, offline (no Polymarket sync, no export
// copies), without rate limits (its agents send thousands of requests from
// one address within seconds) and without retrying round creation (the
// world is synced before each round is created, so a shortage is a bug).
func options(dbURL string) config.Options {
	o := config.Defaults()
	o.DB, o.RoundGrace = dbURL, grace
	o.RoundEvery, o.RoundCommitIn, o.RoundRevealDelay, o.RoundRevealWin = roundEvery, commitIn, revealGap, revealWindow-revealGap
	o.RoundRetryFor, o.NoSync, o.ExportEvery = 0, true, 0
	o.RateIPPerMin, o.RateAgentPerMin = 0, 0
	return o
}

func run(ctx context.Context, cfg Config, world *sim.World, res *Result) error {
	d := &demoRun{cfg: cfg, world: world, res: res, clk: res.Clock, db: res.DB, start: world.Config().Start}
	d.clk.Set(d.start)
	d.db.Now = d.clk.Now // stored timestamps follow the simulated clock too
	if err := d.wire(ctx); err != nil {
		return err
	}
	// The agents talk to the real HTTP server on loopback.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("demo: listen: %w", err)
	}
	hs := &http.Server{Handler: res.Handler}
	go hs.Serve(ln)
	defer hs.Close()
	base := "http://" + ln.Addr().String()
	if err := d.joinAgents(ctx, base); err != nil {
		return err
	}
	if err := d.schedule(ctx, base); err != nil {
		return err
	}
	if err := d.playRounds(ctx); err != nil {
		return err
	}
	if err := d.settle(ctx); err != nil {
		return err
	}
	return d.results(ctx)
}

// demoRun is one demo's state from phase to phase of run: the parts it
// wires, the agents it joins, the scheduler that plays them, and what the
// world's sync has recorded so far.
type demoRun struct {
	cfg   Config
	world *sim.World
	res   *Result
	clk   *clock.Manual
	db    *store.DB
	start time.Time

	app     *app.App
	trading *app.TradingTrack
	orc     *demoOracle
	clients []*participant.Client
	js      []jobs.Job
	sched   *jobs.Scheduler

	lastSync time.Time // the end of the world's last sync
	// settling is set once every round is played: the agents have
	// nothing left to send, and the world's sync records only the prices
	// in force.
	settling bool
}

// wire stores the demo's deployment identifier and builds its services
// with app.New: the rounds' rules, the simulated traders' lineup and the
// demo's oracle panel, then the trading track and the HTTP handler.
func (d *demoRun) wire(ctx context.Context) error {
	cfg, res, db := d.cfg, d.res, d.db
	rules := rounds.Rules{MinPrice: 0.03, MaxPrice: 0.97, MinCloseAfter: arena.Duration(time.Hour),
		MaxCloseAfter: arena.Duration(7 * 24 * time.Hour), Sources: []string{arena.SourceSim}}
	if vs := d.world.Config().Venues; vs != "" {
		rules.ShareEqually(strings.Split(vs, ","))
	}
	// The demo's deployment identifier follows from its seed, so that the
	// same seed signs, logs and prints the same; later commands on its
	// database (export, verify) find it there like any arena's.
	demoID := common.BytesToAddress(crypto.Keccak256([]byte(fmt.Sprintf("forecast arena demo, seed %d", cfg.Seed))))
	if _, err := db.InitSetting(ctx, forecast.DeploymentKey, demoID.Hex()); err != nil {
		return err
	}
	// The trading track runs alongside: weekly cohorts of simulated traders
	// whose bet sizes follow their own skill.
	lineup, err := agent.SimLineup(agent.SimSpec{Seed: cfg.Seed, Markets: cfg.Markets, Start: cfg.Start}, cfg.Agents)
	if err != nil {
		return err
	}
	o := options(res.DBURL)
	if cfg.DB != "" {
		o.DataDir = cfg.Dir
	}
	if d.orc, err = newDemoOracle(cfg.Seed, db, o, d.clk.Now); err != nil {
		return err
	}
	// Every accepted submission and score goes to the tamper-evident log,
	// whose key lives next to the demo's database, named after it: another
	// database's key in the same directory is not the demo's.
	a, err := app.New(ctx, o, app.Deps{Logger: cfg.Logger, DB: db, Now: d.clk.Now, Rules: &rules, Lineup: lineup, Panel: d.orc.panel, Log: app.LogWrite})
	if err != nil {
		return err
	}
	d.app, res.App, d.orc.svc = a, a, a.Oracle
	if d.trading, err = a.Trading(ctx); err != nil {
		return err
	}
	res.Handler, err = a.Handler()
	return err
}

// joinAgents gives each of the demo's agents a client of the server at
// base and registers it under its trader's name.
func (d *demoRun) joinAgents(ctx context.Context, base string) error {
	cfg := d.cfg
	for _, name := range cfg.Agents {
		key := forecast.NewKey(agentKey(cfg.Seed, name))
		// Agents commit half an hour before the deadline, then reveal in
		// the window once benchmarks are in.
		c := &participant.Client{Server: base, Key: key, StateDir: filepath.Join(d.res.Dir, "agents", name), Now: d.clk.Now, Logger: cfg.Logger,
			LeadTime: commitIn / 2}
		strat, err := strategy.NewSim(d.world, name, c.LookupMarket, d.clk.Now)
		if err != nil {
			return err
		}
		c.Strategy = strat
		// Named as its trader in the cohorts, through the check every
		// profile passes.
		if err := rounds.RegisterAgent(ctx, d.db, arena.AgentInfo{Address: key.Address().Hex(), Name: agent.SimName(name), Kind: agent.KindSim}); err != nil {
			return fmt.Errorf("demo: agent %s: %w", name, err)
		}
		d.clients = append(d.clients, c)
	}
	return nil
}

// schedule builds the scheduler the clock drives: at each step it runs
// what is due then: the world, the very jobs arena serve runs (rounds,
// benchmarks, scoring, the trading cohorts), then the agents.
func (d *demoRun) schedule(ctx context.Context, base string) error {
	d.lastSync = d.start.Add(-2 * time.Hour)
	served, err := d.app.Jobs(ctx, base)
	if err != nil {
		return err
	}
	d.js = append([]jobs.Job{{Name: "demo-world", Schedule: jobs.Every(time.Minute), Run: d.sync}}, served...)
	d.js = append(d.js, jobs.Job{Name: "demo-agents", Schedule: jobs.Every(time.Minute), Run: d.runAgents})
	d.sched = &jobs.Scheduler{Store: d.db, Jobs: d.js, Now: d.clk.Now, Logger: d.cfg.Logger, Metrics: d.app.Metrics, Owner: "demo"}
	return nil
}

// sync is the world's job: it records what a market source's sync would
// have since the last step, then steps the demo's operator and arbiter.
func (d *demoRun) sync(ctx context.Context, _ time.Time) error {
	now := d.clk.Now()
	ms := d.world.MarketsSince(d.lastSync, now)
	if d.settling {
		// Once every round is played no agent reads a price history:
		// the settling steps record what a sync every settleStep
		// would, each open market's price in force, instead of the
		// whole 10-minute grid (nine tenths of a short demo's rows).
		ms = d.world.LiveMarkets(now, now)
	}
	if _, err := d.db.SaveMarkets(ctx, ms); err != nil {
		return err
	}
	d.lastSync = now
	return d.orc.step(ctx, ms, now)
}

// runAgents is the agents' job. They act at once, as independent agents
// do: the server takes their submissions in any order. Once every round
// is revealed they have nothing left to send.
func (d *demoRun) runAgents(ctx context.Context, _ time.Time) error {
	if d.settling {
		return nil
	}
	g, gctx := errgroup.WithContext(ctx)
	for _, c := range d.clients {
		g.Go(func() error {
			if _, err := c.RunOnce(gctx); err != nil {
				return fmt.Errorf("demo: agent %s: %w", c.Strategy.Name(), err)
			}
			return nil
		})
	}
	return g.Wait()
}

// step moves the clock to t and runs the jobs due then.
func (d *demoRun) step(ctx context.Context, t time.Time) error {
	d.clk.Set(t)
	return d.sched.RunDue(ctx)
}

// progress reports a stage's advance to the caller, if it asked.
func (d *demoRun) progress(stage string, done, total int) {
	if d.cfg.Progress != nil {
		d.cfg.Progress(stage, min(done, total), total)
	}
}

// playRounds plays every round: each is created, committed to, benchmarked
// and revealed at its own steps of the clock.
func (d *demoRun) playRounds(ctx context.Context) error {
	for i := 0; i < d.cfg.Rounds; i++ {
		t := d.start.Add(time.Duration(i) * roundEvery)
		for _, at := range []time.Duration{0, commitIn / 2, commitIn + 10*time.Minute, commitIn + revealWindow + time.Minute} {
			if err := d.step(ctx, t.Add(at)); err != nil {
				return err
			}
		}
		d.progress(StageRounds, i+1, d.cfg.Rounds)
	}
	if err := tally(ctx, d.db, d.res); err != nil {
		return err
	}
	if d.res.Rounds != d.cfg.Rounds {
		return fmt.Errorf("demo: %d rounds created, want %d", d.res.Rounds, d.cfg.Rounds)
	}
	return nil
}

// settle lets the remaining markets resolve: it steps the clock until the
// rounds are scored and the cohorts' positions settled (the simulator
// resolves every market by its end).
func (d *demoRun) settle(ctx context.Context) error {
	db, res := d.db, d.res
	// Rounds and cohorts start while rounds are being played; the settling
	// steps run the jobs that score, value and settle.
	d.sched.Jobs = slices.DeleteFunc(d.js, func(j jobs.Job) bool {
		switch j.Name {
		case rounds.JobCreateRound, trading.JobCohortStart, trading.JobDecisionRun:
			return true
		}
		return false
	})
	worldEnd := d.start.Add(d.world.Config().Horizon + 15*24*time.Hour)
	settled, err := settledBy(ctx, db, d.world, d.clk.Now())
	if err != nil {
		return err
	}
	if settled.After(worldEnd) {
		settled = worldEnd
	}
	steps := int((settled.Sub(d.clk.Now()) + settleStep - 1) / settleStep)
	d.settling = true
	for i, t := 0, d.clk.Now().Add(settleStep); !t.After(worldEnd); i, t = i+1, t.Add(settleStep) {
		open, err := db.OpenPositionMarkets(ctx)
		if err != nil {
			return err
		}
		if err := tally(ctx, db, res); err != nil {
			return err
		}
		if res.Scored == res.Rounds && len(open) == 0 {
			break
		}
		if err := d.step(ctx, t); err != nil {
			return err
		}
		d.progress(StageSettle, i+1, steps)
	}
	return tally(ctx, db, res)
}

// results reads into the result the two tracks' leaderboards and the
// oracle's summary.
func (d *demoRun) results(ctx context.Context) error {
	res := d.res
	lb, _, err := d.app.Rounds.Leaderboard(ctx, rounds.Filter{})
	if err != nil {
		return err
	}
	res.Leaderboard = lb
	tb, err := d.trading.Engine.Leaderboard(ctx, 0, "")
	if err != nil {
		return err
	}
	res.Trading = tb.Rows
	res.Oracle, err = d.orc.summary(ctx)
	return err
}

// tally counts into res the rounds played, those scored and the cohorts
// started.
func tally(ctx context.Context, db *store.DB, res *Result) error {
	rounds, err := db.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		return err
	}
	cohorts, err := db.Cohorts(ctx, "")
	if err != nil {
		return err
	}
	res.Rounds, res.Scored, res.Cohorts = len(rounds), 0, len(cohorts)
	for _, r := range rounds {
		if !r.TriggeredAt.IsZero() {
			res.Scored++
		}
	}
	return nil
}

// settledBy is when the markets still pending at now (in an unscored
// round or an open position) have all resolved, a dispute of any of them
// included.
func settledBy(ctx context.Context, db *store.DB, world *sim.World, now time.Time) (time.Time, error) {
	ids, err := db.OpenPositionMarkets(ctx)
	if err != nil {
		return time.Time{}, err
	}
	rounds, err := db.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		return time.Time{}, err
	}
	for _, r := range rounds {
		if r.TriggeredAt.IsZero() {
			for _, rm := range r.Markets {
				ids = append(ids, rm.MarketID)
			}
		}
	}
	ms, err := db.MarketsByID(ctx, ids)
	if err != nil {
		return time.Time{}, err
	}
	last := now
	for _, m := range ms {
		if r := m.CloseTime.Add(world.Config().ResolveDelay + disputeWithin + arbiterDelay); r.After(last) {
			last = r
		}
	}
	return last, nil
}

// agentKey derives a simulated agent's key from the seed and its name, so
// the same seed gives the same addresses and the same output.
func agentKey(seed int64, name string) *ecdsa.PrivateKey {
	var s [8]byte
	binary.BigEndian.PutUint64(s[:], uint64(seed))
	for i := 0; ; i++ {
		h := crypto.Keccak256([]byte("forecast-arena demo agent"), s[:], []byte(name), []byte{byte(i)})
		if k, err := crypto.ToECDSA(h); err == nil {
			return k
		}
	}
}
