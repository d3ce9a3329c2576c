package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/ratelimit"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
)

// limited serves db with the given limits on a fixed clock.
func limited(db *store.DB, l ratelimit.Limits, now time.Time) http.Handler {
	l.Now = func() time.Time { return now }
	return web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Rates: db, Limits: l,
		Forecast: &rounds.Service{Store: db, Logger: quiet}}).Handler()
}

func send(h http.Handler, method, path, ip, body string) *httptest.ResponseRecorder {
	var req *http.Request
	if body != "" {
		req = httptest.NewRequest(method, path, strings.NewReader(body))
	} else {
		req = httptest.NewRequest(method, path, nil)
	}
	req.RemoteAddr = ip + ":1234"
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// Per address: Burst requests pass with falling RateLimit-Remaining, the
// next answers 429 in the JSON error shape with Retry-After; another
// address has its own bucket; the probes are never limited.
func TestRateLimitPerIP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := limited(db, ratelimit.Limits{PerIP: arena.RateLimit{Burst: 3, PerSecond: 0.5}}, time.Now())
		for i := 0; i < 3; i++ {
			rec := send(h, "GET", "/api/v1/markets", "192.0.2.1", "")
			if rec.Code != 200 || rec.Header().Get("RateLimit-Limit") != "3" || rec.Header().Get("RateLimit-Remaining") != string(rune('2'-i)) {
				t.Fatalf("request %d: %d %v", i, rec.Code, rec.Header())
			}
		}
		rec := send(h, "GET", "/api/v1/markets", "192.0.2.1", "")
		if rec.Code != 429 || rec.Header().Get("Retry-After") != "2" || rec.Header().Get("RateLimit-Remaining") != "0" || rec.Header().Get("RateLimit-Reset") != "6" {
			t.Fatalf("over the limit: %d %v", rec.Code, rec.Header())
		}
		if code := decodeError(t, "429", rec.Result()).Code; code != "rate_limited" {
			t.Errorf("429 code %q", code)
		}
		if rec := send(h, "GET", "/api/v1/markets", "192.0.2.2", ""); rec.Code != 200 {
			t.Errorf("another address: %d", rec.Code)
		}
		for _, probe := range []string{"/healthz", "/readyz", "/metrics"} {
			if rec := send(h, "GET", probe, "192.0.2.1", ""); rec.Code != 200 || rec.Header().Get("RateLimit-Limit") != "" {
				t.Errorf("probe %s: %d %v", probe, rec.Code, rec.Header())
			}
		}
	})
}

// IPv6 clients behind a trusted proxy share one bucket per /64: ten
// addresses of one /64 pass the burst of one client between them, another
// /64 has its own bucket; configured to /128, each address has its own.
func TestRateLimitIPv6Prefix(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		proxy := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
		from := func(h http.Handler, client string) int {
			req := httptest.NewRequest("GET", "/api/v1/markets", nil)
			req.RemoteAddr = "10.0.0.1:443"
			req.Header.Set("X-Forwarded-For", client)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			return rec.Code
		}
		l := ratelimit.Limits{PerIP: arena.RateLimit{Burst: 5, PerSecond: 0.001}, TrustedProxies: proxy}
		h := limited(db, l, time.Now())
		var passed int
		for i := range 10 {
			if from(h, fmt.Sprintf("2001:db8:1:2::%x", i+1)) == 200 {
				passed++
			}
		}
		if passed != 5 {
			t.Errorf("ten addresses of one /64 passed %d requests, want the burst of one client, 5", passed)
		}
		if code := from(h, "2001:db8:1:3::1"); code != 200 {
			t.Errorf("another /64: %d", code)
		}
		l.IPv6Prefix = 128
		h = limited(db, l, time.Now())
		for i := range 10 {
			if code := from(h, fmt.Sprintf("2001:db8:9:9::%x", i+1)); code != 200 {
				t.Errorf("bucket per address (/128): address %d answered %d", i, code)
			}
		}
	})
}

