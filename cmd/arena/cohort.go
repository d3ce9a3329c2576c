package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/trading"
)

func init() {
	register("cohort", "trading cohorts: start, run, show, list, snapshot, settle", runCohort)
}

// cohortLLMOptions lets tests shorten the LLM clients' retry backoff;
// production keeps the llm package's defaults.
var cohortLLMOptions = func(log *slog.Logger) []llm.Option { return []llm.Option{llm.WithLogger(log)} }

const cohortUsage = `Usage: arena cohort <subcommand> [flags]

Subcommands:
  start     start the cohort of the week containing --now (Sunday 00:00 UTC)
  run       run the week's decisions of every active cohort (starting this week's if a lineup is given)
  show ID   a cohort's standings at current prices
  list      cohorts, newest first
  snapshot  store a valuation snapshot of every active portfolio
  settle    settle positions in resolved markets

Lineups: --agents FILE (LLM model registry; default ARENA_AGENTS) or --sim-seed N
(the simulated traders of 'arena sync --source sim --seed N').
Run 'arena cohort <subcommand> -h' for its flags.
`

func runCohort(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, args, cohortUsage, map[string]func(context.Context, *Env, []string) error{
		"start":    cohortStart,
		"run":      cohortRun,
		"show":     cohortShow,
		"list":     cohortList,
		"snapshot": cohortSnapshot,
		"settle":   cohortSettle,
	})
}

// parseInterspersed parses flags that may follow positional arguments
// ("show 3 --format json") and returns the positional arguments.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

// cohortFlags are the flags shared by the subcommands that run agents.
type cohortFlags struct {
	fs          *flag.FlagSet
	cf          *configFlags
	now         string
	simSeed     int64
	simMarkets  int
	simStart    string
	retries     int
	concurrency int
	attempts    int
	lineup      bool // the lineup flags were added: setup reads the lineup
}

func addCohortFlags(fs *flag.FlagSet, lineup bool) *cohortFlags {
	var keys []string
	if lineup {
		keys = []string{"ARENA_AGENTS"}
	}
	c := &cohortFlags{fs: fs, cf: addConfigFlags(fs, false, keys...), lineup: lineup, retries: agent.DefaultRetries, concurrency: 2}
	fs.StringVar(&c.now, "now", "", "act at this instant, RFC 3339 (default: the wall clock); for backfills and tests")
	if lineup {
		fs.Int64Var(&c.simSeed, "sim-seed", 0, "use the simulated traders of the sim world with this seed instead of LLMs")
		fs.IntVar(&c.simMarkets, "sim-markets", 0, "sim world: number of markets, as given to 'arena sync --source sim'")
		fs.StringVar(&c.simStart, "sim-start", "", "sim world: start, RFC 3339, as given to 'arena sync --source sim'")
	}
	return c
}

func (c *cohortFlags) addRun() {
	c.fs.IntVar(&c.retries, "retries", agent.DefaultRetries, "corrections asked after an unusable model answer")
	c.fs.IntVar(&c.concurrency, "concurrency", 2, "concurrent decisions per provider")
	c.fs.IntVar(&c.attempts, "max-attempts", 3, "runs that may retry an agent's failed decision")
}

func (c *cohortFlags) set() map[string]bool {
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}

func (c *cohortFlags) instant() (time.Time, error) {
	if c.now == "" {
		return time.Now().UTC(), nil
	}
	return syncTimeFlag("now", c.now)
}

// cohortSetup is what the running subcommands share.
type cohortSetup struct {
	app     *app.App
	trading *app.TradingTrack
	db      *store.DB
	engine  *trading.Engine
	log     *slog.Logger
	now     time.Time
	// lineup is the lineup a new cohort would freeze (nil: none given).
	lineup []arena.LineupEntry
	source string // "--agents FILE" or "--sim-seed N", for messages
}

