package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/ratelimit"
)

// unlimited are the routes no limit applies to: probes must keep
// answering whatever a client does.
var unlimited = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}

// rateLimits are the server's limits over lim's buckets (nil: no limits):
// per address on every route but the probes, per agent on the commits,
// reveals and profile updates the agent signed (see signedAgent).
func (s *Server) rateLimits(lim *ratelimit.Limiter) *ratelimit.HTTP {
	if lim == nil {
		return nil
	}
	return &ratelimit.HTTP{Limiter: lim, Limits: s.limits, SignedAgent: s.signedAgent, Logger: s.logger, Refused: s.metrics.RateLimited}
}

// signedAgent returns the agent of a commit, reveal or profile update
// when the request proves it comes from the agent: signed by the agent's
// key, before the signed deadline, with the agent's current nonce (a
// profile: its next version), so a used signature replayed is stale.
// Anything else (unsigned, malformed, signed by another key, expired,
// replayed) yields "" and costs its address's bucket only. It also
// returns the request with its body restored for the handler, which
// checks the request in full.
func (s *Server) signedAgent(r *http.Request, route string) (string, *http.Request, error) {
	commit, profile := route == "POST /api/v1/rounds/{id}/commits", route == "POST /api/v1/agents/{address}/profile"
	if !commit && !profile && route != "POST /api/v1/rounds/{id}/reveals" || s.forecast == nil {
		return "", r, nil
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return "", r, arena.Rejectf(arena.ETOOLARGE, "body_too_large", "request body exceeds %d bytes", tooBig.Limit)
		}
		return "", r, arena.Rejectf(arena.EINVALID, "malformed_json", "reading the request body: %v", err)
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if profile {
		return s.signedProfile(r, body), r, nil
	}
	// Routing has not run yet, so the round id is cut out by hand.
	id, err := strconv.ParseUint(strings.Split(strings.TrimPrefix(r.URL.Path, "/api/v1/rounds/"), "/")[0], 10, 64)
	if err != nil {
		return "", r, nil // the handler reports it
	}
	d := s.forecast.Domain
	var agent common.Address
	var nonce, deadline uint64
	if commit {
		var req forecast.CommitRequest
		if json.Unmarshal(body, &req) != nil {
			return "", r, nil
		}
		agent, err = forecast.ParseAddress(req.Agent)
		sig, serr := forecast.DecodeSignature(req.Signature)
		if err != nil || serr != nil || d.VerifyCommit(forecast.Commit{RoundID: id, CommitHash: common.HexToHash(req.CommitHash),
			ReasoningHash: common.HexToHash(req.ReasoningHash), Agent: agent, Nonce: req.Nonce, Deadline: req.Deadline}, sig) != nil {
			return "", r, nil
		}
		nonce, deadline = req.Nonce, req.Deadline
	} else {
		var req forecast.RevealRequest
		if json.Unmarshal(body, &req) != nil {
			return "", r, nil
		}
		agent, err = forecast.ParseAddress(req.Agent)
		sig, serr := forecast.DecodeSignature(req.Signature)
		if err != nil || serr != nil || d.VerifyReveal(forecast.Reveal{RoundID: id, Predictions: req.Predictions, Salt: common.HexToHash(req.Salt),
			Agent: agent, Nonce: req.Nonce, Deadline: req.Deadline}, sig) != nil {
			return "", r, nil
		}
		nonce, deadline = req.Nonce, req.Deadline
	}
	if deadline < uint64(s.forecast.Clock().Unix()) {
		return "", r, nil
	}
	if current, err := s.forecast.Nonce(r.Context(), agent.Hex()); err != nil || current != nonce {
		return "", r, nil
	}
	return agent.Hex(), r, nil
}

// signedProfile is signedAgent for a profile update.
func (s *Server) signedProfile(r *http.Request, body []byte) string {
	var req forecast.ProfileRequest
	if json.Unmarshal(body, &req) != nil {
		return ""
	}
	// Routing has not run yet, so the address is cut out by hand.
	agent, err := forecast.ParseAddress(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/agents/"), "/profile"))
	sig, serr := forecast.DecodeSignature(req.Signature)
	if err != nil || serr != nil || req.Deadline < uint64(s.forecast.Clock().Unix()) ||
		s.forecast.Domain.VerifyProfile(forecast.Profile{Agent: agent, ProfileFields: req.ProfileFields, Version: req.Version, Deadline: req.Deadline}, sig) != nil {
		return ""
	}
	if p, err := s.forecast.Profile(r.Context(), agent.Hex()); err != nil || req.Version != p.Version+1 {
		return ""
	}
	return agent.Hex()
}
