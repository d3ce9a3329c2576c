package pages

import (
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/chart"
	"github.com/forecast-arena/arena/internal/web/view"
)

// marketsLink is the question browser with v's filters from cursor on.
func marketsLink(v view.MarketsPageJSON, cursor int64) string {
	q := url.Values{}
	for k, x := range map[string]string{"status": v.Status, "category": v.Category, "source": v.Source, "venue": v.Venue} {
		if x != "" {
			q.Set(k, x)
		}
	}
	if v.Limit != v.DefaultLimit {
		q.Set("limit", strconv.Itoa(v.Limit))
	}
	if cursor > 0 {
		q.Set("cursor", strconv.FormatInt(cursor, 10))
	}
	if len(q) == 0 {
		return "/markets"
	}
	return "/markets?" + q.Encode()
}

// compareLink is the comparison of the leaderboard's first two agents,
// an example for the page without agents.
func compareLink(choices []view.AgentChoiceJSON) string {
	if len(choices) < view.CompareMin {
		return ""
	}
	return "/compare?agents=" + choices[0].Agent + "," + choices[1].Agent
}

// compareTitle names the compared agents.
func compareTitle(v view.ComparePageJSON) string {
	if len(v.Agents) == 0 {
		return titles["compare.html"]
	}
	var ns []string
	for _, a := range v.Agents {
		ns = append(ns, a.Name)
	}
	return strings.Join(ns, " vs ")
}

// marketChart is a market's Yes price history overlaid with every
// agent's revealed forecasts and the benchmark at each scored round's
// commit deadline, and the outcome at the resolution. Each forecast's
// marker is titled with the agent, the round and the forecast.
func marketChart(v view.MarketPageJSON) *chart.Line {
	c := &chart.Line{ID: "price", Title: "Yes price and the agents' forecasts", X: chart.Axis{Label: "time (UTC)", Time: true},
		Y: chart.Axis{Label: "Yes price / forecast probability", Fixed: true, Min: 0, Max: 1}, Dodge: 8,
		Desc: "The market's stored Yes prices over time; at each scored round's commit deadline, every agent's revealed forecast (published once the round was scored) " +
			"and the benchmark, the price then, set side by side around the deadline; and the outcome at the resolution."}
	if len(v.Prices) > 0 {
		s := chart.Series{Name: "Yes price"}
		for _, p := range v.Prices {
			s.X, s.Y = append(s.X, float64(p.At.Unix())), append(s.Y, p.Price)
		}
		c.Series = append(c.Series, s)
	}
	bench := chart.Series{Name: "Benchmark (price at the commit deadline)", NoLine: true}
	byAgent := map[string]int{}
	var agents []chart.Series
	for _, f := range v.Forecasts {
		if f.Forecast == nil || f.Agent == forecast.RandomAgent {
			continue
		}
		x, label := float64(f.At.Unix()), overlayLabel(f)
		if f.Agent == forecast.MarketAgent {
			bench.X, bench.Y, bench.Labels = append(bench.X, x), append(bench.Y, *f.Forecast), append(bench.Labels, label)
			continue
		}
		i, ok := byAgent[f.Agent]
		if !ok {
			i = len(agents)
			byAgent[f.Agent] = i
			agents = append(agents, chart.Series{Name: f.Name, NoLine: true})
		}
		s := &agents[i]
		s.X, s.Y, s.Labels = append(s.X, x), append(s.Y, *f.Forecast), append(s.Labels, label)
	}
	if len(bench.X) > 0 {
		c.Series = append(c.Series, bench)
	}
	slices.SortStableFunc(agents, func(a, b chart.Series) int { return strings.Compare(a.Name, b.Name) })
	c.Series = append(c.Series, agents...)
	if res, at := v.Market.Resolution, v.ResolvedAt; res != nil && at != nil && (*res == arena.Yes || *res == arena.No) {
		y := 0.0
		if *res == arena.Yes {
			y = 1
		}
		c.Series = append(c.Series, chart.Series{Name: "Outcome: " + *res, NoLine: true, X: []float64{float64(at.Unix())}, Y: []float64{y},
			Labels: []string{"Outcome " + *res + ", resolved " + at.UTC().Format("2006-01-02 15:04")}})
	}
	return c
}

// overlayLabel names one forecast on the market chart: who, which round,
// what probability.
func overlayLabel(f view.MarketForecastJSON) string {
	return fmt.Sprintf("%s, round #%d: %.4f", f.Name, f.Round, *f.Forecast)
}

// compareCharts draw the compared agents' cumulative Alpha and each later
// agent's per-round Brier difference from the first, over time.
func compareCharts(v view.ComparePageJSON) []*chart.Line {
	alpha := &chart.Line{ID: "cumalpha", Title: "Cumulative Alpha", X: chart.Axis{Label: "round commit deadline (UTC)", Time: true},
		Y:    chart.Axis{Label: "mean Alpha so far"},
		Desc: "Each agent's mean Alpha (market Brier minus agent Brier) over its rounds so far; above zero beats the market's price."}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, a := range v.Agents {
		s := chart.Series{Name: a.Name}
		for _, h := range a.History {
			if h.CumAlpha != nil {
				x := float64(h.At.Unix())
				s.X, s.Y = append(s.X, x), append(s.Y, *h.CumAlpha)
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
		alpha.Series = append(alpha.Series, s)
	}
	if lo <= hi {
		alpha.Refs = []chart.Ref{{X0: lo, X1: hi, Label: "Alpha = 0: as good as the market"}}
	}
	diff := &chart.Line{ID: "brierdiff", Title: "Per-round Brier difference from " + v.Agents[0].Name, X: chart.Axis{Label: "round commit deadline (UTC)", Time: true},
		Y:    chart.Axis{Label: "Brier − Brier of " + v.Agents[0].Name},
		Desc: "For each other agent, its Brier minus " + v.Agents[0].Name + "'s in every round both played; below zero it did better in that round."}
	// The first agent is the zero line: each agent keeps its colour,
	// dash and marker across both charts.
	ref := chart.Series{Name: v.Agents[0].Name + " (reference)"}
	for _, h := range v.Agents[0].History {
		ref.X, ref.Y = append(ref.X, float64(h.At.Unix())), append(ref.Y, 0)
	}
	diff.Series = append(diff.Series, ref)
	for _, d := range v.Diffs {
		s := chart.Series{Name: d.Name, Points: true}
		for _, rd := range d.Rounds {
			s.X, s.Y = append(s.X, float64(rd.At.Unix())), append(s.Y, rd.Diff)
		}
		diff.Series = append(diff.Series, s)
	}
	return []*chart.Line{alpha, diff}
}
