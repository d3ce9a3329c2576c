package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"path/filepath"
	"text/tabwriter"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/progress"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/tlog"
)

func init() {
	register("demo", "run the arena offline on the simulator, print the leaderboard and serve it", runDemo)
}

func runDemo(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "demo", "[--seed N] [--rounds N] [--venues V,…] [--addr HOST:PORT] [--no-serve] [--format table|json] [--dir DIR]")
	seed := fs.Int64("seed", 1, "simulator seed: the same seed gives the same run")
	rounds := fs.Int("rounds", 50, "forecast rounds to play")
	addr := fs.String("addr", "127.0.0.1:8080", "where to serve the API and leaderboard page afterwards")
	noServe := fs.Bool("no-serve", false, "print the leaderboard and exit")
	format := fs.String("format", "table", "output format: table or json")
	dir := fs.String("dir", "", "keep the demo database and agent state here (default: a new temp dir)")
	venues := fs.String("venues", "", "name the simulated markets after these venues, comma-separated (e.g. polymarket,kalshi,manifold,metaculus), each taking an equal share of every round")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	if _, err := sim.ParseVenues(*venues); err != nil {
		return fmt.Errorf("--venues: %w", err)
	}
	var ln net.Listener
	if !*noServe {
		var err error // listen first: a busy port fails before minutes of work
		if ln, err = net.Listen("tcp", *addr); err != nil {
			return fmt.Errorf("listen on %s: %w (use --addr or --no-serve)", *addr, err)
		}
		defer ln.Close()
	}
	// A bar per stage: the rounds played, then the markets settling.
	var bar *progress.Bar
	stage := ""
	res, err := demo.Run(ctx, demo.Config{Seed: *seed, Rounds: *rounds, Dir: *dir, Venues: *venues, Progress: func(s string, done, total int) {
		if s != stage {
			bar.Finish()
			bar, stage = progress.New(env.Stderr, total, s), s
		}
		bar.Set(done, total)
	}})
	bar.Finish()
	if err != nil {
		return err
	}
	defer res.Close()
	// The demo's own export with the log's checkpoint, verifiable from
	// its files alone.
	out := filepath.Join(res.Dir, "export")
	if _, err := res.App.Export(ctx, out, export.Options{Format: export.JSONL}); err != nil {
		return err
	}
	pub, err := res.App.Publisher()
	if err != nil {
		return err
	}
	// The checkpoint the export carries: the log's signed head.
	note, err := pub.Checkpoint(ctx)
	if err != nil {
		return err
	}
	cp, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(note)))
	if err != nil {
		return err
	}
	head := demoLogJSON{Origin: cp.Origin, TreeSize: cp.Size, RootHash: hex.EncodeToString(cp.Hash), Checkpoint: string(note)}
	if *format == "json" {
		v := demoJSON{Seed: *seed, Rounds: res.Rounds, Scored: res.Scored, Database: res.DBURL, Forecast: res.Leaderboard,
			Cohorts: res.Cohorts, Trading: res.Trading, Oracle: res.Oracle, Log: head, VKey: pub.VerifierKey(), Export: out}
		if err := writeJSON(env.Stdout, v); err != nil {
			return err
		}
	} else {
		fmt.Fprintf(env.Stdout, "Forecast Arena demo: seed %d, %d rounds (%d scored), database %s (a throwaway: commits not flushed to disk one by one)\n\n",
			*seed, res.Rounds, res.Scored, res.DBURL)
		if err := printLeaderboard(env.Stdout, res.Leaderboard); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "\nTrading track: %s, $10,000 each\n\n", arena.Plural(res.Cohorts, "weekly cohort"))
		printTrading(env.Stdout, res.Trading)
		o := res.Oracle
		fmt.Fprintf(env.Stdout, "\nOracle: %d disputed markets (the simulator's resolution withheld): %d resolved by the panel of simulated resolvers, %d escalated and decided by the simulated arbiter, %d waiting.\n",
			o.Disputed, o.Panel, o.Arbiter, o.Waiting)
		fmt.Fprintf(env.Stdout, "\nTamper-evident log: %d entries, root %s, verifier key %s\n", head.TreeSize, head.RootHash, pub.VerifierKey())
		dashboard := fmt.Sprintf("arena serve --db %s --no-sync --no-rounds, then http://127.0.0.1:8080/", res.DBURL)
		if !*noServe {
			dashboard = fmt.Sprintf("http://%s/ (served now; Ctrl-C stops it)", ln.Addr())
		}
		printNextSteps(env.Stdout, dashboard, fmt.Sprintf("arena verify --export %s --vkey %s", out, pub.VerifierKey()))
	}
	if *noServe {
		return nil
	}
	if *format == "json" {
		fmt.Fprintf(env.Stderr, "Serving the leaderboard on http://%s/ (API under /api/v1); Ctrl-C to stop.\n", ln.Addr())
	}
	return res.App.Serve(ctx, ln, nil)
}

