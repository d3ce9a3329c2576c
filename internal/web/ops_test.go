package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
)

// /metrics exports requests by route pattern (not raw path) and status,
// latency histograms by route, submissions by result and error code, and
// the database pool's statistics, from the server's own registry.
func TestMetricsEndpoint(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		if err := e.metrics.Register(db.Collector()); err != nil {
			t.Fatal(err)
		}
		ms := seedMarkets(t, db, 3, t0.Add(30*24*time.Hour))
		r := e.createRound(ms, t0.Add(time.Hour), t0.Add(2*time.Hour), t0.Add(3*time.Hour)).ID
		k := newKey("alice")
		e.commit(k, r, []uint16{5000, 5000, 5000}, saltOf("alice"), [32]byte{}, 0)
		// The same commit again: a rejection with its stable code.
		status, body := e.call("POST", fmt.Sprintf("/api/v1/rounds/%d/commits", r), e.commitReq(k, r, []uint16{5000, 5000, 5000}, saltOf("alice"), [32]byte{}, 1), "")
		code := errorOf(t, body).Error.Code
		if status < 400 || code == "" {
			t.Fatalf("second commit: %d %s", status, body)
		}
		for _, id := range []int64{ms[0].ID, ms[1].ID} {
			e.call("GET", fmt.Sprintf("/api/v1/markets/%d", id), nil, "")
		}
		e.call("GET", "/api/v1/markets/999999", nil, "")
		e.call("GET", "/no/such/route", nil, "")

		resp, err := http.Get(e.url + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		text := string(b)
		if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") {
			t.Fatalf("/metrics: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		for _, want := range []string{
			`arena_http_requests_total{method="GET",route="GET /api/v1/markets/{id}",status="200"} 2`,
			`arena_http_requests_total{method="GET",route="GET /api/v1/markets/{id}",status="404"} 1`,
			`arena_http_requests_total{method="GET",route="unmatched",status="404"} 1`,
			`arena_http_request_duration_seconds_count{route="GET /api/v1/markets/{id}"} 3`,
			`arena_submissions_total{code="",kind="commit",result="accepted"} 1`,
			`arena_submissions_total{code="` + code + `",kind="commit",result="rejected"} 1`,
			`go_sql_open_connections{db_name="` + db.Engine() + `"}`,
			`go_goroutines`,
		} {
			if !strings.Contains(text, want) {
				t.Errorf("/metrics lacks %s", want)
			}
		}
		if strings.Contains(text, "/api/v1/markets/999999") {
			t.Error("/metrics labels a raw path: unbounded cardinality")
		}
	})
}

// Two servers in one process keep separate registries: neither panics on
// duplicate registration and neither counts the other's requests.
func TestMetricsRegistryPerServer(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	ma, mb := metrics.New(), metrics.New()
	ha := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Metrics: ma}).Handler()
	web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Metrics: mb}).Handler()
	for i := 0; i < 3; i++ {
		ha.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
	}
	if got := ma.Value("arena_http_requests_total", map[string]string{"route": "GET /healthz"}); got != 3 {
		t.Errorf("server a counted %v health checks, want 3", got)
	}
	if got := mb.Value("arena_http_requests_total", nil); got != 0 {
		t.Errorf("server b counted %v requests, want 0", got)
	}
}

