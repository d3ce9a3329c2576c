package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/retrieve"
	"github.com/forecast-arena/arena/safefile"
)

func init() {
	register("oracle", "resolve markets with an LLM panel, and evaluate panels", runOracle)
}

const oracleUsage = `Usage: arena oracle <subcommand> [flags]

Subcommands:
  eval      evaluate resolver panels on questions with known answers
  resolve   run the panel on one market (resolved, or escalated to the queue)
  queue     list the markets waiting for a human arbiter
  decide    record an arbiter's decision (or, with --re-resolve, revise one)
  flag      mark an unresolved market ambiguous: the oracle resolves it
  dispute   contest a market's resolution by its source: the oracle or an arbiter decides it
`

func runOracle(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, args, oracleUsage, oracleSubs)
}

var oracleSubs = map[string]func(context.Context, *Env, []string) error{
	"eval": oracleEval,
}

const oracleEvalUsage = "(--questions FILE | --source forecastbench [--db URL]) --agents FILE [--arch single,majority,weighted,deliberative] [--workers N] [--cache-dir DIR] [--cache-only] [--evidence question|dir:PATH|exa] [--format table|json|csv] [--plot FILE.svg]"

// oracleEvalFlags are the flags of `arena oracle eval`.
type oracleEvalFlags struct {
	cf                                                  *configFlags
	questions, source, agents, arch, cacheDir, evidence *string
	exaURL, format, plot                                *string
	workers                                             *int
	cacheOnly                                           *bool
	retryBase                                           *time.Duration
}

func oracleEval(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "oracle eval", oracleEvalUsage)
	f := oracleEvalFlags{
		cf:        addConfigFlags(fs, false),
		questions: fs.String("questions", "", "KalshiBench-style CSV: id,question,description,category,close_time,ground_truth,series_ticker"),
		source:    fs.String("source", "", "evaluate on stored questions instead: forecastbench (its resolved market questions)"),
		agents:    fs.String("agents", "", "model registry file: the resolver panel"),
		arch:      fs.String("arch", "single,majority,weighted,deliberative", "systems to report: single (every resolver alone), single:<agent id>, majority, weighted, deliberative"),
		workers:   fs.Int("workers", 8, "model calls in flight at once"),
		cacheDir:  fs.String("cache-dir", "", "keep evidence and every successful model call here; a rerun repeats none of them"),
		cacheOnly: fs.Bool("cache-only", false, "make no request: answers and evidence come from --cache-dir only (a miss is a recorded failure)"),
		evidence:  fs.String("evidence", "question", "evidence provider: question (its own text), dir:PATH (PATH/<id>.json packets) or exa (web search, key in ARENA_EXA_API_KEY or EXA_API_KEY)"),
		exaURL:    fs.String("exa-url", "", "Exa API base URL (default "+retrieve.DefaultExaURL+")"),
		format:    fs.String("format", "table", "output format: table, json or csv"),
		plot:      fs.String("plot", "", "also write the coverage–accuracy curve and the agreement × confidence table to this SVG file"),
		retryBase: fs.Duration("retry-base", time.Second, "first wait between attempts of a failed call (3 attempts; doubles)"),
	}
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := f.check(); err != nil {
		return err
	}
	reg, err := llm.LoadRegistry(*f.agents)
	if err != nil {
		return err
	}
	var ids []string
	for _, a := range reg.Agents {
		ids = append(ids, a.ID)
	}
	systems, err := oracle.Systems(strings.Split(*f.arch, ","), ids)
	if err != nil {
		return arena.Errorf(arena.EINVALID, "--arch: %v", err)
	}
	o, err := f.cf.options(env)
	if err != nil {
		return err
	}
	qs, err := f.evalQuestions(ctx, o)
	if err != nil {
		return err
	}
	deliberate := slices.Contains(systems, oracle.ArchDeliberative)
	panel, caches, err := app.Panel(o, reg, app.PanelOptions{Environ: env.Environ, CacheOnly: *f.cacheOnly, RetryBase: *f.retryBase,
		Workers: *f.workers, Deliberate: deliberate, Evidence: app.Evidence{Spec: *f.evidence, ExaURL: *f.exaURL, CacheDir: *f.cacheDir},
		LLMOptions: []llm.Option{llm.WithLogger(newLogger(env, "error"))}})
	if err != nil {
		return err
	}
	start := time.Now()
	res, err := askPanel(ctx, env, panel, qs)
	if err != nil {
		return err
	}
	items, tally := evalItems(qs, res)
	rep := oracle.BuildReport(items, ids, systems)
	dead := printEvalSummary(env, tally, len(qs), len(panel.Resolvers), caches, &rep, time.Since(start))
	if *f.plot != "" {
		if err := writeSVG(*f.plot, rep.WriteSVG); err != nil {
			return err
		}
	}
	switch *f.format {
	case "json":
		err = rep.WriteJSON(env.Stdout)
	case "csv":
		err = rep.WriteCSV(env.Stdout)
	default:
		err = rep.WriteTable(env.Stdout)
	}
	if err == nil && len(dead) > 0 {
		// The report is written (it shows what failed), but a resolver
		// that answered nothing makes the run a failure.
		err = errors.New(strings.Join(dead, "; "))
	}
	return err
}

