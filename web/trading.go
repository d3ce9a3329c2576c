package web

import (
	"encoding/json"
	"log/slog"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/trading"
)

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

// TradingAPI serves the trading track's JSON API.
type TradingAPI struct {
	Engine *trading.Engine
	Logger *slog.Logger
}

// RegisterTrading mounts the trading track's routes on s:
//
//	GET /api/v1/cohorts                    ?status=active|completed&limit=&offset=
//	GET /api/v1/cohorts/{id}
//	GET /api/v1/cohorts/{id}/snapshots     ?agent=&step=10m|1h|1d|1w
//	GET /api/v1/decisions/{id}
//
// GET /api/v1/leaderboard serves both tracks: its dispatcher calls this
// API's Leaderboard for track=trading, and the leaderboard page shows the
// engine's standings.
func RegisterTrading(s *Server, eng *trading.Engine) *TradingAPI {
	a := &TradingAPI{Engine: eng, Logger: s.Logger}
	if a.Logger == nil {
		a.Logger = slog.Default()
	}
	s.Trading, s.TradingLeaderboard = eng, a.Leaderboard
	s.Mux.HandleFunc("GET /api/v1/cohorts", a.ListCohorts)
	s.Mux.HandleFunc("GET /api/v1/cohorts/{id}", a.GetCohort)
	s.Mux.HandleFunc("GET /api/v1/cohorts/{id}/snapshots", a.Snapshots)
	s.Mux.HandleFunc("GET /api/v1/decisions/{id}", a.GetDecision)
	return a
}

// fail writes err; unexpected errors are logged and reported without detail.
func (a *TradingAPI) fail(w http.ResponseWriter, r *http.Request, err error) {
	if arena.ErrorKind(err) == arena.EINTERNAL {
		a.Logger.Error("trading api", "path", r.URL.Path, "err", err)
		WriteError(w, arena.Errorf(arena.EINTERNAL, "internal error"))
		return
	}
	WriteError(w, err)
}

func pathID(r *http.Request, what string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, arena.Errorf(arena.EINVALID, "%s id %q: want a positive integer", what, r.PathValue("id"))
	}
	return id, nil
}

func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		return 0, arena.Errorf(arena.EINVALID, "%s %q: want an integer from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// ListCohorts serves GET /api/v1/cohorts, newest week first.
func (a *TradingAPI) ListCohorts(w http.ResponseWriter, r *http.Request) {
	status := arena.CohortStatus(r.URL.Query().Get("status"))
	switch status {
	case "", arena.CohortActive, arena.CohortCompleted:
	default:
		WriteError(w, arena.Errorf(arena.EINVALID, "status %q: want active or completed", status))
		return
	}
	limit, err := intParam(r, "limit", 100, 1, 1000)
	if err != nil {
		WriteError(w, err)
		return
	}
	offset, err := intParam(r, "offset", 0, 0, math.MaxInt32)
	if err != nil {
		WriteError(w, err)
		return
	}
	cs, err := a.Engine.Store.Cohorts(r.Context(), status)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(cs)))
	cs = cs[min(offset, len(cs)):]
	cs = cs[:min(limit, len(cs))]
	out := make([]CohortSummaryJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, NewCohortSummaryJSON(c))
	}
	WriteJSON(w, http.StatusOK, out)
}

