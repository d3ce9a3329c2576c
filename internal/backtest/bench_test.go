package backtest_test

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/internal/store"
)

// BenchmarkBacktest runs 7 scripted agents over every round of the
// published ForecastBench sets against a test server that answers each
// call after a fixed latency, and reports the wall time per run against
// the ideal calls × latency / workers (wall/ideal; the goal is ≤ 1.3).
func BenchmarkBacktest(b *testing.B) {
	const workers = 16
	qs, _ := filepath.Glob(filepath.Join(shareddata.Path(b, "forecastbench", "question_sets"), "*.json"))
	rs, _ := filepath.Glob(filepath.Join(shareddata.Path(b, "forecastbench", "resolution_sets"), "*.json"))
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "a.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	loaded, err := forecastbench.Load(forecastbench.Files{Questions: qs, Resolutions: rs}, time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC))
	if err != nil {
		b.Fatal(err)
	}
	var markets []*arena.Market // the market questions are all a backtest reads
	for _, m := range loaded.Markets {
		if m.Kind == arena.KindMarket {
			markets = append(markets, m)
		}
	}
	if _, err := db.SaveMarkets(ctx, markets); err != nil {
		b.Fatal(err)
	}
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench, Kind: arena.KindMarket})
	if err != nil {
		b.Fatal(err)
	}
	plan, err := backtest.Cut(ms, backtest.DefaultK, time.Time{}, time.Time{})
	if err != nil {
		b.Fatal(err)
	}
	for _, latency := range []time.Duration{20 * time.Millisecond, 100 * time.Millisecond} {
		b.Run(fmt.Sprintf("latency=%v", latency), func(b *testing.B) { benchBacktest(b, db, plan, latency, workers) })
	}
}

func benchBacktest(b *testing.B, db *store.DB, plan *backtest.Plan, latency time.Duration, workers int) {
	ctx := context.Background()
	srv := llmtest.New(b)
	var entries []string
	for i := 0; i < 7; i++ {
		id := fmt.Sprintf("a%d", i)
		srv.Handle(id, func(llmtest.ChatRequest) llmtest.Reply {
			return llmtest.Reply{Delay: latency, PromptTokens: 100, OutputTokens: 10, ToolCalls: []llmtest.ToolCall{{Name: agent.ToolSubmit,
				Arguments: `{"predictions":[5000,5000,5000,5000,5000,5000,5000]}`}}}
		})
		entries = append(entries, fmt.Sprintf(`{"id":%q,"provider":"local","model":%q,"base_url":%q,"input_usd_per_mtok":1,"output_usd_per_mtok":1,"training_cutoff":"2000-01-01"}`, id, id, srv.BaseURL))
	}
	reg, err := llm.ParseRegistry(strings.NewReader(`{"agents":[` + strings.Join(entries, ",") + `]}`))
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	var wall time.Duration
	calls := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		fc, _ := agent.NewForecasters(reg, llm.EnvLookup(nil), 0, llm.WithLogger(quiet))
		r := &backtest.Runner{Store: db, Agents: fc, Workers: workers, Logger: quiet}
		start := time.Now()
		rep, err := r.Run(ctx, plan)
		wall += time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		calls += int(rep.Cost.Calls)
		if rep.Cost.Calls != int64(7*len(plan.Rounds)) {
			b.Fatalf("%d calls for %d rounds", rep.Cost.Calls, len(plan.Rounds))
		}
	}
	ideal := time.Duration(calls) * latency / time.Duration(workers)
	b.ReportMetric(float64(calls)/b.Elapsed().Seconds(), "calls/s")
	b.ReportMetric(wall.Seconds()/ideal.Seconds(), "wall/ideal")
	b.ReportMetric(float64(len(plan.Rounds)), "rounds")
}
