package stats_test

import (
	"context"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/stats"
)

// detected applies S1's test to per-round alphas: the one-sided test at κ
// (Proposition 3 is one-sided) is the two-sided Student-t p halved with a
// positive t.
func detected(alphas []float64, kappa float64) bool {
	m := stats.TestMean(alphas)
	return m.T.OK && m.T.V > 0 && m.P.V/2 < kappa
}

// roundAlphas groups per-market δ into rounds of k and returns each
// round's α (F6: mean δ over the round).
func roundAlphas(delta []float64, k int) []float64 {
	var out []float64
	for lo := 0; lo < len(delta); lo += k {
		hi := min(lo+k, len(delta))
		var s float64
		for _, d := range delta[lo:hi] {
			s += d
		}
		out = append(out, s/float64(hi-lo))
	}
	return out
}

// S6 in the exact setting of Proposition 3: q = ½ and |b − p| = 0.15 on
// every market, with p and b placed so the edge is α* = 0.02:
// (b−q)² − (p−q)² = 0.02 with b − p = 0.15 gives b = ½ + 0.141667,
// p = ½ − 0.008333. S5 predicts n = 348 (50 rounds of 7); the detection
// rate of S1's test over 1,000 seeded arenas must be 80% ± 4 points.
func TestSimCheckProposition3(t *testing.T) {
	pp := stats.DefaultPowerParams()
	const alpha = 0.02
	n := pp.N(alpha)
	if n != 348 {
		t.Fatalf("S5 n = %d, want 348", n)
	}
	R := pp.Rounds(n)
	u := (alpha/0.15 + 0.15) / 2 // b − q
	v := u - 0.15                // p − q
	b, p := 0.5+u, 0.5+v
	near(t, "edge", (b-0.5)*(b-0.5)-(p-0.5)*(p-0.5), alpha, 1e-15)
	const runs = 1000
	hits := 0
	delta := make([]float64, R*pp.K)
	for run := range runs {
		r := rand.New(rand.NewPCG(uint64(run), 0x53))
		for i := range delta {
			x := 0.0
			if r.Float64() < 0.5 {
				x = 1
			}
			delta[i] = (b-x)*(b-x) - (p-x)*(p-x)
		}
		if detected(roundAlphas(delta, pp.K), pp.Kappa) {
			hits++
		}
	}
	rate := float64(hits) / runs
	t.Logf("α* = 0.02, n = %d (%d rounds): detected in %.1f%% of %d runs (predicted %.1f%%)", n, R, 100*rate, runs, 100*pp.Power)
	if math.Abs(rate-pp.Power) > 0.04 {
		t.Errorf("detection rate %.3f, want %.2f ± 0.04", rate, pp.Power)
	}
}

// S6 with the simulator: an informed agent (σ = 0.05) forecasting sim
// markets 1–7 days before close has a true edge α* and per-market Var(δ),
// both measured on a 200,000-draw pilot. S5's formula with that variance
// predicts n; 1,000 seeded arenas of n predictions each must detect the
// edge 80% ± 4 points of the time. (Proposition 2's 4q(1−q)(b−p)² alone
// misses the spread of the conditional edge across markets, ≈ 10% of
// Var(δ) here, which would bias the predicted power by ≈ 4 points.)
func TestSimCheckDetectionRate(t *testing.T) {
	agent, err := sim.ParseAgent("informed-0.05")
	if err != nil {
		t.Fatal(err)
	}
	const minH, maxH = 24 * time.Hour, 7 * 24 * time.Hour
	delta := func(d sim.Draw, r *rand.Rand) float64 {
		f := agent.Forecast(d.Obs, r)
		x := float64(d.X)
		return (d.Price-x)*(d.Price-x) - (f-x)*(f-x)
	}
	pilot := sim.Draws(1, 200_000, minH, maxH)
	r := rand.New(rand.NewPCG(1, 1))
	var s, ss, cond float64
	for _, d := range pilot {
		v := delta(d, r)
		s += v
		ss += v * v
		f := agent.Forecast(d.Obs, r)
		cond += 4 * d.Q * (1 - d.Q) * (d.Price - f) * (d.Price - f)
	}
	np := float64(len(pilot))
	alpha := s / np
	pp := stats.DefaultPowerParams()
	pp.Var = ss/np - alpha*alpha
	n := pp.N(alpha)
	if alpha < 0.01 || n < 100 || n > 1000 {
		t.Fatalf("pilot: α* = %v, Var = %v, n = %d: the simulator's informed agent changed", alpha, pp.Var, n)
	}
	R := pp.Rounds(n)
	const runs = 1000
	hits := 0
	ds := make([]float64, R*pp.K)
	for run := range runs {
		draws := sim.Draws(int64(10_000+run), len(ds), minH, maxH)
		rr := rand.New(rand.NewPCG(uint64(run), 0x51))
		for i, d := range draws {
			ds[i] = delta(d, rr)
		}
		if detected(roundAlphas(ds, pp.K), pp.Kappa) {
			hits++
		}
	}
	rate := float64(hits) / runs
	t.Logf("sim informed-0.05: α* = %.4f, Var(δ) = %.4f (Prop. 2 term %.4f), n = %d (%d rounds): detected %.1f%% of %d runs",
		alpha, pp.Var, cond/np, n, R, 100*rate, runs)
	if math.Abs(rate-pp.Power) > 0.04 {
		t.Errorf("detection rate %.3f, want %.2f ± 0.04", rate, pp.Power)
	}
}

