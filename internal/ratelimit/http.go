package ratelimit

import (
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/redact"
)

// Limits are the API's abuse limits, token buckets kept in the database
// (arena.RateStore) so that replicas sharing one PostgreSQL share them,
// and answered from each process's copy (see Limiter, which bounds how
// far replicas together can pass a limit). A limit whose Burst is 0 is
// off.
type Limits struct {
	// PerIP applies to every request it is asked about, keyed by the
	// client's address (see ClientIP).
	PerIP arena.RateLimit
	// PerAgent applies to the requests an agent signed (see
	// HTTP.SignedAgent), whatever address they come from. Only the
	// agent's key can spend it: a request that merely names the agent
	// costs its address's bucket alone, so no one can lock an agent out.
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

// HTTP applies Limits to HTTP requests from a Limiter's buckets.
type HTTP struct {
	Limiter *Limiter
	Limits  Limits
	// SignedAgent returns the agent that signed r (route is the request's
	// route pattern) and proves it, else ""; and r with its body restored
	// for the handler, when it read it. Nil: no request is an agent's.
	SignedAgent func(r *http.Request, route string) (agent string, _ *http.Request, _ error)
	// Logger logs a bucket store's failure, with the request's context
	// (nil: the default logger).
	Logger *slog.Logger
	// Refused, when set, is told the bucket ("ip" or "agent") that
	// refused a request.
	Refused func(bucket string)
}

// Check takes a token from each bucket the request falls in: its
// address's, then, for a request its agent signed, the agent's. It sets
// the RateLimit-Limit, -Remaining and -Reset headers of the tightest
// bucket and, when one is empty, Retry-After, and returns an ETOOMANY
// error rate_limited. A bucket store that fails lets the request through
// (the limits protect the service; they must not take it down) and is
// logged. The request returned is the one to serve (its body restored by
// SignedAgent).
func (h *HTTP) Check(w http.ResponseWriter, r *http.Request, route string) (*http.Request, error) {
	if h == nil || h.Limiter == nil {
		return r, nil
	}
	now := arena.Clock(h.Limits.Now)
	var (
		tightest string // the bucket's name
		tl       arena.RateLimit
		tight    arena.RateDecision
		decided  bool
	)
	take := func(name, key string, l arena.RateLimit) bool {
		d, err := h.Limiter.Take(r.Context(), key, l, now())
		if err != nil {
			arena.Logger(h.Logger).WarnContext(r.Context(), "rate limit: bucket store failed; request let through", "err", redact.String(err.Error()))
			return true
		}
		if !decided || !d.Allowed || (tight.Allowed && d.Remaining/l.Burst < tight.Remaining/tl.Burst) {
			tightest, tl, tight, decided = name, l, d, true
		}
		return d.Allowed
	}
	ok := true
	if h.Limits.PerIP.Burst > 0 {
		ok = take("ip", "ip:"+ipBucket(ClientIP(r, h.Limits.TrustedProxies), h.Limits.IPv6Prefix), h.Limits.PerIP)
	}
	// The signature is checked only for a request its address's bucket
	// let through: a flood costs no more than a token each.
	if ok && h.Limits.PerAgent.Burst > 0 && h.SignedAgent != nil {
		agent, nr, err := h.SignedAgent(r, route)
		if err != nil {
			return r, err
		}
		r = nr
		if agent != "" {
			take("agent", "agent:"+strings.ToLower(agent), h.Limits.PerAgent)
		}
	}
	if !decided {
		return r, nil
	}
	hd := w.Header()
	hd.Set("RateLimit-Limit", strconv.FormatFloat(tl.Burst, 'f', 0, 64))
	// A bucket in debt (see Limiter) has nothing remaining.
	hd.Set("RateLimit-Remaining", strconv.FormatFloat(math.Max(0, math.Floor(tight.Remaining)), 'f', 0, 64))
	hd.Set("RateLimit-Reset", strconv.FormatFloat(math.Ceil((tl.Burst-tight.Remaining)/tl.PerSecond), 'f', 0, 64))
	if tight.Allowed {
		return r, nil
	}
	wait := math.Max(1, math.Ceil((1-tight.Remaining)/tl.PerSecond))
	hd.Set("Retry-After", strconv.FormatFloat(wait, 'f', 0, 64))
	if h.Refused != nil {
		h.Refused(tightest)
	}
	return r, arena.Rejectf(arena.ETOOMANY, "rate_limited", "too many requests from this %s: at most %g at once and %g per second; retry in %g s", tightest, tl.Burst, tl.PerSecond, wait)
}

// ClientIP is the client's address: the connection's peer, unless the
// peer is a trusted proxy; then X-Forwarded-For is read from the right
// (each proxy appends the address it received from), skipping trusted
// proxies, and the first other address is the client. A malformed entry
// stops the walk at the last address known good.
func ClientIP(r *http.Request, trusted []netip.Prefix) string {
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
