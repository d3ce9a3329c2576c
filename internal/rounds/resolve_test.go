package rounds_test

import (
	"context"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// The operator cannot publish a market's outcome while a round
// containing it can still be revealed; after the reveal deadline it can.
func TestResolveRefusedWhileRoundRevealable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet}
		r, ms := newRound(t, db, svc, "rv", 2)
		for _, at := range []time.Time{t0, r.CommitDeadline, r.RevealStart, r.RevealDeadline} {
			clk.Set(at)
			if _, err := svc.ResolveMarket(ctx, ms[0].ID, arena.Yes); arena.ErrorCode(err) != forecast.CodeMarketInOpenRound {
				t.Fatalf("resolve at %s: %v, want %s", at, err, forecast.CodeMarketInOpenRound)
			}
		}
		if m, _ := db.Market(ctx, ms[0].ID); m.Status == arena.StatusResolved {
			t.Fatal("refused resolution was stored")
		}
		clk.Set(r.RevealDeadline.Add(time.Second))
		if _, err := svc.ResolveMarket(ctx, ms[0].ID, arena.Yes); err != nil {
			t.Fatal(err)
		}
		if m, _ := db.Market(ctx, ms[0].ID); m.Status != arena.StatusResolved || m.Resolution != arena.Yes {
			t.Fatalf("market after resolve: %s %s", m.Status, m.Resolution)
		}
	})
}
