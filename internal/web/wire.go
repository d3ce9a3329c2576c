package web

// The JSON shapes of the API, in one place. The forecast protocol's
// request and response types live in package forecast (wire.go), shared
// with the participant client.

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
)

// ErrorJSON is the body of every error response.
type ErrorJSON struct {
	Error ErrorDetailJSON `json:"error"`
}

// ErrorDetailJSON is a stable machine-readable code and a human message.
type ErrorDetailJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// MarketJSON is the public JSON shape of a market, shared by the API and
// `arena markets --format json`.
type MarketJSON struct {
	ID         int64              `json:"id"`
	Source     string             `json:"source"`
	SourceID   string             `json:"source_id"`
	Question   string             `json:"question"`
	Category   string             `json:"category"`
	Type       arena.MarketType   `json:"type"`
	Outcomes   []string           `json:"outcomes"`
	Prices     map[string]float64 `json:"prices"`
	Volume     float64            `json:"volume"`
	CloseTime  *string            `json:"close_time"`
	Status     arena.MarketStatus `json:"status"`
	Resolution *string            `json:"resolution"`
}

// NewMarketJSON converts a market to its public shape.
func NewMarketJSON(m *arena.Market) MarketJSON {
	j := MarketJSON{ID: m.ID, Source: m.Source, SourceID: m.SourceID, Question: m.Question, Category: m.Category,
		Type: m.Type, Outcomes: m.Outcomes, Prices: m.Prices, Volume: m.Volume, Status: m.Status}
	if !m.CloseTime.IsZero() {
		s := m.CloseTime.UTC().Format(time.RFC3339)
		j.CloseTime = &s
	}
	if m.Resolution != "" {
		r := m.Resolution
		j.Resolution = &r
	}
	return j
}

// Dollars is an exact amount of money written as a JSON number of dollars
// with up to six decimals ("10000", "-12.5", "0.000001"): the micro-dollar
// ledger is never rounded through a float on the way out.
type Dollars arena.Micros

// MarshalJSON implements json.Marshaler.
func (d Dollars) MarshalJSON() ([]byte, error) {
	m := int64(d)
	neg := m < 0
	u := uint64(m)
	if neg {
		u = uint64(-m)
	}
	s := strconv.FormatUint(u/1_000_000, 10)
	if f := u % 1_000_000; f != 0 {
		s += "." + strings.TrimRight(strconv.FormatUint(f+1_000_000, 10)[1:], "0")
	}
	if neg {
		s = "-" + s
	}
	return []byte(s), nil
}

// UnmarshalJSON reads a decimal number of dollars back exactly.
func (d *Dollars) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	s := n.String()
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(frac) > 6 || strings.ContainsAny(s, "eE") {
		f, err := n.Float64()
		if err != nil {
			return err
		}
		m, err := trading.DollarsToMicros(f)
		*d = Dollars(m)
		return err
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return err
	}
	fv, _ := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	v := w*1_000_000 + fv
	if neg {
		v = -v
	}
	*d = Dollars(v)
	return nil
}

// CohortAgentJSON is one agent's standing in a cohort, valued at current
// prices. Brier is null until the agent has a resolved bet.
type CohortAgentJSON struct {
	Agent          string   `json:"agent"`
	Name           string   `json:"name"`
	Cash           Dollars  `json:"cash"`
	PositionsValue Dollars  `json:"positions_value"`
	TotalValue     Dollars  `json:"total_value"`
	PnL            Dollars  `json:"pnl"`
	PnLPct         float64  `json:"pnl_pct"`
	Brier          *float64 `json:"brier"`
	ResolvedBets   int      `json:"resolved_bets"`
	OpenPositions  int      `json:"open_positions"`
	Bankrupt       bool     `json:"bankrupt"`
}

// CohortJSON is a cohort with its standings, best total value first. It is
// the shape of `arena cohort show --format json` and the core of
// GET /api/v1/cohorts/{id}.
type CohortJSON struct {
	ID          int64             `json:"id"`
	WeekStart   time.Time         `json:"week_start"`
	Status      string            `json:"status"`
	InitialCash Dollars           `json:"initial_cash"`
	CreatedAt   time.Time         `json:"created_at"`
	CompletedAt *time.Time        `json:"completed_at"`
	Agents      []CohortAgentJSON `json:"agents"`
}

