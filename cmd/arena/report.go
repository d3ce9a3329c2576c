package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/chart"
	"github.com/forecast-arena/arena/internal/report"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/stats"
)

func init() {
	register("report", "score reports: leaderboard, murphy, categories, power, calibration, baselines, humans", runReport)
}

// reportKinds are the subcommands of `arena report`.
var reportKinds = map[string]struct {
	summary string
	run     func(ctx context.Context, env *Env, args []string) error
}{
	"leaderboard": {"agents ranked by shrunken alpha with SEs, bootstrap CIs and power", runReportLeaderboard},
	"murphy":      {"Murphy decomposition per agent and alpha split into resolution gain and reliability gap", runReportMurphy},
	"categories":  {"per-category Brier and alpha per agent", runReportCategories},
	"calibration": {"reliability diagram data: 10 equal-width bins and CORP (PAV) recalibration per agent", runReportCalibration},
	"power":       {"sample size needed to detect an edge (one-sided test at power π), or the inverse", runReportPower},
	"baselines":   {"constant, market-price and random forecasters on stored questions, by source kind", runReportBaselines},
	"humans":      {"ForecastBench's human medians beside the backtested models on the same questions", runReportHumans},
}

func runReport(ctx context.Context, env *Env, args []string) error {
	names := make([]string, 0, len(reportKinds))
	for n := range reportKinds {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(env.Stderr, "Usage: arena report <kind> [flags]\n\nKinds:")
		for _, n := range names {
			fmt.Fprintf(env.Stderr, "  %-12s %s\n", n, reportKinds[n].summary)
		}
		fmt.Fprintln(env.Stderr, "\nRun 'arena report <kind> -h' for a kind's flags.")
		if len(args) == 0 {
			return errUsage
		}
		return nil
	}
	k, ok := reportKinds[args[0]]
	if !ok {
		return fmt.Errorf("unknown report %q (want %s)", args[0], strings.Join(names, ", "))
	}
	return k.run(ctx, env, args[1:])
}

// ---- scored forecasts: from a file or the store ----

// scoreInput holds the flags shared by the reports that read forecasts,
// and what load read.
type scoreInput struct {
	cf     *configFlags
	in     *string
	track  *string
	bins   *int
	format *string

	report.Input                // the scored forecasts, from the file or the store
	method       scoring.Method // the configured scoring method
}

func addScoreInput(fs *flag.FlagSet, cf *configFlags, formats string) *scoreInput {
	return &scoreInput{
		cf:     cf,
		in:     fs.String("in", "", "score this CSV/JSONL file (as 'arena score --in') instead of the store"),
		track:  fs.String("track", "forecast", "track whose stored forecasts to score"),
		bins:   fs.Int("bins", stats.DefaultBins, "number of equal bins K"),
		format: fs.String("format", "table", "output format: "+formats),
	}
}

// load reads the table to report on, and from the store the agents'
// display names. With no --in and nothing stored it prints a note to
// stdout and returns report.ErrNoForecasts.
func (si *scoreInput) load(ctx context.Context, env *Env) error {
	if *si.bins < 1 || *si.bins > 1000 {
		return arena.Errorf(arena.EINVALID, "--bins %d: want 1..1000", *si.bins)
	}
	o, err := si.cf.options(env)
	if err != nil {
		return err
	}
	si.method = app.ScoringMethod(o)
	if *si.in != "" {
		t, err := readScores(ctx, *si.in)
		si.Input = report.Input{Table: t, Src: *si.in}
		return err
	}
	db, err := openExisting(ctx, o.DB)
	if err != nil {
		return err
	}
	defer db.Close()
	if *si.track != "forecast" {
		return arena.Errorf(arena.EINVALID, "--track %q: stored forecasts are kept for the forecast track only (the trading track reports through 'arena cohort')", *si.track)
	}
	si.Input, err = report.Stored(ctx, &rounds.Service{Store: db, Method: si.method})
	if errors.Is(err, report.ErrNoForecasts) {
		// Machine-readable formats stay parseable: the note goes to stderr
		// and JSON gets an empty array.
		note := env.Stdout
		switch *si.format {
		case "json":
			fmt.Fprintln(env.Stdout, "[]")
			note = env.Stderr
		case "csv", "svg":
			note = env.Stderr
		}
		fmt.Fprintf(note, "no scored forecasts stored yet for track %q; score a file with --in FILE (columns as 'arena score')\n", *si.track)
	}
	return err
}

