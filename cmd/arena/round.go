package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/rounds"
)

func init() {
	register("round", "forecast rounds: create, list, show, trigger, resolve", runRound)
}

const roundUsage = `Usage: arena round <subcommand> [flags]

Subcommands:
  create      create a round by the selection rules (or from --markets)
  list        rounds, newest first
  show ID     a round: schedule, markets, benchmarks, outcomes and scores
  trigger ID  freeze outcomes and score a round after its reveal deadline
              (--due: every round that is due, as the scheduler does)
  resolve ID --from-sim
              resolve a round's simulated markets now, with the outcomes the
              simulator fixed for them, after its reveal deadline

Run 'arena round <subcommand> -h' for its flags.
`

func runRound(ctx context.Context, env *Env, args []string) error {
	return dispatch(ctx, env, args, roundUsage, map[string]func(context.Context, *Env, []string) error{
		"create":  roundCreate,
		"list":    roundList,
		"show":    roundShow,
		"trigger": roundTrigger,
		"resolve": roundResolve,
	})
}

// roundApp opens the store and builds the arena's services on it, the
// log read without its key.
func roundApp(ctx context.Context, env *Env, cf *configFlags) (*app.App, error) {
	o, err := cf.options(env)
	if err != nil {
		return nil, err
	}
	return newApp(ctx, env, o, app.Deps{})
}

// loggedApp is roundApp with the tamper-evident log opened with its key,
// for the commands whose results are logged (outcomes, scores,
// resolutions) or exported.
func loggedApp(ctx context.Context, env *Env, cf *configFlags) (*app.App, error) {
	o, err := cf.options(env)
	if err != nil {
		return nil, err
	}
	return newApp(ctx, env, o, app.Deps{Log: app.LogWrite})
}

// roundIn is round id of the arena's database, or an error that names the
// database: a command run without the server's --db reads the default
// one, where "round 1 not found" alone would not say why.
func roundIn(ctx context.Context, a *app.App, id uint64) (*arena.Round, error) {
	r, err := a.DB.Round(ctx, id)
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		return nil, arena.Errorf(arena.ENOTFOUND, "round %d not found in database %s (is it the server's? give that one with --db or ARENA_DB)", id, redact.String(a.Config.DB))
	}
	return r, err
}

// roundArgs parses flags that may come before, between or after
// positional arguments ("show 3 --format json") and returns the latter.
func roundArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := parse(fs, args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos, args = append(pos, args[0]), args[1:]
	}
}

func parseRoundID(s string) (uint64, error) {
	id, err := strconv.ParseUint(s, 10, 64)
	if err != nil || id == 0 {
		return 0, fmt.Errorf("round id %q: want a positive integer", s)
	}
	return id, nil
}

// roundIDArg parses flags around exactly one positional round id.
func roundIDArg(fs *flag.FlagSet, args []string) (uint64, error) {
	pos, err := roundArgs(fs, args)
	if err != nil {
		return 0, err
	}
	if len(pos) != 1 {
		return 0, fmt.Errorf("want one round id, got %d arguments (run 'arena %s -h')", len(pos), fs.Name())
	}
	return parseRoundID(pos[0])
}