// agentLimited serves db with a per-agent limit of 3 on a fixed clock
// and two open rounds of three markets.
func agentLimited(t *testing.T, db *store.DB) (h http.Handler, e *env, ids []uint64) {
	t.Helper()
	t0 := time.Now().UTC().Truncate(time.Second)
	svc := &rounds.Service{Store: db, Logger: quiet, K: 3, Now: func() time.Time { return t0 }}
	h = web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Rates: db, Forecast: svc,
		Limits: ratelimit.Limits{PerAgent: arena.RateLimit{Burst: 3, PerSecond: 0.001}, Now: svc.Now}}).Handler()
	ms := seedMarkets(t, db, 3, t0.Add(30*24*time.Hour))
	for range 2 {
		rd, err := svc.CreateRound(context.Background(), rounds.CreateRoundRequest{MarketIDs: marketIDs(ms), CommitDeadline: t0.Add(time.Hour),
			RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rd.ID)
	}
	return h, &env{t: t, db: db, svc: svc, now: svc.Now}, ids
}

func jsonBody(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var threePreds = []uint16{5000, 5000, 5000}

// Per agent: the requests an agent signed spend one bucket whatever
// address they come from, and the handler still reads the body the
// limiter read.
func TestRateLimitPerAgent(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h, e, ids := agentLimited(t, db)
		k := newKey("agent")
		for i, r := range ids {
			// 201: past the limiter the handler read the whole body.
			body := jsonBody(t, e.commitReq(k, r, threePreds, saltOf("a"), common.Hash{}, uint64(i)))
			if rec := send(h, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", r), fmt.Sprint("192.0.2.", i), body); rec.Code != 201 {
				t.Fatalf("commit %d: %d %s", i, rec.Code, rec.Body)
			}
		}
		early := jsonBody(t, e.revealReq(k, ids[0], threePreds, saltOf("a"), 2))
		reveals := fmt.Sprintf("/api/v1/rounds/%d/reveals", ids[0])
		if rec := send(h, "POST", reveals, "192.0.2.3", early); rec.Code != 409 {
			t.Fatalf("third signed request (an early reveal): %d %s", rec.Code, rec.Body)
		}
		if rec := send(h, "POST", reveals, "192.0.2.4", early); rec.Code != 429 || !strings.Contains(rec.Body.String(), "this agent") {
			t.Fatalf("fourth signed request: %d %s", rec.Code, rec.Body)
		}
	})
}

// No one but an agent can spend its bucket: 610 commits that merely name
// it (unsigned, signed by another key, or its own used commit replayed),
// from many addresses, cost those addresses' buckets only, and the
// agent's valid commit still passes.
func TestRateLimitAgentLockout(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h, e, ids := agentLimited(t, db)
		victim, attacker := newKey("victim"), newKey("attacker")
		commits := func(r uint64) string { return fmt.Sprintf("/api/v1/rounds/%d/commits", r) }
		used := jsonBody(t, e.commitReq(victim, ids[0], threePreds, saltOf("a"), common.Hash{}, 0))
		if rec := send(h, "POST", commits(ids[0]), "192.0.2.1", used); rec.Code != 201 {
			t.Fatalf("the agent's first commit: %d %s", rec.Code, rec.Body)
		}
		forged := e.commitReq(attacker, ids[1], threePreds, saltOf("b"), common.Hash{}, 1)
		forged.Agent = victim.Address().Hex()
		for i := range 610 {
			b := []string{`{"agent":"` + victim.Address().Hex() + `"}`, jsonBody(t, forged), used}[i%3]
			if rec := send(h, "POST", commits(ids[i%2]), fmt.Sprintf("198.51.100.%d", i%250), b); rec.Code == 429 {
				t.Fatalf("flood request %d spent the agent's bucket: %s", i, rec.Body)
			}
		}
		valid := jsonBody(t, e.commitReq(victim, ids[1], threePreds, saltOf("b"), common.Hash{}, 1))
		if rec := send(h, "POST", commits(ids[1]), "192.0.2.2", valid); rec.Code != 201 {
			t.Fatalf("the agent's commit after the flood: %d %s", rec.Code, rec.Body)
		}
	})
}