// NewCohortJSON converts a cohort and its standings (trading.Engine.Standings).
func NewCohortJSON(c *arena.Cohort, standings []trading.Standing) CohortJSON {
	j := CohortJSON{ID: c.ID, WeekStart: c.WeekStart.UTC(), Status: string(c.Status), InitialCash: Dollars(c.InitialCash),
		CreatedAt: c.CreatedAt.UTC(), Agents: make([]CohortAgentJSON, 0, len(standings))}
	if !c.CompletedAt.IsZero() {
		t := c.CompletedAt.UTC()
		j.CompletedAt = &t
	}
	for _, s := range standings {
		a := CohortAgentJSON{Agent: s.AgentID, Name: s.Name, Cash: Dollars(s.Valuation.Cash),
			PositionsValue: Dollars(s.Valuation.PositionsValue), TotalValue: Dollars(s.Valuation.Total),
			PnL: Dollars(s.Valuation.PnL), PnLPct: finite(s.Valuation.PnLPct), ResolvedBets: s.ResolvedBets,
			OpenPositions: s.OpenPositions, Bankrupt: s.Bankrupt}
		if s.ResolvedBets > 0 {
			b := s.Brier
			a.Brier = &b
		}
		j.Agents = append(j.Agents, a)
	}
	return j
}

// LineupJSON is one frozen lineup entry, without the raw spec.
type LineupJSON struct {
	Agent            string  `json:"agent"`
	Name             string  `json:"name"`
	Kind             string  `json:"kind"`
	Provider         string  `json:"provider,omitempty"`
	Model            string  `json:"model,omitempty"`
	InputUSDPerMtok  Dollars `json:"input_usd_per_mtok"`
	OutputUSDPerMtok Dollars `json:"output_usd_per_mtok"`
}

// DecisionSummaryJSON lists a decision in a cohort page.
type DecisionSummaryJSON struct {
	ID            int64     `json:"id"`
	Agent         string    `json:"agent"`
	Name          string    `json:"name"` // the agent's display name, from the lineup
	Week          time.Time `json:"week"`
	Status        string    `json:"status"`
	Action        string    `json:"action,omitempty"`
	Retries       int       `json:"retries"`
	SystemDefault bool      `json:"system_default"`
	Cost          Dollars   `json:"cost"`
}

// CohortDetailJSON is GET /api/v1/cohorts/{id}.
type CohortDetailJSON struct {
	CohortJSON
	Lineup    []LineupJSON          `json:"lineup"`
	Decisions []DecisionSummaryJSON `json:"decisions"`
}

// CohortSummaryJSON is one item of GET /api/v1/cohorts.
type CohortSummaryJSON struct {
	ID          int64      `json:"id"`
	WeekStart   time.Time  `json:"week_start"`
	Status      string     `json:"status"`
	Agents      int        `json:"agents"`
	InitialCash Dollars    `json:"initial_cash"`
	CreatedAt   time.Time  `json:"created_at"`
	CompletedAt *time.Time `json:"completed_at"`
}

// NewCohortSummaryJSON converts a cohort for lists.
func NewCohortSummaryJSON(c *arena.Cohort) CohortSummaryJSON {
	j := CohortSummaryJSON{ID: c.ID, WeekStart: c.WeekStart.UTC(), Status: string(c.Status), Agents: len(c.Lineup),
		InitialCash: Dollars(c.InitialCash), CreatedAt: c.CreatedAt.UTC()}
	if !c.CompletedAt.IsZero() {
		t := c.CompletedAt.UTC()
		j.CompletedAt = &t
	}
	return j
}

