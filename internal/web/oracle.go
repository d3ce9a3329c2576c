package web

import (
	"net/http"
	"strconv"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/oracle"
)

// RegisterOracle serves the oracle's resolutions and the human arbitration
// queue.
func (s *Server) RegisterOracle(svc *oracle.Service) {
	s.oracle = svc
	s.handle("GET /api/v1/oracle/queue", s.oracleQueue)
	s.handle("GET /api/v1/oracle/resolutions/{market}", s.oracleResolutions)
	s.handle("GET /api/v1/oracle/accuracy", s.oracleAccuracy)
	s.registerOraclePages()
	s.handle("POST /api/v1/admin/oracle/queue/{market}", s.admin(s.oracleDecide))
	s.handle("POST /api/v1/admin/oracle/markets/{market}/flag", s.admin(s.oracleFlag))
}

// OracleFlagRequest marks a market ambiguous or disputed; the reason is
// required.
type OracleFlagRequest struct {
	Reason string `json:"reason"`
}

// oracleFlag routes an unresolved market through the oracle.
func (s *Server) oracleFlag(w http.ResponseWriter, r *http.Request) error {
	id, err := marketParam(r)
	if err != nil {
		return err
	}
	var req OracleFlagRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	f, err := s.oracle.Flag(r.Context(), id, req.Reason)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, f)
	return nil
}

// OracleResolutionsJSON is a market's oracle history, oldest first; the
// last entry is in force.
type OracleResolutionsJSON struct {
	MarketID    int64                    `json:"market_id"`
	Resolutions []arena.OracleResolution `json:"resolutions"`
}

func marketParam(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("market"), 10, 64)
	if err != nil || id <= 0 {
		return 0, arena.Errorf(arena.EINVALID, "market id %q: want a positive integer", r.PathValue("market"))
	}
	return id, nil
}

func (s *Server) oracleQueue(w http.ResponseWriter, r *http.Request) error {
	q, err := s.oracle.Queue(r.Context())
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, q)
}

func (s *Server) oracleResolutions(w http.ResponseWriter, r *http.Request) error {
	id, err := marketParam(r)
	if err != nil {
		return err
	}
	rs, err := s.oracle.Resolutions(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, OracleResolutionsJSON{MarketID: id, Resolutions: rs})
}

// OracleDecideRequest is an arbiter's decision: YES, NO or VOID, who
// decided and why; re_resolve revises a resolved market and needs a reason.
type OracleDecideRequest struct {
	Decision  arena.OracleDecision `json:"decision"`
	Arbiter   string               `json:"arbiter"`
	Reason    string               `json:"reason"`
	ReResolve bool                 `json:"re_resolve"`
}

// oracleDecide records an arbiter's decision on an escalated market, or
// with "re_resolve" a revised decision on a resolved one (reason required).
func (s *Server) oracleDecide(w http.ResponseWriter, r *http.Request) error {
	id, err := marketParam(r)
	if err != nil {
		return err
	}
	var req OracleDecideRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	res, err := s.oracle.Decide(r.Context(), arena.OracleDecisionInput{MarketID: id, Decision: req.Decision, Arbiter: req.Arbiter,
		Reason: req.Reason, ReResolve: req.ReResolve})
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, res)
	return nil
}

func (s *Server) oracleAccuracy(w http.ResponseWriter, r *http.Request) error {
	a, err := s.oracle.Accuracy(r.Context())
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, a)
}
