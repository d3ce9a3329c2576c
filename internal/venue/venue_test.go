package venue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

var (
	t0    = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	quiet = slog.New(slog.DiscardHandler)
)

// fakeSource is a venue in memory: its listing, and what it answers for
// each market read alone.
type fakeSource struct {
	listed  []*arena.Market
	single  map[string]*arena.Market
	partial bool
	listErr error
	reads   atomic.Int32
}

func (f *fakeSource) Name() string       { return "fakevenue" }
func (f *fakeSource) ListsPartial() bool { return f.partial }

func (f *fakeSource) List(_ context.Context, rep *Report) ([]*arena.Market, error) {
	rep.Fetched += len(f.listed)
	var out []*arena.Market
	for _, m := range f.listed {
		c := *m
		c.History = append([]arena.PricePoint(nil), m.History...)
		out = append(out, &c)
	}
	return out, f.listErr
}

func (f *fakeSource) Market(_ context.Context, id string) (*arena.Market, error) {
	f.reads.Add(1)
	m, ok := f.single[id]
	switch {
	case !ok:
		return nil, arena.Errorf(arena.ENOTFOUND, "gone")
	case m == nil:
		return nil, Skip("fakevenue", SkipBadField, id, "unreadable")
	}
	c := *m
	c.History = append([]arena.PricePoint(nil), m.History...)
	return &c, nil
}

func mk(id string, vol float64, st arena.MarketStatus, res string) *arena.Market {
	m := &arena.Market{Source: "fakevenue", SourceID: id, Kind: arena.KindMarket, Question: "Q " + id, Type: arena.Binary,
		Outcomes: []string{arena.Yes, arena.No}, Volume: vol, Status: st, Resolution: res, Prices: BinaryPrices(0.4),
		History: []arena.PricePoint{YesPoint(t0, 0.4, arena.PriceAMM, t0)}}
	if st == arena.StatusResolved {
		m.ResolvedAt = t0
	}
	return m
}

// Sync keeps the most traded, in the listing's order among equals, reads
// a partial venue's new markets whole, re-reads the known ones that left
// the listing, and records a closed market's last price once.
func TestSync(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		whole := mk("b", 20, arena.StatusOpen, "")
		whole.Criteria, whole.Category = "the rules", "science"
		f := &fakeSource{partial: true,
			listed: []*arena.Market{mk("a", 10, arena.StatusOpen, ""), mk("b", 20, arena.StatusOpen, ""), mk("c", 10, arena.StatusOpen, ""), mk("a", 10, arena.StatusOpen, ""), mk("d", 1, arena.StatusOpen, "")},
			single: map[string]*arena.Market{"b": whole, "c": nil}}
		rep, err := Sync(ctx, db, f, 3, quiet)
		if err != nil {
			t.Fatal(err)
		}
		ms, _ := db.Markets(ctx, arena.MarketFilter{Source: "fakevenue"})
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.SourceID)
		}
		// a and c tie at 10 after b: the listing's order; d is cut. Of the
		// three read whole, a is gone (keeps its listing form), c is
		// unreadable (likewise).
		if strings.Join(ids, ",") != "b,a,c" || rep.Kept != 3 || rep.Duplicates != 1 || rep.Inserted != 3 || f.reads.Load() != 3 {
			t.Fatalf("kept %v; %s; %d reads", ids, rep, f.reads.Load())
		}
		if b, _ := db.MarketBySource(ctx, "fakevenue", "b"); b.Criteria != "the rules" || b.Category != "science" {
			t.Errorf("b not read whole: %+v", b)
		}

		// b leaves the listing and closes; a listing form of c without
		// its criteria keeps the stored ones.
		f.listed = []*arena.Market{mk("a", 10, arena.StatusOpen, ""), mk("c", 10, arena.StatusOpen, "")}
		f.single = map[string]*arena.Market{"b": mk("b", 20, arena.StatusClosed, "")}
		db.SaveMarkets(ctx, []*arena.Market{{Source: "fakevenue", SourceID: "c", Kind: arena.KindMarket, Question: "Q c", Type: arena.Binary,
			Outcomes: []string{arena.Yes, arena.No}, Volume: 10, Status: arena.StatusOpen, Criteria: "stored rules"}})
		rep, err = Sync(ctx, db, f, 3, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Refreshed != 1 || rep.Closed != 1 || rep.Priced != 2 {
			t.Errorf("second sync: %s", rep)
		}
		if c, _ := db.MarketBySource(ctx, "fakevenue", "c"); c.Criteria != "stored rules" {
			t.Errorf("c lost its criteria: %q", c.Criteria)
		}
		b, _ := db.MarketBySource(ctx, "fakevenue", "b")
		pts, _ := db.PriceHistory(ctx, b.ID, arena.Yes, time.Time{}, t0.Add(time.Hour))
		// A third sync sees b still closed: no new point for it.
		rep, err = Sync(ctx, db, f, 3, quiet)
		if err != nil {
			t.Fatal(err)
		}
		pts2, _ := db.PriceHistory(ctx, b.ID, arena.Yes, time.Time{}, t0.Add(time.Hour))
		if b.Status != arena.StatusClosed || len(pts2) != len(pts) || rep.Refreshed != 1 || rep.Updated != 0 {
			t.Errorf("closed b: %s, %d then %d points; %s", b.Status, len(pts), len(pts2), rep)
		}
	})
}

