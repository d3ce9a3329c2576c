package web

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/chart"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/web/openapi"
	"github.com/forecast-arena/arena/stats"
)

// The question browser (/markets) and the agent comparison (/compare).

func init() {
	titles["markets.html"] = "Questions"
	titles["compare.html"] = "Compare agents"
}

// MarketsPageJSON is the question browser: a page of markets, newest
// first, as the filters select them, and the values each filter takes.
type MarketsPageJSON struct {
	Status     string   `json:"status"`
	Category   string   `json:"category"`
	Source     string   `json:"source"`
	Venue      string   `json:"venue"`
	Limit      int      `json:"limit"`
	Statuses   []string `json:"statuses"`
	Categories []string `json:"categories"`
	Sources    []string `json:"sources"`
	Venues     []string `json:"venues"`
	// Total counts the markets the filters select, over every page.
	Total int `json:"total"`
	// Cursor is the page's cursor (0: the first page).
	Cursor  int64           `json:"cursor"`
	Markets []MarketRowJSON `json:"markets"`
	// NextCursor is the cursor of the next page, as the Link header's
	// next URL gives it; null on the last page.
	NextCursor *int64 `json:"next_cursor"`
}

// MarketRowJSON is one market in the question browser.
type MarketRowJSON struct {
	arena.MarketJSON
	// Price is the current price of Yes (binary markets) or of the
	// leading outcome, PriceOutcome (other markets); null when unknown.
	Price        *float64 `json:"price"`
	PriceOutcome string   `json:"price_outcome"`
	// Forecasters counts the agents whose revealed forecast of the market
	// was scored: forecasts are public only once their round is triggered.
	Forecasters int `json:"forecasters"`
}

// next is the cursor of the page after this one.
func (v MarketsPageJSON) next() (int64, bool) {
	if v.NextCursor == nil {
		return 0, false
	}
	return *v.NextCursor, true
}

// nextLink is a page with a following one: page sets its Link header.
type nextLink interface{ next() (int64, bool) }

const marketsAPI = "/api/v1/pages/markets"

