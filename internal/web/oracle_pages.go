package web

import (
	"net/http"

	"github.com/forecast-arena/arena/internal/web/view"
)

// registerOraclePages serves the oracle's dashboard pages (with their JSON
// twins): the queue with the accuracy against audits and the resolver
// leaderboard, and one market's resolution history.
func (s *Server) registerOraclePages() {
	s.page("/oracle", "/api/v1/pages/oracle", "oracle.html", s.oracleView)
	s.page("/oracle/{id}", "/api/v1/pages/oracle/{id}", "oracle_market.html", s.oracleMarketView)
}

func (s *Server) oracleView(r *http.Request) (any, error) {
	q, err := s.oracle.Queue(r.Context())
	if err != nil {
		return nil, err
	}
	v := view.OraclePageJSON{Queue: []view.OracleQueueRowJSON{}}
	for _, res := range q {
		row := view.OracleQueueRowJSON{MarketID: res.MarketID, Question: res.Evidence.Question, Decision: res.Verdict.Decision,
			Composite: res.Verdict.Composite, Votes: map[string]int{}, Reasons: res.Verdict.Reasons, Since: res.CreatedAt.Format("2006-01-02 15:04")}
		for _, vote := range res.Verdict.Round1 {
			if vote.Answered() {
				row.Votes[string(vote.Decision)]++
			} else {
				row.Votes["failed"]++
			}
		}
		v.Queue = append(v.Queue, row)
	}
	flags, err := s.oracle.Flags(r.Context())
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(flags))
	for i, f := range flags {
		ids[i] = f.MarketID
	}
	ms, err := s.markets.MarketsByID(r.Context(), ids)
	if err != nil {
		return nil, err
	}
	v.Flags = make([]view.OracleFlagRowJSON, len(flags))
	for i, f := range flags {
		v.Flags[i].OracleFlag = f
		if m := ms[f.MarketID]; m != nil {
			v.Flags[i].Question, v.Flags[i].Resolution = m.Question, m.Resolution
		}
	}
	if v.Disputes, err = s.oracle.Disputes(r.Context()); err != nil {
		return nil, err
	}
	if v.Accuracy, err = s.oracle.Accuracy(r.Context()); err != nil {
		return nil, err
	}
	return v, nil
}

func (s *Server) oracleMarketView(r *http.Request) (any, error) {
	id, err := pathID(r, "id", "market")
	if err != nil {
		return nil, err
	}
	rs, err := s.oracle.Resolutions(r.Context(), id)
	if err != nil {
		return nil, err
	}
	return view.OracleMarketPageJSON{MarketID: id, Question: rs[0].Evidence.Question, Resolutions: rs}, nil
}