// setup parses the flags, checks them (check, when given, checks the
// command's own), and resolves the configuration, the lineup and the store.
// Invalid flags are reported before the store is opened; nothing is
// changed before the lineup is known.
func (c *cohortFlags) setup(ctx context.Context, env *Env, args []string, check func() error) (*cohortSetup, error) {
	if err := parseAll(c.fs, args); err != nil {
		return nil, err
	}
	if check != nil {
		if err := check(); err != nil {
			return nil, err
		}
	}
	o, err := c.cf.options(env)
	if err != nil {
		return nil, err
	}
	s := &cohortSetup{log: newLogger(env, o.LogLevel)}
	if s.now, err = c.instant(); err != nil {
		return nil, err
	}
	if c.retries < 0 || c.concurrency < 1 || c.attempts < 0 {
		return nil, fmt.Errorf("--retries, --concurrency and --max-attempts must not be negative (concurrency at least 1)")
	}
	d := app.Deps{AgentRetries: c.retries, ProviderLimit: c.concurrency, MaxAttempts: c.attempts, LLMOptions: cohortLLMOptions(s.log)}
	if c.retries == 0 {
		d.AgentRetries = -1 // the flag's 0 means none; the app's 0 means the default
	}
	if c.lineup {
		set := c.set()
		simSet := set["sim-seed"] || set["sim-markets"] || set["sim-start"]
		switch {
		case simSet && set["agents"]:
			return nil, fmt.Errorf("give either --agents or --sim-seed, not both")
		case simSet:
			spec := agent.SimSpec{Seed: c.simSeed, Markets: c.simMarkets}
			if c.simStart != "" {
				if spec.Start, err = syncTimeFlag("sim-start", c.simStart); err != nil {
					return nil, err
				}
			}
			if d.Lineup, err = agent.SimLineup(spec, nil); err != nil {
				return nil, err
			}
			s.source = fmt.Sprintf("--sim-seed %d", c.simSeed)
		case o.AgentsFile != "":
			s.source = "--agents " + o.AgentsFile
		}
	}
	if s.app, err = newApp(ctx, env, o, d); err != nil {
		return nil, err
	}
	if s.trading, err = s.app.Trading(ctx); err != nil {
		s.app.Close()
		return nil, err
	}
	for _, sk := range s.trading.Skipped {
		fmt.Fprintln(env.Stderr, "warning: "+sk.String())
	}
	s.db, s.engine = s.app.DB, s.trading.Engine
	if c.lineup && s.source != "" {
		s.lineup = s.engine.Lineup
		if len(s.lineup) == 0 {
			s.app.Close()
			return nil, fmt.Errorf("%s: no agent can run: every agent's API key is missing", o.AgentsFile)
		}
	}
	return s, nil
}

func cohortStart(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "cohort start", "[--now T] (--agents FILE | --sim-seed N) [--db URL]")
	s, err := addCohortFlags(fs, true).setup(ctx, env, args, nil)
	if err != nil {
		return err
	}
	defer s.app.Close()
	if len(s.lineup) == 0 {
		return fmt.Errorf("no lineup: give --agents FILE (or set ARENA_AGENTS) or --sim-seed N")
	}
	co, created, err := s.engine.StartCohort(ctx, s.now)
	if err != nil {
		return err
	}
	if created {
		fmt.Fprintf(env.Stdout, "cohort %d started for the week of %s with %s (%s)\n", co.ID, co.WeekStart.Format("2006-01-02"), arena.Plural(len(co.Lineup), "agent"), s.source)
	} else {
		fmt.Fprintf(env.Stdout, "cohort %d already exists for the week of %s (%s); nothing changed\n", co.ID, co.WeekStart.Format("2006-01-02"), arena.Plural(len(co.Lineup), "agent"))
	}
	return nil
}

