package demo_test

import (
	"context"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

// While rounds are played the demo stores the simulator's 10-minute price
// grid; once every round is played, each settling step stores an open
// market's price in force at that step, as a sync every six hours would.
// A market open through both phases shows both spacings.
func TestSettlingStoresLivePrices(t *testing.T) {
	t.Parallel()
	res, _ := played(t)
	ctx := context.Background()
	rounds, err := res.DB.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		t.Fatal(err)
	}
	var lastReveal time.Time
	for _, r := range rounds {
		if r.RevealDeadline.After(lastReveal) {
			lastReveal = r.RevealDeadline
		}
	}
	// The rounds' last step is a minute after the last reveal deadline.
	played := lastReveal.Add(time.Minute)
	ms, err := res.DB.Markets(ctx, arena.MarketFilter{Source: arena.SourceSim, ClosesAfter: played.Add(2 * 24 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	var m *arena.Market
	for _, c := range ms {
		if c.OpenTime.Before(lastReveal.Add(-24 * time.Hour)) {
			m = c
			break
		}
	}
	if m == nil {
		t.Fatal("no market open through both phases")
	}
	pts, err := res.DB.PriceHistory(ctx, m.ID, arena.Yes, time.Time{}, m.CloseTime)
	if err != nil {
		t.Fatal(err)
	}
	var grid, settling int
	for i := 1; i < len(pts); i++ {
		prev, at := pts[i-1].Time, pts[i].Time
		switch gap := at.Sub(prev); {
		case !at.After(played):
			if gap == 10*time.Minute {
				grid++
			}
		case prev.After(played):
			if gap != 6*time.Hour {
				t.Fatalf("market %d: settling points %s and %s are %s apart, want 6h", m.ID, prev, at, gap)
			}
			settling++
		}
	}
	if grid == 0 || settling == 0 {
		t.Fatalf("market %d: %d grid steps while rounds were played, %d settling steps after: want both", m.ID, grid, settling)
	}
}
