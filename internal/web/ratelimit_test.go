package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
)

// limited serves db with the given limits on a fixed clock.
func limited(db *store.DB, l web.RateLimits, now time.Time) http.Handler {
	l.Now = func() time.Time { return now }
	return web.Build(web.Parts{Markets: db, DB: db, Logger: quiet, Rates: db, Limits: l,
		Forecast: &forecast.Service{Store: db, Logger: quiet}}).Handler()
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
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := limited(db, web.RateLimits{PerIP: arena.RateLimit{Burst: 3, PerSecond: 0.5}}, time.Now())
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

// Per agent: the agent named in a submission body or the nonce path has
// one bucket whatever address it comes from, and the handler still reads
// the body the limiter read.
func TestRateLimitPerAgent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		h := limited(db, web.RateLimits{PerAgent: arena.RateLimit{Burst: 2, PerSecond: 0.1}}, time.Now())
		agent := "0x00000000000000000000000000000000000000aA"
		body := `{"agent":"` + agent + `","commit_hash":"0x00"}`
		// Past the limiter the handler sees the body: a bad commit is a
		// 4xx of its own, not a malformed (empty) body.
		rec := send(h, "POST", "/api/v1/rounds/1/commits", "192.0.2.1", body)
		if rec.Code == 429 || strings.Contains(rec.Body.String(), "malformed_json") {
			t.Fatalf("first submission: %d %s", rec.Code, rec.Body)
		}
		if rec := send(h, "GET", "/api/v1/agents/"+strings.ToLower(agent)+"/nonce", "192.0.2.2", ""); rec.Code == 429 {
			t.Fatalf("second request (nonce, other address): %d", rec.Code)
		}
		rec = send(h, "POST", "/api/v1/rounds/1/reveals", "192.0.2.3", `{"agent":"`+agent+`"}`)
		if rec.Code != 429 || !strings.Contains(rec.Body.String(), "this agent") {
			t.Fatalf("third request for the agent: %d %s", rec.Code, rec.Body)
		}
		if rec := send(h, "POST", "/api/v1/rounds/1/commits", "192.0.2.3", `{"agent":"0x00000000000000000000000000000000000000bb"}`); rec.Code == 429 {
			t.Errorf("another agent was limited")
		}
	})
}

// Two servers on one PostgreSQL database (two replicas) share one bucket:
// requests alternating between them are refused once the bucket is
// empty, however they are spread; concurrent requests never pass more
// than the burst.
func TestRateLimitSharedAcrossReplicas(t *testing.T) {
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
		hs = append(hs, limited(db, web.RateLimits{PerIP: arena.RateLimit{Burst: 10, PerSecond: 0.01}}, now))
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
