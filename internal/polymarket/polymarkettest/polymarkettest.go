// Package polymarkettest is a fake Polymarket for tests: Gamma and CLOB
// endpoints on loopback httptest servers, speaking the real wire format
// (string-encoded outcomes/outcomePrices/clobTokenIds, numeric volumeNum
// next to a string volume, capped pages), with switches for rate limits,
// outages and invalid answers.
//
// The fixtures are hand-written: 13 /markets entries and 5 events covering
// duplicates across listings, two-team (multi-outcome) markets, real arrays
// in place of encoded strings, and malformed entries of every kind.
// Replay serves real recorded Gamma objects from ../shared/data instead.
package polymarkettest

import (
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path"
	"strconv"
	"strings"
	"sync"
	"testing"
)

//go:embed fixtures/*.json
var fixtures embed.FS

// Fixture returns a fixture file by name (e.g. "gamma_markets.json").
func Fixture(t testing.TB, name string) []byte {
	t.Helper()
	b, err := fixtures.ReadFile(path.Join("fixtures", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// FixtureList returns a fixture holding a JSON array, one raw entry each.
func FixtureList(t testing.TB, name string) []json.RawMessage {
	t.Helper()
	var out []json.RawMessage
	if err := json.Unmarshal(Fixture(t, name), &out); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// Tokens maps each fixture market id to its CLOB token ids.
func Tokens(t testing.TB) map[string][]string {
	t.Helper()
	var out map[string][]string
	if err := json.Unmarshal(Fixture(t, "tokens.json"), &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// Server is the fake. Change its fields before the first request, or
// later inside Update.
type Server struct {
	GammaURL, CLOBURL string

	mu      sync.Mutex
	Markets []json.RawMessage          // GET /markets universe, sorted by volumeNum desc
	Events  []json.RawMessage          // GET /events universe, sorted by volume desc
	Single  map[string]json.RawMessage // GET /markets/{id}
	Mids    map[string]string          // token → midpoint
	History map[string]string          // token → raw /prices-history body
	PageCap int                        // Gamma's maximum page size (fixtures: 4, to force paging)

	Throttle        map[string]int // "path?offset" (listings) or "path" → 429 answers left
	RetryAfter      string         // Retry-After header sent with 429s
	GammaStatus     int            // answer every Gamma request with this status
	GammaBadJSON    bool           // answer Gamma listings with truncated JSON
	CLOBStatus      int            // answer every CLOB request with this status
	MidpointsStatus int            // answer POST /midpoints with this status

	requests []string
}

// New starts a fake loaded with the fixtures; it stops when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		Markets:  FixtureList(t, "gamma_markets.json"),
		Events:   FixtureList(t, "gamma_events.json"),
		Single:   map[string]json.RawMessage{},
		Mids:     map[string]string{},
		History:  map[string]string{},
		PageCap:  4,
		Throttle: map[string]int{},
	}
	if err := json.Unmarshal(Fixture(t, "clob_midpoints.json"), &s.Mids); err != nil {
		t.Fatal(err)
	}
	g := httptest.NewServer(s.gamma())
	c := httptest.NewServer(s.clob())
	t.Cleanup(g.Close)
	t.Cleanup(c.Close)
	s.GammaURL, s.CLOBURL = g.URL, c.URL
	return s
}

// Update changes the fake's fields safely while it serves.
func (s *Server) Update(f func(s *Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// Requests returns "METHOD /path?query" of every request so far, in order.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.requests...)
}

// Count returns how many requests so far start with prefix, e.g.
// "GET /markets?" (listing pages) or "GET /markets/42?" (one market).
func (s *Server) Count(prefix string) int {
	n := 0
	for _, r := range s.Requests() {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// throttled answers 429 while the key has throttles left. Caller holds mu.
func (s *Server) throttled(w http.ResponseWriter, key string) bool {
	if s.Throttle[key] <= 0 {
		return false
	}
	s.Throttle[key]--
	if s.RetryAfter != "" {
		w.Header().Set("Retry-After", s.RetryAfter)
	}
	jsonError(w, "rate limited", http.StatusTooManyRequests)
	return true
}

func jsonError(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":%q}`, msg)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// page serves one offset/limit slice like Gamma, checking the ordering
// parameters and capping the page size. Caller holds mu.
func (s *Server) page(w http.ResponseWriter, r *http.Request, all []json.RawMessage, want map[string]string) {
	q := r.URL.Query()
	for k, v := range want {
		if q.Get(k) != v {
			jsonError(w, fmt.Sprintf("bad %s %q", k, q.Get(k)), http.StatusBadRequest)
			return
		}
	}
	limit, err1 := strconv.Atoi(q.Get("limit"))
	offset, err2 := strconv.Atoi(q.Get("offset"))
	if err1 != nil || err2 != nil || limit <= 0 || offset < 0 {
		jsonError(w, "bad limit/offset", http.StatusBadRequest)
		return
	}
	if s.throttled(w, r.URL.Path+"?"+q.Get("offset")) {
		return
	}
	if s.GammaBadJSON {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `[{"id":"1","question":"truncated`)
		return
	}
	limit = min(limit, s.PageCap)
	lo, hi := min(offset, len(all)), min(offset+limit, len(all))
	writeJSON(w, all[lo:hi])
}

func (s *Server) gamma() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /markets", func(w http.ResponseWriter, r *http.Request) {
		s.page(w, r, s.Markets, map[string]string{"active": "true", "closed": "false", "order": "volumeNum", "ascending": "false"})
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		s.page(w, r, s.Events, map[string]string{"closed": "false", "order": "volume", "ascending": "false"})
	})
	mux.HandleFunc("GET /markets/{id}", func(w http.ResponseWriter, r *http.Request) {
		if s.throttled(w, r.URL.Path) {
			return
		}
		m, ok := s.Single[r.PathValue("id")]
		if !ok {
			jsonError(w, "id not found", http.StatusNotFound)
			return
		}
		writeJSON(w, m)
	})
	return s.wrap(mux, func() int { return s.GammaStatus })
}

func (s *Server) clob() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /midpoints", func(w http.ResponseWriter, r *http.Request) {
		if s.MidpointsStatus != 0 {
			jsonError(w, "not supported", s.MidpointsStatus)
			return
		}
		var body []struct {
			TokenID string `json:"token_id"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || len(body) == 0 {
			jsonError(w, "Invalid payload", http.StatusBadRequest)
			return
		}
		out := map[string]string{}
		for _, b := range body {
			if m, ok := s.Mids[b.TokenID]; ok {
				out[b.TokenID] = m
			}
		}
		writeJSON(w, out)
	})
	mux.HandleFunc("GET /midpoint", func(w http.ResponseWriter, r *http.Request) {
		m, ok := s.Mids[r.URL.Query().Get("token_id")]
		if !ok {
			jsonError(w, "No orderbook exists for the requested token id", http.StatusNotFound)
			return
		}
		writeJSON(w, map[string]string{"mid": m})
	})
	mux.HandleFunc("GET /prices-history", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("fidelity") != "1" || q.Get("startTs") == "" || q.Get("endTs") == "" || q.Get("market") == "" {
			jsonError(w, "bad query", http.StatusBadRequest)
			return
		}
		h, ok := s.History[q.Get("market")]
		if !ok {
			h = `{"history":[]}`
		}
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, h)
	})
	return s.wrap(mux, func() int { return s.CLOBStatus })
}

// wrap logs the request and serialises handlers, so fields may be changed
// through Update while serving.
func (s *Server) wrap(h http.Handler, status func() int) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests = append(s.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		if code := status(); code != 0 {
			jsonError(w, "upstream trouble", code)
			return
		}
		h.ServeHTTP(w, r)
	})
}
