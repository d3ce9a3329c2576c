package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// testConcurrentBenchmarks: of many concurrent benchmark captures of one
// round, exactly one is stored and the others are told it is already
// recorded, while triggers of the same round run alongside; no capture
// overwrites another, and nothing deadlocks (one lock order: the round
// row, then its markets).
func testConcurrentBenchmarks(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ms := []*arena.Market{Binary("b0", 1), Binary("b1", 1)}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var rounds []*arena.Round
	for range 4 {
		r := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour),
			CreatedAt: t0, Markets: []arena.RoundMarket{{MarketID: ms[0].ID}, {MarketID: ms[1].ID}}}
		if err := db.CreateRound(ctx, r); err != nil {
			t.Fatal(err)
		}
		rounds = append(rounds, r)
	}
	const writers = 12
	won := make([][]int32, len(rounds)) // the bps each winning capture stored
	var mu sync.Mutex
	var wg sync.WaitGroup
	for ri, r := range rounds {
		for w := range writers {
			wg.Add(2)
			go func() {
				defer wg.Done()
				p := float64(1000+w) / 10000
				bm := []arena.RoundMarket{{Benchmark: &p, BenchmarkBps: int32(1000 + w), BenchmarkTime: t0.Add(time.Hour), BenchmarkSource: arena.PriceSim},
					{Benchmark: &p, BenchmarkBps: int32(1000 + w), BenchmarkTime: t0.Add(time.Hour), BenchmarkSource: arena.PriceSim}}
				err := db.SetBenchmarks(ctx, r.ID, bm, t0.Add(time.Hour))
				switch {
				case err == nil:
					mu.Lock()
					won[ri] = append(won[ri], int32(1000+w))
					mu.Unlock()
				case arena.ErrorKind(err) != arena.ECONFLICT:
					t.Errorf("round %d capture: %v", r.ID, err)
				}
			}()
			go func() {
				defer wg.Done()
				err := db.SaveRoundResult(ctx, r.ID, []int8{1, 0}, nil, nil, t0.Add(4*time.Hour))
				if err != nil && arena.ErrorCode(err) != arena.CodeAlreadyTriggered {
					t.Errorf("round %d trigger: %v", r.ID, err)
				}
			}()
		}
	}
	wg.Wait()
	for ri, r := range rounds {
		if len(won[ri]) != 1 {
			t.Fatalf("round %d: %d captures stored, want 1", r.ID, len(won[ri]))
		}
		got, err := db.Round(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range got.Markets {
			if m.BenchmarkBps != won[ri][0] {
				t.Errorf("round %d: stored benchmark %d, the winning capture wrote %d", r.ID, m.BenchmarkBps, won[ri][0])
			}
		}
	}
}
