package oracle

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/shareddata"
)

// BenchmarkPanelForecastBench runs every resolved ForecastBench market
// question past three resolvers whose endpoint takes 50 ms per call, with
// 16 workers, and reports wall time over the ideal (successful calls ×
// latency / workers): the scheduler's overhead, 1 being perfect. The
// "durable" variant also writes every call to the on-disk cache.
func BenchmarkPanelForecastBench(b *testing.B) {
	qf, _ := filepath.Glob(filepath.Join(shareddata.Path(b, "forecastbench", "question_sets"), "*.json"))
	rf, _ := filepath.Glob(filepath.Join(shareddata.Path(b, "forecastbench", "resolution_sets"), "*.json"))
	batch, err := forecastbench.Load(forecastbench.Files{Questions: qf, Resolutions: rf}, time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC))
	if err != nil {
		b.Fatal(err)
	}
	eq := FromMarkets(batch.Markets)
	qs := make([]Question, len(eq))
	for i, q := range eq {
		qs[i] = q.Question
	}
	const latency = 50 * time.Millisecond
	const workers = 16
	for _, durable := range []bool{false, true} {
		name := "memory"
		if durable {
			name = "durable"
		}
		b.Run(name, func(b *testing.B) {
			srv := llmtest.New(b)
			agents := []string{"alpha", "beta", "gamma"}
			for _, a := range agents {
				srv.Handle(a, func(llmtest.ChatRequest) llmtest.Reply {
					r := llmtest.OK(`{"decision":"YES","confidence":0.9,"reasoning":"r"}`, 500, 20)
					r.Delay = latency
					return r
				})
			}
			var ratio float64
			for b.Loop() {
				dir := ""
				if durable {
					dir = b.TempDir()
				}
				p := testPanel(b, srv, agents, dir, false)
				p.Workers = workers
				start := time.Now()
				res := p.Run(context.Background(), qs)
				wall := time.Since(start)
				ok := 0
				for _, r := range res {
					for _, v := range r.Round1 {
						if v.Answered() {
							ok++
						}
					}
				}
				if ok != 3*len(qs) {
					b.Fatalf("%d successful calls, want %d", ok, 3*len(qs))
				}
				ideal := time.Duration(ok) * latency / workers
				ratio = wall.Seconds() / ideal.Seconds()
			}
			b.ReportMetric(ratio, "wall/ideal")
			b.ReportMetric(float64(3*len(qs)), "calls")
		})
	}
}