func roundCreate(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "round create", "[--db URL] [--markets ID,…] [--k N] [--rules FILE] [--commit-in D | --commit-deadline T] [--reveal-delay D] [--reveal-window D] [--grace D] [--format table|json]")
	cf := addConfigFlags(fs, false)
	def := rounds.DefaultJobsConfig()
	markets := fs.String("markets", "", "comma-separated market ids (default: select by the rules)")
	k := fs.Int("k", rounds.DefaultK, "markets per round when selecting by the rules")
	rulesFile := fs.String("rules", "", "file holding the complete market selection rules as JSON (default: ARENA_ROUND_RULES, else the built-in rules: liquid markets of the venues ARENA_SYNC_VENUES names, an equal share of each round for each, and simulated ones when the database holds a simulated world)")
	commitIn := fs.Duration("commit-in", def.CommitIn, "commit phase: the commit deadline is this long from now")
	commitAt := fs.String("commit-deadline", "", "commit deadline, RFC 3339 (instead of --commit-in)")
	revealDelay := fs.Duration("reveal-delay", def.RevealDelay, "from the commit deadline to the reveal start")
	revealWindow := fs.Duration("reveal-window", def.RevealWindow, "length of the reveal phase")
	grace := fs.Duration("grace", 24*time.Hour, "after the reveal deadline, score with whatever has resolved")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	var req rounds.CreateRoundRequest
	if *markets != "" {
		for _, s := range strings.Split(*markets, ",") {
			id, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
			if err != nil || id <= 0 {
				return fmt.Errorf("--markets: %q is not a market id", s)
			}
			req.MarketIDs = append(req.MarketIDs, id)
		}
	}
	if *grace <= 0 {
		return fmt.Errorf("--grace %s: must be positive", *grace)
	}
	now := time.Now().UTC()
	cfg := rounds.JobsConfig{CommitIn: *commitIn, RevealDelay: *revealDelay, RevealWindow: *revealWindow}
	if err := cfg.Validate(); err != nil {
		return err
	}
	sched := cfg.ScheduleAt(now)
	if *commitAt != "" {
		cd, err := time.Parse(time.RFC3339, *commitAt)
		if err != nil {
			return fmt.Errorf("--commit-deadline: %w", err)
		}
		sched.CommitDeadline = cd.UTC()
		sched.RevealStart = sched.CommitDeadline.Add(*revealDelay)
		sched.RevealDeadline = sched.RevealStart.Add(*revealWindow)
	}
	req.CommitDeadline, req.RevealStart, req.RevealDeadline = sched.CommitDeadline, sched.RevealStart, sched.RevealDeadline
	a, err := roundApp(ctx, env, cf)
	if err != nil {
		return err
	}
	defer a.Close()
	svc := a.Rounds
	if *rulesFile != "" {
		rules, err := app.SelectionRules(ctx, a.DB, a.Config, *rulesFile, "--rules")
		if err != nil {
			return err
		}
		svc.Rules, svc.RulesErr = rules, nil
	}
	svc.K, svc.Grace = *k, *grace
	r, err := svc.CreateRound(ctx, req)
	if err != nil {
		return err
	}
	return printRound(ctx, env, svc, r, *format)
}

func roundList(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "round list", "[--db URL] [--status open|revealing|scoring|scored] [--limit N] [--format table|json]")
	cf := addConfigFlags(fs, false)
	status := fs.String("status", "", "only rounds with this status: open, revealing, scoring, scored or invalidated")
	limit := fs.Int("limit", 50, "maximum number of rounds (0 = all)")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	switch *status {
	case "", arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring, arena.RoundScored, arena.RoundInvalidated:
	default:
		return fmt.Errorf("status %q: want open, revealing, scoring, scored or invalidated", *status)
	}
	if *limit < 0 {
		return fmt.Errorf("limit %d: must not be negative", *limit)
	}
	a, err := roundApp(ctx, env, cf)
	if err != nil {
		return err
	}
	defer a.Close()
	svc := a.Rounds
	rounds, err := a.DB.Rounds(ctx, arena.RoundFilter{Status: *status, Now: svc.Clock(), Limit: *limit})
	if err != nil {
		return err
	}
	views := make([]forecast.RoundJSON, 0, len(rounds))
	for _, r := range rounds {
		v, err := svc.View(ctx, r)
		if err != nil {
			return err
		}
		views = append(views, v)
	}
	if *format == "json" {
		return writeJSON(env.Stdout, views)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATUS\tK\tCOMMIT DEADLINE\tREVEAL START\tREVEAL DEADLINE")
	for _, v := range views {
		fmt.Fprintf(tw, "%d\t%s\t%d\t%s\t%s\t%s\n", v.ID, v.Status, len(v.Markets), rfc3339(v.CommitDeadline), rfc3339(v.RevealStart), rfc3339(v.RevealDeadline))
	}
	return tw.Flush()
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func roundShow(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "round show", "ID [--db URL] [--format table|json]")
	cf := addConfigFlags(fs, false)
	format := fs.String("format", "table", "output format: table or json")
	id, err := roundIDArg(fs, args)
	if err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	a, err := roundApp(ctx, env, cf)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := roundIn(ctx, a, id)
	if err != nil {
		return err
	}
	return printRound(ctx, env, a.Rounds, r, *format)
}

// roundDetail is `round show --format json`: the API's round view and its
// scores.
type roundDetail struct {
	forecast.RoundJSON
	Scores []forecast.ScoreJSON `json:"scores"`
}