// check refuses flags that cannot run together, and an unusable cache
// directory, before any file is read.
func (f *oracleEvalFlags) check() error {
	if err := checkFormat(*f.format, "table", "json", "csv"); err != nil {
		return err
	}
	switch {
	case (*f.questions == "") == (*f.source == ""):
		return arena.Errorf(arena.EINVALID, "give exactly one of --questions FILE and --source forecastbench")
	case *f.source != "" && *f.source != "forecastbench":
		return arena.Errorf(arena.EINVALID, "--source %q: want forecastbench", *f.source)
	case *f.agents == "":
		return arena.Errorf(arena.EINVALID, "--agents FILE is required (run 'arena oracle eval -h')")
	case *f.workers < 1 || *f.workers > 1024:
		return arena.Errorf(arena.EINVALID, "--workers %d: want 1..1024", *f.workers)
	case *f.cacheOnly && *f.cacheDir == "":
		return arena.Errorf(arena.EINVALID, "--cache-only needs --cache-dir")
	}
	if *f.cacheDir != "" {
		return checkCacheDir(*f.cacheDir, *f.cacheOnly)
	}
	return nil
}

// evalQuestions reads the questions to evaluate on: the --questions CSV,
// or the store's resolved ForecastBench market questions.
func (f *oracleEvalFlags) evalQuestions(ctx context.Context, o config.Options) ([]oracle.EvalQuestion, error) {
	if *f.questions != "" {
		in, err := openInput(ctx, *f.questions)
		if err != nil {
			return nil, err
		}
		qs, err := oracle.ReadQuestionsCSV(in)
		in.Close()
		if err != nil {
			return nil, arena.Errorf(arena.EINVALID, "%s: %v", *f.questions, err)
		}
		return qs, nil
	}
	db, err := openExisting(ctx, o.DB)
	if err != nil {
		return nil, err
	}
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench, Status: arena.StatusResolved, Kind: arena.KindMarket})
	db.Close()
	if err != nil {
		return nil, err
	}
	qs := oracle.FromMarkets(ms)
	if len(qs) == 0 {
		return nil, arena.Errorf(arena.EINVALID, "the store holds no resolved ForecastBench market question (run 'arena import forecastbench' first)")
	}
	return qs, nil
}

// askPanel asks the panel every question, with a progress bar on stderr.
func askPanel(ctx context.Context, env *Env, panel *oracle.Panel, qs []oracle.EvalQuestion) ([]oracle.Result, error) {
	bar := progress.New(env.Stderr, 0, "steps")
	panel.Progress = bar.Set
	questionsOnly := make([]oracle.Question, len(qs))
	for i, q := range qs {
		questionsOnly[i] = q.Question
	}
	res := panel.Run(ctx, questionsOnly)
	bar.Finish()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("interrupted; completed calls are cached, rerun to resume: %w", err)
	}
	return res, nil
}

