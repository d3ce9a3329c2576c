package manifold

import (
	"context"
	"encoding/json"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/manifold/manifoldtest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/venue"
	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// The contract suite: Manifold's /v0/markets recorded by another project
// (../shared/data/venues/manifold: 1,389 unresolved markets closing
// within 60 days of 2026-05-03, read in place, never copied), the bodies
// written from Manifold's documentation for shapes no recording holds
// (manifoldtest/testdata/documented, each labelled with its page), and
// what the arena makes of each.

// listedAt is just after the recording: every recorded market is open.
var listedAt = time.Date(2026, 5, 3, 3, 40, 0, 0, time.UTC)

var quiet = slog.New(slog.DiscardHandler)

func payloads(t *testing.T) []venuetest.Payload {
	t.Helper()
	return append(venuetest.Recorded(t, Venue), manifoldtest.Documented(t)...)
}

func rfc3339(t *testing.T, s string) time.Time { return venuetest.Time(t, s) }

// recordedWant states what the arena makes of some market objects.
type recordedWant struct {
	id         string
	status     arena.MarketStatus
	resolution string
	yes        float64 // NaN: no price
	close      string
	resolved   string
	volume     float64
	category   string
	eligible   bool
	question   string
}

var stated = []recordedWant{
	// The first recorded market, and the most traded.
	{id: "0u0LdllyhO", status: arena.StatusOpen, yes: 0.843861684698533, close: "2026-06-01T23:59:00Z", volume: 555, eligible: true,
		question: "Will I stay in masters this season?"},
	{id: "98C2A2O9QC", status: arena.StatusOpen, yes: 0.9906040676969253, close: "2026-06-30T00:59:00Z", volume: 168628.21697981143, eligible: true,
		question: "Graham Platner and James Talarico both win their primaries?"},
	// Never traded: open at its initial 0.5, not listed.
	{id: "6sI5gn8C9E", status: arena.StatusOpen, yes: 0.5, close: "2026-05-04T02:27:51.337Z", question: "Will HackerNews #1 story score go up in 24h?"},

	// Written from the documentation.
	{id: "DocResYes01", status: arena.StatusResolved, resolution: arena.Yes, yes: 1, close: "2026-05-03T12:00:00Z", resolved: "2026-05-03T18:00:00Z",
		volume: 2417.5, category: "science", question: "Will the documentation example resolve YES?"},
	{id: "DocResNo001", status: arena.StatusResolved, resolution: arena.No, yes: 0, close: "2026-05-03T12:00:00Z", resolved: "2026-05-03T18:00:00Z",
		volume: 2417.5, category: "politics", question: "Will the documentation example resolve NO?"},
	// MKT: resolved to a probability; VOID for scoring, 0.73 kept.
	{id: "DocResMkt01", status: arena.StatusResolved, resolution: arena.Void, yes: 0.73, close: "2026-05-03T12:00:00Z", resolved: "2026-05-03T18:00:00Z",
		volume: 2417.5, category: "economics-default", question: "What share of the documentation example happens (resolves to a probability)?"},
	{id: "DocResCanc1", status: arena.StatusResolved, resolution: arena.Void, yes: math.NaN(), close: "2026-05-03T12:00:00Z", resolved: "2026-05-03T18:00:00Z",
		volume: 2417.5, question: "Will the cancelled documentation example happen?"},
	{id: "DocOpenFull", status: arena.StatusOpen, yes: 0.62, close: "2026-05-10T00:00:00Z", volume: 830, category: "technology-default", eligible: true,
		question: "Will the open documentation example happen by May 10, 2026?"},
}

// Every recorded and documented market object decodes to a market or is
// skipped for a typed reason: every BINARY one decodes (open at the
// recording), every other kind is skipped as not binary; the stated ones
// decode to the stated facts.
func TestRecordedMarkets(t *testing.T) {
	recs, err := manifoldtest.Markets(payloads(t))
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	byID := map[string]*entry{}
	for _, r := range recs {
		var k struct{ OutcomeType string }
		_ = json.Unmarshal(r.Raw, &k)
		e, err := decode(r.Raw, listedAt)
		switch {
		case k.OutcomeType == "BINARY" && err != nil:
			t.Errorf("%s: %v", r.ID, err)
		case k.OutcomeType != "BINARY" && venue.Reason(err) != venue.SkipNotBinary:
			t.Errorf("%s (%s): got %v, want a not_binary skip", r.ID, k.OutcomeType, err)
		case err == nil:
			byID[e.M.SourceID] = e
		}
		kinds[k.OutcomeType]++
	}
	want := map[string]int{"BINARY": 855 + 5, "MULTIPLE_CHOICE": 449, "MULTI_NUMERIC": 42, "POLL": 21, "DATE": 19, "PSEUDO_NUMERIC": 2, "NUMBER": 1}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("kinds %v, want %v", kinds, want)
	}
	for _, w := range stated {
		e := byID[w.id]
		if e == nil {
			t.Errorf("%s: not decoded", w.id)
			continue
		}
		m := e.M
		yes, ok := m.Prices[arena.Yes]
		if math.IsNaN(w.yes) == ok || ok && yes != w.yes {
			t.Errorf("%s: prices %v, want Yes %v", w.id, m.Prices, w.yes)
		}
		var resolved time.Time
		if w.resolved != "" {
			resolved = rfc3339(t, w.resolved)
		}
		got := []any{m.Status, m.Resolution, m.CloseTime, m.ResolvedAt, m.Volume, m.Category, e.Eligible, m.Question, m.Type}
		exp := []any{w.status, w.resolution, rfc3339(t, w.close), resolved, w.volume, w.category, w.eligible, w.question, arena.Binary}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s: got %v, want %v", w.id, got, exp)
		}
	}
}