func cohortRun(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "cohort run", "[--now T] [--agents FILE | --sim-seed N] [--cohort ID] [--retries N] [--concurrency N] [--db URL]")
	c := addCohortFlags(fs, true)
	c.addRun()
	only := fs.Int64("cohort", 0, "run only this cohort")
	s, err := c.setup(ctx, env, args, nil)
	if err != nil {
		return err
	}
	defer s.app.Close()
	week := arena.WeekStart(s.now)
	if *only == 0 && len(s.lineup) > 0 {
		co, created, err := s.engine.StartCohort(ctx, s.now)
		if err != nil {
			return err
		}
		if created {
			fmt.Fprintf(env.Stdout, "cohort %d started for the week of %s with %s (%s)\n", co.ID, week.Format("2006-01-02"), arena.Plural(len(co.Lineup), "agent"), s.source)
		}
	}
	var cohorts []*arena.Cohort
	if *only != 0 {
		co, err := s.db.Cohort(ctx, *only)
		if err != nil {
			return err
		}
		cohorts = []*arena.Cohort{co}
	} else if cohorts, err = s.db.Cohorts(ctx, arena.CohortActive); err != nil {
		return err
	}
	if len(cohorts) == 0 {
		return fmt.Errorf("no active cohort: start one with 'arena cohort start' or give --agents FILE or --sim-seed N")
	}
	// An agent without a decider is logged with the reason and counted in
	// the run's report.
	deciders := s.trading.Deciders
	var reps []*trading.RunReport
	if *only != 0 {
		ds, derr := deciders(ctx, cohorts[0])
		if derr != nil {
			return derr
		}
		rep, rerr := s.engine.Run(ctx, *only, s.now, ds)
		if rep != nil {
			reps = append(reps, rep)
		}
		err = rerr
	} else {
		reps, err = s.engine.RunWeek(ctx, s.now, deciders)
	}
	if len(reps) == 0 && err == nil {
		fmt.Fprintf(env.Stdout, "nothing to decide for the week of %s: every agent is decided (or out of attempts)\n", week.Format("2006-01-02"))
		return nil
	}
	retryable := 0
	for _, rep := range reps {
		printRunReport(env.Stdout, rep)
		retryable += rep.Count(trading.OutcomeRetryable)
	}
	if err != nil {
		return err
	}
	if retryable > 0 {
		return fmt.Errorf("%d agent(s) failed retryably; run again to retry them", retryable)
	}
	return nil
}

func printRunReport(w io.Writer, rep *trading.RunReport) {
	fmt.Fprintf(w, "cohort %d, week of %s: %d markets offered; done %d, skipped %d, retryable %d, no decider %d\n",
		rep.CohortID, rep.Week.Format("2006-01-02"), rep.Markets, rep.Count(trading.OutcomeDone), rep.Count(trading.OutcomeSkipped),
		rep.Count(trading.OutcomeRetryable), rep.Count(trading.OutcomeNoDecider))
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tOUTCOME\tSTATUS\tDECISION\tACTION\tEXECUTED\tFAILED\tERROR")
	for _, a := range rep.Agents {
		id := "-"
		if a.DecisionID != 0 {
			id = strconv.FormatInt(a.DecisionID, 10)
		}
		status, action := string(a.Status), string(a.Action)
		if status == "" {
			status = "-"
		}
		if action == "" {
			action = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", a.AgentID, a.Outcome, status, id, action, a.Executed, a.Failed, clipText(a.Error, 120))
	}
	tw.Flush()
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

func formatFlag(fs *flag.FlagSet) *string {
	return fs.String("format", "table", "output format: table or json")
}

func cohortShow(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "cohort show", "ID [--format table|json] [--db URL]")
	cf := addConfigFlags(fs, false)
	format := formatFlag(fs)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("want one cohort ID (run 'arena cohort show -h')")
	}
	id, err := strconv.ParseInt(pos[0], 10, 64)
	if err != nil || id <= 0 {
		return fmt.Errorf("cohort ID %q: want a positive integer", pos[0])
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	a, err := newApp(ctx, env, o, app.Deps{})
	if err != nil {
		return err
	}
	defer a.Close()
	co, err := a.DB.Cohort(ctx, id)
	if err != nil {
		return err
	}
	tr, err := a.Trading(ctx)
	if err != nil {
		return err
	}
	st, err := tr.Engine.Standings(ctx, id)
	if err != nil {
		return err
	}
	j := trading.NewCohortJSON(co, st)
	if *format == "json" {
		return writeJSON(env.Stdout, j)
	}
	fmt.Fprintf(env.Stdout, "cohort %d, week of %s, %s, %s, initial cash %s\n", co.ID, co.WeekStart.Format("2006-01-02"),
		co.Status, arena.Plural(len(co.Lineup), "agent"), co.InitialCash.Cents())
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "AGENT\tCASH\tPOSITIONS\tTOTAL\tP/L\tP/L %\tBRIER\tRESOLVED\tOPEN\tBANKRUPT\t")
	for _, s := range st {
		brier := "-"
		if s.ResolvedBets > 0 {
			brier = strconv.FormatFloat(s.Brier, 'f', 4, 64)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%+.2f%%\t%s\t%d\t%d\t%v\t\n", s.AgentID, s.Valuation.Cash.Cents(), s.Valuation.PositionsValue.Cents(),
			s.Valuation.Total.Cents(), s.Valuation.PnL.Cents(), s.Valuation.PnLPct, brier, s.ResolvedBets, s.OpenPositions, s.Bankrupt)
	}
	return tw.Flush()
}