func (s *Server) marketsView(r *http.Request) (any, error) {
	ints, err := apiOpOf("GET " + marketsAPI).Values(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	facets, err := s.markets.Facets(r.Context())
	if err != nil {
		return nil, err
	}
	v := MarketsPageJSON{Status: q.Get("status"), Category: strings.TrimSpace(q.Get("category")), Source: strings.TrimSpace(q.Get("source")),
		Venue: strings.TrimSpace(q.Get("venue")), Limit: int(ints["limit"]), Cursor: ints["cursor"], Statuses: marketStatuses,
		Categories: facets.Categories, Sources: facets.Sources, Venues: facets.Venues, Markets: []MarketRowJSON{}}
	if err := facet("category", v.Category, v.Categories); err != nil {
		return nil, err
	}
	if err := facet("source", v.Source, v.Sources); err != nil {
		return nil, err
	}
	if err := facet("venue", v.Venue, v.Venues); err != nil {
		return nil, err
	}
	page, total, err := s.markets.List(r.Context(), arena.MarketListFilter{Source: v.Source, Venue: v.Venue, Category: v.Category,
		Status: arena.MarketStatus(v.Status), Before: ints["cursor"], Limit: v.Limit + 1}) // one more: is there a next page?
	if err != nil {
		return nil, err
	}
	v.Total = total
	if len(page) > v.Limit {
		page = page[:v.Limit]
		last := page[len(page)-1].Market.ID
		v.NextCursor = &last
	}
	for _, l := range page {
		row := MarketRowJSON{MarketJSON: arena.NewMarketJSON(l.Market), Forecasters: l.Forecasters}
		row.Price, row.PriceOutcome = currentPrice(l.Market)
		v.Markets = append(v.Markets, row)
	}
	return v, nil
}

// marketsLink is the question browser with v's filters from cursor on.
func marketsLink(v MarketsPageJSON, cursor int64) string {
	q := url.Values{}
	for k, x := range map[string]string{"status": v.Status, "category": v.Category, "source": v.Source, "venue": v.Venue} {
		if x != "" {
			q.Set(k, x)
		}
	}
	if d := apiOpOf("GET " + marketsAPI).Param("limit").Default; strconv.Itoa(v.Limit) != d {
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

// facet refuses a filter value no stored market has, naming those they have.
func facet(name, value string, values []string) error {
	if value == "" || slices.Contains(values, value) {
		return nil
	}
	if len(values) == 0 {
		return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s %q: no market has a %s yet", name, openapi.Clip(value), name)
	}
	return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s %q: no market has it (want %s)", name, openapi.Clip(value), oneOf(values))
}

// currentPrice is a market's latest Yes price, or for a market of other
// outcomes its leading outcome's.
func currentPrice(m *arena.Market) (*float64, string) {
	if p, ok := m.YesPrice(); ok {
		return &p, arena.Yes
	}
	best, name := -1.0, ""
	for _, o := range m.Outcomes { // in outcome order: ties go to the first
		if p, ok := m.Prices[o]; ok && p > best {
			best, name = p, o
		}
	}
	if name == "" {
		return nil, ""
	}
	return &best, name
}

// ---- compare ----

// ComparePageJSON compares two to four agents: each one's cumulative
// Alpha over the rounds it played, and each later agent's per-round Brier
// difference from the first over the rounds both played. Asked for no
// agents, it lists those to choose from.
type ComparePageJSON struct {
	Agents  []CompareAgentJSON `json:"agents"`
	Diffs   []BrierDiffJSON    `json:"brier_differences"`
	Choices []AgentChoiceJSON  `json:"choices"`
}

// CompareAgentJSON is one compared agent: its leaderboard row and its
// rounds with the cumulative Alpha after each.
type CompareAgentJSON struct {
	Agent   string             `json:"agent"`
	Name    string             `json:"name"`
	Row     *ForecastRowJSON   `json:"leaderboard_row"`
	History []CompareRoundJSON `json:"history"`
}

// CompareRoundJSON is a round in a compared agent's history, at its
// commit deadline.
type CompareRoundJSON struct {
	AgentRoundJSON
	At time.Time `json:"at"`
}

// BrierDiffJSON is an agent's Brier minus the first agent's, round by
// round over the rounds both played: below zero the agent did better.
type BrierDiffJSON struct {
	Agent  string          `json:"agent"`
	Name   string          `json:"name"`
	Versus string          `json:"versus"`
	Rounds []RoundDiffJSON `json:"rounds"`
	Mean   *float64        `json:"mean"` // null without a shared round
	Better int             `json:"rounds_better"`
	Worse  int             `json:"rounds_worse"`
}

// RoundDiffJSON is one round's Brier difference.
type RoundDiffJSON struct {
	Round string    `json:"round"`
	At    time.Time `json:"at"`
	Diff  float64   `json:"diff"`
}

// AgentChoiceJSON is an agent that can be compared, in leaderboard order.
type AgentChoiceJSON struct {
	Agent    string `json:"agent"`
	Name     string `json:"name"`
	Rank     int    `json:"rank"`
	Baseline bool   `json:"baseline"`
}

// Compare takes this many agents at least and at most.
const (
	compareMin = 2
	compareMax = 4
)

func (s *Server) compareView(r *http.Request) (any, error) {
	if err := s.needForecast(); err != nil {
		return nil, err
	}
	ctx := r.Context()
	_, rows, a, err := s.forecastBoard(ctx, rounds.Filter{})
	if err != nil {
		return nil, err
	}
	names, err := s.forecast.Names(ctx)
	if err != nil {
		return nil, err
	}
	v := ComparePageJSON{Agents: []CompareAgentJSON{}, Diffs: []BrierDiffJSON{}, Choices: []AgentChoiceJSON{}}
	for _, row := range rows {
		v.Choices = append(v.Choices, AgentChoiceJSON{Agent: row.Agent, Name: row.Name, Rank: row.Rank, Baseline: row.Baseline})
	}
	asked := r.URL.Query().Get("agents")
	if strings.TrimSpace(asked) == "" {
		return v, nil
	}
	agents, err := compareAgents(asked, a, names)
	if err != nil {
		return nil, err
	}
	byRound := make([]map[string]float64, len(agents))
	for i, res := range agents {
		ca := CompareAgentJSON{Agent: res.Agent, Name: nameOf(names, res.Agent), History: []CompareRoundJSON{}}
		for j := range rows {
			if rows[j].Agent == res.Agent {
				ca.Row = &rows[j]
			}
		}
		byRound[i] = map[string]float64{}
		for _, h := range history(res.RoundScores) {
			ca.History = append(ca.History, CompareRoundJSON{AgentRoundJSON: h, At: roundTime(a, h.Round)})
			byRound[i][h.Round] = h.Brier
		}
		v.Agents = append(v.Agents, ca)
	}
	first := v.Agents[0]
	for i, ca := range v.Agents[1:] {
		d := BrierDiffJSON{Agent: ca.Agent, Name: ca.Name, Versus: first.Name, Rounds: []RoundDiffJSON{}}
		var sum float64
		for _, h := range ca.History {
			b0, ok := byRound[0][h.Round]
			if !ok {
				continue
			}
			diff := byRound[i+1][h.Round] - b0
			d.Rounds = append(d.Rounds, RoundDiffJSON{Round: h.Round, At: h.At, Diff: diff})
			sum += diff
			switch {
			case diff < 0:
				d.Better++
			case diff > 0:
				d.Worse++
			}
		}
		if n := len(d.Rounds); n > 0 {
			m := sum / float64(n)
			d.Mean = &m
		}
		v.Diffs = append(v.Diffs, d)
	}
	return v, nil
}

// compareAgents resolves a comma-separated list of agents, each by its
// address (in any letter case) or its display name, among the scored ones.
func compareAgents(list string, a *scoring.Analysis, names map[string]string) ([]*stats.AgentResult, error) {
	items := strings.Split(list, ",")
	if len(items) < compareMin || len(items) > compareMax {
		return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agents: want %d to %d agents, comma-separated addresses or names (got %d)",
			compareMin, compareMax, len(items))
	}
	var out []*stats.AgentResult
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agents %q: an empty name between commas", openapi.Clip(list))
		}
		var byAddr, byName []*stats.AgentResult
		for i := range a.Results {
			res := &a.Results[i]
			if strings.EqualFold(res.Agent, item) {
				byAddr = append(byAddr, res)
			} else if strings.EqualFold(nameOf(names, res.Agent), item) {
				byName = append(byName, res)
			}
		}
		var res *stats.AgentResult
		switch {
		case len(byAddr) == 1:
			res = byAddr[0]
		case len(byName) == 1:
			res = byName[0]
		case len(byName) > 1:
			return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agent %q: %d agents have that name; give the address", openapi.Clip(item), len(byName))
		default:
			return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agent %q has no scored forecasts (the leaderboard lists the agents)", openapi.Clip(item))
		}
		if slices.Contains(out, res) {
			return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agent %q is named twice", openapi.Clip(item))
		}
		out = append(out, res)
	}
	return out, nil
}

// roundTime is a scored round's commit deadline, by the round's name in
// an analysis (its id).
func roundTime(a *scoring.Analysis, round string) time.Time {
	id, _ := strconv.ParseUint(round, 10, 64)
	return a.Deadlines[id].UTC()
}

// compareLink is the comparison of the leaderboard's first two agents,
// an example for the page without agents.
func compareLink(choices []AgentChoiceJSON) string {
	if len(choices) < compareMin {
		return ""
	}
	return "/compare?agents=" + choices[0].Agent + "," + choices[1].Agent
}

// compareTitle names the compared agents.
func compareTitle(v ComparePageJSON) string {
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
func marketChart(v MarketPageJSON) *chart.Line {
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
func overlayLabel(f MarketForecastJSON) string {
	return fmt.Sprintf("%s, round #%d: %.4f", f.Name, f.Round, *f.Forecast)
}

// compareCharts draw the compared agents' cumulative Alpha and each later
// agent's per-round Brier difference from the first, over time.
func compareCharts(v ComparePageJSON) []*chart.Line {
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
