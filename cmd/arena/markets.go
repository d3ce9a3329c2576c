package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/forecast-arena/arena"
)

func init() {
	register("markets", "list stored markets", runMarkets)
}

func runMarkets(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "markets", "[--source S] [--status open|closed|resolved] [--limit N] [--format table|json]")
	cf := addConfigFlags(fs, false)
	source := fs.String("source", "", "only markets of this source (polymarket, sim, forecastbench)")
	status := fs.String("status", "", "only markets with this status: open, closed or resolved")
	limit := fs.String("limit", "50", "maximum number of markets (0 = all)")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	filter, err := arena.ParseMarketFilter(*source, *status, *limit)
	if err != nil {
		return err
	}
	_, db, err := cf.openExisting(ctx, env)
	if err != nil {
		return err
	}
	defer db.Close()
	ms, err := db.Markets(ctx, filter)
	if err != nil {
		return err
	}
	out := make([]arena.MarketJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, arena.NewMarketJSON(m))
	}
	if *format == "json" {
		return writeJSON(env.Stdout, out)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSOURCE\tSTATUS\tTYPE\tVOLUME\tCLOSES\tPRICES\tQUESTION")
	for _, m := range out {
		closes := "-"
		if m.CloseTime != nil {
			closes = (*m.CloseTime)[:10]
		}
		st := string(m.Status)
		if m.Resolution != nil {
			st += ":" + *m.Resolution
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%.0f\t%s\t%s\t%s\n", m.ID, m.Source, st, m.Type, m.Volume, closes, priceSummary(m), truncate(m.Question, 70))
	}
	return tw.Flush()
}

func priceSummary(m arena.MarketJSON) string {
	if m.Prices == nil {
		return "-"
	}
	names := append([]string(nil), m.Outcomes...)
	if len(names) == 0 {
		for k := range m.Prices {
			names = append(names, k)
		}
		sort.Strings(names)
	}
	var parts []string
	for _, o := range names {
		if p, ok := m.Prices[o]; ok {
			parts = append(parts, fmt.Sprintf("%s %.0f%%", o, 100*p))
		}
		if len(parts) == 3 {
			parts = append(parts, "…")
			break
		}
	}
	return strings.Join(parts, " / ")
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