// A listing that fails changes nothing and is EUNAVAILABLE; a limit of 0
// is refused.
func TestSyncFailure(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := context.Background()
	f := &fakeSource{listed: []*arena.Market{mk("a", 1, arena.StatusOpen, "")}, listErr: errors.New("boom")}
	if _, err := Sync(ctx, db, f, 5, quiet); arena.ErrorKind(err) != arena.EUNAVAILABLE || !strings.Contains(err.Error(), "boom") {
		t.Errorf("got %v", err)
	}
	if ms, _ := db.Markets(ctx, arena.MarketFilter{}); len(ms) != 0 {
		t.Errorf("stored %d markets", len(ms))
	}
	if _, err := Sync(ctx, db, f, 0, quiet); arena.ErrorKind(err) != arena.EINVALID {
		t.Errorf("limit 0: %v", err)
	}
}

func TestReportString(t *testing.T) {
	r := Report{Venue: "kalshi", Fetched: 9, Kept: 3}
	r.Skip(SkipParlay)
	r.Skip(SkipParlay)
	r.Skip(SkipBadDate)
	if s := r.String(); !strings.HasPrefix(s, "kalshi: kept 3 of 9 listed (0 duplicates, 0 ineligible, 3 (bad_date=1,parlay=2) skipped)") {
		t.Errorf("%s", s)
	}
}

// The client: retries with the server's Retry-After, a bound on the
// wait, no retry of a refused request or an oversized answer, its
// header, and its rate.
func TestHTTP(t *testing.T) {
	var calls atomic.Int32
	var sawAuth atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		sawAuth.Store(r.Header.Get("Authorization"))
		switch r.URL.Path {
		case "/flaky":
			if n <= 2 {
				w.Header().Set("Retry-After", "2")
				w.WriteHeader(http.StatusTooManyRequests)
				return
			}
			w.Write([]byte(`{"ok":true}`))
		case "/slow":
			w.Header().Set("Retry-After", "3600")
			w.WriteHeader(http.StatusServiceUnavailable)
		case "/refused":
			w.WriteHeader(http.StatusForbidden)
			w.Write([]byte(`{"detail":"no"}`))
		case "/big":
			w.Write([]byte(`"` + strings.Repeat("x", 100) + `"`))
		case "/bad":
			w.Write([]byte(`{"ok":`))
		}
	}))
	defer srv.Close()
	var waits []time.Duration
	h := &HTTP{Venue: "v", Base: srv.URL, Header: http.Header{"Authorization": {"Token t"}}, MaxBody: 50,
		Sleep: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
	ctx := context.Background()
	var v struct{ OK bool }
	if err := h.Get(ctx, "/flaky", nil, &v); err != nil || !v.OK || fmt.Sprint(waits) != "[2s 2s]" || sawAuth.Load() != "Token t" {
		t.Errorf("flaky: %v %+v waits %v auth %v", err, v, waits, sawAuth.Load())
	}
	for path, want := range map[string]string{"/slow": "asks to wait 1h0m0s", "/refused": "HTTP 403", "/big": "answer too large", "/bad": "invalid JSON"} {
		calls.Store(0)
		err := h.Get(ctx, path, nil, &v)
		if err == nil || !strings.Contains(err.Error(), want) || calls.Load() != 1 {
			t.Errorf("%s: %v after %d calls, want %q after 1", path, err, calls.Load(), want)
		}
	}
	// Five requests at 50 a second take at least 80 ms.
	r := &HTTP{Venue: "v", Base: srv.URL, Rate: 50}
	start := time.Now()
	for range 5 {
		r.Get(ctx, "/flaky", nil, &v)
	}
	if d := time.Since(start); d < 70*time.Millisecond {
		t.Errorf("5 requests at 50/s took %v", d)
	}
}