// analyze parses a report's flags, checks the format against the allowed
// ones (table, json, csv and svg unless given), loads its input and
// analyzes it with --bins bins.
func (si *scoreInput) analyze(ctx context.Context, env *Env, fs *flag.FlagSet, args []string, formats ...string) ([]stats.AgentResult, error) {
	if err := parseAll(fs, args); err != nil {
		return nil, err
	}
	if len(formats) == 0 {
		formats = []string{"table", "json", "csv", "svg"}
	}
	if err := checkFormat(*si.format, formats...); err != nil {
		return nil, err
	}
	if err := si.load(ctx, env); err != nil {
		return nil, err
	}
	return si.Analyze(ctx, stats.Options{Bins: *si.bins})
}

// label is an agent as the tables print it: its display name and address
// where a name is known.
func (si *scoreInput) label(agent string) string { return agentLabel(si.Names, agent) }

// quiet turns the "nothing stored" note into success.
func quiet(err error) error {
	if errors.Is(err, report.ErrNoForecasts) {
		return nil
	}
	return err
}

// ---- leaderboard ----

func runReportLeaderboard(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report leaderboard", "[--in FILE | --db URL --track T] [--bootstrap 999] [--seed S] [--columns all] [--format table|json|csv|svg]")
	cf := addConfigFlags(fs, false)
	si := addScoreInput(fs, cf, "table, json, csv or svg (cumulative-alpha trajectories)")
	def := scoring.DefaultMethod()
	boot := fs.Int("bootstrap", def.Bootstrap, "bootstrap replicates of the intervals and rank shares (0: skip); another than the default changes the method's digest")
	seed := fs.Uint64("seed", def.Seed, "bootstrap seed; another than the default changes the method's digest")
	columns := fs.String("columns", "", "the table's columns: the short view (default) or all")
	adjusted := fs.Bool("adjusted", false, "difficulty-adjusted Brier leaderboard: two-way fixed effects, question bootstrap by round")
	estimation := fs.String("estimation", "", "with --adjusted: comma-separated agents that estimate question difficulty (default: all but the market baseline)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*si.format, "table", "json", "csv", "svg"); err != nil {
		return err
	}
	if *boot < 0 {
		return arena.Errorf(arena.EINVALID, "--bootstrap %d: want ≥ 0", *boot)
	}
	if *columns != "" && *columns != "all" {
		return arena.Errorf(arena.EINVALID, "--columns %q: want all, or leave it out for the short view", *columns)
	}
	if err := si.load(ctx, env); err != nil {
		return quiet(err)
	}
	m := si.method
	m.Bins, m.Bootstrap, m.Seed = *si.bins, *boot, *seed
	if err := m.Validate(); err != nil {
		return err
	}
	if *adjusted {
		return adjustedLeaderboard(ctx, env, si, m, *estimation)
	}
	b, scored, err := si.Leaderboard(ctx, m, newLogger(env, "warn"))
	if err != nil {
		return err
	}
	if *si.format == "svg" {
		return writeAlphaTrajectories(env.Stdout, scored.Results)
	}
	switch *si.format {
	case "json":
		return writeJSON(env.Stdout, b)
	case "csv":
		return writeCSV(env.Stdout, boardColumns, b.Rows, boardRecord)
	}
	return writeBoard(env.Stdout, b, *columns == "all")
}

