package kalshi

import (
	"context"
	"log/slog"
	"math"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/kalshi/kalshitest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/venue"
	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

var quiet = slog.New(slog.DiscardHandler)

// startClient returns a client of the local server with quick retries,
// on a clock fixed at decodeNow.
func startClient(t *testing.T, s *kalshitest.Server) *Client {
	t.Helper()
	c := NewClient(s.URL)
	venuetest.Local(&c.Client, decodeNow)
	return c
}

// The recordings and the documented bodies go through the sync `arena
// sync --source kalshi` and `arena serve` run, over HTTP, into a real
// store (SQLite, and PostgreSQL when ARENA_TEST_POSTGRES_URL is set): a
// first sync lists every market while it trades (the closed and settled
// ones as their open twins), a second sees those drop out of the
// listings, re-reads them with GET /markets/{ticker} and records how
// they closed or settled.
func TestSyncRecorded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		r := kalshitest.NewReplay(t, payloads(t))
		c := startClient(t, r.Server)
		get := func(id string) *arena.Market {
			t.Helper()
			m, err := db.MarketBySource(ctx, arena.SourceKalshi, id)
			if err != nil {
				t.Fatalf("market %s: %v", id, err)
			}
			return m
		}

		// Listing: 15 bare objects on /markets (the MLB market, the BTC
		// ladder, 5 parlays, 6 documented), 3 in /events.
		rep, err := venue.Sync(ctx, db, c, 100, quiet)
		if err != nil {
			t.Fatal(err)
		}
		var listed []recordedWant
		for _, w := range recordedMarkets {
			if w.skip == "" && w.volume > 0 {
				listed = append(listed, w)
			}
		}
		if rep.Fetched != len(recordedMarkets) || rep.Skipped != 5 || rep.SkipReasons[venue.SkipParlay] != 5 || rep.Ineligible != 3 ||
			rep.Duplicates != 0 || rep.Kept != len(listed) || rep.Inserted != len(listed) {
			t.Fatalf("listing: %s; want %d kept", rep, len(listed))
		}
		// Every kept market trades and is priced; the void twin by its
		// last trade (0.54), the others by the book or the last trade.
		if rep.Priced != len(listed) || rep.Unpriced != 0 {
			t.Errorf("listing prices: %s", rep)
		}
		for _, w := range listed {
			if m := get(w.ticker); m.Status != arena.StatusOpen || m.Resolution != "" || m.Volume != w.volume || !m.CloseTime.Equal(rfc3339(t, w.close)) {
				t.Errorf("%s after listing: %s %q volume %v close %v", w.ticker, m.Status, m.Resolution, m.Volume, m.CloseTime)
			}
		}
		if m := get("KXMLBGAME-26AUG092020HOUSD-SD"); m.Prices[arena.Yes] != 0.535 || m.URL != "https://kalshi.com/markets/kxmlbgame-26aug092020housd-sd" {
			t.Errorf("MLB market: prices %v url %q", m.Prices, m.URL)
		}
		pts, err := db.PriceHistory(ctx, get("POWER-28-DH-DS-DP").ID, arena.Yes, time.Time{}, decodeNow.Add(time.Hour))
		if err != nil || len(pts) != 2 || pts[0].Source != arena.PriceBookMid || pts[0].Price != 0.495 || pts[1].Source != arena.PriceLastTrade || pts[1].Price != 0.5 {
			t.Errorf("POWER-28 history %+v %v, want the book's midpoint 0.495 and the last trade 0.5", pts, err)
		}

		// Refresh, an hour later: the markets recorded closed or settled
		// are back as recorded.
		r.RefreshPhase(t)
		later := decodeNow.Add(time.Hour)
		c.Now = func() time.Time { return later }
		rep, err = venue.Sync(ctx, db, c, 100, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Refreshed != 6 || rep.Resolved != 4 || rep.Ambiguous != 1 || rep.Closed != 1 || rep.RefreshMissing != 0 || rep.Skipped != 5 {
			t.Errorf("refresh: %s", rep)
		}
		for _, w := range listed {
			m := get(w.ticker)
			if m.Status != w.status || m.Resolution != w.resolution || m.Ambiguous != w.ambiguous || !m.ResolvedAt.Equal(rfc3339(t, w.resolved)) {
				t.Errorf("%s after refresh: %s %q ambiguous %v at %v; want %s %q %v at %s",
					w.ticker, m.Status, m.Resolution, m.Ambiguous, m.ResolvedAt, w.status, w.resolution, w.ambiguous, w.resolved)
			}
			if yes, ok := m.Prices[arena.Yes]; w.resolution != "" && (math.IsNaN(w.yes) == ok || ok && yes != w.yes) {
				t.Errorf("%s settled at %v, want %v", w.ticker, m.Prices, w.yes)
			}
		}
		// The nested Taiwan market, re-read bare, keeps its event.
		if m := get("KXTAIWANLVL4-26JUL01"); m.EventID != "KXTAIWANLVL4" {
			t.Errorf("Taiwan event %q", m.EventID)
		}
		// A settled market's value is its settlement price.
		pts, err = db.PriceHistory(ctx, get("KXDOCMLBGAME-26AUG102020HOUSD-SD").ID, arena.Yes, time.Time{}, rfc3339(t, "2100-01-01T00:00:00Z"))
		if err != nil || len(pts) != 2 || pts[1].Source != arena.PriceSettlement || pts[1].Price != 0.54 || !pts[1].Time.Equal(rfc3339(t, "2026-08-14T01:00:00Z")) {
			t.Errorf("scalar settlement history %+v %v", pts, err)
		}

		// A third sync re-reads only the two closed markets and changes
		// nothing.
		before := r.Count("GET /markets/")
		rep, err = venue.Sync(ctx, db, c, 100, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if n := r.Count("GET /markets/") - before; n != 2 || rep.Refreshed != 2 || rep.Inserted != 0 || rep.Updated != 0 {
			t.Errorf("third sync: %d re-reads, %s", n, rep)
		}
	})
}
