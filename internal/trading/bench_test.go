package trading_test

import (
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/trading"
)

// BenchmarkDecisionRunConcurrency measures the wall time of one weekly
// decision run of 7 LLM agents against a local OpenAI-compatible server
// that answers every call after a fixed 25 ms: all 7 at once (one
// provider, limit 7) against one agent at a time (limit 1), in the same
// iterations. speedup = sequential / concurrent wall time; the ideal is 7.
func BenchmarkDecisionRunConcurrency(b *testing.B) {
	const agents, delay = 7, 25 * time.Millisecond
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(b.TempDir(), "bench.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var ms []*arena.Market
	for i := range 50 {
		ms = append(ms, mkBinary(fmt.Sprintf("b%02d", i), 0.2+float64(i)/100, float64(1000-i)))
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		b.Fatal(err)
	}
	srv := llmtest.New(b)
	var ids []string
	for i := range agents {
		id := fmt.Sprintf("model-%d", i)
		ids = append(ids, id)
		answer := fmt.Sprintf(`{"action":"BET","bets":[{"market_id":%d,"side":"YES","amount":100}],"reasoning":"bench"}`, ms[i].ID)
		srv.Handle(id, func(llmtest.ChatRequest) llmtest.Reply {
			return llmtest.Reply{Delay: delay, Content: answer, PromptTokens: 3000, OutputTokens: 60}
		})
	}
	reg, err := llm.ParseRegistry(strings.NewReader(registryJSON(srv.BaseURL, ids, func(string) string { return "10s" })))
	if err != nil {
		b.Fatal(err)
	}
	lu, _, err := agent.LLMLineup(reg, testEnv)
	if err != nil {
		b.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	f := &agent.Factory{Getenv: testEnv, Logger: quiet, LLMOptions: []llm.Option{llm.WithLogger(quiet)}}
	newEngine := func(limit int) *trading.Engine {
		return &trading.Engine{Store: db, Lineup: lu, ProviderLimit: limit, ModelTimeout: 10 * time.Second, Logger: quiet}
	}
	seq, conc := newEngine(1), newEngine(agents)
	w := week
	runOnce := func(e *trading.Engine) time.Duration {
		c, _, err := e.StartCohort(ctx, w)
		if err != nil {
			b.Fatal(err)
		}
		ds, _ := f.Deciders(c.Lineup)
		start := time.Now()
		rep, err := e.Run(ctx, c.ID, w.Add(5*time.Minute), ds)
		el := time.Since(start)
		if err != nil || rep.Count(trading.OutcomeDone) != agents {
			b.Fatalf("run: %v %+v", err, rep.Agents)
		}
		w = w.AddDate(0, 0, 7)
		return el
	}
	var tSeq, tConc time.Duration
	b.ResetTimer()
	for b.Loop() {
		tSeq += runOnce(seq)
		tConc += runOnce(conc)
	}
	n := float64(b.N)
	b.ReportMetric(float64(tSeq)/1e6/n, "seq-ms/run")
	b.ReportMetric(float64(tConc)/1e6/n, "conc-ms/run")
	b.ReportMetric(float64(tSeq)/float64(tConc), "speedup")
}