// boardColumns are the leaderboard's CSV columns, the export's table's.
var boardColumns = []string{"rank", "agent", "name", "preliminary", "score", "score_ci_lo", "score_ci_hi", "rounds", "n", "brier", "brier_se",
	"brier_index", "bss", "peer_score", "peer_n", "adjusted", "adjusted_ci_lo", "adjusted_ci_hi", "alpha", "alpha_se", "alpha_ci_lo", "alpha_ci_hi",
	"t", "p", "beat_pct", "provisional", "p_rank1", "p_top5", "tie_group", "rounds_to_significance"}

func boardRecord(r scoring.Row) []string {
	f := func(p *float64) string {
		if p == nil {
			return ""
		}
		return csvV(*p)
	}
	return []string{strconv.Itoa(r.Rank), r.Agent, r.Name, strconv.FormatBool(r.Preliminary), f(r.Score), f(r.ScoreCILo), f(r.ScoreCIHi),
		strconv.Itoa(r.Rounds), strconv.Itoa(r.N), csvV(r.Brier), f(r.BrierSE), csvV(r.BrierIndex), csvV(r.BSS), f(r.Peer), strconv.Itoa(r.PeerN),
		f(r.Adjusted), f(r.AdjustedCILo), f(r.AdjustedCIHi), f(r.Alpha), f(r.AlphaSE), f(r.AlphaCILo), f(r.AlphaCIHi), f(r.T), f(r.P),
		f(r.BeatPct), strconv.FormatBool(r.Provisional), f(r.PRank1), f(r.PTop), strconv.Itoa(r.TieGroup), f(r.RoundsToSignificance)}
}

