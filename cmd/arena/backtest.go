package main

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/scripted"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/stats"
)

func init() {
	register("backtest", "run LLM forecasters on imported historical questions", runBacktest)
}

const backtestUsage = "--source forecastbench (--agents FILE | --scripted) [--from DATE] [--to DATE] [--round-size K] [--workers N] [--cache-dir DIR] [--cache-only] [--max-usd X] [--search PROVIDER] [--out DIR] [--format table|json]"

// backtestFlags are the flags of `arena backtest`.
type backtestFlags struct {
	source, agentsFile, from, to, cacheDir, search, out, format *string
	scriptedRun, cacheOnly                                      *bool
	k, workers                                                  *int
	maxUSD                                                      *float64
}

func runBacktest(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "backtest", backtestUsage)
	cf := addConfigFlags(fs, false)
	f := &backtestFlags{
		source:      fs.String("source", "", "question source: forecastbench (imported with 'arena import forecastbench')"),
		agentsFile:  fs.String("agents", "", "model registry file (see examples/agents.json)"),
		scriptedRun: fs.Bool("scripted", false, "instead of models, run two scripted stand-ins (always 0.5; the market price shown) served on loopback: an offline try-out, not a model's score"),
		from:        fs.String("from", "", "first forecast due date, YYYY-MM-DD (default: all)"),
		to:          fs.String("to", "", "last forecast due date, YYYY-MM-DD (default: all)"),
		k:           fs.Int("round-size", backtest.DefaultK, "questions per round"),
		workers:     fs.Int("workers", 4, "concurrent (agent, round) forecasts"),
		cacheDir:    fs.String("cache-dir", "", "content-addressed model-call cache (default: llm-cache beside the SQLite database, or ARENA_DATA_DIR/llm-cache)"),
		cacheOnly:   fs.Bool("cache-only", false, "answer only from the cache; a miss is a failed round, no model is called"),
		maxUSD:      fs.Float64("max-usd", 0, "stop spending once the run could exceed X USD (0: the agents file's max_usd, if any)"),
		search:      fs.String("search", "", "offer the searchWeb tool through this provider: exa (ARENA_EXA_API_KEY or EXA_API_KEY) or dir:PATH of prepared packets (default: no search)"),
		out:         fs.String("out", "", "write DIR/forecasts.csv in the 'arena score' input format"),
		format:      fs.String("format", "table", "output format: table or json"),
	}
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	fromT, toT, err := dateRange(*f.from, *f.to)
	if err != nil {
		return err
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	if *f.scriptedRun {
		stop, file, err := startScripted()
		if err != nil {
			return err
		}
		defer stop()
		*f.agentsFile = file
	}
	reg, err := llm.LoadRegistry(*f.agentsFile)
	if err != nil {
		return err
	}
	if err := f.useCacheDir(o); err != nil {
		return err
	}
	logger := newLogger(env, o.LogLevel)
	db, err := openExisting(ctx, o.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	plan, humans, err := backtestPlan(ctx, db, *f.k, fromT, toT)
	if err != nil {
		return err
	}
	rep, err := f.forecast(ctx, env, o, db, reg, plan, logger)
	if err != nil {
		return err
	}
	if len(humans) > 0 {
		if rep.Board, err = backtest.HumanBoard(ctx, backtest.PlanItems(plan), rep.Rows, forecastbench.Aggregate(humans), nil, false, stats.BoardOptions{Seed: 1}); err != nil {
			return err
		}
	}
	if *f.out != "" {
		if err := writeForecastsCSV(*f.out, rep.Rows); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if *f.format == "json" {
		return writeJSON(env.Stdout, rep)
	}
	return writeBacktestTable(env, rep)
}

// useCacheDir checks the model-call cache directory, by default llm-cache
// in the data directory of o.
func (f *backtestFlags) useCacheDir(o config.Options) error {
	if *f.cacheDir == "" {
		d, ok := o.DataDirectory()
		if !ok {
			return fmt.Errorf("--cache-dir DIR is required with this database (or set ARENA_DATA_DIR)")
		}
		*f.cacheDir = filepath.Join(d, "llm-cache")
	}
	return checkCacheDir(*f.cacheDir, *f.cacheOnly)
}

// forecast runs the agents of reg on the plan's rounds, storing their
// forecasts in db, with a progress bar on stderr, and returns the report.
func (f *backtestFlags) forecast(ctx context.Context, env *Env, o config.Options, db *store.DB, reg *llm.Registry, plan *backtest.Plan, logger *slog.Logger) (*backtest.Report, error) {
	fc, skipped := agent.NewForecasters(reg, llm.EnvLookup(env.Environ), int64(math.Round(*f.maxUSD*1e6)), llm.WithLogger(logger))
	fc.Cache, fc.CacheOnly, fc.Sink = llm.DirStore{Dir: *f.cacheDir}, *f.cacheOnly, &agent.MemSink{}
	bar := progress.New(env.Stderr, 0, "forecasts")
	r := &backtest.Runner{Store: db, Agents: fc, Skipped: skipped, Workers: *f.workers, Logger: logger, Progress: bar.Set}
	var err error
	if r.Search, err = app.Search(o, *f.search, *f.cacheDir, *f.cacheOnly, logger); err != nil {
		return nil, err
	}
	rep, err := r.Run(ctx, plan)
	bar.Finish()
	return rep, err
}

// check refuses flags out of range or that cannot go together, before
// anything is read.
func (f *backtestFlags) check() error {
	if *f.source != "forecastbench" {
		return arena.Errorf(arena.EINVALID, "--source %q: want forecastbench", *f.source)
	}
	if (*f.agentsFile == "") == !*f.scriptedRun {
		return arena.Errorf(arena.EINVALID, "give --agents FILE or --scripted, one of them (run 'arena backtest -h')")
	}
	if err := checkFormat(*f.format, "table", "json"); err != nil {
		return err
	}
	if *f.k < 1 || *f.workers < 1 || *f.maxUSD < 0 || math.IsNaN(*f.maxUSD) {
		return arena.Errorf(arena.EINVALID, "--round-size and --workers must be ≥ 1 and --max-usd ≥ 0")
	}
	return nil
}

// backtestPlan cuts the stored ForecastBench questions due from from to
// to into rounds of k, and returns it with the human forecasts of those
// days.
func backtestPlan(ctx context.Context, db *store.DB, k int, from, to time.Time) (*backtest.Plan, []arena.HumanForecast, error) {
	// Dataset questions too: a round with human forecasts asks the
	// models the humans' question set, dataset questions included.
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		return nil, nil, err
	}
	humans, err := backtest.HumanForecasts(ctx, db, from, to)
	if err != nil {
		return nil, nil, err
	}
	plan, err := backtest.CutWith(ms, k, from, to, backtest.HumanItems(humans))
	if err != nil {
		return nil, nil, err
	}
	return plan, humans, nil
}

// writeForecastsCSV writes rows to dir/forecasts.csv, in the `arena score`
// input format, making dir if need be.
func writeForecastsCSV(dir string, rows []stats.Row) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "forecasts.csv"))
	if err != nil {
		return err
	}
	if err := backtest.WriteCSV(f, rows); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func writeBacktestTable(env *Env, rep *backtest.Report) error {
	fmt.Fprintf(env.Stdout, "%d rounds, %d questions in rounds, %d left over\n", rep.Rounds, rep.Questions, rep.LeftOver)
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "agent\tforecasts\texcluded_by_cutoff\tfailures\tbrier\talpha\tcost_usd\tbilled_usd\tcalls\tcached_calls\t")
	f := func(p *float64) string {
		if p == nil {
			return "—"
		}
		return fmt.Sprintf("%.4f", *p)
	}
	for _, a := range rep.Agents {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%s\t%s\t%.6f\t%s\t%d\t%d\t\n", a.Agent, a.Forecasts, a.ExcludedByCutoff, a.Failures, f(a.Brier), f(a.Alpha),
			a.CostUSD, billedText(fmt.Sprintf("%.6f", a.BilledUSD), a.BilledCalls, a.Calls), a.Calls, a.CachedCalls)
	}
	tw.Flush()
	fmt.Fprintf(env.Stdout, "cost: %.6f USD over %d calls (%d cached calls, free); billed by the provider: %s\n",
		rep.Cost.USD, rep.Cost.Calls, rep.Cost.CachedCalls, billedText(fmt.Sprintf("%.6f USD", rep.Cost.BilledUSD), rep.Cost.BilledCalls, rep.Cost.Calls))
	for _, a := range rep.Agents {
		for _, n := range a.Notes {
			fmt.Fprintf(env.Stdout, "%s: %s\n", a.Agent, n)
		}
	}
	for _, s := range rep.Stops {
		fmt.Fprintf(env.Stdout, "stopped: %s\n", s.Error())
	}
	if len(rep.Board) > 0 {
		fmt.Fprintln(env.Stdout, "\nHumans and models on the same questions:")
		return writeBoardTable(env.Stdout, rep.Board)
	}
	return nil
}

