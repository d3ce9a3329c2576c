package main

import (
	"context"
	"fmt"
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
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/scripted"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/stats"
)

func init() {
	register("backtest", "run LLM forecasters on imported historical questions", runBacktest)
}

const backtestUsage = "--source forecastbench (--agents FILE | --scripted) [--from DATE] [--to DATE] [--round-size K] [--workers N] [--cache-dir DIR] [--cache-only] [--max-usd X] [--search PROVIDER] [--out DIR] [--format table|json]"

func runBacktest(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "backtest", backtestUsage)
	cf := addConfigFlags(fs, false)
	source := fs.String("source", "", "question source: forecastbench (imported with 'arena import forecastbench')")
	agentsFile := fs.String("agents", "", "model registry file (see examples/agents.json)")
	scriptedRun := fs.Bool("scripted", false, "instead of models, run two scripted stand-ins (always 0.5; the market price shown) served on loopback: an offline try-out, not a model's score")
	from := fs.String("from", "", "first forecast due date, YYYY-MM-DD (default: all)")
	to := fs.String("to", "", "last forecast due date, YYYY-MM-DD (default: all)")
	k := fs.Int("round-size", backtest.DefaultK, "questions per round")
	workers := fs.Int("workers", 4, "concurrent (agent, round) forecasts")
	cacheDir := fs.String("cache-dir", "", "content-addressed model-call cache (default: llm-cache beside the SQLite database, or ARENA_DATA_DIR/llm-cache)")
	cacheOnly := fs.Bool("cache-only", false, "answer only from the cache; a miss is a failed round, no model is called")
	maxUSD := fs.Float64("max-usd", 0, "stop spending once the run could exceed X USD (0: the agents file's max_usd, if any)")
	search := fs.String("search", "", "offer the searchWeb tool through this provider: exa (ARENA_EXA_API_KEY or EXA_API_KEY) or dir:PATH of prepared packets (default: no search)")
	out := fs.String("out", "", "write DIR/forecasts.csv in the 'arena score' input format")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if *source != "forecastbench" {
		return arena.Errorf(arena.EINVALID, "--source %q: want forecastbench", *source)
	}
	if (*agentsFile == "") == !*scriptedRun {
		return arena.Errorf(arena.EINVALID, "give --agents FILE or --scripted, one of them (run 'arena backtest -h')")
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	if *k < 1 || *workers < 1 || *maxUSD < 0 || math.IsNaN(*maxUSD) {
		return arena.Errorf(arena.EINVALID, "--round-size and --workers must be ≥ 1 and --max-usd ≥ 0")
	}
	fromT, toT, err := dateRange(*from, *to)
	if err != nil {
		return err
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	if *scriptedRun {
		stop, file, err := startScripted()
		if err != nil {
			return err
		}
		defer stop()
		*agentsFile = file
	}
	reg, err := llm.LoadRegistry(*agentsFile)
	if err != nil {
		return err
	}
	if *cacheDir == "" {
		d, ok := o.DataDirectory()
		if !ok {
			return fmt.Errorf("--cache-dir DIR is required with this database (or set ARENA_DATA_DIR)")
		}
		*cacheDir = filepath.Join(d, "llm-cache")
	}
	if err := checkCacheDir(*cacheDir, *cacheOnly); err != nil {
		return err
	}
	logger := newLogger(env, o.LogLevel)
	db, err := openExisting(ctx, o.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	// Dataset questions too: a round with human forecasts asks the
	// models the humans' question set, dataset questions included.
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		return err
	}
	humans, err := backtest.HumanForecasts(ctx, db, fromT, toT)
	if err != nil {
		return err
	}
	plan, err := backtest.CutWith(ms, *k, fromT, toT, backtest.HumanItems(humans))
	if err != nil {
		return err
	}
	fc, skipped := agent.NewForecasters(reg, llm.EnvLookup(env.Environ), int64(math.Round(*maxUSD*1e6)), llm.WithLogger(logger))
	fc.Cache, fc.CacheOnly, fc.Sink = llm.DirStore{Dir: *cacheDir}, *cacheOnly, &agent.MemSink{}
	bar := progress.New(env.Stderr, 0, "forecasts")
	r := &backtest.Runner{Store: db, Agents: fc, Skipped: skipped, Workers: *workers, Logger: logger, Progress: bar.Set}
	if r.Search, err = app.Search(o, *search, *cacheDir, *cacheOnly, logger); err != nil {
		return err
	}
	rep, err := r.Run(ctx, plan)
	bar.Finish()
	if err != nil {
		return err
	}
	if len(humans) > 0 {
		if rep.Board, err = backtest.HumanBoard(ctx, backtest.PlanItems(plan), rep.Rows, forecastbench.Aggregate(humans), nil, false, stats.BoardOptions{Seed: 1}); err != nil {
			return err
		}
	}
	if *out != "" {
		if err := os.MkdirAll(*out, 0o755); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		f, err := os.Create(filepath.Join(*out, "forecasts.csv"))
		if err != nil {
			return fmt.Errorf("--out: %w", err)
		}
		if err := backtest.WriteCSV(f, rep.Rows); err != nil {
			f.Close()
			return fmt.Errorf("--out: %w", err)
		}
		if err := f.Close(); err != nil {
			return fmt.Errorf("--out: %w", err)
		}
	}
	if *format == "json" {
		return writeJSON(env.Stdout, rep)
	}
	return writeBacktestTable(env, rep)
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
