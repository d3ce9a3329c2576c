package backtest_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/store"
)

// failingStore refuses every batch of backtest forecasts.
type failingStore struct{ *store.DB }

var errDiskFull = errors.New("disk full")

func (failingStore) SaveBacktest(context.Context, []arena.BacktestForecast) error { return errDiskFull }

// A backtest whose forecasts cannot be stored stops: the models are not
// called much past the failed write (at most the calls already under way),
// and the run fails with the store's error.
func TestRunnerStopsOnStoreError(t *testing.T) {
	ctx := context.Background()
	db, plan := importedPlan(t, 0)
	const batch = 512 // rows the writer gathers before its first write
	if len(plan.Rounds)*backtest.DefaultK < 2*batch {
		t.Skipf("%d rounds: too few forecasts for a write before the run's end", len(plan.Rounds))
	}
	srv := llmtest.New(t)
	var calls atomic.Int64
	srv.Handle("m", func(r llmtest.ChatRequest) llmtest.Reply {
		calls.Add(1)
		return halfReply(r)
	})
	reg, err := llm.ParseRegistry(strings.NewReader(fmt.Sprintf(`{"agents":[{"id":"m","provider":"local","model":"m","base_url":%q,"input_usd_per_mtok":0,"output_usd_per_mtok":0,"training_cutoff":"2000-01-01"}]}`, srv.BaseURL)))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	fc, _ := agent.NewForecasters(reg, llm.EnvLookup(nil), 0, llm.WithLogger(quiet))
	const workers = 3
	r := &backtest.Runner{Store: failingStore{db}, Agents: fc, Workers: workers, Logger: quiet}
	_, err = r.Run(ctx, plan)
	if !errors.Is(err, errDiskFull) || !strings.Contains(err.Error(), "store forecasts") {
		t.Fatalf("run over a failing store: %v", err)
	}
	// The first write comes after batch rows, that is batch/K rounds; then
	// at most the calls under way and those whose rows were queued.
	if most := int64(batch/backtest.DefaultK + 1 + 3*workers); calls.Load() > most {
		t.Errorf("%d model calls over %d rounds, want at most %d: the run went on spending after the store failed", calls.Load(), len(plan.Rounds), most)
	}
}
