package scoring_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/testscale"
	"github.com/forecast-arena/arena/stats"
)

// floodForecasts are the scored forecasts of a flood: 100 agents over 50
// rounds of 3 markets, then one round of 3 markets that agents one-shot
// agents answer (as a wave of new registrations would).
func floodForecasts(agents int) []arena.ScoredForecast {
	r := rand.New(rand.NewPCG(7, 7))
	var fs []arena.ScoredForecast
	market := int64(0)
	for round := uint64(1); round <= 51; round++ {
		var truth, bench []float64
		var outcomes []int8
		for range 3 {
			q := r.Float64()
			x := int8(0)
			if r.Float64() < q {
				x = 1
			}
			truth, outcomes, bench = append(truth, q), append(outcomes, x), append(bench, min(0.99, max(0.01, q+0.1*r.NormFloat64())))
		}
		n, name := 100, "h%03d"
		if round == 51 {
			n, name = agents, "flood%06d"
		}
		for a := range n {
			for j := range 3 {
				p := min(1, max(0, truth[j]+0.2*r.NormFloat64()))
				fs = append(fs, arena.ScoredForecast{RoundID: round, Agent: fmt.Sprintf(name, a), MarketID: market + int64(j),
					Forecast: float64(int(p*1e4)) / 1e4, Benchmark: &bench[j], Outcome: outcomes[j]})
			}
		}
		market += 3
	}
	return fs
}

// countdown is a context that ends at its n-th look (Err): it stops a
// computation from inside, at a point that depends on the work done, not
// on the machine's speed.
type countdown struct {
	context.Context
	left atomic.Int64
	once sync.Once
	done chan struct{}
}

func newCountdown(n int64) *countdown {
	c := &countdown{Context: context.Background(), done: make(chan struct{})}
	c.left.Store(n)
	return c
}

func (c *countdown) Err() error {
	if c.left.Add(-1) < 0 {
		c.once.Do(func() { close(c.done) })
		return context.Canceled
	}
	return nil
}

func (c *countdown) Done() <-chan struct{} { return c.done }

// An analysis of a flood stops where its context ends, in each of its
// parts, and returns the context's error: the forecasts' table, the
// agents' figures and block bootstraps, and the difficulty-adjusted
// fit's bootstrap. (At full size, 60,000 agents.)
func TestAnalysisStopsWithItsContext(t *testing.T) {
	fs := floodForecasts(testscale.Size(20_000, 60_000))
	m, quiet := scoring.DefaultMethod(), slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		looks int64
		part  string
	}{
		{1, "forecast: scoring table: "},
		{100, "forecast: analyze: score: analyze: "},
	} {
		a, err := scoring.AnalyzeForecasts(newCountdown(c.looks), fs, m, quiet)
		if a != nil || !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), c.part) {
			t.Fatalf("ended at look %d: analysis %v, error %v; want %scontext canceled", c.looks, a != nil, err, c.part)
		}
	}
	// The adjusted fit alone: its first looks are at the observations and
	// the point fit, the 50th in the bootstrap.
	tb, err := scoring.Table(context.Background(), fs)
	if err != nil {
		t.Fatal(err)
	}
	res, err := stats.Analyze(context.Background(), tb, stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	adj, _, err := scoring.Adjusted(newCountdown(50), tb, res, m, nil)
	if adj != nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "bootstrap") {
		t.Fatalf("adjusted fit ended at look 50: result %v, error %v; want the bootstrap's context canceled", adj != nil, err)
	}
}

// BenchmarkAnalyzeFlood is the leaderboard's analysis (the default
// method: 999 replicates of each bootstrap) of a flood of one-shot
// agents, 60,000 at full size (ARENA_TEST_FULL=1): 100 agents over 50
// rounds, then a round of 3 markets that every new agent answers
// (180,000 forecasts). It reports the replicates of the adjusted fit's
// bootstrap that its work cap let run, and the time over that of the
// same analysis without bootstraps (x_no_bootstrap), measured in the
// same run.
//
//	go test ./forecast/scoring -run '^$' -bench AnalyzeFlood -benchtime 1x
func BenchmarkAnalyzeFlood(b *testing.B) {
	agents := testscale.Size(20_000, 60_000)
	fs := floodForecasts(agents)
	quiet := slog.New(slog.DiscardHandler)
	none := scoring.DefaultMethod()
	none.Bootstrap = 0
	start := time.Now()
	if _, err := scoring.AnalyzeForecasts(b.Context(), fs, none, quiet); err != nil {
		b.Fatal(err)
	}
	bare := time.Since(start)
	var ran int
	b.ResetTimer()
	for b.Loop() {
		a, err := scoring.AnalyzeForecasts(b.Context(), fs, scoring.DefaultMethod(), quiet)
		if err != nil || a.Adjusted == nil {
			b.Fatal(err)
		}
		ran = a.Adjusted.Bootstrap
	}
	per := b.Elapsed() / time.Duration(b.N)
	b.ReportMetric(float64(agents), "agents")
	b.ReportMetric(float64(ran), "replicates")
	b.ReportMetric(per.Seconds(), "s/analysis")
	b.ReportMetric(float64(per)/float64(bare), "x_no_bootstrap")
}
