package ratelimit_test

import (
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/ratelimit"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// check asks h about one request from ip and answers its status, as a
// server would: 200, or the status of the error's kind.
func check(t *testing.T, h *ratelimit.HTTP, ip, body string) (*httptest.ResponseRecorder, *http.Request, error) {
	t.Helper()
	req := httptest.NewRequest("POST", "/x", strings.NewReader(body))
	req.RemoteAddr = ip + ":1234"
	rec := httptest.NewRecorder()
	r, err := h.Check(rec, req, "POST /x")
	return rec, r, err
}

// Per address: the burst passes with falling RateLimit-Remaining, the
// next request is refused (ETOOMANY rate_limited, Retry-After, the
// refusal told to Refused), another address has its own bucket.
func TestHTTPPerIP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var refused []string
		h := &ratelimit.HTTP{Limiter: &ratelimit.Limiter{Store: db}, Limits: ratelimit.Limits{PerIP: arena.RateLimit{Burst: 3, PerSecond: 0.5}, Now: func() time.Time { return t0 }},
			Refused: func(b string) { refused = append(refused, b) }}
		defer h.Limiter.Wait()
		for i, want := range []string{"2", "1", "0"} {
			rec, _, err := check(t, h, "192.0.2.1", "")
			if err != nil || rec.Header().Get("RateLimit-Remaining") != want || rec.Header().Get("RateLimit-Limit") != "3" {
				t.Fatalf("request %d: %v %v", i, err, rec.Header())
			}
		}
		rec, _, err := check(t, h, "192.0.2.1", "")
		if arena.ErrorCode(err) != "rate_limited" || arena.ErrorKind(err) != arena.ETOOMANY || rec.Header().Get("Retry-After") != "2" {
			t.Fatalf("fourth request: %v %v", err, rec.Header())
		}
		if len(refused) != 1 || refused[0] != "ip" {
			t.Errorf("refusals told: %v", refused)
		}
		if _, _, err := check(t, h, "192.0.2.2", ""); err != nil {
			t.Errorf("another address: %v", err)
		}
	})
}

// Per agent: only what SignedAgent vouches for spends the agent's bucket,
// whatever the address; the request SignedAgent returns (its body
// restored) is the one served; SignedAgent's error is the answer.
func TestHTTPPerAgent(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	signed := func(r *http.Request, route string) (string, *http.Request, error) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return "", r, err
		}
		if string(b) == "bad" {
			return "", r, arena.Rejectf(arena.ETOOLARGE, "body_too_large", "too large")
		}
		r2 := r.Clone(r.Context())
		r2.Body = io.NopCloser(strings.NewReader(string(b)))
		if agent, ok := strings.CutPrefix(string(b), "signed by "); ok {
			return agent, r2, nil
		}
		return "", r2, nil
	}
	h := &ratelimit.HTTP{Limiter: &ratelimit.Limiter{Store: db}, SignedAgent: signed,
		Limits: ratelimit.Limits{PerAgent: arena.RateLimit{Burst: 2, PerSecond: 0.001}, Now: func() time.Time { return t0 }}}
	defer h.Limiter.Wait()
	for i, ip := range []string{"192.0.2.1", "198.51.100.7"} {
		_, r, err := check(t, h, ip, "signed by 0xAbC")
		if err != nil {
			t.Fatalf("signed request %d: %v", i, err)
		}
		if b, _ := io.ReadAll(r.Body); string(b) != "signed by 0xAbC" {
			t.Errorf("the request served reads %q", b)
		}
	}
	if _, _, err := check(t, h, "203.0.113.9", "signed by 0xabc"); arena.ErrorCode(err) != "rate_limited" {
		t.Errorf("third signed request, from a third address: %v", err)
	}
	for range 5 {
		if rec, _, err := check(t, h, "192.0.2.1", "unsigned"); err != nil || rec.Header().Get("RateLimit-Limit") != "" {
			t.Errorf("an unsigned request without a per-address limit: %v %v", err, rec.Header())
		}
	}
	if _, _, err := check(t, h, "192.0.2.1", "bad"); arena.ErrorCode(err) != "body_too_large" {
		t.Errorf("SignedAgent's error: %v", err)
	}
}

// A bucket store that fails lets the request through, and is logged.
func TestHTTPStoreFailure(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	c := &counting{RateStore: db}
	c.fail.Store(true)
	var logs strings.Builder
	h := &ratelimit.HTTP{Limiter: &ratelimit.Limiter{Store: c}, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		Limits: ratelimit.Limits{PerIP: arena.RateLimit{Burst: 1, PerSecond: 0.001}, Now: func() time.Time { return t0 }}}
	defer h.Limiter.Wait()
	for i := range 3 {
		if _, _, err := check(t, h, "192.0.2.1", ""); err != nil {
			t.Fatalf("request %d with the store down: %v", i, err)
		}
	}
	if !strings.Contains(logs.String(), "bucket store failed") {
		t.Errorf("the failure was not logged: %q", logs.String())
	}
}

// A nil HTTP, or one without a limiter, limits nothing.
func TestHTTPOff(t *testing.T) {
	for _, h := range []*ratelimit.HTTP{nil, {Limits: ratelimit.Limits{PerIP: arena.RateLimit{Burst: 1, PerSecond: 1}}}} {
		for range 3 {
			if rec, _, err := check(t, h, "192.0.2.1", ""); err != nil || len(rec.Header()) != 0 {
				t.Errorf("%+v: %v %v", h, err, rec.Header())
			}
		}
	}
}