// A sane X-Request-Id is kept and echoed; a missing or insane one is
// replaced by a fresh id; the one error log line carries the id.
func TestRequestID(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	var logs syncBuffer
	srv := web.New(web.Parts{Markets: brokenMarkets{db}, DB: db, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	h := srv.Handler()
	get := func(path, id string) *httptest.ResponseRecorder {
		req := httptest.NewRequest("GET", path, nil)
		if id != "" {
			req.Header.Set(web.RequestIDHeader, id)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	if got := get("/healthz", "client-id_1.2:3").Header().Get(web.RequestIDHeader); got != "client-id_1.2:3" {
		t.Errorf("sane id echoed as %q", got)
	}
	seen := map[string]bool{}
	for _, bad := range []string{"", "has space", "new\nline", strings.Repeat("x", 129), "ü"} {
		got := get("/healthz", bad).Header().Get(web.RequestIDHeader)
		if got == bad || len(got) < 16 || seen[got] {
			t.Errorf("id %q answered with %q", bad, got)
		}
		seen[got] = true
	}
	rec := get("/api/v1/markets", "trace-42")
	if rec.Code != 500 {
		t.Fatalf("broken store: %d", rec.Code)
	}
	lines := logs.lines()
	if len(lines) != 1 || lines[0]["request_id"] != "trace-42" || lines[0]["msg"] != "http: internal error" {
		t.Errorf("error log lines %v, want one with request_id trace-42", lines)
	}
}

// brokenMarkets fails every market listing with a cause that holds a
// connection string, as a driver error might.
type brokenMarkets struct{ arena.MarketStore }

func (brokenMarkets) Markets(context.Context, arena.MarketFilter) ([]*arena.Market, error) {
	return nil, errors.New("dial postgres://arena:S3cretPW%@10.0.0.1/x: refused")
}

// The internal-error log line redacts the secret in its cause.
func TestInternalErrorLogRedacted(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	var logs syncBuffer
	srv := web.New(web.Parts{Markets: brokenMarkets{db}, DB: db, Logger: slog.New(slog.NewJSONHandler(&logs, nil))})
	rec := httptest.NewRecorder()
	srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/markets", nil))
	if rec.Code != 500 || strings.Contains(rec.Body.String(), "S3cret") {
		t.Fatalf("answer %d %s", rec.Code, rec.Body)
	}
	logs.mu.Lock()
	text := logs.b.String()
	logs.mu.Unlock()
	if strings.Contains(text, "S3cret") || !strings.Contains(text, "[redacted]") {
		t.Errorf("log leaks or lacks the redaction: %s", text)
	}
}

// A panicking handler answers 500 in the JSON error shape, is logged once
// with its request id and without the secrets in its value, and the
// server keeps serving.
func TestPanicRecovered(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	var logs syncBuffer
	boom := http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("connect postgres://u:hunter2@db/x with Bearer abc.def")
	})
	srv := web.New(web.Parts{Markets: db, DB: db, Logger: slog.New(slog.NewJSONHandler(&logs, nil)), Mounts: map[string]http.Handler{"/boom": boom}})
	h := srv.Handler()
	req := httptest.NewRequest("GET", "/boom", nil)
	req.Header.Set(web.RequestIDHeader, "boom-1")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != 500 {
		t.Fatalf("panic answered %d", rec.Code)
	}
	resp := rec.Result()
	if code := decodeError(t, "panic", resp).Code; code != "internal" {
		t.Errorf("code %q", code)
	}
	lines := logs.lines()
	if len(lines) != 1 || lines[0]["request_id"] != "boom-1" {
		t.Fatalf("log lines %v", lines)
	}
	if b, _ := json.Marshal(lines[0]); bytes.Contains(b, []byte("hunter2")) || bytes.Contains(b, []byte("abc.def")) {
		t.Errorf("panic log leaks a secret: %s", b)
	}
	if srv.InternalErrors() != 1 {
		t.Errorf("internal errors %d", srv.InternalErrors())
	}
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	if rec.Code != 200 {
		t.Errorf("after the panic /healthz answered %d", rec.Code)
	}
}

// /readyz: 200 with the schema and job runs when the database answers;
// 503 when it does not; never a host, user or password.
func TestReadyz(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		if ok, err := db.ClaimJob(ctx, "polymarket-sync", p, "r1"); !ok || err != nil {
			t.Fatal(ok, err)
		}
		if err := db.FinishJob(ctx, "polymarket-sync", p, nil); err != nil {
			t.Fatal(err)
		}
		srv := web.New(web.Parts{Markets: db, DB: db, Health: db, Logger: quiet})
		rec := httptest.NewRecorder()
		srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/readyz", nil))
		var got web.ReadyJSON
		if err := json.Unmarshal(rec.Body.Bytes(), &got); err != nil || rec.Code != 200 {
			t.Fatalf("readyz %d %s", rec.Code, rec.Body)
		}
		if got.Status != "ready" || got.Database != "ok" || got.Migrations == nil || got.Migrations.Applied < 7 ||
			len(got.Migrations.Pending) != 0 || len(got.Jobs) != 1 || got.Jobs[0].Job != "polymarket-sync" || got.Jobs[0].LastSuccess.IsZero() {
			t.Errorf("readyz %s", rec.Body)
		}
		if !strings.Contains(rec.Body.String(), `"pending":[]`) || !strings.Contains(rec.Body.String(), `"unknown":[]`) {
			t.Errorf("readyz with nothing pending or unknown: %s, want empty lists", rec.Body)
		}

		down := web.New(web.Parts{Markets: db, DB: downDB{}, Health: db, Logger: quiet})
		for _, path := range []string{"/readyz", "/healthz"} {
			rec = httptest.NewRecorder()
			down.Handler().ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			if rec.Code != 503 || !strings.Contains(rec.Body.String(), "unreachable") || strings.Contains(rec.Body.String(), "s3cret") {
				t.Errorf("%s with the database down: %d %s", path, rec.Code, rec.Body)
			}
		}
	})
}