func printRound(ctx context.Context, env *Env, svc *rounds.Service, r *arena.Round, format string) error {
	v, err := svc.View(ctx, r)
	if err != nil {
		return err
	}
	scores, err := svc.Scores(ctx, r.ID)
	if err != nil {
		return err
	}
	if format == "json" {
		return writeJSON(env.Stdout, roundDetail{v, scores})
	}
	w := env.Stdout
	fmt.Fprintf(w, "Round %d (%s)\n  commit deadline  %s\n  reveal window    %s – %s\n\n", v.ID, v.Status, rfc3339(v.CommitDeadline), rfc3339(v.RevealStart), rfc3339(v.RevealDeadline))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tMARKET\tCATEGORY\tCLOSES\tPRICE\tBENCHMARK\tOUTCOME\tQUESTION")
	for i, m := range v.Markets {
		price, bench, outcome := "-", "-", "-"
		if m.Price != nil {
			price = fmt.Sprintf("%.1f%%", 100**m.Price)
		}
		if v.Benchmarks != nil {
			bench = "none"
			if b := v.Benchmarks[i]; b != nil {
				bench = fmt.Sprintf("%.1f%%", 100**b)
			}
		}
		if v.Outcomes != nil {
			outcome = "unresolved"
			if o := v.Outcomes[i]; o != nil {
				outcome = *o
			}
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\n", m.Index, m.MarketID, m.Category, m.CloseTime.UTC().Format("2006-01-02"), price, bench, outcome, truncate(m.Question, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(scores) == 0 {
		return nil
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "AGENT\tBRIER\tALPHA\tBRIER bps²\tALPHA bps²\tSCORED\tFORFEIT")
	names, err := svc.Names(ctx)
	if err != nil {
		return err
	}
	// Best round Brier first; the JSON keeps the API's order.
	slices.SortStableFunc(scores, func(a, b forecast.ScoreJSON) int {
		return cmp.Or(cmp.Compare(a.Brier, b.Brier), strings.Compare(a.Agent, b.Agent))
	})
	for _, s := range scores {
		alpha, abps := "-", "-"
		if s.Alpha != nil {
			alpha, abps = fmt.Sprintf("%+.4f", *s.Alpha), fmt.Sprint(*s.AlphaBps2)
		}
		fmt.Fprintf(tw, "%s\t%.4f\t%s\t%d\t%s\t%d\t%v\n", agentLabel(names, s.Agent), s.Brier, alpha, s.BrierBps2, abps, s.ScoredMarkets, s.Forfeit)
	}
	return tw.Flush()
}

// agentLabel is an agent as tables print it: "Name (address)" where the
// agent has a display name, else the address.
func agentLabel(names map[string]string, agent string) string {
	if n := names[agent]; n != "" && n != agent {
		return n + " (" + agent + ")"
	}
	return agent
}

func roundTrigger(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "round trigger", "ID | --due [--db URL] [--log-key FILE] [--format table|json]")
	cf := addConfigFlags(fs, false, "ARENA_LOG_KEY")
	due := fs.Bool("due", false, "trigger every round that is due (all markets resolved, or grace over)")
	format := fs.String("format", "table", "output format: table or json")
	pos, err := roundArgs(fs, args)
	if err != nil {
		return err
	}
	var id uint64
	switch {
	case *due && len(pos) > 0:
		return fmt.Errorf("give a round id or --due, not both")
	case !*due && len(pos) != 1:
		return fmt.Errorf("want one round id or --due (run 'arena round trigger -h')")
	case !*due:
		if id, err = parseRoundID(pos[0]); err != nil {
			return err
		}
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	// The outcomes and scores go to the tamper-evident log, as the
	// scheduler's do.
	a, err := loggedApp(ctx, env, cf)
	if err != nil {
		return err
	}
	defer a.Close()
	svc, db := a.Rounds, a.DB
	if *due {
		n, err := svc.TriggerDue(ctx)
		if err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "scored %d round(s)\n", n)
		return nil
	}
	if _, err := roundIn(ctx, a, id); err != nil {
		return err
	}
	if err := svc.Trigger(ctx, id); err != nil {
		return err
	}
	r, err := db.Round(ctx, id)
	if err != nil {
		return err
	}
	return printRound(ctx, env, svc, r, *format)
}
