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

// A backtest reports its progress over the (agent, round) forecasts it
// will make, counted before the first: rounds the contamination guard
// withholds from an agent are not among them.
func TestRunnerProgress(t *testing.T) {
	ctx := context.Background()
	db, plan := importedPlan(t, 3)
	srv := llmtest.New(t)
	var entries []string
	for id, cutoff := range map[string]string{"early": "2000-01-01", "late": plan.Rounds[len(plan.Rounds)/2].Due.Format(time.DateOnly)} {
		srv.Handle(id, halfReply)
		entries = append(entries, fmt.Sprintf(`{"id":%q,"provider":"local","model":%q,"base_url":%q,"input_usd_per_mtok":0,"output_usd_per_mtok":0,"training_cutoff":%q}`,
			id, id, srv.BaseURL, cutoff))
	}
	reg, err := llm.ParseRegistry(strings.NewReader(`{"agents":[` + strings.Join(entries, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.DiscardHandler)
	fc, _ := agent.NewForecasters(reg, llm.EnvLookup(nil), 0, llm.WithLogger(quiet))
	var got [][2]int
	r := &backtest.Runner{Store: db, Agents: fc, Workers: 3, Logger: quiet, Progress: func(done, total int) { got = append(got, [2]int{done, total}) }}
	rep, err := r.Run(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	jobs := 0
	for _, a := range rep.Agents {
		jobs += a.Forecasts/backtest.DefaultK + a.Failures
		if a.Forecasts%backtest.DefaultK != 0 {
			t.Fatalf("%s: %d forecasts, not whole rounds of %d", a.Agent, a.Forecasts, backtest.DefaultK)
		}
	}
	if jobs == 0 || jobs == 2*len(plan.Rounds) || len(got) != jobs+1 {
		t.Fatalf("%d rounds, %d (agent, round) forecasts made, %d progress reports: %v", len(plan.Rounds), jobs, len(got), got)
	}
	for i, g := range got {
		if g != [2]int{i, jobs} {
			t.Fatalf("report %d is %v, want [%d %d]: %v", i, g, i, jobs, got)
		}
	}
}

// importedPlan imports the published ForecastBench question sets (the
// first n, every one when n ≤ 0) with their resolutions into a new SQLite
// store, and cuts the backtest plan over its market questions.
func importedPlan(t *testing.T, n int) (*store.DB, *backtest.Plan) {
	t.Helper()
	qs, _ := filepath.Glob(filepath.Join(shareddata.Path(t, "forecastbench", "question_sets"), "*.json"))
	rs, _ := filepath.Glob(filepath.Join(shareddata.Path(t, "forecastbench", "resolution_sets"), "*.json"))
	if n > 0 {
		qs = qs[:n]
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := forecastbench.Import(ctx, db, forecastbench.Files{Questions: qs, Resolutions: rs}, time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC)); err != nil {
		t.Fatal(err)
	}
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench, Kind: arena.KindMarket})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := backtest.Cut(ms, backtest.DefaultK, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	return db, plan
}

// halfReply answers a forecasting call with 0.5 for each of its round's
// questions.
func halfReply(llmtest.ChatRequest) llmtest.Reply {
	return llmtest.Reply{PromptTokens: 10, OutputTokens: 10, ToolCalls: []llmtest.ToolCall{{Name: agent.ToolSubmit,
		Arguments: fmt.Sprintf(`{"predictions":[%s]}`, strings.TrimSuffix(strings.Repeat("5000,", backtest.DefaultK), ","))}}}
}
