package trading

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/cache"
)

// BetOutcome is one resolved bet: the implied confidence of the bet, the side-correct market price it executed at and whether its side
// won.
type BetOutcome struct {
	Confidence float64
	Price      PPM
	Won        bool
}

// CohortResult is one agent's result in one cohort: its current valuation
// and its bets on markets with a winner.
type CohortResult struct {
	AgentID   string
	Name      string
	CohortID  int64
	WeekStart time.Time
	Active    bool
	Valuation Valuation
	Bankrupt  bool
	Bets      []BetOutcome
	// Decisions and Cost are the agent's decisions in the cohort and what
	// their model calls cost.
	Decisions int
	Cost      Micros
}

// LeaderRow is one agent's trading-track record across cohorts. Brier
// figures are NaN when the agent has no resolved bet.
type LeaderRow struct {
	AgentID       string
	Name          string // display name in the agent's latest cohort
	Cohorts       int
	ActiveCohorts int
	MeanReturnPct float64 // mean over cohorts of the return %
	TotalPnL      Micros  // sum over cohorts
	Bankruptcies  int
	ResolvedBets  int
	Decisions     int    // summed over cohorts
	Cost          Micros // what the decisions' model calls cost
	// Brier is the mean over every resolved bet of every cohort.
	Brier float64
	// BrierSkill is 1 − Brier/0.25: above 0 beats always saying 50%.
	BrierSkill float64
	// MarketBrier is the mean Brier of the market's own price on the same
	// bets (the side-correct price paid); SkillVsMarket is 1 − Brier/MarketBrier.
	MarketBrier   float64
	SkillVsMarket float64
}

// Aggregate combines per-cohort results into one row per agent, by mean
// return descending, then agent id. Pure: no I/O.
func Aggregate(results []CohortResult) []LeaderRow {
	type acc struct {
		row           LeaderRow
		retSum        float64
		brier, market float64
		latest        time.Time
	}
	by := map[string]*acc{}
	var order []string
	for _, r := range results {
		a := by[r.AgentID]
		if a == nil {
			a = &acc{row: LeaderRow{AgentID: r.AgentID, Name: r.Name}, latest: r.WeekStart}
			by[r.AgentID] = a
			order = append(order, r.AgentID)
		}
		if !r.WeekStart.Before(a.latest) {
			a.latest = r.WeekStart
			if r.Name != "" {
				a.row.Name = r.Name
			}
		}
		a.row.Cohorts++
		if r.Active {
			a.row.ActiveCohorts++
		}
		if r.Bankrupt {
			a.row.Bankruptcies++
		}
		a.retSum += r.Valuation.PnLPct
		a.row.TotalPnL += r.Valuation.PnL
		a.row.Decisions += r.Decisions
		a.row.Cost += r.Cost
		for _, b := range r.Bets {
			a.row.ResolvedBets++
			a.brier += BetBrier(b.Confidence, b.Won)
			a.market += BetBrier(b.Price.Float(), b.Won)
		}
	}
	out := make([]LeaderRow, 0, len(order))
	for _, id := range order {
		a := by[id]
		r := a.row
		r.MeanReturnPct = a.retSum / float64(r.Cohorts)
		r.Brier, r.BrierSkill, r.MarketBrier, r.SkillVsMarket = math.NaN(), math.NaN(), math.NaN(), math.NaN()
		if n := float64(r.ResolvedBets); n > 0 {
			r.Brier, r.MarketBrier = a.brier/n, a.market/n
			r.BrierSkill = 1 - r.Brier/0.25
			if r.MarketBrier > 0 {
				r.SkillVsMarket = 1 - r.Brier/r.MarketBrier
			}
		}
		out = append(out, r)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].MeanReturnPct != out[j].MeanReturnPct {
			return out[i].MeanReturnPct > out[j].MeanReturnPct
		}
		return out[i].AgentID < out[j].AgentID
	})
	return out
}

