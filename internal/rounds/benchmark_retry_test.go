package rounds_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// A failing lookup for one market holds back only its round,
// and only until BenchmarkRetryFor after the commit deadline; other rounds
// are captured in the same pass; the trigger waits for the benchmarks; past
// the bound the failing market alone has no benchmark and Alpha is scored
// over the others.
func TestBenchmarkLookupErrorRetriedThenBounded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, Grace: time.Hour}
		cd := t0.Add(time.Hour)
		sched := forecast.Schedule{CommitDeadline: cd, RevealStart: cd.Add(10 * time.Minute), RevealDeadline: cd.Add(30 * time.Minute)}
		other, oms := newRoundAt(t, db, svc, "ok", 2, sched) // older: listed after a
		a, ams := newRoundAt(t, db, svc, "fail", 3, sched)   // newer: captured first
		delisted := errors.New("CLOB 404 for a delisted token")
		svc.Lookup = func(ctx context.Context, m *arena.Market, at time.Time) (arena.PricePoint, bool, error) {
			return arena.PricePoint{}, false, delisted
		}
		alice := agentKey("alice")
		preds := []uint16{9000, 1000, 5000}
		salt := commit(t, svc, clk, alice, a, preds)
		for _, m := range append(oms, ams[:2]...) {
			addPoints(t, db, m, arena.PricePoint{Time: cd, Price: 0.6, Source: arena.PriceCLOBMid})
		}

		clk.Set(cd.Add(10 * time.Minute))
		n, err := svc.CaptureBenchmarks(ctx)
		if n != 1 || !errors.Is(err, delisted) {
			t.Fatalf("capture: %d, %v; want the other round captured and the lookup error reported", n, err)
		}
		if r, _ := db.Round(ctx, other.ID); r.BenchmarkAt.IsZero() {
			t.Fatal("a lookup error in one round aborted the capture of another")
		}
		if r, _ := db.Round(ctx, a.ID); !r.BenchmarkAt.IsZero() {
			t.Fatal("round recorded while its lookup is still being retried")
		}

		clk.Set(a.RevealStart)
		reveal(t, svc, clk, alice, a, preds, salt)
		for i, res := range []string{arena.Yes, arena.No, arena.Yes} {
			if _, err := db.ResolveMarket(ctx, ams[i].ID, res, clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
		clk.Set(a.RevealDeadline.Add(time.Minute))
		if n, err := svc.TriggerDue(ctx); n != 0 || err != nil {
			t.Fatalf("trigger before the benchmarks: %d, %v; want it to wait", n, err)
		}
		if err := svc.Trigger(ctx, a.ID); arena.ErrorCode(err) != forecast.CodeTriggerNotAllowed {
			t.Fatalf("admin trigger before the benchmarks: %v", err)
		}

		clk.Set(cd.Add(rounds.BenchmarkRetryFor))
		if n, err := svc.TriggerDue(ctx); n != 1 || err != nil {
			t.Fatalf("trigger past the retry bound: %d, %v", n, err)
		}
		got, err := db.Round(ctx, a.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.BenchmarkAt.IsZero() || got.Markets[0].Benchmark == nil || got.Markets[1].Benchmark == nil || got.Markets[2].Benchmark != nil {
			t.Fatalf("benchmarks past the bound: %+v", got.Markets)
		}
		sc := scoreMap(t, db, a.ID)[alice.Address().Hex()]
		if sc.Alpha == nil || sc.Benchmarked != 2 {
			t.Fatalf("alice %+v: Alpha must be scored over the two benchmarked markets", sc)
		}
	})
}

// A replica that finds the benchmarks already recorded by another
// (SetBenchmarks: conflict) counts the round as done, not as an error.
func TestCaptureBenchmarksConflictIsDone(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet}
		r, _ := newRound(t, db, svc, "c", 2)
		clk.Set(r.CommitDeadline.Add(forecast.BenchmarkTolerance))
		stale, err := db.Rounds(ctx, arena.RoundFilter{}) // listed before the other replica wrote
		if err != nil {
			t.Fatal(err)
		}
		if n, err := svc.CaptureBenchmarks(ctx); n != 1 || err != nil {
			t.Fatalf("first replica: %d, %v", n, err)
		}
		other := &rounds.Service{Store: staleRounds{db, stale}, Now: clk.Now, Logger: quiet}
		if n, err := other.CaptureBenchmarks(ctx); n != 1 || err != nil {
			t.Fatalf("second replica: %d, %v; want the round counted as done", n, err)
		}
	})
}

type staleRounds struct {
	*store.DB
	rounds []*arena.Round
}

func (s staleRounds) Rounds(context.Context, arena.RoundFilter) ([]*arena.Round, error) {
	return s.rounds, nil
}

// The leaderboard's Alpha is computed from the benchmarks as scored
// (whole basis points), so it equals the mean of the per-round Alphas that
// /scores reports, even for benchmark prices that are not whole bps.
func TestLeaderboardAlphaMatchesRoundScores(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := &clock.Manual{}
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet}
		k := agentKey("erin")
		preds := [][]uint16{{7000, 2000}, {5000, 9000}, {9900, 100}}
		outcomes := [][]string{{arena.Yes, arena.No}, {arena.No, arena.Yes}, {arena.Yes, arena.No}}
		bench := []float64{0.412367, 0.555549} // 4124 and 5555 bps
		var sum float64
		for i := range preds {
			r := playScoredRound(t, db, svc, clk, k, fmt.Sprintf("m1-%d-", i), preds[i], bench, outcomes[i])
			scs, err := svc.Scores(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range scs {
				if s.Agent == k.Address().Hex() {
					if s.Alpha == nil {
						t.Fatalf("round %d: no alpha", i)
					}
					sum += *s.Alpha
				}
			}
		}
		board, _, err := svc.Leaderboard(ctx, rounds.Filter{})
		if err != nil {
			t.Fatal(err)
		}
		lb := board.Rows
		for _, row := range lb {
			if row.Agent == k.Address().Hex() {
				if row.Alpha == nil || math.Abs(*row.Alpha-sum/3) > 1e-12 {
					t.Fatalf("leaderboard alpha %v, mean of /scores alphas %v", deref(row.Alpha), sum/3)
				}
				return
			}
		}
		t.Fatalf("agent missing from the leaderboard %+v", lb)
	})
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
