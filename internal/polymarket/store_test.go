package polymarket

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// The same sync against the real store (SQLite, and PostgreSQL when
// ARENA_TEST_POSTGRES_URL is set): listing, pricing, then a later sync in
// which a market left the top list and resolved upstream.
func TestSyncWithStore(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		f := newFake(t)
		c, _ := startClient(t, f)
		rep, err := Sync(ctx, db, c, 5)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Inserted != 5 || rep.PricePoints != 20 {
			t.Fatalf("first sync: %s", rep)
		}
		m, err := db.MarketBySource(ctx, arena.SourcePolymarket, "601005")
		if err != nil {
			t.Fatal(err)
		}
		pts, err := db.PriceHistory(ctx, m.ID, "Yes", time.Time{}, fixedNow.Add(time.Hour))
		if err != nil || len(pts) != 2 {
			t.Fatalf("601005 history %+v %v", pts, err)
		}

		// 601005 drops out of the listings and resolves No.
		f.Update(func(s *polymarkettest.Server) {
			s.Events = s.Events[:1]
			s.Single["601005"] = gammaSingle("601005", true, true, "resolved", [2]string{"0", "1"}, "")
		})
		rep, err = Sync(ctx, db, c, 5)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Refreshed != 1 || rep.Resolved != 1 {
			t.Fatalf("second sync: %s", rep)
		}
		m, err = db.MarketBySource(ctx, arena.SourcePolymarket, "601005")
		if err != nil {
			t.Fatal(err)
		}
		want := time.Date(2026, 1, 16, 10, 0, 0, 0, time.UTC)
		if m.Status != arena.StatusResolved || m.Resolution != "No" || !m.ResolvedAt.Equal(want) {
			t.Errorf("601005: status %s resolution %q at %v", m.Status, m.Resolution, m.ResolvedAt)
		}
		open, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourcePolymarket, Status: arena.StatusOpen})
		if err != nil || len(open) != 5 {
			t.Errorf("%d open markets after the second sync (%v), want the new top 5", len(open), err)
		}
	})
}

