package web

import (
	"net/http"
	"strconv"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
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
	out, err := s.views.CohortDetail(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, out)
}

// snapshots serves GET /api/v1/cohorts/{id}/snapshots: each agent's stored
// valuations, oldest first; step keeps the last point of each interval.
func (s *Server) snapshots(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id", "cohort")
	if err != nil {
		return err
	}
	out, err := s.views.Curves(r.Context(), id, r.URL.Query().Get("agent"), r.URL.Query().Get("step"))
	if err != nil {
		return err
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
	f, err := leaderboardFilter(r)
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