// writeBoard prints a forecast board as the dashboard shows it: rank,
// agent, score with its interval and forecasts, and with all every
// other column; then the method that computed it.
func writeBoard(w io.Writer, b scoring.Board, all bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	f := func(p *float64, format string) string {
		if p == nil {
			return "-"
		}
		return fmt.Sprintf(format, *p)
	}
	head := "#\tAGENT\tSCORE\t95% CI\tBRIER\tALPHA\tN\tROUNDS\t"
	if all {
		head += "BRIER INDEX\tBSS\tPEER\tADJUSTED\tALPHA SE\tp\tP(RANK 1)\tP(TOP 5%)\tTIE\tΔ VS #1\tp VS #1\tROUNDS→SIG\t"
	}
	fmt.Fprintln(tw, head)
	prelim := false
	for _, r := range b.Rows {
		rank, name := strconv.Itoa(r.Rank), r.Name
		if r.Preliminary {
			rank, prelim = "-", true
			name += " *"
		}
		ci := "-"
		if r.ScoreCILo != nil {
			ci = fmt.Sprintf("[%.1f, %.1f]", *r.ScoreCILo, *r.ScoreCIHi)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.4f\t%s\t%d\t%d\t", rank, name, f(r.Score, "%.1f"), ci, r.Brier, f(r.Alpha, "%+.4f"), r.N, r.Rounds)
		if all {
			vs, vsp := "-", "-"
			if v := r.VsLeader; v != nil {
				vs, vsp = fmt.Sprintf("%+.4f", v.BrierDiff), f(v.P, "%.3f")
			}
			tie := "-"
			if r.TieGroup > 0 {
				tie = strconv.Itoa(r.TieGroup)
			}
			fmt.Fprintf(tw, "%.1f\t%+.3f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t", r.BrierIndex, r.BSS, f(r.Peer, "%+.4f"),
				f(r.Adjusted, "%.4f"), f(r.AlphaSE, "%.4f"), f(r.P, "%.3f"), f(r.PRank1, "%.2f"), f(r.PTop, "%.2f"), tie, vs, vsp,
				f(r.RoundsToSignificance, "%.0f"))
		}
		fmt.Fprintln(tw)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if prelim {
		fmt.Fprintln(w, "\n* preliminary: fewer resolved forecasts than the entry rule asks; listed, not ranked.")
	}
	if b.Hidden > 0 {
		fmt.Fprintf(w, "%d agents hidden by the per-organisation limit.\n", b.Hidden)
	}
	fmt.Fprintf(w, "\nScore: difficulty-adjusted Brier Index, 100 perfect, 50 always 0.5. Scoring method %s, configuration %.12s.\n",
		b.Methodology.Version, b.Methodology.Digest)
	return nil
}

// adjustedLeaderboard prints the difficulty-adjusted leaderboard of the
// score-file rows, the dashboard's (forecast.Adjusted) with method m.
func adjustedLeaderboard(ctx context.Context, env *Env, si *scoreInput, m scoring.Method, estimation string) error {
	format := *si.format
	if format == "svg" {
		return arena.Errorf(arena.EINVALID, "--adjusted has no svg format")
	}
	var est []string
	if estimation != "" {
		for _, e := range strings.Split(estimation, ",") {
			est = append(est, strings.TrimSpace(e))
		}
	}
	res, err := si.Adjusted(ctx, m, est)
	if err != nil {
		return err
	}
	switch format {
	case "json":
		return writeJSON(env.Stdout, res)
	case "csv":
		return writeCSV(env.Stdout, []string{"rank", "tie_group", "agent", "n", "brier", "adjusted", "ci_lo", "ci_hi", "p_rank1"}, res.Agents,
			func(a stats.FEAgent) []string {
				return []string{strconv.Itoa(a.Rank), strconv.Itoa(a.Tie), a.Agent, strconv.Itoa(a.N), csvV(a.Brier), csvV(a.Adjusted),
					csvF(a.CILo), csvF(a.CIHi), csvF(a.PRank1)}
			})
	}
	tw := tableWriter(env.Stdout)
	fmt.Fprintln(tw, "#\ttie\tagent\tn\traw Brier\tadjusted\t95% CI\tP(rank 1)\t")
	for _, a := range res.Agents {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t\n", a.Rank, a.Tie, si.label(a.Agent), a.N, fmtV(a.Brier, 4), fmtV(a.Adjusted, 4),
			fmtCI(a.CILo, a.CIHi), fmtPct(a.PRank1))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\nDifficulty-adjusted Brier: b_ij = α_i + γ_j + ε_ij by alternating means (%d sweeps) on %d questions (%d dropped: no estimation agent);\n",
		res.Iterations, res.Questions, res.Dropped)
	capped := ""
	if res.Capped {
		capped = fmt.Sprintf(" (of %d: the work cap of %d observations visited stopped it)", m.Bootstrap, m.BootstrapWork)
	}
	fmt.Fprintf(env.Stdout, "scaled so a constant 0.5 forecaster scores 0.25. Bootstrap over questions within rounds: %d replicates%s, seed %d. Same tie group = CIs overlap the group leader's.\n",
		res.Bootstrap, capped, res.Seed)
	if len(res.Pairs) > 0 {
		fmt.Fprintln(env.Stdout, "\nP-values, A better than B (one-sided, paired bootstrap):")
		for _, p := range res.Pairs {
			fmt.Fprintf(env.Stdout, "  %s < %s: p = %.4f\n", p.A, p.B, p.P)
		}
	}
	return nil
}

// fmtCI prints a confidence interval to 4 decimals, "—" when undefined.
func fmtCI(lo, hi stats.Float) string {
	if !lo.OK {
		return "—"
	}
	return "[" + fmtF(lo, 4) + ", " + fmtF(hi, 4) + "]"
}

func fmtPct(f stats.Float) string {
	if !f.OK {
		return "—"
	}
	return strconv.FormatFloat(100*f.V, 'f', 1, 64)
}

// ---- murphy ----

func runReportMurphy(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report murphy", "[--in FILE | --db URL --track T] [--bins 10] [--format table|json|csv|svg]")
	si := addScoreInput(fs, addConfigFlags(fs, false), "table, json, csv or svg (Murphy bars)")
	res, err := si.analyze(ctx, env, fs, args)
	if err != nil {
		return quiet(err)
	}
	rows := report.Murphy(res)
	switch *si.format {
	case "json":
		return writeJSON(env.Stdout, rows)
	case "svg":
		return writeMurphyBars(env.Stdout, rows)
	case "csv":
		return writeCSV(env.Stdout, []string{"agent", "n", "brier", "unc", "rel", "res", "residual", "bins", "alpha_n", "alpha", "res_gain", "rel_gap", "residual_diff"},
			rows, func(r report.MurphyRow) []string {
				rec := []string{r.Agent, strconv.Itoa(r.N), csvV(r.Brier), csvV(r.UNC), csvV(r.REL), csvV(r.RES), csvV(r.Residual), strconv.Itoa(r.Bins)}
				if a := r.AlphaSplit; a != nil {
					return append(rec, strconv.Itoa(a.N), csvV(a.Alpha), csvV(a.ResGain), csvV(a.RelGap), csvV(a.ResidualDiff))
				}
				return append(rec, "", "", "", "", "")
			})
	}
	tw := tableWriter(env.Stdout)
	fmt.Fprintln(tw, "agent\tn\tbrier\tUNC\tREL\tRES\tresidual\tbins\t\tα (per prediction)\tRES gain\tREL gap\tresid. diff\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%d\t\t", r.Agent, r.N, fmtV(r.Brier, 4), fmtV(r.UNC, 4), fmtV(r.REL, 4), fmtV(r.RES, 4), fmtV(r.Residual, 5), r.Bins)
		if a := r.AlphaSplit; a != nil {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t\n", fmtV(a.Alpha, 4), fmtV(a.ResGain, 4), fmtV(a.RelGap, 4), fmtV(a.ResidualDiff, 5))
		} else {
			fmt.Fprint(tw, "—\t—\t—\t—\t\n")
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\nbrier = UNC + REL − RES + residual with K = %d equal bins; the residual is the binning error.\n", *si.bins)
	fmt.Fprintln(env.Stdout, "α = RES gain + REL gap + residual difference vs the market on the agent's benchmarked markets.")
	return nil
}

// ---- categories ----

func runReportCategories(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report categories", "[--in FILE | --db URL --track T] [--format table|json|csv]")
	si := addScoreInput(fs, addConfigFlags(fs, false), "table, json or csv")
	// Analyze the whole input once, so errors are reported as for the file.
	if _, err := si.analyze(ctx, env, fs, args, "table", "json", "csv"); err != nil {
		return quiet(err)
	}
	rows, err := report.Categories(ctx, si.Table, *si.bins)
	if err != nil {
		return err
	}
	switch *si.format {
	case "json":
		return writeJSON(env.Stdout, rows)
	case "csv":
		return writeCSV(env.Stdout, []string{"category", "agent", "n", "rounds", "brier", "brier_se", "alpha", "alpha_se", "p", "beat_pct"},
			rows, func(r report.CategoryRow) []string {
				return []string{r.Category, r.Agent, strconv.Itoa(r.N), strconv.Itoa(r.Rounds), csvV(r.Brier), csvF(r.BrierSE),
					csvF(r.Alpha), csvF(r.AlphaSE), csvF(r.P), csvF(r.BeatPct)}
			})
	}
	tw := tableWriter(env.Stdout)
	fmt.Fprintln(tw, "category\tagent\tn\trounds\tbrier\t±se\talpha\t±se\tp\tbeat%\t")
	for _, r := range rows {
		cat := r.Category
		if cat == "" {
			cat = "(none)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t\n", cat, r.Agent, r.N, r.Rounds, fmtV(r.Brier, 4), fmtF(r.BrierSE, 4),
			fmtF(r.Alpha, 4), fmtF(r.AlphaSE, 4), fmtF(r.P, 3), fmtF(r.BeatPct, 1))
	}
	return tw.Flush()
}

// ---- calibration ----

func runReportCalibration(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report calibration", "[--in FILE | --db URL --track T] [--bins 10] [--format table|json|csv|svg]")
	si := addScoreInput(fs, addConfigFlags(fs, false), "table, json, csv or svg (reliability diagrams)")
	res, err := si.analyze(ctx, env, fs, args)
	if err != nil {
		return quiet(err)
	}
	rows := report.Calibration(res)
	switch *si.format {
	case "json":
		return writeJSON(env.Stdout, rows)
	case "svg":
		return writeReliability(env.Stdout, rows)
	case "csv":
		// Long format: one line per Murphy bin ("bin") and per PAV block ("corp").
		var recs [][]string
		for _, r := range rows {
			for _, b := range r.Bins {
				recs = append(recs, []string{r.Agent, "bin", csvV(b.Lo), csvV(b.Hi), strconv.Itoa(b.N), csvV(b.MeanP), csvV(b.ObsFreq)})
			}
			for _, b := range r.PAV {
				recs = append(recs, []string{r.Agent, "corp", csvV(b.PLo), csvV(b.PHi), strconv.Itoa(b.N), "", csvV(b.Recal)})
			}
		}
		return writeCSV(env.Stdout, []string{"agent", "kind", "lo", "hi", "n", "mean_p", "observed"}, recs, func(r []string) []string { return r })
	}
	for _, r := range rows {
		fmt.Fprintf(env.Stdout, "%s  n %d  ECE %s  CORP: score %s = MCB %s − DSC %s + UNC %s  (%d PAV blocks)\n", r.Agent, r.N,
			fmtV(r.ECE, 4), fmtV(r.CORP.Score, 4), fmtV(r.CORP.MCB, 4), fmtV(r.CORP.DSC, 4), fmtV(r.CORP.UNC, 4), len(r.PAV))
		tw := tableWriter(env.Stdout)
		fmt.Fprintln(tw, "  bin\tn\tmean p\tobserved\tgap\t")
		for _, b := range r.Bins {
			fmt.Fprintf(tw, "  [%s, %s)\t%d\t%s\t%s\t%+.4f\t\n", fmtV(b.Lo, 2), fmtV(b.Hi, 2), b.N, fmtV(b.MeanP, 4), fmtV(b.ObsFreq, 4), b.ObsFreq-b.MeanP)
		}
		tw.Flush()
		fmt.Fprintln(env.Stdout)
	}
	return nil
}

// ---- power ----

func runReportPower(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report power", "[--alpha LIST | --n LIST] [--kappa 0.05] [--power 0.8] [--q 0.5] [--boldness 0.15] [--markets-per-round 7] [--format table|json|csv]")
	alphas := fs.String("alpha", "", "comma-separated true edges α* (default 0.005,0.01,0.02,0.03,0.05,0.1)")
	ns := fs.String("n", "", "comma-separated sample sizes: report the minimum detectable α* instead")
	pp := stats.DefaultPowerParams()
	fs.Float64Var(&pp.Kappa, "kappa", pp.Kappa, "one-sided significance level κ")
	fs.Float64Var(&pp.Power, "power", pp.Power, "target power π")
	fs.Float64Var(&pp.Q, "q", pp.Q, "mean true probability q̄")
	fs.Float64Var(&pp.Boldness, "boldness", pp.Boldness, "mean |b − p|, the agent's boldness d")
	fs.IntVar(&pp.K, "markets-per-round", pp.K, "markets per round k")
	format := fs.String("format", "table", "output format: table, json or csv")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json", "csv"); err != nil {
		return err
	}
	switch {
	case !(pp.Kappa > 0 && pp.Kappa < 1):
		return arena.Errorf(arena.EINVALID, "--kappa %v: want 0 < κ < 1", pp.Kappa)
	case !(pp.Power > 0 && pp.Power < 1):
		return arena.Errorf(arena.EINVALID, "--power %v: want 0 < π < 1", pp.Power)
	case !(pp.Q > 0 && pp.Q < 1):
		return arena.Errorf(arena.EINVALID, "--q %v: want 0 < q̄ < 1", pp.Q)
	case !(pp.Boldness > 0 && pp.Boldness <= 1):
		return arena.Errorf(arena.EINVALID, "--boldness %v: want 0 < d ≤ 1", pp.Boldness)
	case pp.K < 1:
		return arena.Errorf(arena.EINVALID, "--markets-per-round %d: want ≥ 1", pp.K)
	case *alphas != "" && *ns != "":
		return arena.Errorf(arena.EINVALID, "give --alpha or --n, not both")
	}
	var rows []stats.PowerRow
	if *ns != "" {
		for _, f := range strings.Split(*ns, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 1 {
				return arena.Errorf(arena.EINVALID, "--n: %q is not a positive integer", f)
			}
			rows = append(rows, stats.PowerRow{Alpha: pp.MinDetectable(n).V, N: n, Rounds: pp.Rounds(n)})
		}
	} else {
		list := stats.DefaultAlphas
		if *alphas != "" {
			list = nil
			for _, f := range strings.Split(*alphas, ",") {
				a, err := strconv.ParseFloat(strings.TrimSpace(f), 64)
				// An edge below 1e-6 needs more predictions than exist.
				if err != nil || !(a >= 1e-6 && a <= 1) {
					return arena.Errorf(arena.EINVALID, "--alpha: %q is not an edge in [1e-6, 1]", f)
				}
				list = append(list, a)
			}
		}
		rows = pp.Table(list)
	}
	switch *format {
	case "json":
		return writeJSON(env.Stdout, rows)
	case "csv":
		return writeCSV(env.Stdout, []string{"alpha", "n", "rounds"}, rows, func(r stats.PowerRow) []string {
			return []string{csvV(r.Alpha), strconv.Itoa(r.N), strconv.Itoa(r.Rounds)}
		})
	}
	tw := tableWriter(env.Stdout)
	head := "α*\tpredictions n\trounds (k=%d)\t\n"
	if *ns != "" {
		head = "min detectable α*\tpredictions n\trounds (k=%d)\t\n"
	}
	fmt.Fprintf(tw, head, pp.K)
	for _, r := range rows {
		a := strconv.FormatFloat(r.Alpha, 'f', -1, 64)
		if *ns != "" {
			a = strconv.FormatFloat(r.Alpha, 'f', 5, 64)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t\n", a, r.N, r.Rounds)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\nn = ⌈((z_{1−κ} + z_π)/α*)² · 4q̄(1−q̄)·d²⌉ with exact normal quantiles; κ = %v one-sided, π = %v, q̄ = %v, d = %v.\n",
		pp.Kappa, pp.Power, pp.Q, pp.Boldness)
	return nil
}

// ---- baselines ----

func runReportBaselines(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report baselines", "[--source S] [--seed S] [--format table|json|csv] [--db URL]")
	cf := addConfigFlags(fs, false)
	source := fs.String("source", "", "only markets of this source (e.g. forecastbench, polymarket, sim)")
	seed := fs.Uint64("seed", 1, "seed of the random forecaster")
	format := fs.String("format", "table", "output format: table, json or csv")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json", "csv"); err != nil {
		return err
	}
	_, db, err := cf.openExisting(ctx, env)
	if err != nil {
		return err
	}
	defer db.Close()
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: *source})
	if err != nil {
		return fmt.Errorf("list markets: %w", err)
	}
	rows, skipped := report.Baselines(ms, *seed)
	switch *format {
	case "json":
		if rows == nil {
			rows = []stats.BaselineRow{}
		}
		return writeJSON(env.Stdout, rows)
	case "csv":
		return writeCSV(env.Stdout, []string{"forecaster", "kind", "n", "brier"}, rows, func(r stats.BaselineRow) []string {
			return []string{r.Forecaster, r.Kind, strconv.Itoa(r.N), csvV(r.Brier)}
		})
	}
	if len(rows) == 0 {
		fmt.Fprintf(env.Stdout, "no resolved binary questions stored%s (%d markets skipped: unresolved, void or not binary)\n", sourceNote(*source), skipped)
		return nil
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "forecaster\tkind\tN\tBrier\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t\n", r.Forecaster, r.Kind, r.N, fmtV(r.Brier, 4))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\nOne item per resolved binary question (dataset questions: per resolution date)%s; %d markets skipped (unresolved, void or not binary).\n", sourceNote(*source), skipped)
	fmt.Fprintln(env.Stdout, "Market price: the freeze value, on items that have one. Overall: mean of the kinds' Brier scores (ForecastBench's definition), N their sum.")
	return nil
}