// Two servers on one PostgreSQL database (two replicas) share one bucket:
// requests alternating between them are refused once the bucket is
// empty, however they are spread; concurrent requests never pass more
// than the burst.
func TestRateLimitSharedAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := storetest.URL(t, "postgres") // skips without ARENA_TEST_POSTGRES_URL
	ctx := context.Background()
	var hs []http.Handler
	now := time.Now()
	for i := 0; i < 2; i++ {
		db, err := store.Open(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		hs = append(hs, limited(db, ratelimit.Limits{PerIP: arena.RateLimit{Burst: 10, PerSecond: 0.01}}, now))
	}
	var passed, refused atomic.Int32
	done := make(chan struct{})
	for g := 0; g < 8; g++ {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := 0; i < 5; i++ {
				switch send(hs[(g+i)%2], "GET", "/api/v1/markets", "198.51.100.7", "").Code {
				case 200:
					passed.Add(1)
				case 429:
					refused.Add(1)
				}
			}
		}()
	}
	for g := 0; g < 8; g++ {
		<-done
	}
	if passed.Load() != 10 || refused.Load() != 30 {
		t.Fatalf("two replicas passed %d and refused %d of 40, want 10 and 30", passed.Load(), refused.Load())
	}
}

// The admission caps over HTTP: a full round answers 409 round_full
// without Retry-After (it stays full: retrying cannot help), too many new
// agents answer 429 too_many_new_agents with a Retry-After of when one
// is admitted again (all came now: in an hour).
func TestAdmissionCapsHTTP(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Now().UTC().Truncate(time.Second)
		db.Now = func() time.Time { return t0 }
		svc := &rounds.Service{Store: db, Logger: quiet, K: 3, Now: db.Now,
			Admission: rounds.Admission{Store: db, MaxAgentsPerRound: 1, MaxNewAgentsHour: 2}}
		h := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc}).Handler()
		e := &env{t: t, db: db, svc: svc, now: svc.Now}
		ms := seedMarkets(t, db, 3, t0.Add(30*24*time.Hour))
		newRound := func() uint64 {
			rd, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: marketIDs(ms), CommitDeadline: t0.Add(time.Hour),
				RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			return rd.ID
		}
		commit := func(k *forecast.Key, round uint64) *httptest.ResponseRecorder {
			body := jsonBody(t, e.commitReq(k, round, threePreds, saltOf("x"), common.Hash{}, 0))
			return send(h, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", round), "192.0.2.1", body)
		}
		r1, r2, r3 := newRound(), newRound(), newRound()
		if rec := commit(newKey("a"), r1); rec.Code != 201 {
			t.Fatalf("first agent: %d %s", rec.Code, rec.Body)
		}
		rec := commit(newKey("b"), r1)
		if rec.Code != 409 || rec.Header().Get("Retry-After") != "" || decodeError(t, "full round", rec.Result()).Code != forecast.CodeRoundFull {
			t.Fatalf("second agent in a full round: %d %v %s", rec.Code, rec.Header(), rec.Body)
		}
		if rec := commit(newKey("b"), r2); rec.Code != 201 {
			t.Fatalf("second agent in another round: %d %s", rec.Code, rec.Body)
		}
		rec = commit(newKey("c"), r3)
		if rec.Code != 429 || decodeError(t, "third new agent", rec.Result()).Code != forecast.CodeTooManyNewAgents {
			t.Fatalf("third new agent within the hour: %d %s", rec.Code, rec.Body)
		}
		if wait, err := strconv.Atoi(rec.Header().Get("Retry-After")); err != nil || wait < 3600 || wait > 3602 {
			t.Errorf("third new agent: Retry-After %q, want an hour", rec.Header().Get("Retry-After"))
		}
	})
}
