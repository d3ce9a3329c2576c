package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/ratelimit"
	"github.com/forecast-arena/arena/internal/redact"
)

// RateLimits are the API's abuse limits, token buckets kept in the
// database (arena.RateStore) so that replicas sharing one PostgreSQL
// share them, and answered from each process's copy (package ratelimit
// bounds how far replicas together can pass a limit). A limit whose Burst
// is 0 is off.
type RateLimits struct {
	// PerIP applies to every request but the probes (/healthz, /readyz,
	// /metrics), keyed by the client's address (see clientIP).
	PerIP arena.RateLimit
	// PerAgent applies to the commits, reveals and profile updates the
	// agent signed (see signedAgent), whatever address they come from.
	// Only the agent's key can spend it: a request that merely names the
	// agent costs its address's bucket alone, so no one can lock an agent
	// out.
	PerAgent arena.RateLimit
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client for PerIP; from any other peer the header is ignored, so
	// a client cannot pick its own bucket.
	TrustedProxies []netip.Prefix
	// IPv6Prefix is how many leading bits of an IPv6 client's address
	// name its PerIP bucket (0: 64). A host commonly holds a whole /64,
	// so one bucket per full address would give it billions.
	IPv6Prefix int
	// Now is the limits' clock (nil: time.Now).
	Now func() time.Time
}

// unlimited are the routes no limit applies to: probes must keep
// answering whatever a client does.
var unlimited = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}

// limit takes a token from each bucket the request falls in: its
// address's, then, for a submission its agent signed, the agent's. It
// sets the RateLimit-Limit, -Remaining and -Reset headers of the tightest
// bucket and, when one is empty, answers 429 with Retry-After. A bucket
// store that fails lets the request through (the limits protect the
// service; they must not take it down) and is logged.
func (s *Server) limit(lim *ratelimit.Limiter, w http.ResponseWriter, r *http.Request, route string) (*http.Request, error) {
	if lim == nil || unlimited[route] {
		return r, nil
	}
	now := time.Now
	if s.limits.Now != nil {
		now = s.limits.Now
	}
	var (
		tightest string // the bucket's name
		tl       arena.RateLimit
		tight    arena.RateDecision
		decided  bool
	)
	take := func(name, key string, l arena.RateLimit) bool {
		d, err := lim.Take(r.Context(), key, l, now())
		if err != nil {
			s.logger.Warn("rate limit: bucket store failed; request let through", "request_id", RequestID(r.Context()), "err", redact.String(err.Error()))
			return true
		}
		if !decided || !d.Allowed || (tight.Allowed && d.Remaining/l.Burst < tight.Remaining/tl.Burst) {
			tightest, tl, tight, decided = name, l, d, true
		}
		return d.Allowed
	}
	ok := true
	if s.limits.PerIP.Burst > 0 {
		ok = take("ip", "ip:"+ipBucket(clientIP(r, s.limits.TrustedProxies), s.limits.IPv6Prefix), s.limits.PerIP)
	}
	// The signature is checked only for a request its address's bucket
	// let through: a flood costs no more than a token each.
	if ok && s.limits.PerAgent.Burst > 0 {
		agent, nr, err := s.signedAgent(r, route)
		if err != nil {
			return r, err
		}
		r = nr
		if agent != "" {
			take("agent", "agent:"+strings.ToLower(agent), s.limits.PerAgent)
		}
	}
	if !decided {
		return r, nil
	}
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.FormatFloat(tl.Burst, 'f', 0, 64))
	// A bucket in debt (see package ratelimit) has nothing remaining.
	h.Set("RateLimit-Remaining", strconv.FormatFloat(math.Max(0, math.Floor(tight.Remaining)), 'f', 0, 64))
	h.Set("RateLimit-Reset", strconv.FormatFloat(math.Ceil((tl.Burst-tight.Remaining)/tl.PerSecond), 'f', 0, 64))
	if tight.Allowed {
		return r, nil
	}
	wait := math.Max(1, math.Ceil((1-tight.Remaining)/tl.PerSecond))
	h.Set("Retry-After", strconv.FormatFloat(wait, 'f', 0, 64))
	s.metrics.RateLimited(tightest)
	return r, arena.Rejectf(arena.ETOOMANY, "rate_limited", "too many requests from this %s: at most %g at once and %g per second; retry in %g s", tightest, tl.Burst, tl.PerSecond, wait)
}

// clientIP is the client's address: the connection's peer, unless the
// peer is a trusted proxy; then X-Forwarded-For is read from the right
// (each proxy appends the address it received from), skipping trusted
// proxies, and the first other address is the client. A malformed entry
// stops the walk at the last address known good.
func clientIP(r *http.Request, trusted []netip.Prefix) string {
	host := r.RemoteAddr
	if h, _, err := net.SplitHostPort(r.RemoteAddr); err == nil {
		host = h
	}
	isTrusted := func(s string) (netip.Addr, bool) {
		a, err := netip.ParseAddr(strings.TrimSpace(s))
		if err != nil {
			return a, false
		}
		a = a.Unmap()
		for _, p := range trusted {
			if p.Contains(a) {
				return a, true
			}
		}
		return a, false
	}
	if _, ok := isTrusted(host); !ok {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, ok := isTrusted(hops[i])
		if !a.IsValid() {
			break
		}
		host = a.String()
		if !ok {
			break
		}
	}
	return host
}

// ipBucket names the PerIP bucket of a client address: an IPv4 address
// (also one mapped into IPv6) itself, an IPv6 address its prefix of bits
// (0: 64).
func ipBucket(host string, bits int) string {
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	if a = a.Unmap().WithZone(""); !a.Is6() {
		return a.String()
	}
	if bits <= 0 {
		bits = 64
	}
	p, err := a.Prefix(min(bits, 128))
	if err != nil {
		return a.String()
	}
	return p.String()
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
