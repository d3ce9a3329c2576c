package stats_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena/stats"
)

// Balanced design: every agent answers every question, so difficulty
// adjustment changes nothing and the adjusted score is the raw Brier.
func TestAdjustedBalanced(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	var obs []stats.FEObs
	for q := range 40 {
		for a := range 4 {
			obs = append(obs, stats.FEObs{Agent: fmt.Sprint("a", a), Question: fmt.Sprint(q), Stratum: fmt.Sprint(q % 4), Brier: r.Float64() * 0.5})
		}
	}
	res, err := stats.AdjustedLeaderboard(context.Background(), obs, stats.FEOptions{Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res.Agents {
		near(t, a.Agent, a.Adjusted, a.Brier, 1e-12)
		if a.N != 40 {
			t.Errorf("%s n %d", a.Agent, a.N)
		}
	}
}

// Noise-free additive data on an unbalanced design: the fit recovers the
// agents' effects exactly, and a constant 0.5 forecaster (b = 0.25 on every
// question) outside the estimation set scores exactly 0.25 (S9 rescaling).
func TestAdjustedRecoversEffects(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 2))
	alpha := []float64{0.10, 0.14, 0.18, 0.22}
	nq := 200
	gamma := make([]float64, nq)
	for q := range gamma {
		gamma[q] = (r.Float64() - 0.5) * 0.15
	}
	var obs []stats.FEObs
	for q := range nq {
		for a, al := range alpha {
			// Weak agents answer the hard questions more often: raw Brier
			// is confounded with difficulty.
			if r.Float64() < 0.3+0.4*float64(a)/3*(0.5+gamma[q]*3) || (a == 0 && q%3 == 0) {
				obs = append(obs, stats.FEObs{Agent: fmt.Sprint("a", a), Question: fmt.Sprint(q), Stratum: "s", Brier: al + gamma[q]})
			}
		}
		obs = append(obs, stats.FEObs{Agent: "half", Question: fmt.Sprint(q), Stratum: "s", Brier: 0.25})
	}
	res, err := stats.AdjustedLeaderboard(context.Background(), obs, stats.FEOptions{Estimation: []string{"a0", "a1", "a2", "a3"}, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]stats.FEAgent{}
	for _, a := range res.Agents {
		by[a.Agent] = a
	}
	near(t, "half", by["half"].Adjusted, 0.25, 1e-12)
	for a := 1; a < len(alpha); a++ {
		got := by[fmt.Sprint("a", a)].Adjusted - by["a0"].Adjusted
		near(t, fmt.Sprint("effect a", a), got, alpha[a]-alpha[0], 1e-9)
	}
	if res.Agents[0].Agent != "a0" || res.Iterations < 2 {
		t.Errorf("order %v after %d iterations", res.Agents, res.Iterations)
	}
	// The estimation set: an outlier outside it does not move the others.
	withOutlier := append(append([]stats.FEObs(nil), obs...), stats.FEObs{Agent: "wild", Question: "0", Stratum: "s", Brier: 1})
	res2, err := stats.AdjustedLeaderboard(context.Background(), withOutlier, stats.FEOptions{Estimation: []string{"a0", "a1", "a2", "a3"}, Bootstrap: -1})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range res2.Agents {
		if b, ok := by[a.Agent]; ok && a.Adjusted != b.Adjusted {
			t.Errorf("%s moved from %v to %v", a.Agent, b.Adjusted, a.Adjusted)
		}
	}
}

func TestAdjustedBootstrap(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	skill := map[string]float64{"good": 0.12, "mid1": 0.2, "mid2": 0.205, "bad": 0.3}
	var obs []stats.FEObs
	for q := range 300 {
		g := r.NormFloat64() * 0.05
		for _, name := range slices.Sorted(maps.Keys(skill)) { // map order would make the data differ run to run
			s := skill[name]
			if r.Float64() < 0.8 {
				obs = append(obs, stats.FEObs{Agent: name, Question: fmt.Sprint(q), Stratum: fmt.Sprint("round", q/30),
					Brier: min(max(s+g+r.NormFloat64()*0.05, 0), 1)})
			}
		}
	}
	opt := stats.FEOptions{Bootstrap: 499, Seed: 7}
	a, err := stats.AdjustedLeaderboard(context.Background(), obs, opt)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := stats.AdjustedLeaderboard(context.Background(), obs, opt)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("same seed, different result")
	}
	if a.Agents[0].Agent != "good" || a.Agents[0].Tie != 1 || a.Agents[1].Tie != 2 || a.Agents[2].Tie != 2 || a.Agents[3].Tie != 3 {
		t.Errorf("ranks/ties: %+v", a.Agents)
	}
	if p := a.Agents[0].PRank1.V; p < 0.99 {
		t.Errorf("P(rank 1) of the best = %v", p)
	}
	var sum float64
	for _, ag := range a.Agents {
		sum += ag.PRank1.V
		if !(ag.CILo.V <= ag.Adjusted && ag.Adjusted <= ag.CIHi.V) {
			t.Errorf("%s: CI [%v, %v] excludes %v", ag.Agent, ag.CILo.V, ag.CIHi.V, ag.Adjusted)
		}
	}
	near(t, "ΣP(rank 1)", sum, 1, 1e-12)
	p := map[string]float64{}
	for _, pr := range a.Pairs {
		p[pr.A+">"+pr.B] = pr.P
	}
	if len(a.Pairs) != 12 || p["good>bad"] > 0.01 || p["bad>good"] < 0.99 || p["mid1>mid2"] < 0.01 {
		t.Errorf("pairs: %v", p)
	}
	// PairsFor keeps the listed agents' pairs, same figures, and nothing else.
	only := opt
	only.PairsFor = []string{"mid1"}
	c, err := stats.AdjustedLeaderboard(context.Background(), obs, only)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Pairs) != 3 || !reflect.DeepEqual(c.Agents, a.Agents) {
		t.Fatalf("PairsFor mid1: %d pairs, agents equal %v", len(c.Pairs), reflect.DeepEqual(c.Agents, a.Agents))
	}
	for _, pr := range c.Pairs {
		if pr.A != "mid1" || pr.P != p[pr.A+">"+pr.B] {
			t.Errorf("PairsFor mid1: %+v, all-pairs P %v", pr, p[pr.A+">"+pr.B])
		}
	}
	if _, err := stats.AdjustedLeaderboard(context.Background(), nil, opt); err == nil {
		t.Error("no observations accepted")
	}
	if _, err := stats.AdjustedLeaderboard(context.Background(), []stats.FEObs{{Agent: "a", Question: "q", Brier: 2}}, opt); err == nil {
		t.Error("Brier 2 accepted")
	}
	if _, err := stats.AdjustedLeaderboard(context.Background(), []stats.FEObs{{Agent: "a", Question: "q"}, {Agent: "a", Question: "q"}}, opt); err == nil {
		t.Error("duplicate accepted")
	}
}