// GetCohort serves GET /api/v1/cohorts/{id}: standings at current prices,
// the frozen lineup and the decisions.
func (a *TradingAPI) GetCohort(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "cohort")
	if err != nil {
		WriteError(w, err)
		return
	}
	c, err := a.Engine.Store.Cohort(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	st, err := a.Engine.Standings(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	ds, err := a.Engine.Store.Decisions(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := CohortDetailJSON{CohortJSON: NewCohortJSON(c, st), Lineup: make([]LineupJSON, 0, len(c.Lineup)),
		Decisions: make([]DecisionSummaryJSON, 0, len(ds))}
	for _, l := range c.Lineup {
		out.Lineup = append(out.Lineup, LineupJSON{Agent: l.AgentID, Name: l.Name, Kind: l.Kind, Provider: l.Provider,
			Model: l.Model, InputUSDPerMtok: Dollars(l.InputMicrosPerMtok), OutputUSDPerMtok: Dollars(l.OutputMicrosPerMtok)})
	}
	for _, d := range ds {
		s := DecisionSummaryJSON{ID: d.ID, Agent: d.AgentID, Week: d.Week.UTC(), Status: string(d.Status),
			Retries: d.Retries, SystemDefault: d.SystemDefault, Cost: Dollars(d.Cost)}
		var act struct {
			Kind string `json:"action"`
		}
		if json.Unmarshal(d.Action, &act) == nil {
			s.Action = act.Kind
		}
		out.Decisions = append(out.Decisions, s)
	}
	WriteJSON(w, http.StatusOK, out)
}

// Snapshots serves GET /api/v1/cohorts/{id}/snapshots: each agent's stored
// valuations, oldest first; step keeps the last point of each interval.
func (a *TradingAPI) Snapshots(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "cohort")
	if err != nil {
		WriteError(w, err)
		return
	}
	var step time.Duration
	switch v := r.URL.Query().Get("step"); v {
	case "", "10m":
	case "1h":
		step = time.Hour
	case "1d":
		step = 24 * time.Hour
	case "1w":
		step = 7 * 24 * time.Hour
	default:
		WriteError(w, arena.Errorf(arena.EINVALID, "step %q: want 10m, 1h, 1d or 1w", v))
		return
	}
	agent := r.URL.Query().Get("agent")
	if _, err := a.Engine.Store.Cohort(r.Context(), id); err != nil {
		a.fail(w, r, err)
		return
	}
	ports, err := a.Engine.Store.Portfolios(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	out := []CurveJSON{}
	for _, p := range ports {
		if agent != "" && p.AgentID != agent {
			continue
		}
		snaps, err := a.Engine.Store.Snapshots(r.Context(), p.ID)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		bucket := func(t time.Time) time.Time {
			if step == 7*24*time.Hour {
				return trading.WeekStart(t) // UTC weeks start on Sunday
			}
			return t.Truncate(step)
		}
		c := CurveJSON{Agent: p.AgentID, Points: []SnapshotJSON{}}
		for i, s := range snaps {
			// Keep the last snapshot of each step interval.
			if step > 0 && i+1 < len(snaps) && bucket(snaps[i+1].At).Equal(bucket(s.At)) {
				continue
			}
			pt := SnapshotJSON{At: s.At.UTC(), Cash: Dollars(s.Cash), PositionsValue: Dollars(s.PositionsValue),
				TotalValue: Dollars(s.Total), PnL: Dollars(s.PnL), PnLPct: finite(s.PnLPct), ResolvedBets: s.ResolvedBets}
			if s.ResolvedBets > 0 {
				pt.Brier = optional(s.Brier)
			}
			c.Points = append(c.Points, pt)
		}
		out = append(out, c)
	}
	if agent != "" && len(out) == 0 {
		WriteError(w, arena.Errorf(arena.ENOTFOUND, "agent %q is not in cohort %d", agent, id))
		return
	}
	WriteJSON(w, http.StatusOK, out)
}

// GetDecision serves GET /api/v1/decisions/{id}.
func (a *TradingAPI) GetDecision(w http.ResponseWriter, r *http.Request) {
	id, err := pathID(r, "decision")
	if err != nil {
		WriteError(w, err)
		return
	}
	d, err := a.Engine.Store.Decision(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	WriteJSON(w, http.StatusOK, NewDecisionJSON(d))
}

// Leaderboard serves GET /api/v1/leaderboard?track=trading: every agent
// across every cohort, by mean return (sort=return, the default) or by
// Brier score, lowest first, agents without a resolved bet last
// (sort=brier).
func (a *TradingAPI) Leaderboard(w http.ResponseWriter, r *http.Request) {
	sortBy := r.URL.Query().Get("sort")
	switch sortBy {
	case "":
		sortBy = "return"
	case "return", "brier":
	default:
		WriteError(w, arena.Errorf(arena.EINVALID, "sort %q: want return or brier", sortBy))
		return
	}
	rows, err := a.Engine.Leaderboard(r.Context())
	if err != nil {
		a.fail(w, r, err)
		return
	}
	if sortBy == "brier" {
		trading.SortByBrier(rows)
	}
	out := TradingLeaderboardJSON{Track: "trading", Sort: sortBy, Rows: make([]TradingLeaderRowJSON, 0, len(rows))}
	for i, x := range rows {
		out.Rows = append(out.Rows, TradingLeaderRowJSON{Rank: i + 1, Agent: x.AgentID, Name: x.Name, Cohorts: x.Cohorts,
			ActiveCohorts: x.ActiveCohorts, MeanReturnPct: finite(x.MeanReturnPct), TotalPnL: Dollars(x.TotalPnL),
			Bankruptcies: x.Bankruptcies, ResolvedBets: x.ResolvedBets, Brier: optional(x.Brier), BrierSkill: optional(x.BrierSkill),
			MarketBrier: optional(x.MarketBrier), SkillVsMarket: optional(x.SkillVsMarket)})
	}
	WriteJSON(w, http.StatusOK, out)
}
