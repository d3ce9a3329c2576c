package stats_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/forecast-arena/arena/stats"
)

func TestBrierIndex(t *testing.T) {
	for _, c := range []struct {
		name     string
		b, index float64
	}{
		{"perfect", 0, 100},
		{"always 0.5", 0.25, 50},
		{"always certain and wrong", 1, 0},
		{"0.04: √ is 0.2", 0.04, 80},
		{"0.09: √ is 0.3", 0.09, 70},
		{"0.01 below zero (adjusted): −√|b| is −0.1", -0.01, 110},
	} {
		t.Run(c.name, func(t *testing.T) {
			if got := stats.BrierIndex(c.b); math.Abs(got-c.index) > 1e-12 {
				t.Errorf("BrierIndex(%v) = %v, want %v", c.b, got, c.index)
			}
		})
	}
	// Decreasing in b across zero, so ranking by the index ranks by b.
	for b := -0.2; b < 1; b += 0.01 {
		if stats.BrierIndex(b) <= stats.BrierIndex(b+0.01) {
			t.Fatalf("BrierIndex not decreasing at %v", b)
		}
	}
}

func TestBrierSkill(t *testing.T) {
	for _, c := range []struct{ b, bss float64 }{{0.25, 0}, {0, 1}, {0.2, 0.2}, {0.5, -1}, {0.1875, 0.25}} {
		if got := stats.BrierSkill(c.b); math.Abs(got-c.bss) > 1e-12 {
			t.Errorf("BrierSkill(%v) = %v, want %v", c.b, got, c.bss)
		}
	}
}

// Hand-computed: question q1 answered by a (0.04), b (0.16), c (0.36);
// q2 by a (0.25) and b (0.09); q3 by c alone.
//
//	a: q1 0.04 − (0.16+0.36)/2 = −0.22, q2 0.25 − 0.09 = 0.16 → mean −0.03
//	b: q1 0.16 − (0.04+0.36)/2 = −0.04, q2 0.09 − 0.25 = −0.16 → mean −0.10
//	c: q1 0.36 − (0.04+0.16)/2 = 0.26, q3 has no peer → 0.26 over 1
func TestPeerScores(t *testing.T) {
	obs := []stats.FEObs{
		{Agent: "a", Question: "q1", Brier: 0.04}, {Agent: "b", Question: "q1", Brier: 0.16}, {Agent: "c", Question: "q1", Brier: 0.36},
		{Agent: "a", Question: "q2", Brier: 0.25}, {Agent: "b", Question: "q2", Brier: 0.09}, {Agent: "c", Question: "q3", Brier: 0.01},
		{Agent: "d", Question: "q4", Brier: 0.5},
	}
	want := map[string]struct {
		n     int
		score float64
		ok    bool
	}{"a": {2, -0.03, true}, "b": {2, -0.10, true}, "c": {1, 0.26, true}, "d": {0, 0, false}}
	got := stats.PeerScores(obs)
	if len(got) != len(want) {
		t.Fatalf("%d peer scores, want %d", len(got), len(want))
	}
	for _, p := range got {
		w := want[p.Agent]
		if p.N != w.n || p.Score.OK != w.ok || math.Abs(p.Score.V-w.score) > 1e-12 {
			t.Errorf("%s: n %d score %v, want n %d score %v (defined %v)", p.Agent, p.N, p.Score, w.n, w.score, w.ok)
		}
	}
}

func TestTopPlaces(t *testing.T) {
	for _, c := range []struct{ n, places int }{{1, 1}, {7, 1}, {20, 1}, {21, 2}, {40, 2}, {41, 3}, {100, 5}} {
		if got := stats.TopPlaces(stats.TopShare, c.n); got != c.places {
			t.Errorf("TopPlaces(%d) = %d, want %d", c.n, got, c.places)
		}
	}
}