// printNextSteps ends the demo's output with what a newcomer does next:
// look at the dashboard, enter an agent of their own, verify the export.
func printNextSteps(w io.Writer, dashboard, verify string) {
	fmt.Fprintf(w, "\nNext steps:\n")
	fmt.Fprintf(w, "  1. Open the dashboard: %s\n", dashboard)
	fmt.Fprintf(w, "  2. Run an agent of your own in a simulated world, scored within minutes: the README's step 3\n")
	fmt.Fprintf(w, "     (docs/operations.md, \"Serving offline\")\n")
	fmt.Fprintf(w, "  3. Verify the exported rounds, scores and log: %s\n", verify)
}

// demoJSON is 'arena demo --format json': the run, both leaderboards, the
// oracle's figures, the log's checkpoint and where the export is.
type demoJSON struct {
	Seed     int64                   `json:"seed"`
	Rounds   int                     `json:"rounds"`
	Scored   int                     `json:"scored"`
	Database string                  `json:"database"`
	Forecast scoring.Board           `json:"forecast"`
	Cohorts  int                     `json:"cohorts"`
	Trading  []trading.LeaderRowJSON `json:"trading"`
	Oracle   demo.OracleSummary      `json:"oracle"`
	Log      demoLogJSON             `json:"log"`
	VKey     string                  `json:"log_vkey"` // the note verifier key of the log's checkpoints
	Export   string                  `json:"export"`
}

// demoLogJSON is the log's checkpoint in the demo's JSON: its origin,
// size and root hash (hex), and the signed note itself.
type demoLogJSON struct {
	Origin     string `json:"origin"`
	TreeSize   uint64 `json:"tree_size"`
	RootHash   string `json:"root_hash"`
	Checkpoint string `json:"checkpoint"`
}

func printTrading(w io.Writer, rows []trading.LeaderRowJSON) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "AGENT\tCOHORTS\tMEAN RETURN\tTOTAL P/L\tBETS\tBRIER\tSKILL vs MARKET\t")
	for _, r := range rows {
		brier, skill := "-", "-"
		if r.Brier != nil {
			brier = fmt.Sprintf("%.4f", *r.Brier)
		}
		if r.SkillVsMarket != nil {
			skill = fmt.Sprintf("%+.3f", *r.SkillVsMarket)
		}
		fmt.Fprintf(tw, "%s\t%d\t%+.2f%%\t%s\t%d\t%s\t%s\t\n", r.Name, r.Cohorts, r.MeanReturnPct, arena.Micros(r.TotalPnL).Cents(), r.ResolvedBets, brier, skill)
	}
	tw.Flush()
	fmt.Fprintln(w, "\nBrier from bet size: confidence = amount / (25% of cash), scored at resolution.")
}

func printLeaderboard(w io.Writer, b scoring.Board) error {
	if err := writeBoard(w, b, false); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nBrier: mean squared error of the forecasts (0 perfect; always 0.5 scores 0.25, uniform random about 1/3).")
	fmt.Fprintln(w, "Alpha: the market's Brier minus the agent's, averaged over rounds; positive beats the market, whose own is 0 exactly.")
	fmt.Fprintln(w, "Simulated agents: informed-σ sees the true probability plus noise of SD σ, overconfident pushes the price")
	fmt.Fprintln(w, "away from 0.5, stale echoes the price of 24 hours earlier.")
	return nil
}