// results values every portfolio of cohorts at current prices and
// collects its resolved bets and decision costs. The markets of every
// position and bet are loaded in one query.
func (e *Engine) results(ctx context.Context, cohorts []*arena.Cohort) ([]CohortResult, error) {
	type held struct {
		c      *arena.Cohort
		p      *arena.Portfolio
		trades []*arena.Trade
		cost   arena.DecisionCost
	}
	var hs []held
	var ids []int64
	for _, c := range cohorts {
		ports, err := e.Store.Portfolios(ctx, c.ID)
		if err != nil {
			return nil, fmt.Errorf("trading: results of cohort %d: %w", c.ID, err)
		}
		byPortfolio, err := cohortTrades(ctx, e.Store, c.ID)
		if err != nil {
			return nil, fmt.Errorf("trading: results of cohort %d: %w", c.ID, err)
		}
		costs, err := e.Store.DecisionCosts(ctx, c.ID)
		if err != nil {
			return nil, fmt.Errorf("trading: results of cohort %d: %w", c.ID, err)
		}
		for _, p := range ports {
			trades := byPortfolio[p.ID]
			for _, pos := range p.Positions {
				ids = append(ids, pos.MarketID)
			}
			for _, t := range trades {
				ids = append(ids, t.MarketID)
			}
			h := held{c: c, p: p, trades: trades}
			for _, dc := range costs {
				if dc.AgentID == p.AgentID {
					h.cost = dc
				}
			}
			hs = append(hs, h)
		}
	}
	mc := &marketCache{store: e.Store}
	if err := mc.prefetch(ctx, ids); err != nil {
		return nil, fmt.Errorf("trading: results: %w", err)
	}
	out := make([]CohortResult, 0, len(hs))
	for _, h := range hs {
		c, p := h.c, h.p
		name := ""
		for _, l := range c.Lineup {
			if l.AgentID == p.AgentID {
				name = l.Name
			}
		}
		views := map[int64]*MarketView{}
		for _, pos := range p.Positions {
			v, err := mc.get(ctx, pos.MarketID)
			if err != nil {
				return nil, fmt.Errorf("trading: results of portfolio %d: %w", p.ID, err)
			}
			views[pos.MarketID] = v
		}
		val, _ := Value(p.Cash, p.Positions, views, c.InitialCash)
		r := CohortResult{AgentID: p.AgentID, Name: name, CohortID: c.ID, WeekStart: c.WeekStart,
			Active: c.Status == arena.CohortActive, Valuation: val, Bankrupt: p.Bankrupt, Decisions: h.cost.Decisions, Cost: h.cost.Cost}
		for _, t := range h.trades {
			if t.Kind != arena.TradeBet {
				continue
			}
			v, err := mc.get(ctx, t.MarketID)
			if err != nil {
				return nil, fmt.Errorf("trading: results of portfolio %d: %w", p.ID, err)
			}
			if won, decided := Won(v.Resolution, v.Type, t.Side); decided {
				r.Bets = append(r.Bets, BetOutcome{Confidence: t.Confidence, Price: t.Price, Won: won})
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// Sorts are the orders of the trading leaderboard: by mean return (the
// default) or by Brier score.
var Sorts = []string{"return", "brier"}

// maxCachedLeaderboards bounds the windows whose leaderboard is kept: the
// least recently read is dropped beyond it.
const maxCachedLeaderboards = 8

// Leaderboard is the trading track's leaderboard across the cohorts whose
// week started at most window ago (every cohort for 0), ordered by sortBy
// ("" for the first of Sorts): by mean return, then agent id (Aggregate),
// or by Brier score (SortByBrier). It is computed again only when the
// data it reads has changed (the trading track's and the markets' data
// versions) or another cohort enters or leaves the window.
func (e *Engine) Leaderboard(ctx context.Context, window time.Duration, sortBy string) (LeaderboardJSON, error) {
	sortBy = cmp.Or(sortBy, Sorts[0])
	if !slices.Contains(Sorts, sortBy) {
		return LeaderboardJSON{}, arena.Errorf(arena.EINVALID, "sort %q: want %s", sortBy, strings.Join(Sorts, " or "))
	}
	// The version is read first: data written meanwhile is then computed
	// under the older version, and the next reader sees a newer one.
	vs, err := e.Store.Versions(ctx)
	if err != nil {
		return LeaderboardJSON{}, fmt.Errorf("trading: leaderboard: %w", err)
	}
	version := vs.Key(arena.DomainTrading, arena.DomainMarkets)
	cohorts, err := e.Store.Cohorts(ctx, "")
	if err != nil {
		return LeaderboardJSON{}, fmt.Errorf("trading: leaderboard: %w", err)
	}
	var since time.Time
	if window > 0 {
		since = e.now().Add(-window)
	}
	var in []*arena.Cohort
	key := []byte(version)
	latest := map[string]int64{} // each agent's newest cohort, in the window or not
	for _, c := range cohorts {  // newest week first
		for _, l := range c.Lineup {
			if _, ok := latest[l.AgentID]; !ok {
				latest[l.AgentID] = c.ID
			}
		}
		if !c.WeekStart.Before(since) {
			in = append(in, c)
			key = strconv.AppendInt(append(key, ' '), c.ID, 10)
		}
	}
	rows, err := e.boardCache().Get(ctx, window, string(key), func(ctx context.Context) ([]LeaderRow, error) {
		rs, err := e.results(ctx, in)
		if err != nil {
			return nil, err
		}
		return Aggregate(rs), nil
	})
	if err != nil {
		return LeaderboardJSON{}, err
	}
	if sortBy == "brier" {
		rows = slices.Clone(rows)
		SortByBrier(rows)
	}
	out := LeaderboardJSON{Track: "trading", Sort: sortBy, Rows: make([]LeaderRowJSON, 0, len(rows))}
	for i, x := range rows {
		out.Rows = append(out.Rows, newLeaderRowJSON(i+1, x, latest[x.AgentID]))
	}
	return out, nil
}

// boardCache keeps the leaderboards last computed (as Aggregate orders
// them), by window, for the maxCachedLeaderboards windows read last.
func (e *Engine) boardCache() *cache.Cache[time.Duration, []LeaderRow] {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.boards == nil {
		e.boards = &cache.Cache[time.Duration, []LeaderRow]{Max: maxCachedLeaderboards}
	}
	return e.boards
}

// Stop cancels the leaderboards being computed and returns once none is,
// so the store can be closed after it.
func (e *Engine) Stop() { e.boardCache().Close() }

// cohortTrades returns a cohort's trades by portfolio, in one query.
func cohortTrades(ctx context.Context, st arena.CohortStore, cohortID int64) (map[int64][]*arena.Trade, error) {
	ts, err := st.CohortTrades(ctx, cohortID)
	if err != nil {
		return nil, err
	}
	out := map[int64][]*arena.Trade{}
	for _, t := range ts {
		out[t.PortfolioID] = append(out[t.PortfolioID], t)
	}
	return out, nil
}

// SortByBrier orders rows by Brier score, lowest (best) first; agents
// without a resolved bet go last; ties by mean return, then agent id.
func SortByBrier(rows []LeaderRow) {
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		an, bn := math.IsNaN(a.Brier), math.IsNaN(b.Brier)
		switch {
		case an != bn:
			return bn
		case !an && a.Brier != b.Brier:
			return a.Brier < b.Brier
		case a.MeanReturnPct != b.MeanReturnPct:
			return a.MeanReturnPct > b.MeanReturnPct
		}
		return a.AgentID < b.AgentID
	})
}