// DecisionJSON is GET /api/v1/decisions/{id}: everything the agent was
// shown and answered, the parsed action and what executed.
type DecisionJSON struct {
	ID            int64           `json:"id"`
	CohortID      int64           `json:"cohort_id"`
	Agent         string          `json:"agent"`
	Week          time.Time       `json:"week"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	SystemPrompt  string          `json:"system_prompt"`
	UserPrompt    string          `json:"user_prompt"`
	RawResponses  []string        `json:"raw_responses"`
	Action        json.RawMessage `json:"action"`
	Executions    json.RawMessage `json:"executions"`
	Retries       int             `json:"retries"`
	SystemDefault bool            `json:"system_default"`
	TokensIn      int64           `json:"tokens_in"`
	TokensOut     int64           `json:"tokens_out"`
	Cost          Dollars         `json:"cost"`
	LatencyMS     int64           `json:"latency_ms"`
	Error         string          `json:"error"`
	ClaimedAt     time.Time       `json:"claimed_at"`
	FinishedAt    *time.Time      `json:"finished_at"`
}

// NewDecisionJSON converts a stored decision.
func NewDecisionJSON(d *arena.Decision) DecisionJSON {
	j := DecisionJSON{ID: d.ID, CohortID: d.CohortID, Agent: d.AgentID, Week: d.Week.UTC(), Status: string(d.Status),
		Attempts: d.Attempts, SystemPrompt: d.SystemPrompt, UserPrompt: d.UserPrompt, RawResponses: d.RawResponses,
		Action: d.Action, Executions: d.Executions, Retries: d.Retries, SystemDefault: d.SystemDefault,
		TokensIn: d.TokensIn, TokensOut: d.TokensOut, Cost: Dollars(d.Cost), LatencyMS: d.LatencyMS, Error: d.Error,
		ClaimedAt: d.ClaimedAt.UTC()}
	if j.RawResponses == nil {
		j.RawResponses = []string{}
	}
	if len(j.Action) == 0 {
		j.Action = json.RawMessage("null")
	}
	if len(j.Executions) == 0 {
		j.Executions = json.RawMessage("null")
	}
	if !d.FinishedAt.IsZero() {
		t := d.FinishedAt.UTC()
		j.FinishedAt = &t
	}
	return j
}

// SnapshotJSON is one point of a portfolio curve.
type SnapshotJSON struct {
	At             time.Time `json:"at"`
	Cash           Dollars   `json:"cash"`
	PositionsValue Dollars   `json:"positions_value"`
	TotalValue     Dollars   `json:"total_value"`
	PnL            Dollars   `json:"pnl"`
	PnLPct         float64   `json:"pnl_pct"`
	Brier          *float64  `json:"brier"`
	ResolvedBets   int       `json:"resolved_bets"`
}

// CurveJSON is one agent's portfolio curve in a cohort.
type CurveJSON struct {
	Agent  string         `json:"agent"`
	Points []SnapshotJSON `json:"points"`
}

// TradingLeaderRowJSON is one row of GET /api/v1/leaderboard?track=trading.
// Brier figures are null until the agent has a resolved bet.
type TradingLeaderRowJSON struct {
	Rank          int      `json:"rank"`
	Agent         string   `json:"agent"`
	Name          string   `json:"name"`
	Cohorts       int      `json:"cohorts"`
	ActiveCohorts int      `json:"active_cohorts"`
	MeanReturnPct float64  `json:"mean_return_pct"`
	TotalPnL      Dollars  `json:"total_pnl"`
	Bankruptcies  int      `json:"bankruptcies"`
	ResolvedBets  int      `json:"resolved_bets"`
	Brier         *float64 `json:"brier"`
	BrierSkill    *float64 `json:"brier_skill"`
	MarketBrier   *float64 `json:"market_brier"`
	SkillVsMarket *float64 `json:"skill_vs_market"`
	// Decisions are the agent's weekly decisions in these cohorts and
	// Cost what their model calls cost (null when nothing: simulated
	// traders call no model).
	Decisions int      `json:"decisions"`
	Cost      *Dollars `json:"cost"`
	// LatestCohort is the newest cohort the agent trades in: its page,
	// /cohorts/{id}, is where a trading agent's positions and decisions
	// are (trading agents have no agent page).
	LatestCohort int64 `json:"latest_cohort_id"`
}

// TradingLeaderboardJSON is the response of the trading leaderboard.
type TradingLeaderboardJSON struct {
	Track string                 `json:"track"`
	Sort  string                 `json:"sort"`
	Rows  []TradingLeaderRowJSON `json:"rows"`
}

func finite(f float64) float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return f
}

func optional(f float64) *float64 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return nil
	}
	return &f
}
