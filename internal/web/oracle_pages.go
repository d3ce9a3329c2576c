package web

import (
	"net/http"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/oracle"
)

func init() {
	titles["oracle.html"] = "Oracle"
	titles["oracle_market.html"] = "Oracle resolution"
}

// registerOraclePages serves the oracle's dashboard pages (with their JSON
// twins): the queue with the accuracy against audits and the resolver
// leaderboard, and one market's resolution history.
func (s *Server) registerOraclePages() {
	s.page("/oracle", "/api/v1/pages/oracle", "oracle.html", s.oracleView)
	s.page("/oracle/{id}", "/api/v1/pages/oracle/{id}", "oracle_market.html", s.oracleMarketView)
}

// OraclePageJSON is the oracle page: markets waiting for an arbiter, the
// flagged and disputed markets, and the accuracy against human audits.
type OraclePageJSON struct {
	Queue    []OracleQueueRowJSON  `json:"queue"`
	Flags    []OracleFlagRowJSON   `json:"flags"`
	Disputes []arena.OracleDispute `json:"disputes"`
	Accuracy oracle.Accuracy       `json:"accuracy"`
}

// OracleFlagRowJSON is a market an admin flagged for the oracle, with its
// question and, once decided, its outcome (empty while it waits).
type OracleFlagRowJSON struct {
	arena.OracleFlag
	Question   string `json:"question"`
	Resolution string `json:"resolution"`
}

// OracleQueueRowJSON is one escalated market: the panel's answer, the
// composite score, the votes and why it escalated.
type OracleQueueRowJSON struct {
	MarketID  int64                `json:"market_id"`
	Question  string               `json:"question"`
	Decision  arena.OracleDecision `json:"panel_decision"`
	Composite float64              `json:"composite"`
	Votes     map[string]int       `json:"votes"` // YES, NO, TOO_EARLY, failed
	Reasons   []string             `json:"reasons"`
	Since     string               `json:"since"`
}

func (s *Server) oracleView(r *http.Request) (any, error) {
	q, err := s.oracle.Queue(r.Context())
	if err != nil {
		return nil, err
	}
	v := OraclePageJSON{Queue: []OracleQueueRowJSON{}}
	for _, res := range q {
		row := OracleQueueRowJSON{MarketID: res.MarketID, Question: res.Evidence.Question, Decision: res.Verdict.Decision,
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
	v.Flags = make([]OracleFlagRowJSON, len(flags))
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

// OracleMarketPageJSON is one market's oracle history, oldest first: the
// evidence packet, every vote, the architecture, policy and composite,
// the human decisions and every re-resolution with the rounds it
// re-scored.
type OracleMarketPageJSON struct {
	MarketID    int64                    `json:"market_id"`
	Question    string                   `json:"question"`
	Resolutions []arena.OracleResolution `json:"resolutions"`
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
	return OracleMarketPageJSON{MarketID: id, Question: rs[0].Evidence.Question, Resolutions: rs}, nil
}