func cohortList(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "cohort list", "[--status active|completed] [--format table|json] [--db URL]")
	cf := addConfigFlags(fs, false)
	status := fs.String("status", "", "only cohorts with this status: active or completed")
	format := formatFlag(fs)
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	st := arena.CohortStatus(*status)
	if st != "" && st != arena.CohortActive && st != arena.CohortCompleted {
		return fmt.Errorf("status %q: want active or completed", *status)
	}
	_, db, err := cf.openExisting(ctx, env)
	if err != nil {
		return err
	}
	defer db.Close()
	cs, err := db.Cohorts(ctx, st)
	if err != nil {
		return err
	}
	out := make([]trading.CohortSummaryJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, trading.NewCohortSummaryJSON(c))
	}
	if *format == "json" {
		return writeJSON(env.Stdout, out)
	}
	if len(cs) == 0 {
		fmt.Fprintln(env.Stdout, "no cohorts")
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tWEEK\tSTATUS\tAGENTS\tCREATED\tCOMPLETED")
	for _, c := range cs {
		done := "-"
		if !c.CompletedAt.IsZero() {
			done = c.CompletedAt.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%s\t%s\n", c.ID, c.WeekStart.Format("2006-01-02"), c.Status, len(c.Lineup),
			c.CreatedAt.UTC().Format(time.RFC3339), done)
	}
	return tw.Flush()
}

func cohortSnapshot(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "cohort snapshot", "[--now T] [--db URL]")
	s, err := addCohortFlags(fs, false).setup(ctx, env, args, nil)
	if err != nil {
		return err
	}
	defer s.app.Close()
	n, err := s.engine.Snapshot(ctx, s.now)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%d new snapshots at %s\n", n, s.now.Truncate(10*time.Minute).Format(time.RFC3339))
	return nil
}

func cohortSettle(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "cohort settle", "[--now T] [--policy refund|defer|oracle] [--db URL]")
	c := addCohortFlags(fs, false)
	policy := fs.String("policy", string(trading.PolicyRefund), "ambiguous markets: refund, defer or oracle")
	var p trading.Policy
	s, err := c.setup(ctx, env, args, func() (err error) {
		p, err = trading.ParsePolicy(*policy)
		return err
	})
	if err != nil {
		return err
	}
	defer s.app.Close()
	rep, err := s.engine.Settle(ctx, s.now, p)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "%d markets settled: %d positions paid out, %d refunded; %d deferred, %d awaiting the oracle; %d cohorts completed\n",
		len(rep.Markets), rep.Settled, rep.Cancelled, len(rep.Deferred), len(rep.AwaitingOracle), rep.CohortsCompleted)
	return nil
}
