package forecast_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/store"
	"github.com/forecast-arena/arena/store/storetest"
)

// H2 (SPEC F5): a failing lookup for one market holds back only its round,
// and only until BenchmarkRetryFor after the commit deadline; other rounds
// are captured in the same pass; the trigger waits for the benchmarks; past
// the bound the failing market alone has no benchmark and Alpha is scored
// over the others.
func TestBenchmarkLookupErrorRetriedThenBounded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := &clock{}
		clk.Set(t0)
		svc := &forecast.Service{Store: db, Now: clk.Now, Logger: quiet, Grace: time.Hour}
		cd := t0.Add(time.Hour)
		mkRound := func(prefix string, n int) (*arena.Round, []*arena.Market) {
			var specs []spec
			for i := 0; i < n; i++ {
				specs = append(specs, spec{id: fmt.Sprintf("%s%d", prefix, i), event: fmt.Sprintf("%s-ev%d", prefix, i), category: "c",
					volume: 100_000, closeIn: 5 * 24 * time.Hour, price: 0.5})
			}
			byID := saveMarkets(t, db, specs)
			ms := make([]*arena.Market, n)
			ids := make([]int64, n)
			for i, s := range specs {
				ms[i], ids[i] = byID[s.id], byID[s.id].ID
			}
			r, err := svc.CreateRound(ctx, forecast.CreateRoundRequest{MarketIDs: ids, CommitDeadline: cd,
				RevealStart: cd.Add(10 * time.Minute), RevealDeadline: cd.Add(30 * time.Minute)})
			if err != nil {
				t.Fatal(err)
			}
			return r, ms
		}
		other, oms := mkRound("ok", 2) // older: listed after a
		a, ams := mkRound("fail", 3)   // newer: captured first
		delisted := errors.New("CLOB 404 for a delisted token")
		svc.Lookup = func(ctx context.Context, m *arena.Market, at time.Time) (float64, time.Time, bool, error) {
			return 0, time.Time{}, false, delisted
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
			if err := db.ResolveMarket(ctx, ams[i].ID, res, clk.Now()); err != nil {
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

		clk.Set(cd.Add(forecast.BenchmarkRetryFor))
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