func sourceNote(s string) string {
	if s == "" {
		return ""
	}
	return " of source " + s
}

// ---- SVG charts (package chart, shared with the dashboard) ----

// writeAlphaTrajectories draws each agent's cumulative alpha ᾱ_R against the
// round index R (the Foresight Arena paper's Figure 5).
func writeAlphaTrajectories(w io.Writer, res []stats.AgentResult) error {
	c := &chart.Line{ID: "alpha", Title: "Cumulative alpha by round", Background: "white",
		Desc: "Each agent's mean alpha (market Brier minus agent Brier) over its first R benchmarked rounds; above 0 beats the market.",
		X:    chart.Axis{Label: "round", Integer: true}, Y: chart.Axis{Label: "cumulative alpha"}}
	maxR := 1.0
	for _, r := range res {
		s := chart.Series{Name: r.Agent}
		var sum float64
		k := 0
		for _, rs := range r.RoundScores {
			if !rs.Alpha.OK {
				continue
			}
			k++
			sum += rs.Alpha.V
			s.X = append(s.X, float64(k))
			s.Y = append(s.Y, sum/float64(k))
		}
		if k > 0 {
			maxR = math.Max(maxR, float64(k))
			c.Series = append(c.Series, s)
		}
	}
	c.Refs = []chart.Ref{{X0: 1, X1: maxR, Label: "alpha = 0: as good as the market"}}
	return c.WriteSVG(w)
}

