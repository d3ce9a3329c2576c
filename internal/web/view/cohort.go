package view

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web/openapi"
)

// The trading track's cohort page and the cohort API's detail and curves.

// cohortRanges are the curve windows, ending at the latest snapshot; the
// step keeps a readable number of points in each.
var cohortRanges = map[string]struct {
	window time.Duration
	step   string
}{"10m": {10 * time.Minute, "10m"}, "1h": {time.Hour, "10m"}, "1d": {24 * time.Hour, "10m"}, "1w": {7 * 24 * time.Hour, "1h"}, "all": {0, "1h"}}

// CohortPage is a trading cohort's page: its standings and its agents'
// portfolio curves over the range rng (one of RangeNames; "" is all).
func (s *Service) CohortPage(ctx context.Context, id int64, rng string) (CohortPageJSON, error) {
	if err := s.NeedTrading(); err != nil {
		return CohortPageJSON{}, err
	}
	rng = cmp.Or(rng, "all")
	rc, ok := cohortRanges[rng]
	if !ok {
		return CohortPageJSON{}, arena.Errorf(arena.EINVALID, "range %q: want %s", rng, openapi.OneOf(RangeNames))
	}
	detail, err := s.CohortDetail(ctx, id)
	if err != nil {
		return CohortPageJSON{}, err
	}
	curves, err := s.Trading.Curves(ctx, id, "")
	if err != nil {
		return CohortPageJSON{}, err
	}
	step := snapshotSteps[rc.step]
	var last time.Time
	for _, c := range curves {
		if n := len(c.Snapshots); n > 0 && c.Snapshots[n-1].At.After(last) {
			last = c.Snapshots[n-1].At
		}
	}
	v := CohortPageJSON{CohortDetailJSON: detail, Range: rng, Curves: make([]CurveJSON, 0, len(curves)), Holdings: []HoldingsJSON{}}
	for _, c := range curves {
		var snaps []arena.ValuationSnapshot
		for _, sn := range c.Snapshots {
			if rc.window == 0 || !sn.At.Before(last.Add(-rc.window)) {
				snaps = append(snaps, sn)
			}
		}
		v.Curves = append(v.Curves, curveJSON(c.AgentID, snaps, step))
	}
	hs, err := s.Trading.Holdings(ctx, id)
	if err != nil {
		return CohortPageJSON{}, err
	}
	names := map[string]string{}
	for _, l := range detail.Lineup {
		names[l.Agent] = l.Name
	}
	for _, h := range hs {
		hj := HoldingsJSON{Agent: h.AgentID, Name: nameOf(names, h.AgentID), Positions: []PositionJSON{}, Trades: []TradeJSON{}}
		for _, p := range h.Positions {
			pj := PositionJSON{ID: p.ID, MarketID: p.MarketID, Side: p.Side, Shares: float64(p.Shares) / 1e6, CostBasis: arena.Dollars(p.CostBasis),
				Mark: p.Mark.Float(), Status: string(p.Status), OpenedAt: p.OpenedAt.UTC()}
			if !p.ClosedAt.IsZero() {
				t := p.ClosedAt.UTC()
				pj.ClosedAt = &t
			}
			hj.Positions = append(hj.Positions, pj)
		}
		for _, t := range h.Trades {
			hj.Trades = append(hj.Trades, TradeJSON{ID: t.ID, DecisionID: t.DecisionID, MarketID: t.MarketID, Side: t.Side, Kind: string(t.Kind),
				Amount: arena.Dollars(t.Amount), Price: t.Price.Float(), At: t.CreatedAt.UTC()})
		}
		v.Holdings = append(v.Holdings, hj)
	}
	return v, nil
}