// evalTally counts the votes of an evaluation: the model calls made, the
// votes that failed and the spend of the calls not taken from the cache.
type evalTally struct {
	calls, failed int
	cost          int64
}

// evalItems pairs each question with the panel's votes on it, counting
// the votes.
func evalItems(qs []oracle.EvalQuestion, res []oracle.Result) ([]oracle.Item, evalTally) {
	items := make([]oracle.Item, len(res))
	var t evalTally
	for i, r := range res {
		items[i] = oracle.Item{ID: qs[i].ID, Category: qs[i].Category, Series: qs[i].Series, Truth: qs[i].Truth, Round1: r.Round1, Round2: r.Round2}
		for _, v := range append(append([]arena.OracleVote{}, r.Round1...), r.Round2...) {
			t.calls += v.Calls
			if !v.Answered() {
				t.failed++
			}
			if !v.Cached {
				t.cost += v.CostMicros
			}
		}
	}
	return items, t
}

// printEvalSummary writes the run's summary to stderr, so that stdout is
// the report alone, byte-identical on a replay: the calls and spend, each
// resolver's failures and the evidence cache. It returns why the run
// fails, one line for each resolver that answered nothing.
func printEvalSummary(env *Env, t evalTally, questions, resolvers int, caches app.PanelCaches, rep *oracle.Report, took time.Duration) []string {
	var hits, misses int64
	for _, c := range caches.Calls {
		h, m := c.Stats()
		hits, misses = hits+h, misses+m
	}
	fmt.Fprintf(env.Stderr, "%d questions, %d resolvers, %d calls (%d from cache, %d not), %d failed votes, new spend $%s, %v\n",
		questions, resolvers, t.calls, hits, misses, t.failed, fmtMicros(t.cost), took.Round(time.Millisecond))
	var dead []string
	for _, rc := range rep.Resolvers {
		if rc.Failed == 0 {
			continue
		}
		fmt.Fprintf(env.Stderr, "resolver %s: %d of %d votes failed; the first, on %s: %s\n", rc.Agent, rc.Failed, rc.Votes, rc.FirstFailureID, redact.String(rc.FirstFailure))
		if rc.AllFailed() {
			dead = append(dead, fmt.Sprintf("resolver %s answered nothing (all %d votes failed; the first: %s)", rc.Agent, rc.Votes, redact.String(rc.FirstFailure)))
		}
	}
	if ev := caches.Evidence; ev != nil {
		h, m := ev.Stats()
		fmt.Fprintf(env.Stderr, "evidence (%s): %d from cache, %d retrieved or missing\n", ev.Provider, h, m)
	}
	return dead
}

// checkCacheDir refuses an unusable cache directory up front, rather than
// after every call has failed to be cached: it must be a directory, and
// writable unless only read (cacheOnly). A missing one is made.
func checkCacheDir(dir string, cacheOnly bool) error {
	st, err := os.Stat(dir)
	switch {
	case err == nil && !st.IsDir():
		return arena.Errorf(arena.EINVALID, "--cache-dir %s is not a directory", dir)
	case errors.Is(err, fs.ErrNotExist) && cacheOnly:
		return arena.Errorf(arena.EINVALID, "--cache-dir %s does not exist (--cache-only answers from it alone)", dir)
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("--cache-dir: %w", err)
		}
	case err != nil:
		return fmt.Errorf("--cache-dir: %w", err)
	}
	if cacheOnly {
		return nil
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return fmt.Errorf("--cache-dir %s is not writable: %w", dir, err)
	}
	f.Close()
	return os.Remove(f.Name())
}

func fmtMicros(m int64) string { return fmt.Sprintf("%d.%06d", m/1e6, m%1e6) }

// writeSVG replaces path with what write produces, whole or not at all
// (see package safefile for what that guarantees on each system).
func writeSVG(path string, write func(io.Writer) error) error {
	return safefile.Replace(path, 0o644, write)
}