// P(rank 1) and P(top 5%) are the shares of bootstrap replicates in which
// an agent ranks first and among the top places: recounted here from the
// replicates themselves, among the contenders only.
func TestRankSharesMatchBootstrap(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 7))
	var obs []stats.FEObs
	skill := map[string]float64{}
	var contenders []string
	for a := range 30 {
		name := fmt.Sprintf("a%02d", a)
		skill[name] = 0.15 + 0.004*float64(a)
		if a != 0 { // the best agent competes for no place
			contenders = append(contenders, name)
		}
	}
	for q := range 60 {
		for name, s := range skill {
			if r.Float64() < 0.8 {
				obs = append(obs, stats.FEObs{Agent: name, Question: fmt.Sprint(q), Stratum: fmt.Sprint(q % 5), Brier: math.Min(1, s*r.Float64()*2)})
			}
		}
	}
	res, err := stats.AdjustedLeaderboard(context.Background(), obs, stats.FEOptions{Bootstrap: 199, Seed: 3, Contenders: contenders, KeepReplicates: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Replicates) != 199 {
		t.Fatalf("%d replicates kept, want 199", len(res.Replicates))
	}
	col := map[string]int{}
	for i, a := range res.AgentOrder {
		col[a] = i
	}
	places := stats.TopPlaces(stats.TopShare, len(contenders))
	if places != 2 {
		t.Fatalf("29 contenders: %d top places, want 2", places)
	}
	first, top := map[string]float64{}, map[string]float64{}
	for _, rep := range res.Replicates {
		// Rank the contenders by hand; the test data has no exact ties.
		better := func(a string) int {
			n := 0
			for _, b := range contenders {
				if rep[col[b]] < rep[col[a]] {
					n++
				}
			}
			return n
		}
		for _, a := range contenders {
			if k := better(a); k == 0 {
				first[a]++
			} else if k < places {
				top[a]++
			}
		}
	}
	var sumFirst, sumTop float64
	for _, x := range res.Agents {
		if x.Agent == "a00" {
			if x.PRank1.OK || x.PTop.OK {
				t.Errorf("a00 competes for no place, yet P(rank 1) %v P(top) %v", x.PRank1, x.PTop)
			}
			continue
		}
		wantFirst := first[x.Agent] / 199
		wantTop := (first[x.Agent] + top[x.Agent]) / 199
		if math.Abs(x.PRank1.V-wantFirst) > 1e-12 || math.Abs(x.PTop.V-wantTop) > 1e-12 {
			t.Errorf("%s: P(rank 1) %v P(top) %v, recounted %v %v", x.Agent, x.PRank1.V, x.PTop.V, wantFirst, wantTop)
		}
		sumFirst += x.PRank1.V
		sumTop += x.PTop.V
	}
	if math.Abs(sumFirst-1) > 1e-9 || math.Abs(sumTop-float64(places)) > 1e-9 {
		t.Errorf("shares sum to %v and %v, want 1 and %d", sumFirst, sumTop, places)
	}
}

// Agents tied in a replicate share the places the tie straddles.
func TestRankSharesTies(t *testing.T) {
	var obs []stats.FEObs
	for q := range 10 {
		for _, a := range []string{"a", "b", "c"} {
			obs = append(obs, stats.FEObs{Agent: a, Question: fmt.Sprint(q), Stratum: "s", Brier: 0.1})
		}
	}
	res, err := stats.AdjustedLeaderboard(context.Background(), obs, stats.FEOptions{Bootstrap: 9, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range res.Agents {
		if math.Abs(x.PRank1.V-1.0/3) > 1e-12 || math.Abs(x.PTop.V-1.0/3) > 1e-12 {
			t.Errorf("%s: P(rank 1) %v P(top) %v, want 1/3 each", x.Agent, x.PRank1.V, x.PTop.V)
		}
	}
}

// Alpha's SE is cluster-robust by round: the CR1 standard error of the
// weighted mean of per-forecast edges, one cluster per round, equals the
// SE over round alphas that Analyze reports, with unequal rounds too.
func TestAlphaSEClusteredByRound(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	tb := stats.NewTable(0)
	var dv, w []float64
	var cl []int32
	sizes := []int{3, 7, 5, 2, 6}
	line := 0
	for round, k := range sizes {
		for m := range k {
			p, b := r.Float64(), r.Float64()
			x := float64(r.IntN(2))
			line++
			if err := tb.Add(stats.Row{Agent: "a", Round: fmt.Sprint(round), Market: fmt.Sprint(m), Forecast: p, Benchmark: b, HasBenchmark: true, Outcome: x}, line); err != nil {
				t.Fatal(err)
			}
			dv = append(dv, (b-x)*(b-x)-(p-x)*(p-x))
			w = append(w, 1/(float64(len(sizes))*float64(k)))
			cl = append(cl, int32(round))
		}
	}
	res, err := stats.Analyze(context.Background(), tb, stats.Options{NoMarket: true})
	if err != nil {
		t.Fatal(err)
	}
	se := stats.ClusterSE(dv, w, cl, len(sizes))
	if !se.OK || !res[0].AlphaSE.OK || math.Abs(se.V-res[0].AlphaSE.V) > 1e-12 {
		t.Errorf("round-clustered SE %v, Analyze's alpha SE %v", se, res[0].AlphaSE)
	}
}