func TestReaders(t *testing.T) {
	for in, want := range map[string]string{
		`"0.3900"`: "0.39 true", `12`: "12 true", `null`: "0 false", `""`: "0 false", `" 7 "`: "7 true",
		`"NaN"`: "error", `"1e400"`: "error", `true`: "error", `"x"`: "error",
	} {
		var n Number
		var got string
		if err := json.Unmarshal([]byte(in), &n); err != nil {
			got = "error"
		} else {
			got = fmt.Sprint(n.V, " ", n.Set)
		}
		if got != want {
			t.Errorf("Number(%s) = %s, want %s", in, got, want)
		}
	}
	for in, want := range map[string]string{
		"  Will it\r\nrain?\u0000 ": "Will it\nrain?", "\u202eabc": "abc", "a\xffb": "a\uFFFDb", "tab\there": "tab\there",
		strings.Repeat("é", 22): strings.Repeat("é", 19) + "…",
	} {
		if got := Text(in, 20); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
	}
	for in, ok := range map[string]bool{"KXBTCD-26JUL2502-T74299.99": true, "0u0LdllyhO": true, "43339": true, "": false, "a/b": false, "a b": false, "ü": false, strings.Repeat("a", 129): false} {
		if _, got := ID(in); got != ok {
			t.Errorf("ID(%q) = %v", in, got)
		}
	}
	if _, err := Millis(Number{V: -1, Set: true}); err == nil {
		t.Error("negative milliseconds")
	}
	if s, err := Seconds(Number{V: 1781301600.5, Set: true}); err != nil || !s.Equal(time.Unix(1781301600, 5e8)) {
		t.Errorf("seconds %v %v", s, err)
	}
	if p := BinaryPrices(0.535); p[arena.No] != 0.465 || p[arena.Yes] != 0.535 {
		t.Errorf("prices %v", p)
	}
	if _, _, err := (Number{V: 1.01, Set: true}).Probability("p"); err == nil {
		t.Error("1.01 is a probability")
	}
	pts := []arena.PricePoint{{Time: t0.Add(-time.Minute), Price: 0.1}, {Time: t0.Add(time.Minute), Price: 0.2}, {Time: t0.Add(10 * time.Minute), Price: 0.3}}
	if p, ok := Nearest(pts, t0, 5*time.Minute); !ok || p.Price != 0.1 {
		t.Errorf("nearest %v %v: a tie goes to the earlier", p, ok)
	}
	if _, ok := Nearest(pts, t0.Add(time.Hour), 5*time.Minute); ok {
		t.Error("a point an hour away")
	}
	if math.IsNaN(Round(0.1+0.2)) || Round(0.1+0.2) != 0.3 {
		t.Error("round")
	}
}

// Any bytes as a Number: finite when set, never a panic.
func FuzzNumber(f *testing.F) {
	for _, s := range []string{`"0.3900"`, `12`, `null`, `"1e308"`, `-0`, `"  "`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var n Number
		if err := json.Unmarshal(b, &n); err == nil && n.Set && (math.IsNaN(n.V) || math.IsInf(n.V, 0)) {
			t.Fatalf("%q read as %v", b, n.V)
		}
		if s := Text(string(b), 20); len([]rune(s)) > 20 {
			t.Fatalf("Text kept %d characters", len([]rune(s)))
		}
	})
}
