package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/report"
	"github.com/forecast-arena/arena/stats"
)

func init() {
	register("score", "score forecasts offline from a CSV or JSONL file", runScore)
}

const scoreUsage = "--in FILE [--bins 10] [--format table|json|csv] [--bootstrap B] [--seed S]"

func runScore(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "score", scoreUsage)
	in := fs.String("in", "", "input file: CSV with a header or JSONL, columns agent,round,market,category,forecast,benchmark,outcome[,event]")
	bins := fs.Int("bins", stats.DefaultBins, "number of equal bins K for the Murphy decomposition and ECE")
	format := fs.String("format", "table", "output format: table, json or csv")
	boot := fs.Int("bootstrap", 0, "block-bootstrap replicates for the alpha CI in the table (0: skip; 1999 is the usual choice)")
	seed := fs.Uint64("seed", 1, "seed of the bootstrap")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if *in == "" {
		return fmt.Errorf("--in FILE is required (run 'arena score -h')")
	}
	if err := checkFormat(*format, "table", "json", "csv"); err != nil {
		return err
	}
	if *bins < 1 || *bins > 1000 {
		return arena.Errorf(arena.EINVALID, "--bins %d: want 1..1000", *bins)
	}
	if *boot < 0 {
		return arena.Errorf(arena.EINVALID, "--bootstrap %d: want ≥ 0", *boot)
	}
	defer batchGC()()
	t, err := readScores(ctx, *in)
	if err != nil {
		return err
	}
	// What the reader built the rows from is garbage now: collected here,
	// its memory serves the analysis instead of the process growing by it
	// (250 MB → 200 MB at a million rows), which costs a collection of a
	// heap of few pointers.
	runtime.GC()
	res, err := report.Input{Table: t, Src: *in}.Analyze(ctx, stats.Options{Bins: *bins, Bootstrap: *boot, Seed: *seed})
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		return writeJSON(env.Stdout, res)
	case "csv":
		return writeScoreCSV(env.Stdout, res)
	}
	return writeScoreTable(env.Stdout, res, *boot > 0)
}

// batchGC sets the garbage collector for a command that builds its rows
// once and exits: a collection when the heap has grown to five times what
// was live after the last (GOGC=400) rather than twice, within a soft
// limit of 1 GiB that the bounds of a scores file keep a run under. On a
// million rows that is 4 collections instead of 9, and a sixth less work.
// A GOGC or GOMEMLIMIT the user set stays; the returned function puts
// the settings back.
func batchGC() (restore func()) {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return func() {}
	}
	gc, limit := debug.SetGCPercent(400), debug.SetMemoryLimit(1<<30)
	return func() {
		debug.SetGCPercent(gc)
		debug.SetMemoryLimit(limit)
	}
}