// Every payload is of a shape the arena knows.
func TestRecordedPayloadsAccounted(t *testing.T) {
	for _, p := range payloads(t) {
		if _, err := manifoldtest.Classify(p.Body); err != nil {
			t.Errorf("%s: %v", p.File, err)
		}
		if p.Documented != "" && !strings.HasPrefix(p.Documented, "https://docs.manifold.markets/") {
			t.Errorf("%s: written from %s, not Manifold's documentation", p.File, p.Documented)
		}
	}
}

func startClient(t *testing.T, s *manifoldtest.Server, now time.Time) *Client {
	t.Helper()
	c := NewClient(s.URL)
	venuetest.Local(&c.Client, now)
	return c
}

// The recordings and the documented bodies go through the sync `arena
// sync --source manifold` and `arena serve` run, over HTTP, into a real
// store (SQLite, and PostgreSQL when ARENA_TEST_POSTGRES_URL is set): a
// first sync lists every market open (the resolved ones as their open
// twins) and reads each new one whole; a day later, the markets that
// resolved or closed drop out of the listing and are re-read.
func TestSyncRecorded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		r := manifoldtest.NewReplay(t, payloads(t))
		r.Update(func() { r.PageCap = 500 })
		c := startClient(t, r.Server, listedAt)
		get := func(id string) *arena.Market {
			t.Helper()
			m, err := db.MarketBySource(ctx, arena.SourceManifold, id)
			if err != nil {
				t.Fatalf("market %s: %v", id, err)
			}
			return m
		}
		rep, err := venue.Sync(ctx, db, c, 5000, quiet)
		if err != nil {
			t.Fatal(err)
		}
		// 1,389 recorded and 5 documented markets: 534 not binary, 8
		// never traded, 852 kept, each read whole once.
		if rep.Fetched != 1394 || rep.Skipped != 534 || rep.SkipReasons[venue.SkipNotBinary] != 534 || rep.Ineligible != 8 ||
			rep.Kept != 852 || rep.Inserted != 852 || rep.Priced != 852 || r.Count("GET /market/") != 852 {
			t.Fatalf("listing: %s; %d single reads", rep, r.Count("GET /market/"))
		}
		for _, w := range stated {
			if !w.eligible {
				continue
			}
			m := get(w.id)
			if m.Status != arena.StatusOpen || m.Prices[arena.Yes] != w.yes || m.Category != w.category || m.Question != w.question {
				t.Errorf("%s after listing: %s %v %q %q", w.id, m.Status, m.Prices, m.Category, m.Question)
			}
		}
		if m := get("DocOpenFull"); !strings.HasPrefix(m.Criteria, "Resolves YES if the example happens") || m.EventID != "DocOpenCash" ||
			m.URL != "https://manifold.markets/DocWriter/will-the-open-documentation-example-happen" {
			t.Errorf("whole market: criteria %q event %q url %q", m.Criteria, m.EventID, m.URL)
		}

		// A day later: the 4 documented markets resolved, 16 recorded
		// ones closed.
		later := listedAt.Add(24 * time.Hour)
		r.RefreshPhase(later)
		c.Now = func() time.Time { return later }
		rep, err = venue.Sync(ctx, db, c, 5000, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Refreshed != 20 || rep.Resolved != 4 || rep.Closed != 16 || rep.Ambiguous != 0 || rep.Inserted != 0 || rep.Updated != 20 || rep.Unchanged != 832 {
			t.Errorf("refresh: %s", rep)
		}
		for _, w := range stated {
			if w.resolved == "" {
				continue
			}
			m := get(w.id)
			yes, ok := m.Prices[arena.Yes]
			if m.Status != w.status || m.Resolution != w.resolution || !m.ResolvedAt.Equal(rfc3339(t, w.resolved)) || math.IsNaN(w.yes) == ok || ok && yes != w.yes {
				t.Errorf("%s after refresh: %s %q at %v prices %v", w.id, m.Status, m.Resolution, m.ResolvedAt, m.Prices)
			}
		}
		pts, err := db.PriceHistory(ctx, get("DocResMkt01").ID, arena.Yes, time.Time{}, later)
		if err != nil || len(pts) != 2 || pts[0].Source != arena.PriceAMM || pts[0].Price != 0.71 || pts[1].Source != arena.PriceSettlement || pts[1].Price != 0.73 {
			t.Errorf("MKT history %+v %v: want the market maker's 0.71, then the settlement at 0.73", pts, err)
		}
	})
}

// The benchmark is the probability the last bet at or before the instant
// left: the documented bets of the open documentation market.
func TestBenchmarkAt(t *testing.T) {
	r := manifoldtest.NewReplay(t, manifoldtest.Documented(t))
	c := startClient(t, r.Server, listedAt)
	m := &arena.Market{SourceID: "DocOpenFull"}
	for _, tc := range []struct {
		at    string
		price float64
		ok    bool
	}{
		{"2026-05-01T09:59:59Z", 0, false},   // before the first bet
		{"2026-05-01T10:00:00Z", 0.55, true}, // at it
		{"2026-05-02T09:40:00Z", 0.55, true}, // after an unfilled limit order
		{"2026-05-02T09:45:00Z", 0.60, true},
		{"2026-05-03T02:00:00Z", 0.62, true},
	} {
		at := rfc3339(t, tc.at)
		p, ok, err := c.BenchmarkAt(context.Background(), m, at)
		if err != nil || ok != tc.ok || ok && (p.Price != tc.price || !p.Time.Equal(at) || p.Source != arena.PriceAMMHistory) {
			t.Errorf("at %s: %+v %v %v, want %v", tc.at, p, ok, err, tc.price)
		}
	}
}