// The recordings go through the sync `arena sync` and `arena serve` run,
// over HTTP, into a real store (SQLite, and PostgreSQL when
// ARENA_TEST_POSTGRES_URL is set): a first sync lists every recorded
// market while it is open (the closed ones as their open twins), a second
// one sees the closed recordings drop out of the listings, re-reads them
// with GET /markets/{id} and records their resolution.
func TestSyncRecorded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		r := polymarkettest.NewReplay(t)
		c, _ := startClient(t, r.Server)
		get := func(id string) *arena.Market {
			t.Helper()
			m, err := db.MarketBySource(ctx, arena.SourcePolymarket, id)
			if err != nil {
				t.Fatalf("market %s: %v", id, err)
			}
			return m
		}

		// Listing: 16 /markets entries (13 bare recordings, the 3 of the
		// recorded events) and the 3 event markets again from /events.
		// Scalar 43 is skipped, 1460332 has no volume, market 12 is listed
		// twice (two recordings) and the event markets are seen twice.
		rep, err := Sync(ctx, db, c, 100)
		if err != nil {
			t.Fatal(err)
		}
		var listed []string
		for _, w := range recordedMarkets {
			if w.skip == "" && w.id != "1460332" && !slices.Contains(listed, w.id) {
				listed = append(listed, w.id)
			}
		}
		if rep.Fetched != 19 || rep.Skipped != 1 || rep.SkipReasons[SkipScalar] != 1 || rep.Ineligible != 1 ||
			rep.Duplicates != 4 || rep.Kept != len(listed) || rep.Inserted != len(listed) {
			t.Fatalf("listing: %s; want %d kept", rep, len(listed))
		}
		// The 9 markets recorded open are priced from the CLOB (midpoints of
		// the bid and ask Gamma recorded), which agrees with Gamma's own
		// outcome prices to within 0.05 on every one; the 4 open twins have
		// no order book and keep Gamma's price.
		if rep.CLOBPrices != 18 || rep.GammaPrices != 8 || rep.Flagged != 0 {
			t.Errorf("listing prices: %s", rep)
		}
		for _, id := range listed {
			if m := get(id); m.Status != arena.StatusOpen || m.Resolution != "" || m.Ambiguous {
				t.Errorf("%s after listing: %s %q ambiguous %v", id, m.Status, m.Resolution, m.Ambiguous)
			}
		}
		for id, want := range map[string][2]float64{
			"1557558": {0.505, 0.495},   // CLOB: bid 0.50, ask 0.51
			"559657":  {0.0105, 0.9895}, // CLOB: bid 0.010, ask 0.011
			"1812085": {0.7, 0.3},       // open twin: last trade 0.70
			"1878156": {0.98, 0.02},     // open twin: last trade 0.98
			"12":      {0.5, 0.5},       // open twin: no trade, bid 0 and ask 1
		} {
			m := get(id)
			if !near(m.Prices[m.Outcomes[0]], want[0]) || !near(m.Prices[m.Outcomes[1]], want[1]) {
				t.Errorf("%s listed at %v, want %v", id, m.Prices, want)
			}
		}
		// The event markets, first seen in /markets without their event,
		// take event and category from the /events listing.
		if m := get("559657"); m.EventID != "30829" || m.Category != "World Elections" || m.URL == "" {
			t.Errorf("559657 event %q category %q url %q", m.EventID, m.Category, m.URL)
		}

		// Refresh, at the next sync 5 minutes later: the closed recordings
		// are back, as recorded.
		r.RefreshPhase(t)
		refreshAt := fixedNow.Add(5 * time.Minute)
		c.Now = func() time.Time { return refreshAt }
		rep, err = Sync(ctx, db, c, 100)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Refreshed != 4 || rep.Resolved != 3 || rep.Ambiguous != 1 || rep.RefreshMissing != 0 || rep.Skipped != 0 || rep.Updated != 4 {
			t.Errorf("refresh: %s", rep)
		}
		for _, w := range recordedMarkets {
			if w.skip != "" || w.id == "1460332" {
				continue
			}
			m := get(w.id)
			if m.Status != w.status || m.Resolution != w.resolution || m.Ambiguous != w.ambiguous || !m.ResolvedAt.Equal(rfc3339(t, w.resolved)) {
				t.Errorf("%s after refresh: %s %q ambiguous %v at %v; want as recorded: %s %q %v at %s",
					w.id, m.Status, m.Resolution, m.Ambiguous, m.ResolvedAt, w.status, w.resolution, w.ambiguous, w.resolved)
			}
		}
		// A resolved market keeps its history: the open twin's Gamma price
		// at the listing, the recorded final price at the refresh.
		pts, err := db.PriceHistory(ctx, get("1812085").ID, "Yes", time.Time{}, fixedNow.Add(time.Hour))
		if err != nil || len(pts) != 2 || pts[0].Price != 0.7 || pts[1].Price != 1 ||
			!pts[1].Time.Equal(refreshAt.Truncate(time.Second)) || pts[1].Source != arena.PriceGamma {
			t.Errorf("1812085 Yes history %+v %v, want Gamma 0.7 then 1", pts, err)
		}

		// A third sync an hour later re-reads only the ambiguous market 12
		// (closed, not resolved) and changes nothing but open prices.
		c.Now = func() time.Time { return fixedNow.Add(time.Hour) }
		before := r.Count("GET /markets/")
		rep, err = Sync(ctx, db, c, 100)
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Count("GET /markets/") - before; n != 1 || rep.Refreshed != 1 || rep.Resolved != 0 || rep.Inserted != 0 || rep.Updated != 0 {
			t.Errorf("third sync: %d re-reads, %s", n, rep)
		}
	})
}