// writeMurphyBars draws, per agent, REL (miscalibration) and RES
// (resolution) side by side, with UNC as a reference level.
func writeMurphyBars(w io.Writer, rows []report.MurphyRow) error {
	c := &chart.Bars{ID: "murphy", Title: "Murphy decomposition of the Brier score", Background: "white", YLabel: "Brier components",
		Desc: "Per agent: REL (miscalibration, lower is better) and RES (resolution, higher is better); UNC, the outcomes' uncertainty, as a dashed level. Brier = UNC + REL − RES.",
		Ref:  &chart.BarSeries{Name: "UNC (uncertainty)"}}
	rel, res := chart.BarSeries{Name: "REL (miscalibration)"}, chart.BarSeries{Name: "RES (resolution)"}
	for _, r := range rows {
		c.Groups = append(c.Groups, r.Agent)
		rel.Values = append(rel.Values, r.REL)
		res.Values = append(res.Values, r.RES)
		c.Ref.Values = append(c.Ref.Values, r.UNC)
	}
	c.Series = []chart.BarSeries{rel, res}
	return c.WriteSVG(w)
}

// writeReliability draws the CORP reliability diagram (PAV step function)
// of every agent against the diagonal.
func writeReliability(w io.Writer, rows []report.CalibrationRow) error {
	c := &chart.Line{ID: "reliability", Title: "Reliability diagram (CORP)", Background: "white", Height: 520, Width: 560,
		Desc: "Per agent, the PAV-recalibrated event frequency (step line) against the forecast probability; the dashed diagonal is perfect calibration.",
		X:    chart.Axis{Label: "forecast probability", Fixed: true, Min: 0, Max: 1},
		Y:    chart.Axis{Label: "conditional event probability", Fixed: true, Min: 0, Max: 1},
		Refs: []chart.Ref{{X0: 0, Y0: 0, X1: 1, Y1: 1, Label: "perfect calibration"}}}
	for _, r := range rows {
		s := chart.Series{Name: fmt.Sprintf("%s (MCB %.4f, DSC %.4f)", r.Agent, r.CORP.MCB, r.CORP.DSC)}
		for _, b := range r.PAV {
			s.X = append(s.X, b.PLo, b.PHi)
			s.Y = append(s.Y, b.Recal, b.Recal)
		}
		c.Series = append(c.Series, s)
	}
	return c.WriteSVG(w)
}
