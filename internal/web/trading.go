package web

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web/view"
)

// registerTrading mounts the trading track's routes:
//
//	GET /api/v1/cohorts                    ?status=active|completed&limit=&cursor=
//	GET /api/v1/cohorts/{id}
//	GET /api/v1/cohorts/{id}/snapshots     ?agent=&step=10m|1h|1d|1w
//	GET /api/v1/decisions/{id}
//
// GET /api/v1/leaderboard?track=trading serves the trading leaderboard.
func (s *Server) registerTrading() {
	s.handle("GET /api/v1/cohorts", s.listCohorts)
	s.handle("GET /api/v1/cohorts/{id}", s.getCohort)
	s.handle("GET /api/v1/cohorts/{id}/snapshots", s.snapshots)
	s.handle("GET /api/v1/decisions/{id}", s.getDecision)
}

// listCohorts serves GET /api/v1/cohorts?status=&limit=&cursor=, newest
// week first; a Link header with rel="next" names the next page.
func (s *Server) listCohorts(w http.ResponseWriter, r *http.Request) error {
	limit, _ := queryInt(r, "limit")
	offset, _ := queryInt(r, "offset")
	cs, err := s.trading.Cohorts(r.Context(), arena.CohortStatus(r.URL.Query().Get("status")))
	if err != nil {
		return err
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(len(cs)))
	// cursor is the id of the last cohort of the previous page; the list
	// goes on with the cohorts of earlier weeks, so a cursor stays good
	// when its cohort has left the list since (completed while paging
	// active ones). offset remains for older clients.
	if cursor, _ := queryInt(r, "cursor"); cursor > 0 {
		c, err := s.trading.Cohort(r.Context(), cursor)
		if arena.ErrorKind(err) == arena.ENOTFOUND {
			return arena.Rejectf(arena.EINVALID, "invalid_parameter", "cursor %d: no cohort has this id; a cursor is the id of the last cohort of a page, "+
				"as the Link header's next URL gives it (0 or none: from the newest)", cursor)
		}
		if err != nil {
			return err
		}
		i := 0
		for i < len(cs) && !cs[i].WeekStart.Before(c.WeekStart) {
			i++
		}
		cs = cs[i:]
	}
	cs = cs[min(int(offset), len(cs)):]
	more := len(cs) > int(limit)
	cs = cs[:min(int(limit), len(cs))]
	if more {
		setNextLink(w, r, cs[len(cs)-1].ID)
	}
	out := make([]trading.CohortSummaryJSON, 0, len(cs))
	for _, c := range cs {
		out = append(out, trading.NewCohortSummaryJSON(c))
	}
	return s.writeJSON(w, r, out)
}

// getCohort serves GET /api/v1/cohorts/{id}: standings at current prices,
// the frozen lineup and the decisions.
func (s *Server) getCohort(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id", "cohort")
	if err != nil {
		return err
	}
	out, err := s.cohortDetail(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, out)
}

func (s *Server) cohortDetail(ctx context.Context, id int64) (view.CohortDetailJSON, error) {
	c, err := s.trading.Cohort(ctx, id)
	if err != nil {
		return view.CohortDetailJSON{}, err
	}
	st, err := s.trading.Standings(ctx, id)
	if err != nil {
		return view.CohortDetailJSON{}, err
	}
	ds, err := s.trading.Decisions(ctx, id)
	if err != nil {
		return view.CohortDetailJSON{}, err
	}
	out := view.CohortDetailJSON{CohortJSON: trading.NewCohortJSON(c, st), Lineup: make([]view.LineupJSON, 0, len(c.Lineup)),
		Decisions: make([]view.DecisionSummaryJSON, 0, len(ds))}
	names := map[string]string{}
	for _, l := range c.Lineup {
		names[l.AgentID] = l.Name
		out.Lineup = append(out.Lineup, view.LineupJSON{Agent: l.AgentID, Name: l.Name, Kind: l.Kind, Provider: l.Provider,
			Model: l.Model, InputUSDPerMtok: arena.Dollars(l.InputMicrosPerMtok), OutputUSDPerMtok: arena.Dollars(l.OutputMicrosPerMtok)})
	}
	for _, d := range ds {
		s := view.DecisionSummaryJSON{ID: d.ID, Agent: d.AgentID, Name: cmpOr(names[d.AgentID], d.AgentID), Week: d.Week.UTC(), Status: string(d.Status),
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

// stepNames are snapshotSteps' names in order.
var stepNames = []string{"10m", "1h", "1d", "1w"}

// curveJSON converts an agent's snapshots, oldest first, keeping the last
// snapshot of each step interval (step 0 keeps every one).
func curveJSON(agent string, snaps []arena.ValuationSnapshot, step time.Duration) view.CurveJSON {
	bucket := func(t time.Time) time.Time {
		if step == 7*24*time.Hour {
			return arena.WeekStart(t) // UTC weeks start on Sunday
		}
		return t.Truncate(step)
	}
	c := view.CurveJSON{Agent: agent, Points: []view.SnapshotJSON{}}
	for i, s := range snaps {
		if step > 0 && i+1 < len(snaps) && bucket(snaps[i+1].At).Equal(bucket(s.At)) {
			continue
		}
		pt := view.SnapshotJSON{At: s.At.UTC(), Cash: arena.Dollars(s.Cash), PositionsValue: arena.Dollars(s.PositionsValue),
			TotalValue: arena.Dollars(s.Total), PnL: arena.Dollars(s.PnL), PnLPct: trading.Finite(s.PnLPct), ResolvedBets: s.ResolvedBets}
		if s.ResolvedBets > 0 {
			pt.Brier = trading.Optional(s.Brier)
		}
		c.Points = append(c.Points, pt)
	}
	return c
}

// snapshots serves GET /api/v1/cohorts/{id}/snapshots: each agent's stored
// valuations, oldest first; step keeps the last point of each interval.
func (s *Server) snapshots(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id", "cohort")
	if err != nil {
		return err
	}
	step := snapshotSteps[r.URL.Query().Get("step")] // checked by checkQuery; "": every snapshot
	curves, err := s.trading.Curves(r.Context(), id, r.URL.Query().Get("agent"))
	if err != nil {
		return err
	}
	out := make([]view.CurveJSON, 0, len(curves))
	for _, cv := range curves {
		out = append(out, curveJSON(cv.AgentID, cv.Snapshots, step))
	}
	return s.writeJSON(w, r, out)
}

// getDecision serves GET /api/v1/decisions/{id}.
func (s *Server) getDecision(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id", "decision")
	if err != nil {
		return err
	}
	d, err := s.trading.Decision(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, NewDecisionJSON(d))
}

// tradingLeaderboard serves GET /api/v1/leaderboard?track=trading: every agent
// across the cohorts of the window, by mean return (sort=return, the
// default) or by Brier score, lowest first, agents without a resolved bet
// last (sort=brier).
func (s *Server) tradingLeaderboard(w http.ResponseWriter, r *http.Request) error {
	_, f, err := leaderboardFilter(r)
	if err != nil {
		return err
	}
	out, err := s.trading.Leaderboard(r.Context(), f.Window, r.URL.Query().Get("sort"))
	if err != nil {
		return err
	}
	out.Rows = pageRows(w, r, out.Rows)
	return s.writeJSON(w, r, out)
}