// CohortDetail is a trading cohort: its standings at current prices, its
// frozen lineup and its decisions.
func (s *Service) CohortDetail(ctx context.Context, id int64) (CohortDetailJSON, error) {
	c, err := s.Trading.Cohort(ctx, id)
	if err != nil {
		return CohortDetailJSON{}, err
	}
	st, err := s.Trading.Standings(ctx, id)
	if err != nil {
		return CohortDetailJSON{}, err
	}
	ds, err := s.Trading.Decisions(ctx, id)
	if err != nil {
		return CohortDetailJSON{}, err
	}
	out := CohortDetailJSON{CohortJSON: trading.NewCohortJSON(c, st), Lineup: make([]LineupJSON, 0, len(c.Lineup)),
		Decisions: make([]DecisionSummaryJSON, 0, len(ds))}
	names := map[string]string{}
	for _, l := range c.Lineup {
		names[l.AgentID] = l.Name
		out.Lineup = append(out.Lineup, LineupJSON{Agent: l.AgentID, Name: l.Name, Kind: l.Kind, Provider: l.Provider,
			Model: l.Model, InputUSDPerMtok: arena.Dollars(l.InputMicrosPerMtok), OutputUSDPerMtok: arena.Dollars(l.OutputMicrosPerMtok)})
	}
	for _, d := range ds {
		s := DecisionSummaryJSON{ID: d.ID, Agent: d.AgentID, Name: nameOf(names, d.AgentID), Week: d.Week.UTC(), Status: string(d.Status),
			Retries: d.Retries, SystemDefault: d.SystemDefault, Cost: arena.Dollars(d.Cost)}
		var act struct {
			Kind string `json:"action"`
		}
		if json.Unmarshal(d.Action, &act) == nil {
			s.Action = act.Kind
		}
		out.Decisions = append(out.Decisions, s)
	}
	return out, nil
}

// snapshotSteps are the curves' steps: a step keeps the last snapshot
// of each interval of its length (10m, the snapshot interval, keeps all).
var snapshotSteps = map[string]time.Duration{"10m": 0, "1h": time.Hour, "1d": 24 * time.Hour, "1w": 7 * 24 * time.Hour}

// StepNames are the portfolio curves' steps in order (snapshotSteps
// says what each keeps).
var StepNames = []string{"10m", "1h", "1d", "1w"}

// curveJSON converts an agent's snapshots, oldest first, keeping the last
// snapshot of each step interval (step 0 keeps every one).
func curveJSON(agent string, snaps []arena.ValuationSnapshot, step time.Duration) CurveJSON {
	bucket := func(t time.Time) time.Time {
		if step == 7*24*time.Hour {
			return arena.WeekStart(t) // UTC weeks start on Sunday
		}
		return t.Truncate(step)
	}
	c := CurveJSON{Agent: agent, Points: []SnapshotJSON{}}
	for i, s := range snaps {
		if step > 0 && i+1 < len(snaps) && bucket(snaps[i+1].At).Equal(bucket(s.At)) {
			continue
		}
		pt := SnapshotJSON{At: s.At.UTC(), Cash: arena.Dollars(s.Cash), PositionsValue: arena.Dollars(s.PositionsValue),
			TotalValue: arena.Dollars(s.Total), PnL: arena.Dollars(s.PnL), PnLPct: trading.Finite(s.PnLPct), ResolvedBets: s.ResolvedBets}
		if s.ResolvedBets > 0 {
			pt.Brier = trading.Optional(s.Brier)
		}
		c.Points = append(c.Points, pt)
	}
	return c
}

// Curves are the portfolio value curves of a cohort's agents (of agent
// alone, when given), oldest first, keeping the last snapshot of each
// interval of step (one of StepNames; "": every snapshot).
func (s *Service) Curves(ctx context.Context, cohort int64, agent, step string) ([]CurveJSON, error) {
	if err := s.NeedTrading(); err != nil {
		return nil, err
	}
	d, ok := snapshotSteps[step]
	if !ok && step != "" {
		return nil, arena.Errorf(arena.EINVALID, "step %q: want %s", step, openapi.OneOf(StepNames))
	}
	curves, err := s.Trading.Curves(ctx, cohort, agent)
	if err != nil {
		return nil, err
	}
	out := make([]CurveJSON, 0, len(curves))
	for _, cv := range curves {
		out = append(out, curveJSON(cv.AgentID, cv.Snapshots, d))
	}
	return out, nil
}
