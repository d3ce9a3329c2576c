package backtest_test

import (
	"context"
	"fmt"
	"log/slog"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// countingBacktests counts the reads of every backtest row.
type countingBacktests struct {
	*store.DB
	reads atomic.Int32
}

func (c *countingBacktests) BacktestForecasts(ctx context.Context) ([]arena.BacktestForecast, error) {
	c.reads.Add(1)
	return c.DB.BacktestForecasts(ctx)
}

// The backtest board is computed once per version of the backtest rows: a
// write to them recomputes it, a write to other data does not.
func TestBoardFollowsBacktestVersion(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		var ms []*arena.Market
		for i := range 6 {
			ms = append(ms, &arena.Market{Source: "test", SourceID: fmt.Sprintf("m%d", i), Kind: arena.KindMarket, Question: fmt.Sprintf("Will %d happen?", i),
				Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.5, arena.No: 0.5},
				CloseTime: at.Add(24 * time.Hour), Status: arena.StatusOpen})
		}
		if _, err := db.SaveMarkets(ctx, ms); err != nil {
			t.Fatal(err)
		}
		var rows []arena.BacktestForecast
		for i, m := range ms {
			b := 0.5
			rows = append(rows, arena.BacktestForecast{Agent: "a", MarketID: m.ID, Round: fmt.Sprint(i / 3), SourceID: m.SourceID,
				Category: "c", Forecast: 7000, Benchmark: &b, Outcome: int8(i % 2), CreatedAt: at})
		}
		if err := db.SaveBacktest(ctx, rows); err != nil {
			t.Fatal(err)
		}
		st := &countingBacktests{DB: db}
		boards := backtest.NewBoards(st, scoring.Method{}, slog.New(slog.DiscardHandler))
		t.Cleanup(boards.Close)
		agentA := func() scoring.Row {
			t.Helper()
			b, err := boards.Board(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range b.Rows {
				if r.Agent == "a" {
					return r
				}
			}
			t.Fatalf("agent a is not on the board %+v", b.Rows)
			return scoring.Row{}
		}
		first := agentA()
		agentA()
		if n := st.reads.Load(); n != 1 || first.N != 6 {
			t.Fatalf("%d reads of the rows for two boards, agent a %+v", n, first)
		}
		// A write elsewhere (a market's price) leaves the board as it is.
		ms[0].Prices = map[string]float64{arena.Yes: 0.6, arena.No: 0.4}
		if _, err := db.SaveMarkets(ctx, ms[:1]); err != nil {
			t.Fatal(err)
		}
		if a := agentA(); st.reads.Load() != 1 || a.Brier != first.Brier {
			t.Fatalf("after a market write: %d reads, agent a %+v", st.reads.Load(), a)
		}
		// A replaced forecast, saved with the same time stamp, is seen.
		rows[0].Forecast = 1000
		if err := db.SaveBacktest(ctx, rows[:1]); err != nil {
			t.Fatal(err)
		}
		if a := agentA(); st.reads.Load() != 2 || a.Brier == first.Brier {
			t.Fatalf("after a backtest write: %d reads, agent a %+v (was %+v)", st.reads.Load(), a, first)
		}
		// Closed, a read that needs a computation fails.
		boards.Close()
		if err := db.SaveBacktest(ctx, rows[1:2]); err != nil {
			t.Fatal(err)
		}
		if _, err := boards.Board(ctx); err == nil {
			t.Fatal("a closed board computed")
		}
	})
}

// Without human forecasts in the store there is no human board.
func TestHumanBoardWithoutHumans(t *testing.T) {
	boards := backtest.NewBoards(onlyBacktests{}, scoring.Method{}, nil)
	defer boards.Close()
	if boards.Humans() {
		t.Fatal("a store without human forecasts has a human board")
	}
	if _, err := boards.HumanBoard(context.Background()); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("human board: %v, want ENOTFOUND", err)
	}
}

// onlyBacktests keeps backtest forecasts alone.
type onlyBacktests struct{ arena.BacktestStore }
