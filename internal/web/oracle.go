package web

import (
	"context"
	"net/http"

	"github.com/forecast-arena/arena"
)

// registerOracle serves the oracle's resolutions and the human arbitration
// queue.
func (s *Server) registerOracle() {
	s.handle("GET /api/v1/oracle/queue", s.oracleQueue)
	s.handle("GET /api/v1/oracle/resolutions/{market}", read(s, marketParam, s.oracleResolutions))
	s.handle("GET /api/v1/oracle/accuracy", s.oracleAccuracy)
	s.registerOraclePages()
	s.handle("POST /api/v1/admin/oracle/queue/{market}", s.admin(submitChange(marketParam, http.StatusOK, s.oracleDecide)))
	s.handle("POST /api/v1/admin/oracle/markets/{market}/flag", s.admin(submit(marketParam, http.StatusOK, s.oracleFlag)))
	s.handle("POST /api/v1/admin/oracle/markets/{market}/dispute", s.admin(submitChange(marketParam, http.StatusOK, s.oracleDispute)))
	s.handle("GET /api/v1/oracle/disputes", s.oracleDisputes)
}

func marketParam(r *http.Request) (int64, error) { return pathID(r, "market", "market") }

// OracleFlagRequest marks a market ambiguous or disputed; the reason is
// required.
type OracleFlagRequest struct {
	Reason string `json:"reason"`
}

// oracleFlag routes an unresolved market through the oracle.
func (s *Server) oracleFlag(ctx context.Context, id int64, req OracleFlagRequest) (arena.OracleFlag, error) {
	return s.oracle.Flag(ctx, id, req.Reason)
}

// OracleDisputeRequest disputes a market's resolution by its source: who
// disputes it and why, both required.
type OracleDisputeRequest struct {
	Admin  string `json:"admin"`
	Reason string `json:"reason"`
}

// oracleDispute hands a market resolved by its source to the oracle and
// the arbiters.
func (s *Server) oracleDispute(ctx context.Context, id int64, req OracleDisputeRequest) (*arena.OracleDispute, bool, error) {
	return s.oracle.Dispute(ctx, id, req.Admin, req.Reason)
}

func (s *Server) oracleDisputes(w http.ResponseWriter, r *http.Request) error {
	ds, err := s.oracle.Disputes(r.Context())
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, ds)
}

// OracleResolutionsJSON is a market's oracle history, oldest first; the
// last entry is in force.
type OracleResolutionsJSON struct {
	MarketID    int64                    `json:"market_id"`
	Resolutions []arena.OracleResolution `json:"resolutions"`
}

func (s *Server) oracleQueue(w http.ResponseWriter, r *http.Request) error {
	q, err := s.oracle.Queue(r.Context())
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, q)
}

func (s *Server) oracleResolutions(ctx context.Context, id int64) (OracleResolutionsJSON, error) {
	rs, err := s.oracle.Resolutions(ctx, id)
	return OracleResolutionsJSON{MarketID: id, Resolutions: rs}, err
}

// OracleDecideRequest is an arbiter's decision: YES, NO or VOID, who
// decided and why; re_resolve revises a resolved market and needs a
// reason and revises, the resolution (its seq) it corrects, so that of
// concurrent corrections of one resolution exactly one applies and a
// resolution recorded meanwhile makes the others fail (409) rather than be
// undone.
type OracleDecideRequest struct {
	Decision  arena.OracleDecision `json:"decision"`
	Arbiter   string               `json:"arbiter"`
	Reason    string               `json:"reason,omitempty"`
	ReResolve bool                 `json:"re_resolve,omitempty"`
	Revises   int                  `json:"revises,omitempty"`
}

// oracleDecide records an arbiter's decision on an escalated or disputed
// market, or with "re_resolve" a revised decision on a resolved one
// (reason required).
func (s *Server) oracleDecide(ctx context.Context, id int64, req OracleDecideRequest) (*arena.OracleResolution, bool, error) {
	if req.ReResolve && req.Revises <= 0 {
		return nil, false, arena.Rejectf(arena.EINVALID, "revises_required", "a re-resolution names the resolution it corrects: revises, its seq (GET /api/v1/oracle/resolutions/%d lists them)", id)
	}
	return s.oracle.Decide(ctx, arena.OracleDecisionInput{MarketID: id, Decision: req.Decision, Arbiter: req.Arbiter,
		Reason: req.Reason, ReResolve: req.ReResolve, Revises: req.Revises})
}

func (s *Server) oracleAccuracy(w http.ResponseWriter, r *http.Request) error {
	a, err := s.oracle.Accuracy(r.Context())
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, a)
}
