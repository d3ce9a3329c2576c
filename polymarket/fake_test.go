package polymarket

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeUpstream serves Gamma and CLOB endpoints from testdata in the real
// wire format, with switches for the failure modes the tests need.
type fakeUpstream struct {
	t       testing.TB
	mu      sync.Mutex
	markets []json.RawMessage          // GET /markets universe, sorted by volumeNum desc
	events  []json.RawMessage          // GET /events universe, sorted by volume desc
	single  map[string]json.RawMessage // GET /markets/{id}
	mids    map[string]string          // token → midpoint
	history map[string]string          // token → raw /prices-history body
	pageCap int                        // Gamma's maximum page size

	// Failure switches.
	throttle        map[string]int // "path?offset" → 429 answers left
	retryAfter      string
	gammaStatus     int  // answer every Gamma request with this status
	gammaBadJSON    bool // answer Gamma listings with invalid JSON
	clobStatus      int  // answer every CLOB request with this status
	midpointsStatus int  // answer POST /midpoints with this status

	requests []string // "METHOD path?query" in order
}

func loadJSONList(t testing.TB, name string) []json.RawMessage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	var out []json.RawMessage
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

func loadTokens(t testing.TB) map[string][]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "tokens.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out map[string][]string
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func newFake(t testing.TB) *fakeUpstream {
	f := &fakeUpstream{
		t:        t,
		markets:  loadJSONList(t, "gamma_markets.json"),
		events:   loadJSONList(t, "gamma_events.json"),
		single:   map[string]json.RawMessage{},
		history:  map[string]string{},
		pageCap:  4,
		throttle: map[string]int{},
	}
	b, err := os.ReadFile(filepath.Join("testdata", "clob_midpoints.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &f.mids); err != nil {
		t.Fatal(err)
	}
	return f
}

func (f *fakeUpstream) log(r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests = append(f.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
}

// count returns how many logged requests start with prefix.
func (f *fakeUpstream) count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, r := range f.requests {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

func (f *fakeUpstream) throttled(w http.ResponseWriter, key string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.throttle[key] > 0 {
		f.throttle[key]--
		if f.retryAfter != "" {
			w.Header().Set("Retry-After", f.retryAfter)
		}
		http.Error(w, `{"error":"rate limited"}`, http.StatusTooManyRequests)
		return true
	}
	return false
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// page serves one offset/limit slice like Gamma, capping the page size.
func (f *fakeUpstream) page(w http.ResponseWriter, r *http.Request, all []json.RawMessage, want map[string]string) {
	q := r.URL.Query()
	for k, v := range want {
		if q.Get(k) != v {
			http.Error(w, fmt.Sprintf(`{"error":"bad %s %q"}`, k, q.Get(k)), http.StatusBadRequest)
			return
		}
	}
	limit, err1 := strconv.Atoi(q.Get("limit"))
	offset, err2 := strconv.Atoi(q.Get("offset"))
	if err1 != nil || err2 != nil || limit <= 0 || offset < 0 {
		http.Error(w, `{"error":"bad limit/offset"}`, http.StatusBadRequest)
		return
	}
	if f.throttled(w, r.URL.Path+"?"+q.Get("offset")) {
		return
	}
	if f.gammaBadJSON {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"id":"1","question":"truncated`)
		return
	}
	limit = min(limit, f.pageCap)
	lo, hi := min(offset, len(all)), min(offset+limit, len(all))
	writeJSON(w, all[lo:hi])
}

func (f *fakeUpstream) gamma() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /markets", func(w http.ResponseWriter, r *http.Request) {
		f.page(w, r, f.markets, map[string]string{"active": "true", "closed": "false", "order": "volumeNum", "ascending": "false"})
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		f.page(w, r, f.events, map[string]string{"closed": "false", "order": "volume", "ascending": "false"})
	})
	mux.HandleFunc("GET /markets/{id}", func(w http.ResponseWriter, r *http.Request) {
		if f.throttled(w, r.URL.Path) {
			return
		}
		m, ok := f.single[r.PathValue("id")]
		if !ok {
			http.Error(w, `{"type":"not found error","error":"id not found"}`, http.StatusNotFound)
			return
		}
		writeJSON(w, m)
	})
	return f.wrap(mux, func() int { return f.gammaStatus })
}

func (f *fakeUpstream) clob() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /midpoints", func(w http.ResponseWriter, r *http.Request) {
		if f.midpointsStatus != 0 {
			http.Error(w, `{"error":"not supported"}`, f.midpointsStatus)
			return
		}
		var body []struct {
			TokenID string `json:"token_id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body) == 0 {
			http.Error(w, `{"error":"Invalid payload"}`, http.StatusBadRequest)
			return
		}
		out := map[string]string{}
		for _, b := range body {
			if m, ok := f.mids[b.TokenID]; ok {
				out[b.TokenID] = m
			}
		}
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /midpoint", func(w http.ResponseWriter, r *http.Request) {
		m, ok := f.mids[r.URL.Query().Get("token_id")]
		if !ok {
			http.Error(w, `{"error":"No orderbook exists for the requested token id"}`, http.StatusNotFound)
			return
		}
		writeJSON(w, map[string]string{"mid": m})
	})
	mux.HandleFunc("GET /prices-history", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("fidelity") != "1" || q.Get("startTs") == "" || q.Get("endTs") == "" {
			http.Error(w, `{"error":"bad query"}`, http.StatusBadRequest)
			return
		}
		h, ok := f.history[q.Get("market")]
		if !ok {
			h = `{"history":[]}`
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, h)
	})
	return f.wrap(mux, func() int { return f.clobStatus })
}

func (f *fakeUpstream) wrap(h http.Handler, status func() int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.log(r)
		f.mu.Lock()
		s := status()
		f.mu.Unlock()
		if s != 0 {
			http.Error(w, `{"error":"upstream trouble"}`, s)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// start serves the fake and returns a client pointed at it that never
// really sleeps between retries (waits are recorded instead).
func (f *fakeUpstream) start(t testing.TB) (*Client, *[]time.Duration) {
	g := httptest.NewServer(f.gamma())
	c := httptest.NewServer(f.clob())
	t.Cleanup(g.Close)
	t.Cleanup(c.Close)
	var mu sync.Mutex
	waits := &[]time.Duration{}
	cl := &Client{
		GammaURL: g.URL, CLOBURL: c.URL, HTTP: g.Client(),
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxRetries: 3,
		Now:        func() time.Time { return time.Date(2026, 2, 1, 12, 30, 45, 123456789, time.UTC) },
	}
	cl.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return cl, waits
}
