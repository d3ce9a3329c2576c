package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
)

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *syncBuffer) lines() []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(s.b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	s.b.Reset()
	return out
}

// decodeError checks the stable error shape and returns its code.
func decodeError(t *testing.T, what string, resp *http.Response) web.ErrorDetailJSON {
	t.Helper()
	b, _ := io.ReadAll(resp.Body)
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s: content type %q, body %s", what, ct, b)
	}
	var e map[string]map[string]string
	if err := json.Unmarshal(b, &e); err != nil || len(e) != 1 || len(e["error"]) != 2 || e["error"]["code"] == "" || e["error"]["message"] == "" {
		t.Errorf("%s: body %s is not {\"error\":{\"code\",\"message\"}}", what, b)
	}
	return web.ErrorDetailJSON{Code: e["error"]["code"], Message: e["error"]["message"]}
}

// A store failure on every read endpoint answers 500 with the stable error
// shape, leaks no detail, and is logged exactly once with method, path and
// cause.
func TestStoreFailureOnReadEndpoints(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		var logs syncBuffer
		logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelInfo}))
		svc := &rounds.Service{Store: db, Logger: logger}
		eng := &trading.Engine{Store: db, Logger: logger}
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: logger, Forecast: svc, Trading: eng})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		db.Close() // every query now fails: "sql: database is closed"

		const agent = "0x00000000000000000000000000000000000000aa"
		paths := []string{
			"/", "/api/v1/markets", "/api/v1/markets/1", "/api/v1/leaderboard", "/api/v1/leaderboard?track=trading",
			"/api/v1/rounds", "/api/v1/rounds/1", "/api/v1/rounds/1/scores", "/api/v1/agents/" + agent + "/nonce",
			"/api/v1/rounds/1/reasoning/" + agent, "/api/v1/cohorts", "/api/v1/cohorts/1", "/api/v1/cohorts/1/snapshots",
			"/api/v1/decisions/1",
		}
		for i, p := range paths {
			resp, err := http.Get(hs.URL + p)
			if err != nil {
				t.Fatal(err)
			}
			e := decodeError(t, p, resp)
			resp.Body.Close()
			if resp.StatusCode != 500 || e.Code != "internal" || e.Message != "internal error" {
				t.Errorf("GET %s: %d %+v, want 500 internal without detail", p, resp.StatusCode, e)
			}
			var logged []map[string]any
			for _, l := range logs.lines() {
				if l["level"] == "ERROR" {
					logged = append(logged, l)
				}
			}
			path, _, _ := strings.Cut(p, "?")
			if len(logged) != 1 {
				t.Errorf("GET %s: %d error log lines, want 1: %v", p, len(logged), logged)
				continue
			}
			l := logged[0]
			if l["method"] != "GET" || l["path"] != path || !strings.Contains(l["err"].(string), "database is closed") {
				t.Errorf("GET %s: log line %v lacks method, path or cause", p, l)
			}
			if got := srv.InternalErrors(); got != int64(i+1) {
				t.Errorf("GET %s: internal error count %d, want %d", p, got, i+1)
			}
		}
	})
}

// Unknown routes and wrong methods answer the JSON error shape, not text.
func TestUnroutedJSON(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		for _, c := range []struct {
			method, path string
			status       int
			code, allow  string
		}{
			{"GET", "/nope", 404, "route_not_found", ""},
			{"GET", "/api/v1/rounds", 404, "route_not_found", ""}, // forecast track not enabled
			{"GET", "/api/v1/cohorts", 404, "route_not_found", ""},
			{"DELETE", "/api/v1/markets", 405, "method_not_allowed", "GET, HEAD"},
		} {
			req, _ := http.NewRequest(c.method, hs.URL+c.path, nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			e := decodeError(t, c.path, resp)
			resp.Body.Close()
			if resp.StatusCode != c.status || e.Code != c.code || resp.Header.Get("Allow") != c.allow {
				t.Errorf("%s %s: %d %+v Allow %q, want %d %s %q", c.method, c.path, resp.StatusCode, e, resp.Header.Get("Allow"), c.status, c.code, c.allow)
			}
		}
		resp, err := http.Get(hs.URL + "/api/v1/leaderboard?track=trading")
		if err != nil {
			t.Fatal(err)
		}
		if e := decodeError(t, "trading leaderboard", resp); resp.StatusCode != 404 || e.Code != "not_found" {
			t.Errorf("disabled trading track: %d %+v", resp.StatusCode, e)
		}
		resp.Body.Close()
	})
}

