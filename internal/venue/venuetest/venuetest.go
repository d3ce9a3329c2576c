// Package venuetest is what the venues' local test servers share: the
// recorded payloads of ../shared/data/venues (read in place, never
// copied), the bodies a test writes from a venue's documentation for
// shapes no recording holds (labelled as such), and a loopback server
// base that logs requests, answers rate limits and outages on demand,
// and serialises its handlers so a test may change what it serves.
package venuetest

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/internal/venue"
)

// Payload is one body a venue served (a recording) or would serve (one
// written from its documentation).
type Payload struct {
	File string          // its file: under ../shared/data/venues, or the documented body's
	Body json.RawMessage // as recorded or written
	// Documented is the documentation page a written body follows; "" for
	// a recording.
	Documented string
}

// Recorded returns the recorded payloads of a venue
// (../shared/data/venues/VENUE/*.json), in file name order. It skips the
// test when the data is absent (fails under ARENA_REQUIRE_SHARED_DATA=1).
func Recorded(t testing.TB, venue string) []Payload {
	t.Helper()
	dir := shareddata.Path(t, "venues", venue)
	ps, err := readDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// RecordedSeeds returns a venue's recorded bodies when ../shared/data is
// present, and nothing otherwise: fuzz seeds that are welcome but not
// required.
func RecordedSeeds(venue string) [][]byte {
	dir, ok := shareddata.Find()
	if !ok {
		return nil
	}
	ps, err := readDir(filepath.Join(dir, "venues", venue))
	if err != nil {
		return nil
	}
	var out [][]byte
	for _, p := range ps {
		out = append(out, p.Body)
	}
	return out
}

func readDir(dir string) ([]Payload, error) {
	names, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	slices.Sort(names)
	var out []Payload
	for _, n := range names {
		b, err := os.ReadFile(n)
		if err != nil {
			return nil, err
		}
		if !json.Valid(b) {
			return nil, fmt.Errorf("%s: not JSON", n)
		}
		out = append(out, Payload{File: filepath.Base(n), Body: b})
	}
	return out, nil
}

// documented is the file form of a body written from a venue's
// documentation: the page it follows and why it was written, beside the
// body, so no one takes it for a recording.
type documented struct {
	MadeFrom string          `json:"made_from"`
	Note     string          `json:"note"`
	Body     json.RawMessage `json:"body"`
}

// Documented returns the bodies written from documentation in fsys's
// dir, each file {"made_from": URL, "note": why, "body": the body}.
func Documented(t testing.TB, fsys fs.FS, dir string) []Payload {
	t.Helper()
	ps, err := ReadDocumented(fsys, dir)
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// DocumentedBodies returns the bodies of Documented, for fuzz seeds;
// none when they cannot be read.
func DocumentedBodies(fsys fs.FS, dir string) [][]byte {
	ps, _ := ReadDocumented(fsys, dir)
	var out [][]byte
	for _, p := range ps {
		out = append(out, p.Body)
	}
	return out
}

// ReadDocumented is Documented without a test.
func ReadDocumented(fsys fs.FS, dir string) ([]Payload, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.json"))
	if err != nil {
		return nil, err
	}
	var out []Payload
	for _, n := range names {
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		var d documented
		if err := json.Unmarshal(b, &d); err != nil {
			return nil, fmt.Errorf("%s: %w", n, err)
		}
		if !strings.HasPrefix(d.MadeFrom, "https://") || d.Note == "" || len(d.Body) == 0 {
			return nil, fmt.Errorf("%s: a documented body names the page it follows (made_from), says why it was written (note) and holds a body", n)
		}
		out = append(out, Payload{File: n, Body: d.Body, Documented: d.MadeFrom})
	}
	return out, nil
}

// Base is the part of a venue's local server every venue shares. A venue
// server embeds it and serves its mux through Serve.
type Base struct {
	URL string

	mu         sync.Mutex
	requests   []string
	Throttle   map[string]int // request path → 429 answers left
	RetryAfter string         // Retry-After header sent with 429s
	Status     int            // answer every request with this status
}

// Start serves h on loopback until t ends.
func (b *Base) Start(t testing.TB, h http.Handler) {
	t.Helper()
	b.Throttle = map[string]int{}
	s := httptest.NewServer(b.serve(h))
	t.Cleanup(s.Close)
	b.URL = s.URL
}

// Update changes the server's fields safely while it serves.
func (b *Base) Update(f func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f()
}

// Requests returns "GET /path?query" of every request so far, in order.
func (b *Base) Requests() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.requests...)
}

