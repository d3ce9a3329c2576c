package view

import (
	"context"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/oracle"
)

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

// OracleMarketPageJSON is one market's oracle history, oldest first: the
// evidence packet, every vote, the architecture, policy and composite,
// the human decisions and every re-resolution with the rounds it
// re-scored.
type OracleMarketPageJSON struct {
	MarketID    int64                    `json:"market_id"`
	Question    string                   `json:"question"`
	Resolutions []arena.OracleResolution `json:"resolutions"`
}

// needOracle refuses the oracle's pages without the oracle.
func (s *Service) needOracle() error {
	if s.Oracle == nil {
		return arena.Errorf(arena.ENOTFOUND, "the oracle is not enabled")
	}
	return nil
}

// OraclePage is the oracle page: the arbitration queue, the flagged and
// disputed markets and the accuracy against human audits.
func (s *Service) OraclePage(ctx context.Context) (OraclePageJSON, error) {
	if err := s.needOracle(); err != nil {
		return OraclePageJSON{}, err
	}
	q, err := s.Oracle.Queue(ctx)
	if err != nil {
		return OraclePageJSON{}, err
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
	flags, err := s.Oracle.Flags(ctx)
	if err != nil {
		return OraclePageJSON{}, err
	}
	ids := make([]int64, len(flags))
	for i, f := range flags {
		ids[i] = f.MarketID
	}
	ms, err := s.Markets.MarketsByID(ctx, ids)
	if err != nil {
		return OraclePageJSON{}, err
	}
	v.Flags = make([]OracleFlagRowJSON, len(flags))
	for i, f := range flags {
		v.Flags[i].OracleFlag = f
		if m := ms[f.MarketID]; m != nil {
			v.Flags[i].Question, v.Flags[i].Resolution = m.Question, m.Resolution
		}
	}
	if v.Disputes, err = s.Oracle.Disputes(ctx); err != nil {
		return OraclePageJSON{}, err
	}
	if v.Accuracy, err = s.Oracle.Accuracy(ctx); err != nil {
		return OraclePageJSON{}, err
	}
	return v, nil
}

// OracleMarketPage is a market's oracle page: its resolutions, oldest
// first; ENOTFOUND for a market the oracle has not resolved.
func (s *Service) OracleMarketPage(ctx context.Context, id int64) (OracleMarketPageJSON, error) {
	if err := s.needOracle(); err != nil {
		return OracleMarketPageJSON{}, err
	}
	rs, err := s.Oracle.Resolutions(ctx, id)
	if err != nil {
		return OracleMarketPageJSON{}, err
	}
	return OracleMarketPageJSON{MarketID: id, Question: rs[0].Evidence.Question, Resolutions: rs}, nil
}