// A path id that is not a positive integer answers 400 with one message
// shape on every route that takes a market, cohort or decision id; a
// round id answers the protocol's round_not_found.
func TestBadPathIDs(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, AdminToken: "admin",
			Forecast: &rounds.Service{Store: db, Logger: quiet}, Trading: &trading.Engine{Store: db, Logger: quiet},
			Oracle: &oracle.Service{Store: db, Logger: quiet}})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		for _, c := range []struct {
			method, path string
			status       int
			code, msg    string
		}{
			{"GET", "/api/v1/markets/abc", 400, "invalid", `market id "abc": want a positive integer`},
			{"GET", "/api/v1/markets/0", 400, "invalid", `market id "0": want a positive integer`},
			{"GET", "/api/v1/pages/markets/-3", 400, "invalid", `market id "-3": want a positive integer`},
			{"POST", "/api/v1/admin/markets/x/resolve", 400, "invalid", `market id "x": want a positive integer`},
			{"GET", "/api/v1/oracle/resolutions/1e3", 400, "invalid", `market id "1e3": want a positive integer`},
			{"POST", "/api/v1/admin/oracle/markets/x/flag", 400, "invalid", `market id "x": want a positive integer`},
			{"POST", "/api/v1/admin/oracle/queue/x", 400, "invalid", `market id "x": want a positive integer`},
			{"GET", "/api/v1/pages/oracle/x", 400, "invalid", `market id "x": want a positive integer`},
			{"GET", "/api/v1/cohorts/abc", 400, "invalid", `cohort id "abc": want a positive integer`},
			{"GET", "/api/v1/decisions/abc", 400, "invalid", `decision id "abc": want a positive integer`},
			{"GET", "/api/v1/rounds/abc", 404, "round_not_found", `round "abc" not found`},
		} {
			req, _ := http.NewRequest(c.method, hs.URL+c.path, strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer admin")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			e := decodeError(t, c.path, resp)
			resp.Body.Close()
			if resp.StatusCode != c.status || e.Code != c.code || e.Message != c.msg {
				t.Errorf("%s %s: %d %+v, want %d %s %q", c.method, c.path, resp.StatusCode, e, c.status, c.code, c.msg)
			}
		}
		if n := srv.InternalErrors(); n != 0 {
			t.Errorf("%d internal errors", n)
		}
	})
}

// D1: text no column can store (a NUL byte, invalid UTF-8) in the path or
// a query parameter answers 400 on both engines; before, PostgreSQL
// answered 500 and logged an error per request while SQLite answered 200.
func TestInvalidTextRefused(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: &rounds.Service{Store: db, Logger: quiet}})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		for _, u := range []string{"/api/v1/markets?source=%00", "/api/v1/markets?source=%ff%fe", "/api/v1/markets?source=abc%00def",
			"/api/v1/markets?%00=1", "/api/v1/agents/0x%00/nonce", "/api/v1/rounds?status=%c3%28"} {
			resp, err := http.Get(hs.URL + u)
			if err != nil {
				t.Fatal(err)
			}
			e := decodeError(t, u, resp)
			resp.Body.Close()
			if resp.StatusCode != 400 || e.Code != "invalid_text" {
				t.Errorf("%s: %d %s", u, resp.StatusCode, e.Code)
			}
		}
		if n := srv.InternalErrors(); n != 0 {
			t.Errorf("%d internal errors", n)
		}
		// Ordinary non-ASCII text still reaches the handlers.
		if resp, err := http.Get(hs.URL + "/api/v1/markets?source=s%C3%A9n%C3%A9gal"); err != nil || resp.StatusCode != 200 {
			t.Errorf("valid UTF-8: %v %v", resp.StatusCode, err)
		}
	})
}