// dateRange reads --from and --to (YYYY-MM-DD, either may be empty: no
// bound), refusing a range that ends before it starts.
func dateRange(from, to string) (fromT, toT time.Time, err error) {
	if from != "" {
		if fromT, err = time.Parse(time.DateOnly, from); err != nil {
			return fromT, toT, arena.Errorf(arena.EINVALID, "--from %q: want YYYY-MM-DD", from)
		}
	}
	if to != "" {
		if toT, err = time.Parse(time.DateOnly, to); err != nil {
			return fromT, toT, arena.Errorf(arena.EINVALID, "--to %q: want YYYY-MM-DD", to)
		}
	}
	if !fromT.IsZero() && !toT.IsZero() && fromT.After(toT) {
		return fromT, toT, arena.Errorf(arena.EINVALID, "--from %s is after --to %s: no question set is due between them", from, to)
	}
	return fromT, toT, nil
}

// billedText shows what providers reported charging (amount, over billed
// of the calls) beside the estimate: "—" when no call reported a cost, the
// amount with the share of calls it covers when only some did.
func billedText(amount string, billed, calls int64) string {
	switch {
	case billed == 0:
		return "—"
	case billed < calls:
		return fmt.Sprintf("%s (%d of %d calls)", amount, billed, calls)
	}
	return amount
}

// startScripted serves the scripted stand-ins on a loopback port and writes
// their agents file; stop closes the server and removes the file.
func startScripted() (stop func(), agentsFile string, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, "", fmt.Errorf("--scripted: listen on loopback: %w", err)
	}
	srv := &http.Server{Handler: scripted.Handler(), ReadHeaderTimeout: 10 * time.Second}
	go srv.Serve(ln)
	dir, err := os.MkdirTemp("", "arena-scripted-")
	if err != nil {
		srv.Close()
		return nil, "", fmt.Errorf("--scripted: %w", err)
	}
	// A cutoff before any question set: the stand-ins learned nothing, so
	// the contamination guard has nothing to withhold from them.
	file := filepath.Join(dir, "agents.json")
	if err := os.WriteFile(file, scripted.Registry("http://"+ln.Addr().String()+"/v1", "2000-01-01"), 0o600); err != nil {
		srv.Close()
		os.RemoveAll(dir)
		return nil, "", fmt.Errorf("--scripted: %w", err)
	}
	return func() { srv.Close(); os.RemoveAll(dir) }, file, nil
}