type downDB struct{}

func (downDB) Ping(context.Context) error {
	return errors.New("dial tcp: postgres://arena:s3cret@10.1.1.1/x: connection refused")
}

// Admin token rotation without downtime: while ARENA_ADMIN_TOKEN_NEXT is
// set both tokens are accepted; each alone works; prefixes, the two
// concatenated and an empty bearer do not.
func TestAdminTokenRotation(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	for _, c := range []struct {
		name, current, next string
		accept, refuse      []string
	}{
		{"current only", "old-token-0123", "", []string{"old-token-0123"}, []string{"new-token-4567", "", "old-token-012"}},
		{"both", "old-token-0123", "new-token-4567", []string{"old-token-0123", "new-token-4567"},
			[]string{"", "old-token-0123new-token-4567", "new-token-456", "x"}},
		{"next only", "", "new-token-4567", []string{"new-token-4567"}, []string{"", "old-token-0123"}},
	} {
		srv := web.New(web.Parts{Markets: db, DB: db, AdminToken: c.current, AdminTokenNext: c.next, Logger: quiet,
			Forecast: &rounds.Service{Store: db, Logger: quiet}})
		h := srv.Handler()
		try := func(tok string) (int, string) {
			req := httptest.NewRequest("POST", "/api/v1/admin/rounds", strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer "+tok)
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			code := ""
			if rec.Code >= 400 {
				code = errorOf(t, rec.Body.Bytes()).Error.Code
			}
			return rec.Code, code
		}
		for _, tok := range c.accept {
			// Past the check, an empty body is refused as a bad request.
			if status, code := try(tok); status == 401 {
				t.Errorf("%s: token %q refused (%s)", c.name, tok, code)
			}
		}
		for _, tok := range c.refuse {
			if status, code := try(tok); status != 401 || code != "unauthorized" {
				t.Errorf("%s: token %q answered %d %s, want 401 unauthorized", c.name, tok, status, code)
			}
		}
	}
}

// A service's log line written while it handles a request carries the
// request's id, as the server's own lines do.
func TestServiceLogsCarryRequestID(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	var buf syncBuffer
	logger := slog.New(web.LogHandler(slog.NewJSONHandler(&buf, nil)))
	h := web.New(web.Parts{Markets: db, DB: db, AdminToken: adminToken, Logger: logger,
		Forecast: &rounds.Service{Store: db, Logger: logger}}).Handler()
	ms := seedMarkets(t, db, 2, time.Now().Add(30*24*time.Hour))
	now := time.Now()
	body, _ := json.Marshal(map[string]any{"market_ids": marketIDs(ms), "commit_deadline": now.Add(time.Hour),
		"reveal_start": now.Add(2 * time.Hour), "reveal_deadline": now.Add(3 * time.Hour)})
	req := httptest.NewRequest("POST", "/api/v1/admin/rounds", bytes.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+adminToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "req-abc-123")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusCreated {
		t.Fatalf("create round: %d %s", rec.Code, rec.Body)
	}
	for _, l := range buf.lines() {
		if l["msg"] == "round created" {
			if l["request_id"] != "req-abc-123" {
				t.Fatalf("the service's line lacks the request id: %v", l)
			}
			return
		}
	}
	t.Fatalf("no round created line: %v", buf.lines())
}

// A client's made-up methods do not grow /metrics: 1,000 methods RT1 …
// RT1000 and a 50 KB one add the series of one method ("other") and leave
// the page about its size.
func TestMetricsMethodLabelBounded(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	m := metrics.New()
	h := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Metrics: m}).Handler()
	page := func() string {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
		return rec.Body.String()
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/v1/markets", nil)) // a 405 of a real method
	before := len(page())
	for i := 1; i <= 1000; i++ {
		h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(fmt.Sprintf("RT%d", i), "/api/v1/markets", nil))
	}
	h.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest(strings.Repeat("M", 50<<10), "/api/v1/markets", nil))
	text := page()
	if strings.Contains(text, "RT1") || strings.Contains(text, "MMMM") {
		t.Error("/metrics labels a client's method")
	}
	if grew := len(text) - before; grew > 4<<10 {
		t.Errorf("1,001 made-up methods grew /metrics by %d bytes", grew)
	}
	if got := m.Value("arena_http_requests_total", map[string]string{"method": "other", "status": "405"}); got != 1001 {
		t.Errorf("made-up methods counted %v under method=\"other\", want 1001", got)
	}
}
