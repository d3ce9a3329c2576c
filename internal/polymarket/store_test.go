package polymarket

import (
	"context"
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
