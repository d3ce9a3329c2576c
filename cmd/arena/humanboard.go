package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/chart"
	"github.com/forecast-arena/arena/stats"
)

var boardCSVHeader = []string{"rank", "forecaster", "human", "dataset", "n_dataset", "market_resolved", "n_market_resolved",
	"market_unresolved", "n_market_unresolved", "market", "n_market", "overall_resolved", "n_overall_resolved", "overall", "n_overall",
	"ci_lo", "ci_hi", "p_vs_first", "better_than_first", "brier_index", "bss", "peer", "adjusted_brier", "p_rank1"}

func fv(f stats.Float, prec int) string { return f.Format(prec, "—") }

func writeBoardCSV(w io.Writer, rows []stats.BoardRow) error {
	c := func(f stats.Float) string {
		if !f.OK {
			return ""
		}
		return csvV(f.V)
	}
	return writeCSV(w, boardCSVHeader, rows, func(r stats.BoardRow) []string {
		n := strconv.Itoa
		return []string{n(r.Rank), r.Forecaster, strconv.FormatBool(r.Human), c(r.Dataset.Brier), n(r.Dataset.N),
			c(r.MarketResolved.Brier), n(r.MarketResolved.N), c(r.MarketUnresolved.Brier), n(r.MarketUnresolved.N),
			c(r.Market.Brier), n(r.Market.N), c(r.OverallResolved.Brier), n(r.OverallResolved.N), c(r.Overall.Brier), n(r.Overall.N),
			c(r.CILo), c(r.CIHi), c(r.PVsFirst), c(r.BetterThanFirst), c(r.BrierIndex), c(r.BSS), c(r.Peer), c(r.Adjusted), c(r.PRank1)}
	})
}

// writeBoardTable prints the board, each column's heading marked ↓ (lower
// is better) or ↑ (higher is better); human rows carry "(human)".
func writeBoardTable(w io.Writer, rows []stats.BoardRow) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "rank\tforecaster\tdataset ↓ (N)\tmarket resolved ↓ (N)\tmarket unresolved ↓ (N)\toverall resolved ↓\toverall ↓ (N)\t95% CI\tp vs #1\tbetter than #1 ↑\tBrier Index ↑\tBSS ↑\tpeer ↓\tadjusted ↓\tP(rank 1) ↑\t")
	m := func(x stats.Mean) string {
		if x.N == 0 {
			return "—"
		}
		return fmt.Sprintf("%s (%d)", fv(x.Brier, 3), x.N)
	}
	for _, r := range rows {
		name := r.Forecaster
		if r.Human {
			name += " (human)"
		}
		ci := "—"
		if r.CILo.OK {
			ci = fmt.Sprintf("[%s, %s]", fv(r.CILo, 3), fv(r.CIHi, 3))
		}
		better := "—"
		if r.BetterThanFirst.OK {
			better = fmt.Sprintf("%.0f%%", r.BetterThanFirst.V*100)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", r.Rank, name, m(r.Dataset), m(r.MarketResolved),
			m(r.MarketUnresolved), fv(r.OverallResolved.Brier, 3), m(r.Overall), ci, fv(r.PVsFirst, 3), better,
			fv(r.BrierIndex, 1), fv(r.BSS, 3), fv(r.Peer, 3), fv(r.Adjusted, 3), fv(r.PRank1, 3))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "↓ lower is better, ↑ higher is better; p vs #1: one-sided pairwise bootstrap (docs/methodology.md, \"Humans on the board\")")
	return err
}

// writeBoardSVG draws each forecaster's dataset, market and overall Brier.
func writeBoardSVG(w io.Writer, rows []stats.BoardRow) error {
	c := &chart.Bars{ID: "humanboard", Title: "Humans and models on the same questions", Desc: "Brier score by question kind (lower is better); human rows are marked (human).",
		Width: 900, Height: 420, YLabel: "Brier score", Background: "#fff"}
	ds, mk, ov := chart.BarSeries{Name: "dataset"}, chart.BarSeries{Name: "market"}, chart.BarSeries{Name: "overall"}
	v := func(m stats.Mean) float64 {
		if m.N == 0 {
			return 0
		}
		return m.Brier.V
	}
	for _, r := range rows {
		name := r.Forecaster
		if r.Human {
			name += " (human)"
		}
		c.Groups = append(c.Groups, name)
		ds.Values, mk.Values, ov.Values = append(ds.Values, v(r.Dataset)), append(mk.Values, v(r.Market)), append(ov.Values, v(r.Overall))
	}
	c.Series = []chart.BarSeries{ds, mk, ov}
	return c.WriteSVG(w)
}

func runReportHumans(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "report humans", "[--from DATE] [--to DATE] [--individuals] [--unresolved] [--seed S] [--format table|json|csv|svg] [--db URL]")
	cf := addConfigFlags(fs, false)
	from := fs.String("from", "", "first forecast due date, YYYY-MM-DD (default: all)")
	to := fs.String("to", "", "last forecast due date, YYYY-MM-DD (default: all)")
	individuals := fs.Bool("individuals", false, "also score every human forecaster (by ForecastBench's pseudonymous user id)")
	unresolved := fs.Bool("unresolved", false, "also score the market questions not resolved in the resolution set, against the value it reports (as ForecastBench does); models are never asked those")
	seed := fs.Uint64("seed", 1, "bootstrap seed")
	format := fs.String("format", "table", "output format: table, json, csv or svg")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json", "csv", "svg"); err != nil {
		return err
	}
	fromT, toT, err := dateRange(*from, *to)
	if err != nil {
		return err
	}
	_, db, err := cf.openExisting(ctx, env)
	if err != nil {
		return err
	}
	defer db.Close()
	rows, err := backtest.StoredHumanBoard(ctx, db, fromT, toT, *individuals, *unresolved, stats.BoardOptions{Seed: *seed})
	if err != nil {
		return err
	}
	switch *format {
	case "json":
		if rows == nil {
			rows = []stats.BoardRow{}
		}
		return writeJSON(env.Stdout, rows)
	case "csv":
		return writeBoardCSV(env.Stdout, rows)
	case "svg":
		if len(rows) == 0 {
			return arena.Errorf(arena.EINVALID, "no human forecasts stored for these rounds: nothing to draw (import them with 'arena import forecastbench --humans FILE')")
		}
		return writeBoardSVG(env.Stdout, rows)
	}
	if len(rows) == 0 {
		fmt.Fprintln(env.Stdout, "no human forecasts stored for these rounds (import them with 'arena import forecastbench --humans FILE')")
		return nil
	}
	if err := writeBoardTable(env.Stdout, rows); err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "\nItems: the resolved questions (dataset questions: per resolution date) the humans forecast, limited to those the models were asked once a backtest ran.")
	if *unresolved {
		fmt.Fprintln(env.Stdout, "With --unresolved: also the unresolved market questions, scored against the resolution set's latest value; models were not asked those.")
	}
	return nil
}
