package web

import (
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/web/openapi"
	"github.com/forecast-arena/arena/internal/web/view"
	"github.com/forecast-arena/arena/stats"
)

// The question browser (/markets) and the agent comparison (/compare).

const marketsAPI = "/api/v1/pages/markets"

func (s *Server) marketsView(r *http.Request) (any, error) {
	op := apiOpOf("GET " + marketsAPI)
	ints, err := op.Values(r)
	if err != nil {
		return nil, err
	}
	defaultLimit, err := strconv.Atoi(op.Param("limit").Default)
	if err != nil {
		return nil, fmt.Errorf("web: the markets page's default limit: %w", err)
	}
	q := r.URL.Query()
	facets, err := s.markets.Facets(r.Context())
	if err != nil {
		return nil, err
	}
	v := view.MarketsPageJSON{Status: q.Get("status"), Category: strings.TrimSpace(q.Get("category")), Source: strings.TrimSpace(q.Get("source")),
		Venue: strings.TrimSpace(q.Get("venue")), Limit: int(ints["limit"]), Cursor: ints["cursor"], Statuses: marketStatuses,
		Categories: facets.Categories, Sources: facets.Sources, Venues: facets.Venues, Markets: []view.MarketRowJSON{}, DefaultLimit: defaultLimit}
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
		row := view.MarketRowJSON{MarketJSON: arena.NewMarketJSON(l.Market), Forecasters: l.Forecasters}
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
	v := view.ComparePageJSON{Agents: []view.CompareAgentJSON{}, Diffs: []view.BrierDiffJSON{}, Choices: []view.AgentChoiceJSON{}}
	for _, row := range rows {
		v.Choices = append(v.Choices, view.AgentChoiceJSON{Agent: row.Agent, Name: row.Name, Rank: row.Rank, Baseline: row.Baseline})
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
		ca := view.CompareAgentJSON{Agent: res.Agent, Name: nameOf(names, res.Agent), History: []view.CompareRoundJSON{}}
		for j := range rows {
			if rows[j].Agent == res.Agent {
				ca.Row = &rows[j]
			}
		}
		byRound[i] = map[string]float64{}
		for _, h := range history(res.RoundScores) {
			ca.History = append(ca.History, view.CompareRoundJSON{AgentRoundJSON: h, At: roundTime(a, h.Round)})
			byRound[i][h.Round] = h.Brier
		}
		v.Agents = append(v.Agents, ca)
	}
	first := v.Agents[0]
	for i, ca := range v.Agents[1:] {
		d := view.BrierDiffJSON{Agent: ca.Agent, Name: ca.Name, Versus: first.Name, Rounds: []view.RoundDiffJSON{}}
		var sum float64
		for _, h := range ca.History {
			b0, ok := byRound[0][h.Round]
			if !ok {
				continue
			}
			diff := byRound[i+1][h.Round] - b0
			d.Rounds = append(d.Rounds, view.RoundDiffJSON{Round: h.Round, At: h.At, Diff: diff})
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
	if len(items) < view.CompareMin || len(items) > view.CompareMax {
		return nil, arena.Rejectf(arena.EINVALID, "invalid_parameter", "agents: want %d to %d agents, comma-separated addresses or names (got %d)",
			view.CompareMin, view.CompareMax, len(items))
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
