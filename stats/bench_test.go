package stats_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/forecast-arena/arena/stats"
)

func synth(n int, seed uint64) (p, b, x []float64) {
	r := rand.New(rand.NewPCG(seed, seed))
	p, b, x = make([]float64, n), make([]float64, n), make([]float64, n)
	for i := range p {
		q := r.Float64()
		p[i] = min(max(q+r.NormFloat64()*0.1, 0), 1)
		b[i] = min(max(q+r.NormFloat64()*0.1, 0), 1)
		if r.Float64() < q {
			x[i] = 1
		}
	}
	return p, b, x
}

// BenchmarkRoundKernel is the per-round Brier/Alpha kernel of F6 on rounds
// of 7 markets, one core; reports forecasts per second.
func BenchmarkRoundKernel(b *testing.B) {
	const n = 7 * 1 << 14
	p, bm, x := synth(n, 1)
	var sink float64
	b.ResetTimer()
	for b.Loop() {
		for lo := 0; lo < n; lo += 7 {
			br, _, a := stats.RoundBrierAlpha(p[lo:lo+7], bm[lo:lo+7], x[lo:lo+7])
			sink += br + a
		}
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "forecasts/s")
	_ = sink
}

// BenchmarkMurphyCORP1M is S2 + S3 on 1,000,000 predictions.
func BenchmarkMurphyCORP1M(b *testing.B) {
	const n = 1_000_000
	p, _, x := synth(n, 2)
	b.ResetTimer()
	for b.Loop() {
		m := stats.Decompose(p, x, 10)
		c := stats.DecomposeCORP(p, x)
		if m.N != n || c.Score <= 0 {
			b.Fatal("bad result")
		}
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "predictions/s")
}

// BenchmarkMurphy1M and BenchmarkCORP1M split the figure above.
func BenchmarkMurphy1M(b *testing.B) {
	p, _, x := synth(1_000_000, 2)
	for b.Loop() {
		stats.Decompose(p, x, 10)
	}
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "predictions/s")
}

func BenchmarkCORP1M(b *testing.B) {
	p, _, x := synth(1_000_000, 2)
	for b.Loop() {
		stats.DecomposeCORP(p, x)
	}
	b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "predictions/s")
}

// BenchmarkAnalyze1M is Analyze on 10 agents × 100,000 predictions in
// rounds of 7 (the table `arena score` builds from its 1M-row benchmark).
func BenchmarkAnalyze1M(b *testing.B) {
	const agents, markets = 10, 100_000
	p, bm, x := synth(markets*agents, 3)
	t := stats.NewTable(markets * agents)
	for a := range agents {
		t.Agents.ID(fmt.Sprintf("agent-%02d", a))
	}
	for m := range markets {
		r := t.Rounds.ID(fmt.Sprint(m / 7))
		mk := t.Markets.ID(fmt.Sprint(m))
		ev := t.Events.ID(fmt.Sprint(m / 3))
		c := t.Categories.ID(fmt.Sprint(m % 5))
		for a := range agents {
			i := m*agents + a
			t.Append(int32(a), r, mk, c, ev, p[i], bm[m*agents], true, x[m*agents], i+2)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		res, err := stats.Analyze(context.Background(), t, stats.Options{})
		if err != nil || len(res) != agents+1 {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)*float64(t.Len())/b.Elapsed().Seconds(), "rows/s")
}
