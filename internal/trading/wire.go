package trading

import (
	"math"
	"time"

	"github.com/forecast-arena/arena"
)

// Wire types of the trading track: the JSON shapes of cohorts, their
// standings and the leaderboard, shared by the API and the dashboard
// (package web) and the command (`arena cohort`, `arena demo`), so every
// rendering shows the same figures. Money is arena.Dollars, exact to the
// micro-dollar; figures that are undefined are null.

// CohortAgentJSON is one agent's standing in a cohort, valued at current
// prices. Brier is null until the agent has a resolved bet.
type CohortAgentJSON struct {
	Agent          string        `json:"agent"`
	Name           string        `json:"name"`
	Cash           arena.Dollars `json:"cash"`
	PositionsValue arena.Dollars `json:"positions_value"`
	TotalValue     arena.Dollars `json:"total_value"`
	PnL            arena.Dollars `json:"pnl"`
	PnLPct         float64       `json:"pnl_pct"`
	Brier          *float64      `json:"brier"`
	ResolvedBets   int           `json:"resolved_bets"`
	OpenPositions  int           `json:"open_positions"`
	Bankrupt       bool          `json:"bankrupt"`
}

// CohortJSON is a cohort with its standings, best total value first. It is
// the shape of `arena cohort show --format json` and the core of
// GET /api/v1/cohorts/{id}.
type CohortJSON struct {
	ID          int64             `json:"id"`
	WeekStart   time.Time         `json:"week_start"`
	Status      string            `json:"status"`
	InitialCash arena.Dollars     `json:"initial_cash"`
	CreatedAt   time.Time         `json:"created_at"`
	CompletedAt *time.Time        `json:"completed_at"`
	Agents      []CohortAgentJSON `json:"agents"`
}

// NewCohortJSON converts a cohort and its standings (Engine.Standings).
func NewCohortJSON(c *arena.Cohort, standings []Standing) CohortJSON {
	j := CohortJSON{ID: c.ID, WeekStart: c.WeekStart.UTC(), Status: string(c.Status), InitialCash: arena.Dollars(c.InitialCash),
		CreatedAt: c.CreatedAt.UTC(), Agents: make([]CohortAgentJSON, 0, len(standings))}
	if !c.CompletedAt.IsZero() {
		t := c.CompletedAt.UTC()
		j.CompletedAt = &t
	}
	for _, s := range standings {
		a := CohortAgentJSON{Agent: s.AgentID, Name: s.Name, Cash: arena.Dollars(s.Valuation.Cash),
			PositionsValue: arena.Dollars(s.Valuation.PositionsValue), TotalValue: arena.Dollars(s.Valuation.Total),
			PnL: arena.Dollars(s.Valuation.PnL), PnLPct: Finite(s.Valuation.PnLPct), ResolvedBets: s.ResolvedBets,
			OpenPositions: s.OpenPositions, Bankrupt: s.Bankrupt}
		if s.ResolvedBets > 0 {
			b := s.Brier
			a.Brier = &b
		}
		j.Agents = append(j.Agents, a)
	}
	return j
}

// CohortSummaryJSON is one item of GET /api/v1/cohorts and of
// `arena cohort list --format json`.
type CohortSummaryJSON struct {
	ID          int64         `json:"id"`
	WeekStart   time.Time     `json:"week_start"`
	Status      string        `json:"status"`
	Agents      int           `json:"agents"`
	InitialCash arena.Dollars `json:"initial_cash"`
	CreatedAt   time.Time     `json:"created_at"`
	CompletedAt *time.Time    `json:"completed_at"`
}

// NewCohortSummaryJSON converts a cohort for lists.
func NewCohortSummaryJSON(c *arena.Cohort) CohortSummaryJSON {
	j := CohortSummaryJSON{ID: c.ID, WeekStart: c.WeekStart.UTC(), Status: string(c.Status), Agents: len(c.Lineup),
		InitialCash: arena.Dollars(c.InitialCash), CreatedAt: c.CreatedAt.UTC()}
	if !c.CompletedAt.IsZero() {
		t := c.CompletedAt.UTC()
		j.CompletedAt = &t
	}
	return j
}

// LeaderboardJSON is the trading leaderboard (Engine.Leaderboard): the
// one model GET /api/v1/leaderboard?track=trading, the dashboard's
// trading tables and `arena demo` render, so they agree on order and
// ranks.
type LeaderboardJSON struct {
	Track string `json:"track"` // always "trading"
	// Sort is the order of Rows: "return" or "brier" (see Sorts).
	Sort string          `json:"sort"`
	Rows []LeaderRowJSON `json:"rows"`
}

// LeaderRowJSON is one agent of the trading leaderboard. Brier figures
// are null until the agent has a resolved bet.
type LeaderRowJSON struct {
	Rank          int           `json:"rank"`
	Agent         string        `json:"agent"`
	Name          string        `json:"name"`
	Cohorts       int           `json:"cohorts"`
	ActiveCohorts int           `json:"active_cohorts"`
	MeanReturnPct float64       `json:"mean_return_pct"`
	TotalPnL      arena.Dollars `json:"total_pnl"`
	Bankruptcies  int           `json:"bankruptcies"`
	ResolvedBets  int           `json:"resolved_bets"`
	Brier         *float64      `json:"brier"`
	BrierSkill    *float64      `json:"brier_skill"`
	MarketBrier   *float64      `json:"market_brier"`
	SkillVsMarket *float64      `json:"skill_vs_market"`
	// Decisions are the agent's weekly decisions in these cohorts and
	// Cost what their model calls cost (null when nothing: simulated
	// traders call no model).
	Decisions int            `json:"decisions"`
	Cost      *arena.Dollars `json:"cost"`
	// LatestCohort is the newest cohort the agent trades in: its page,
	// /cohorts/{id}, is where a trading agent's positions and decisions
	// are (trading agents have no agent page).
	LatestCohort int64 `json:"latest_cohort_id"`
}

// newLeaderRowJSON is an agent's record as the leaderboard row at rank.
func newLeaderRowJSON(rank int, x LeaderRow, latestCohort int64) LeaderRowJSON {
	var cost *arena.Dollars // none for agents that paid for no model call (simulated traders)
	if x.Cost > 0 {
		c := arena.Dollars(x.Cost)
		cost = &c
	}
	return LeaderRowJSON{Rank: rank, Agent: x.AgentID, Name: x.Name, Cohorts: x.Cohorts,
		ActiveCohorts: x.ActiveCohorts, MeanReturnPct: Finite(x.MeanReturnPct), TotalPnL: arena.Dollars(x.TotalPnL),
		Bankruptcies: x.Bankruptcies, ResolvedBets: x.ResolvedBets, Brier: Optional(x.Brier), BrierSkill: Optional(x.BrierSkill),
		MarketBrier: Optional(x.MarketBrier), SkillVsMarket: Optional(x.SkillVsMarket), Decisions: x.Decisions, Cost: cost,
		LatestCohort: latestCohort}
}

// Finite is f, or 0 for NaN and infinities, which JSON cannot write.
func Finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

// Optional is f as a nullable figure: nil for NaN and infinities (an
// undefined figure, such as a Brier score without a resolved bet).
func Optional(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}