// Count returns how many requests so far start with prefix.
func (b *Base) Count(prefix string) int {
	n := 0
	for _, r := range b.Requests() {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

// serve logs each request, answers a forced status or a throttle, and
// serialises the handlers, so fields may be changed through Update while
// serving.
func (b *Base) serve(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		defer b.mu.Unlock()
		b.requests = append(b.requests, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		if b.Status != 0 {
			Error(w, "upstream trouble", b.Status)
			return
		}
		if b.Throttle[r.URL.Path] > 0 {
			b.Throttle[r.URL.Path]--
			if b.RetryAfter != "" {
				w.Header().Set("Retry-After", b.RetryAfter)
			}
			Error(w, "rate limited", http.StatusTooManyRequests)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Quick makes a venue client fit for a local server: no rate limit and
// retries after a millisecond or two, Retry-After up to a second.
func Quick(h *venue.HTTP) {
	h.Rate = 0
	h.Backoff, h.MaxBackoff, h.MaxRetryAfter = time.Millisecond, 2*time.Millisecond, time.Second
}

// Local makes a venue client fit for a test on a local server: Quick,
// quiet, on a clock stopped at now, paging as far as the server serves
// (up to 1,000 pages).
func Local(c *venue.Client, now time.Time) {
	Quick(&c.HTTP)
	c.Now = func() time.Time { return now }
	c.Logger = slog.New(slog.DiscardHandler)
	c.MaxPages = 1000
}

// Want is what a decoder's table case wants of an object: a skip for a
// reason, or a market of this status, resolution and Yes price (NaN: no
// price).
type Want struct {
	Skip       venue.SkipReason
	Status     arena.MarketStatus
	Resolution string
	Ambiguous  bool
	Yes        float64
}

// Check fails t unless the decoder's answer (m, err) is what w wants. It
// returns the market, nil after the wanted skip.
func (w Want) Check(t *testing.T, m *arena.Market, err error) *arena.Market {
	t.Helper()
	if w.Skip != "" {
		if err == nil || venue.Reason(err) != w.Skip {
			t.Fatalf("got %v, want skip %s", err, w.Skip)
		}
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	yes, ok := m.Prices[arena.Yes]
	if m.Status != w.Status || m.Resolution != w.Resolution || m.Ambiguous != w.Ambiguous || math.IsNaN(w.Yes) == ok || ok && math.Abs(yes-w.Yes) > 1e-12 {
		t.Errorf("got %s %q ambiguous %v prices %v; want %s %q ambiguous %v Yes %v", m.Status, m.Resolution, m.Ambiguous, m.Prices, w.Status, w.Resolution, w.Ambiguous, w.Yes)
	}
	return m
}

// Time reads an RFC 3339 time for a test; "" is the zero time.
func Time(t testing.TB, s string) time.Time {
	t.Helper()
	if s == "" {
		return time.Time{}
	}
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Object is base as JSON with the fields of set replaced (a nil value
// removes a field): the objects a decoder's table test feeds it.
func Object(t testing.TB, base, set map[string]any) []byte {
	t.Helper()
	m := maps.Clone(base)
	for k, v := range set {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Error answers a JSON error.
func Error(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":%q}`, msg)
}

// JSON answers v as JSON.
func JSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// Objects reads a body holding a list of objects, or an object whose
// field key holds the list; ok is false when it holds neither.
func Objects(body json.RawMessage, key string) ([]json.RawMessage, bool) {
	var list []json.RawMessage
	if json.Unmarshal(body, &list) == nil {
		return list, true
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return nil, false
	}
	inner, ok := obj[key]
	if !ok || json.Unmarshal(inner, &list) != nil {
		return nil, false
	}
	return list, true
}

// Field returns an object's field, nil when absent.
func Field(obj json.RawMessage, key string) json.RawMessage {
	var m map[string]json.RawMessage
	if json.Unmarshal(obj, &m) != nil {
		return nil
	}
	return m[key]
}

// Edit returns obj with fields set (a nil value deletes the field).
func Edit(obj json.RawMessage, set map[string]any) (json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(obj, &m); err != nil {
		return nil, err
	}
	for k, v := range set {
		if v == nil {
			delete(m, k)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		m[k] = b
	}
	return json.Marshal(m)
}