// S6: the random agent's Brier converges to 1/3, and the market agent's α
// is exactly 0 (through Analyze, on a clustered simulator world).
func TestSimCheckBaselines(t *testing.T) {
	random, _ := sim.ParseAgent(sim.AgentRandom)
	market, _ := sim.ParseAgent(sim.AgentMarket)
	draws := sim.Draws(7, 200_000, time.Hour, 30*24*time.Hour)
	r := rand.New(rand.NewPCG(7, 7))
	var s float64
	for _, d := range draws {
		f := random.Forecast(d.Obs, r)
		s += (f - float64(d.X)) * (f - float64(d.X))
	}
	// SD of (U − x)² is √(4/45) ≈ 0.298, so SE ≈ 0.00067 at 200,000.
	near(t, "random Brier", s/float64(len(draws)), 1.0/3, 0.003)

	w := sim.NewWorld(sim.Config{Seed: 11, Markets: 400})
	wd := w.Draws(3 * 24 * time.Hour)
	if len(wd) < 300 {
		t.Fatalf("world gave %d draws", len(wd))
	}
	tab := stats.NewTable(len(wd) * 2)
	for i, d := range wd {
		round := strconv.Itoa(i / 7)
		for _, a := range []sim.Agent{market, random} {
			row := stats.Row{Agent: "sim-" + a.Name, Round: round, Market: d.SourceID, Category: d.Category, Event: d.EventID,
				Forecast: a.Forecast(d.Obs, r), Benchmark: d.Price, HasBenchmark: true, Outcome: float64(d.X)}
			if err := tab.Add(row, 0); err != nil {
				t.Fatal(err)
			}
		}
	}
	res, err := stats.Analyze(context.Background(), tab, stats.Options{Bootstrap: 199, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]stats.AgentResult{}
	for _, a := range res {
		by[a.Agent] = a
	}
	for _, name := range []string{"sim-market", stats.MarketAgent} {
		a := by[name]
		if !a.Alpha.OK || a.Alpha.V != 0 || math.Signbit(a.Alpha.V) || a.AlphaSE.V != 0 || a.T.OK || a.P.OK {
			t.Errorf("%s: α %+v SE %+v t %+v p %+v, want α = 0 exactly, SE 0, t and p undefined", name, a.Alpha, a.AlphaSE, a.T, a.P)
		}
		for _, rs := range a.RoundScores {
			if rs.Alpha.V != 0 {
				t.Fatalf("%s round %s: α = %v", name, rs.Round, rs.Alpha.V)
			}
		}
	}
	rnd := by["sim-random"]
	if !(rnd.Alpha.V < -0.05) || !rnd.P.OK || rnd.P.V > 1e-6 || rnd.Inference.Clusters >= len(wd) {
		t.Errorf("random agent on the world: α %v p %v clusters %d of %d markets", rnd.Alpha.V, rnd.P.V, rnd.Inference.Clusters, len(wd))
	}
}