func checkFormat(f string, allowed ...string) error {
	for _, a := range allowed {
		if f == a {
			return nil
		}
	}
	return arena.Errorf(arena.EINVALID, "format %q: want %s", f, strings.Join(allowed, ", "))
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// fmtF prints a defined float with prec decimals, "—" when undefined.
func fmtF(f stats.Float, prec int) string { return f.Format(prec, "—") }

func fmtV(v float64, prec int) string {
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.HasPrefix(s, "-") && strings.Trim(s, "-0.") == "" {
		return s[1:] // a tiny negative residual prints as 0, not -0.00000
	}
	return s
}

// csvF prints a float at full precision for CSV, empty when undefined.
func csvF(f stats.Float) string { return f.Format(-1, "") }

func csvV(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

var scoreCSVHeader = []string{"agent", "n", "rounds", "brier", "brier_se", "alpha", "alpha_se", "t", "p", "beat_pct",
	"murphy_unc", "murphy_rel", "murphy_res", "murphy_residual", "murphy_bins",
	"corp_score", "corp_mcb", "corp_dsc", "corp_unc", "ece", "log_score"}

// writeScoreCSV writes the score file's figures, one agent a row; the nested Murphy and
// CORP objects become prefixed columns and murphy_bins counts non-empty bins.
func writeScoreCSV(w io.Writer, res []stats.AgentResult) error {
	return writeCSV(w, scoreCSVHeader, res, func(r stats.AgentResult) []string {
		return []string{r.Agent, strconv.Itoa(r.N), strconv.Itoa(r.Rounds), csvV(r.Brier), csvF(r.BrierSE),
			csvF(r.Alpha), csvF(r.AlphaSE), csvF(r.T), csvF(r.P), csvF(r.BeatPct),
			csvV(r.Murphy.UNC), csvV(r.Murphy.REL), csvV(r.Murphy.RES), csvV(r.Murphy.Residual), strconv.Itoa(len(r.Murphy.Bins)),
			csvV(r.CORP.Score), csvV(r.CORP.MCB), csvV(r.CORP.DSC), csvV(r.CORP.UNC), csvV(r.ECE), csvV(r.LogScore)}
	})
}

// writeCSV writes a header line, then one record per row.
func writeCSV[T any](w io.Writer, header []string, rows []T, record func(T) []string) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(header); err != nil {
		return err
	}
	for _, r := range rows {
		rec := record(r)
		// Agent names are chosen by the agents: guard text cells against
		// formulas as the exports do (numbers stay numbers).
		for i, c := range rec {
			rec[i] = export.EscapeCell(c)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// tableWriter aligns a report's columns, numbers to the right.
func tableWriter(w io.Writer) *tabwriter.Writer {
	return tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
}

// writeScoreTable prints the score file's figures plus the ranking aids (shrunken
// alpha, provisional flag, event-clustered SE, optional bootstrap CI).
func writeScoreTable(w io.Writer, res []stats.AgentResult, ci bool) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "agent\tn\trounds\tbrier\t±se\talpha\t±se\tt\tp\tbeat%\tshrunk α\tclust.se"
	if ci {
		hdr += "\tα 95% CI"
	}
	hdr += "\tUNC\tREL\tRES\tresid\tMCB\tDSC\tECE\tlog\t\n"
	io.WriteString(tw, hdr)
	var notes []string
	for _, r := range res {
		inf := r.Inference
		name := r.Agent
		if inf.Provisional && inf.AlphaN > 0 {
			name += "*"
		}
		cells := []string{name, strconv.Itoa(r.N), strconv.Itoa(r.Rounds), fmtV(r.Brier, 4), fmtF(r.BrierSE, 4),
			fmtF(r.Alpha, 4), fmtF(r.AlphaSE, 4), fmtF(r.T, 2), fmtF(r.P, 3), fmtF(r.BeatPct, 1),
			fmtF(inf.ShrunkAlpha, 4), fmtF(inf.ClusterSE, 4)}
		if ci {
			cells = append(cells, "["+fmtF(inf.CI.Lo, 4)+", "+fmtF(inf.CI.Hi, 4)+"]")
		}
		cells = append(cells, fmtV(r.Murphy.UNC, 4), fmtV(r.Murphy.REL, 4), fmtV(r.Murphy.RES, 4), fmtV(r.Murphy.Residual, 5),
			fmtV(r.CORP.MCB, 4), fmtV(r.CORP.DSC, 4), fmtV(r.ECE, 4), fmtV(r.LogScore, 4))
		io.WriteString(tw, strings.Join(cells, "\t")+"\t\n")
		if inf.MissingB > 0 && inf.AlphaN > 0 {
			notes = append(notes, fmt.Sprintf("%s: %d of %d predictions have no benchmark and count for Brier only", r.Agent, inf.MissingB, r.N))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	// Skill and power figures per agent.
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	io.WriteString(tw, "agent	BSS (vs 0.25)	BSS (vs market)	win%	W/L/T	accuracy% [Wilson 95%]	boldness	rounds→sig	\n")
	for _, r := range res {
		inf := r.Inference
		acc := "—"
		if inf.Accuracy.Rate.OK {
			acc = fmt.Sprintf("%s [%s, %s]", fmtPct(inf.Accuracy.Rate), fmtPct(inf.Accuracy.Lo), fmtPct(inf.Accuracy.Hi))
		}
		wlt := "—"
		if inf.AlphaN > 0 {
			wlt = fmt.Sprintf("%d/%d/%d", inf.WinRate.Wins, inf.WinRate.Losses, inf.WinRate.Ties)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Agent, fmtF(inf.BSS, 3), fmtF(inf.BSSMarket, 3), fmtPct(inf.WinRate.Rate),
			wlt, acc, fmtF(inf.Boldness, 3), fmtF(inf.ToSignif, 0))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "\n* provisional: fewer than 140 resolved predictions with a benchmark; shrunk α = n/(n+140)·α.")
	fmt.Fprintln(w, "t, p: Student t on per-round alpha, R−1 df, two-sided; — = undefined (one round, or SE 0). clust.se: alpha SE clustered by event.")
	fmt.Fprintln(w, "brier is the mean of round Brier scores; Murphy (K bins) and CORP are over all predictions.")
	fmt.Fprintln(w, "win%: markets where the agent's squared error beats the benchmark's, ties excluded; rounds→sig: further rounds to 80% power at the observed α and boldness.")
	for _, n := range notes {
		fmt.Fprintln(w, n)
	}
	return nil
}