// A work cap stops the bootstrap after the replicate that spends it: the
// figures are those of a bootstrap of that many replicates, and the
// result says it was capped.
func TestAdjustedBootstrapCapped(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	var obs []stats.FEObs
	for q := range 200 {
		for a := range 30 {
			if r.IntN(3) > 0 {
				obs = append(obs, stats.FEObs{Agent: fmt.Sprint("a", a), Question: fmt.Sprint(q), Stratum: fmt.Sprint(q / 20),
					Brier: min(1, max(0, 0.1+0.01*float64(a)+0.1*r.NormFloat64()))})
			}
		}
	}
	ctx := context.Background()
	full, err := stats.AdjustedLeaderboard(ctx, obs, stats.FEOptions{Bootstrap: 499, Seed: 2, PairsWithBest: true})
	if err != nil || full.Capped || full.Bootstrap != 499 {
		t.Fatalf("uncapped: %v, capped %v, %d replicates", err, full.Capped, full.Bootstrap)
	}
	capped, err := stats.AdjustedLeaderboard(ctx, obs, stats.FEOptions{Bootstrap: 499, Seed: 2, PairsWithBest: true, MaxWork: 5_000_000})
	if err != nil || !capped.Capped || capped.Bootstrap < 2 || capped.Bootstrap >= 499 {
		t.Fatalf("capped: %v, capped %v, %d replicates", err, capped.Capped, capped.Bootstrap)
	}
	same, err := stats.AdjustedLeaderboard(ctx, obs, stats.FEOptions{Bootstrap: capped.Bootstrap, Seed: 2, PairsWithBest: true})
	if err != nil {
		t.Fatal(err)
	}
	same.Capped = true
	if !reflect.DeepEqual(capped, same) {
		t.Errorf("a bootstrap capped at %d replicates differs from one of %d", capped.Bootstrap, same.Bootstrap)
	}
	if reflect.DeepEqual(capped.Agents, full.Agents) {
		t.Error("capping changed no figure")
	}
}

