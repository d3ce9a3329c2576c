package view

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/web/openapi"
	"github.com/forecast-arena/arena/stats"
)

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
	// DefaultLimit is the limit the question browser's JSON route takes
	// when none is given: its links leave that limit out.
	DefaultLimit int `json:"-"`
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

// Next is the cursor of the page after this one.
func (v MarketsPageJSON) Next() (int64, bool) {
	if v.NextCursor == nil {
		return 0, false
	}
	return *v.NextCursor, true
}

// Paged is a page with a following one: the server sets its Link header.
type Paged interface{ Next() (int64, bool) }

// The comparison takes this many agents at least and at most.
const (
	CompareMin = 2
	CompareMax = 4
)

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

// ---- the question browser ----

// MarketsLimit is the question browser's page size when none is given.
const MarketsLimit = 50

// MarketStatuses are the statuses a market takes, in order.
var MarketStatuses = []string{string(arena.StatusOpen), string(arena.StatusClosed), string(arena.StatusResolved)}

// MarketsParams are the question browser's filters and page, as its query
// gives them: a category, source or venue no stored market has is refused.
type MarketsParams struct {
	Status   string // "": every status
	Category string
	Source   string
	Venue    string
	Limit    int   // page size; 0 or less: MarketsLimit
	Cursor   int64 // the markets below this market id; 0: from the newest
}

// MarketsPage is the question browser: the page of markets p selects,
// newest first, and the values each filter takes.
func (s *Service) MarketsPage(ctx context.Context, p MarketsParams) (MarketsPageJSON, error) {
	if p.Status != "" && !slices.Contains(MarketStatuses, p.Status) {
		return MarketsPageJSON{}, arena.Rejectf(arena.EINVALID, "invalid_parameter", "status %q: want %s", arena.Clip(p.Status), openapi.OneOf(MarketStatuses))
	}
	if p.Limit <= 0 {
		p.Limit = MarketsLimit
	}
	facets, err := s.Markets.Facets(ctx)
	if err != nil {
		return MarketsPageJSON{}, err
	}
	v := MarketsPageJSON{Status: p.Status, Category: strings.TrimSpace(p.Category), Source: strings.TrimSpace(p.Source),
		Venue: strings.TrimSpace(p.Venue), Limit: p.Limit, Cursor: p.Cursor, Statuses: MarketStatuses,
		Categories: facets.Categories, Sources: facets.Sources, Venues: facets.Venues, Markets: []MarketRowJSON{}, DefaultLimit: MarketsLimit}
	if err := facet("category", v.Category, v.Categories); err != nil {
		return MarketsPageJSON{}, err
	}
	if err := facet("source", v.Source, v.Sources); err != nil {
		return MarketsPageJSON{}, err
	}
	if err := facet("venue", v.Venue, v.Venues); err != nil {
		return MarketsPageJSON{}, err
	}
	page, total, err := s.Markets.List(ctx, arena.MarketListFilter{Source: v.Source, Venue: v.Venue, Category: v.Category,
		Status: arena.MarketStatus(v.Status), Before: p.Cursor, Limit: v.Limit + 1}) // one more: is there a next page?
	if err != nil {
		return MarketsPageJSON{}, err
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

// facet refuses a filter value no stored market has, naming those they have.
func facet(name, value string, values []string) error {
	if value == "" || slices.Contains(values, value) {
		return nil
	}
	if len(values) == 0 {
		return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s %q: no market has a %s yet", name, arena.Clip(value), name)
	}
	return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s %q: no market has it (want %s)", name, arena.Clip(value), openapi.OneOf(values))
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

// ComparePage is the agent comparison of agents, a comma-separated list
// of 2 to 4 agents, each by its address (in any letter case) or display
// name: each one's cumulative Alpha and the per-round Brier difference of
// each from the first. Without agents (blank) it lists the agents to
// choose from.
func (s *Service) ComparePage(ctx context.Context, agents string) (ComparePageJSON, error) {
	if err := s.NeedForecast(); err != nil {
		return ComparePageJSON{}, err
	}
	_, rows, a, err := s.forecastBoard(ctx, rounds.Filter{})
	if err != nil {
		return ComparePageJSON{}, err
	}
	names, err := s.Forecast.Names(ctx)
	if err != nil {
		return ComparePageJSON{}, err
	}
	v := ComparePageJSON{Agents: []CompareAgentJSON{}, Diffs: []BrierDiffJSON{}, Choices: []AgentChoiceJSON{}}
	for _, row := range rows {
		v.Choices = append(v.Choices, AgentChoiceJSON{Agent: row.Agent, Name: row.Name, Rank: row.Rank, Baseline: row.Baseline})
	}
	if strings.TrimSpace(agents) == "" {
		return v, nil
	}
	results, err := compareAgents(agents, a, names)
	if err != nil {
		return ComparePageJSON{}, err
	}
	byRound := make([]map[string]float64, len(results))
	for i, res := range results {
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
	if len(items) < CompareMin || len(items) > CompareMax {
		return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agents: want %d to %d agents, comma-separated addresses or names (got %d)",
			CompareMin, CompareMax, len(items))
	}
	var out []*stats.AgentResult
	for _, item := range items {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agents %q: an empty name between commas", arena.Clip(list))
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
			return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agent %q: %d agents have that name; give the address", arena.Clip(item), len(byName))
		default:
			return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agent %q has no scored forecasts (the leaderboard lists the agents)", arena.Clip(item))
		}
		if slices.Contains(out, res) {
			return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agent %q is named twice", arena.Clip(item))
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
