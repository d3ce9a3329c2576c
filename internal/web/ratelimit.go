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

	"github.com/forecast-arena/arena"
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
	// PerAgent applies to the requests that name an agent: submissions
	// (the agent field of the body) and the nonce lookup (the path).
	PerAgent arena.RateLimit
	// TrustedProxies are the reverse proxies whose X-Forwarded-For names
	// the client for PerIP; from any other peer the header is ignored, so
	// a client cannot pick its own bucket.
	TrustedProxies []netip.Prefix
	// Now is the limits' clock (nil: time.Now).
	Now func() time.Time
}

// unlimited are the routes no limit applies to: probes must keep
// answering whatever a client does.
var unlimited = map[string]bool{"GET /healthz": true, "GET /readyz": true, "GET /metrics": true}

// limit takes a token from each bucket the request falls in. It sets the
// RateLimit-Limit, -Remaining and -Reset headers of the tightest bucket
// and, when one is empty, answers 429 with Retry-After. A bucket store
// that fails lets the request through (the limits protect the service;
// they must not take it down) and is logged.
func (s *Server) limit(lim *ratelimit.Limiter, w http.ResponseWriter, r *http.Request, route string) (*http.Request, error) {
	if lim == nil || unlimited[route] {
		return r, nil
	}
	type bucket struct {
		name, key string
		l         arena.RateLimit
	}
	var bs []bucket
	if s.Limits.PerIP.Burst > 0 {
		bs = append(bs, bucket{"ip", "ip:" + clientIP(r, s.Limits.TrustedProxies), s.Limits.PerIP})
	}
	if s.Limits.PerAgent.Burst > 0 {
		agent, nr, err := agentOf(r, route)
		if err != nil {
			return r, err
		}
		r = nr
		if agent != "" {
			bs = append(bs, bucket{"agent", "agent:" + strings.ToLower(agent), s.Limits.PerAgent})
		}
	}
	now := time.Now
	if s.Limits.Now != nil {
		now = s.Limits.Now
	}
	var tightest *bucket
	var tight arena.RateDecision
	for i := range bs {
		b := &bs[i]
		d, err := lim.Take(r.Context(), b.key, b.l, now())
		if err != nil {
			s.Logger.Warn("rate limit: bucket store failed; request let through", "request_id", RequestID(r.Context()), "err", redact.String(err.Error()))
			continue
		}
		if tightest == nil || !d.Allowed || (tight.Allowed && d.Remaining/b.l.Burst < tight.Remaining/tightest.l.Burst) {
			tightest, tight = b, d
		}
		if !d.Allowed {
			break
		}
	}
	if tightest == nil {
		return r, nil
	}
	l := tightest.l
	h := w.Header()
	h.Set("RateLimit-Limit", strconv.FormatFloat(l.Burst, 'f', 0, 64))
	// A bucket in debt (see package ratelimit) has nothing remaining.
	h.Set("RateLimit-Remaining", strconv.FormatFloat(math.Max(0, math.Floor(tight.Remaining)), 'f', 0, 64))
	h.Set("RateLimit-Reset", strconv.FormatFloat(math.Ceil((l.Burst-tight.Remaining)/l.PerSecond), 'f', 0, 64))
	if tight.Allowed {
		return r, nil
	}
	wait := math.Max(1, math.Ceil((1-tight.Remaining)/l.PerSecond))
	h.Set("Retry-After", strconv.FormatFloat(wait, 'f', 0, 64))
	s.Metrics.RateLimited(tightest.name)
	return r, arena.Rejectf(arena.ETOOMANY, "rate_limited", "too many requests from this %s: at most %g at once and %g per second; retry in %g s", tightest.name, l.Burst, l.PerSecond, wait)
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

// agentOf returns the agent a request names, and the request with its
// body restored for the handler when it had to be read.
func agentOf(r *http.Request, route string) (string, *http.Request, error) {
	switch route {
	case "GET /api/v1/agents/{address}/nonce":
		// Routing has not run yet, so the path value is cut out by hand.
		return strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/api/v1/agents/"), "/nonce"), r, nil
	case "POST /api/v1/rounds/{id}/commits", "POST /api/v1/rounds/{id}/reveals", "POST /api/v1/rounds/{id}/reasoning":
	default:
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
	var named struct {
		Agent string `json:"agent"`
	}
	json.Unmarshal(body, &named) // the handler reports a malformed body
	return named.Agent, r, nil
}