// A context that has ended stops every long computation at once, with its
// error.
func TestEndedContextStops(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	obs := []stats.FEObs{{Agent: "a", Question: "q", Stratum: "s", Brier: 0.1}, {Agent: "b", Question: "q", Stratum: "s", Brier: 0.2}}
	if _, err := stats.AdjustedLeaderboard(ctx, obs, stats.FEOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("AdjustedLeaderboard: %v", err)
	}
	tab, _ := stats.FromRows([]stats.Row{{Agent: "a", Round: "1", Market: "m", Forecast: 0.5, Outcome: 1}})
	if _, err := stats.Analyze(ctx, tab, stats.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("Analyze: %v", err)
	}
	items := []stats.BoardItem{{Forecaster: "a", Item: "q", Kind: stats.KindMarket, Resolved: true, Forecast: 0.5, Outcome: 1}}
	if _, err := stats.Board(ctx, items, stats.BoardOptions{Bootstrap: 99}); !errors.Is(err, context.Canceled) {
		t.Errorf("Board: %v", err)
	}
	if _, err := stats.ClusterBootstrapCI(ctx, []float64{1, 2}, []float64{1, 1}, []int32{0, 1}, 2, 99, 1, 0.95); !errors.Is(err, context.Canceled) {
		t.Errorf("ClusterBootstrapCI: %v", err)
	}
}

// BenchmarkAdjustedLeaderboard: the difficulty-adjusted leaderboard with
// 199 bootstrap replicates over 30 questions, computing only the leader's
// paired tests (as the server does), reported with the ratio to computing
// every ordered pair in the same run (x_all_pairs; the all-pairs run is
// skipped at 10,000 agents, where it holds 10⁸ pairs).
func BenchmarkAdjustedLeaderboard(b *testing.B) {
	for _, n := range []int{100, 1000, 10_000} {
		r := rand.New(rand.NewPCG(uint64(n), 1))
		var obs []stats.FEObs
		for q := range 30 {
			for a := range n {
				obs = append(obs, stats.FEObs{Agent: fmt.Sprint("agent", a), Question: fmt.Sprint(q), Stratum: fmt.Sprint(q / 10), Brier: r.Float64() * 0.5})
			}
		}
		run := func(opt stats.FEOptions) {
			if _, err := stats.AdjustedLeaderboard(context.Background(), obs, opt); err != nil {
				b.Fatal(err)
			}
		}
		leader := stats.FEOptions{Bootstrap: 199, Seed: 1, PairsFor: []string{"agent0"}}
		b.Run(fmt.Sprintf("agents=%d", n), func(b *testing.B) {
			for b.Loop() {
				run(leader)
			}
			per := b.Elapsed().Seconds() / float64(b.N)
			b.ReportMetric(float64(n)/per, "agents/s")
			if n <= 1000 {
				all := leader
				all.PairsFor = nil
				start := time.Now()
				run(all)
				b.ReportMetric(time.Since(start).Seconds()/per, "x_all_pairs")
			}
		})
	}
}
