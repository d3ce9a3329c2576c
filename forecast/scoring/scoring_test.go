package scoring

import (
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/forecast-arena/arena/forecast"

	"github.com/forecast-arena/arena"
)

func TestScoreRoundWorkedExample(t *testing.T) {
	// Markets: YES with b = 0.60 (the Foresight Arena paper's Figure 2), NO with b = 0.30,
	// a void market, and YES without a benchmark.
	rs, err := ScoreRound([]MarketOutcome{
		{MarketID: 11, Outcome: OutcomeYes, Benchmark: 6000},
		{MarketID: 12, Outcome: OutcomeNo, Benchmark: 3000},
		{MarketID: 13, Outcome: OutcomeExcluded, Benchmark: 5000},
		{MarketID: 14, Outcome: OutcomeYes, Benchmark: NoBenchmark},
	}, []Entry{
		{Predictions: []uint16{8000, 2000, 9000, 5000}},
		{Forfeit: true},
		{Predictions: []uint16{6000, 3000, 0, 10000}}, // echoes the market
	})
	if err != nil {
		t.Fatal(err)
	}
	if rs.N != 3 || rs.AlphaN != 2 {
		t.Fatalf("scored %d, benchmarked %d; want 3, 2", rs.N, rs.AlphaN)
	}
	// Base over the Alpha set: (0.4² + 0.3²)/2 = 0.125.
	if rs.BaseBrierBps2 != 12_500_000 || !near(rs.BaseBrier, 0.125) {
		t.Errorf("base %d / %v", rs.BaseBrierBps2, rs.BaseBrier)
	}
	a := rs.Agents[0]
	// Brier over M*: (0.2² + 0.2² + 0.5²)/3 = 0.11; Alpha over A: 0.125 − (0.04+0.04)/2 = 0.085.
	if a.Forfeit || a.BrierBps2 != 11_000_000 || a.AlphaBps2 != 8_500_000 || !near(a.Brier, 0.11) || !near(a.Alpha, 0.085) {
		t.Errorf("agent: %+v", a)
	}
	f := rs.Agents[1]
	if !f.Forfeit || f.BrierBps2 != Bps2 || f.AlphaBps2 != 12_500_000-Bps2 || f.Brier != 1 || !near(f.Alpha, 0.125-1) {
		t.Errorf("forfeit: %+v", f)
	}
	m := rs.Agents[2]
	if m.AlphaBps2 != 0 || m.Alpha != 0 {
		t.Errorf("market echo has alpha %d / %v, want exactly 0", m.AlphaBps2, m.Alpha)
	}
	// Its Brier still counts the unbenchmarked market (p = 1, x = 1: 0).
	if m.BrierBps2 != (16_000_000+9_000_000+0)/3 {
		t.Errorf("market echo brier %d", m.BrierBps2)
	}
}

func TestScoreRoundTruncation(t *testing.T) {
	// Σδ = −10001 over 3 markets: −3333.67 truncates toward zero to −3333
	// (Solidity int256 division), not to the floor −3334.
	out := []int8{1, 0, 1}
	bench := []int32{5000, 5000, 5000}
	rs, err := ScoreRound(zip(out, bench), []Entry{{Predictions: []uint16{4999, 5000, 5000}}, {Predictions: []uint16{5001, 5000, 5000}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := rs.Agents[0].AlphaBps2; got != -3333 {
		t.Errorf("negative alpha %d, want −3333 (toward zero)", got)
	}
	if got := rs.Agents[1].AlphaBps2; got != 3333 {
		t.Errorf("positive alpha %d, want 3333", got)
	}
	if got := rs.Agents[0].BrierBps2; got != 25_003_333 { // 75 010 001 / 3
		t.Errorf("brier %d", got)
	}
	// Alpha is one division of the summed differences, not the difference
	// of two truncated means: base Σ = 4, agent Σ = 1 over 2 markets gives
	// trunc(3/2) = 1, while ⌊4/2⌋ − ⌊1/2⌋ = 2.
	rs, err = ScoreRound(zip([]int8{0, 0}, []int32{2, 0}), []Entry{{Predictions: []uint16{1, 0}}})
	if err != nil {
		t.Fatal(err)
	}
	if rs.BaseBrierBps2 != 2 || rs.Agents[0].BrierBps2 != 0 || rs.Agents[0].AlphaBps2 != 1 {
		t.Errorf("base %d brier %d alpha %d; want 2, 0, 1", rs.BaseBrierBps2, rs.Agents[0].BrierBps2, rs.Agents[0].AlphaBps2)
	}
}

func TestScoreRoundExclusions(t *testing.T) {
	// No benchmark anywhere: Brier is scored, Alpha is not (never a silent 0.5).
	rs, err := ScoreRound(zip([]int8{1, 0}, []int32{NoBenchmark, NoBenchmark}), []Entry{{Predictions: []uint16{10000, 10000}}})
	if err != nil {
		t.Fatal(err)
	}
	if rs.N != 2 || rs.AlphaN != 0 || rs.Agents[0].BrierBps2 != Bps2/2 || rs.Agents[0].AlphaBps2 != 0 {
		t.Errorf("%+v", rs)
	}
	// Had the missing benchmark been taken as 0.5, base would be 0.25 and
	// alpha −0.25; instead that market only leaves the Alpha set.
	rs, err = ScoreRound(zip([]int8{1, 1}, []int32{NoBenchmark, 9000}), []Entry{{Predictions: []uint16{0, 9000}}})
	if err != nil {
		t.Fatal(err)
	}
	if rs.AlphaN != 1 || rs.Agents[0].AlphaBps2 != 0 || rs.Agents[0].BrierBps2 != (Bps2+1_000_000)/2 {
		t.Errorf("%+v", rs.Agents[0])
	}
	// Everything void: nothing scored.
	rs, err = ScoreRound(zip([]int8{-1, -1}, []int32{5000, 5000}), []Entry{{Predictions: []uint16{1, 2}}, {Forfeit: true}})
	if err != nil {
		t.Fatal(err)
	}
	if rs.N != 0 || rs.AlphaN != 0 || rs.Agents[1].BrierBps2 != 0 {
		t.Errorf("%+v", rs)
	}
}

func TestScoreRoundRejectsBadInput(t *testing.T) {
	for name, tc := range map[string]struct {
		out     []int8
		bench   []int32
		entries []Entry
	}{
		"outcome 2":          {[]int8{2}, []int32{5000}, nil},
		"benchmark > 10000":  {[]int8{1}, []int32{10001}, nil},
		"benchmark −2":       {[]int8{1}, []int32{-2}, nil},
		"prediction count":   {[]int8{1, 0}, []int32{1, 2}, []Entry{{Predictions: []uint16{1}}}},
		"prediction > 10000": {[]int8{1}, []int32{1}, []Entry{{Predictions: []uint16{10001}}}},
		"nil predictions":    {[]int8{1}, []int32{1}, []Entry{{}}},
		"forfeit with preds": {[]int8{1}, []int32{1}, []Entry{{Forfeit: true, Predictions: []uint16{1}}}},
	} {
		if _, err := ScoreRound(zip(tc.out, tc.bench), tc.entries); arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("%s: err %v", name, err)
		}
	}
	// A round's frozen outcomes must cover its markets.
	r := &arena.Round{ID: 1, Markets: []arena.RoundMarket{{MarketID: 1}, {MarketID: 2}}}
	if _, err := RoundOutcomes(r, []int8{OutcomeYes}); arena.ErrorKind(err) != arena.EINVALID {
		t.Errorf("outcome count: err %v", err)
	}
}

func TestRoundOutcomes(t *testing.T) {
	b := 0.42
	r := &arena.Round{ID: 1, Markets: []arena.RoundMarket{
		{MarketID: 7, Benchmark: &b, BenchmarkBps: 4200},
		{MarketID: 8},
		{MarketID: 9, Benchmark: &b, BenchmarkBps: 4200},
		{MarketID: 10},
	}}
	got, err := RoundOutcomes(r, []int8{OutcomeYes, OutcomeNo, OutcomeExcluded, OutcomeUnresolved})
	if err != nil {
		t.Fatal(err)
	}
	want := []MarketOutcome{
		{MarketID: 7, Outcome: OutcomeYes, Benchmark: 4200},
		{MarketID: 8, Outcome: OutcomeNo, Benchmark: NoBenchmark},
		{MarketID: 9, Outcome: OutcomeExcluded, Benchmark: 4200},
		{MarketID: 10, Outcome: OutcomeExcluded, Benchmark: NoBenchmark},
	}
	if !slices.Equal(got, want) {
		t.Fatalf("got %+v\nwant %+v", got, want)
	}
	if !got[0].Benchmarked() || got[1].Benchmarked() || got[2].Benchmarked() || got[2].Scored() || !got[1].Scored() {
		t.Errorf("Scored/Benchmarked wrong: %+v", got)
	}
	if p := got[0].BenchmarkPrice(); p == nil || *p != 0.42 {
		t.Errorf("benchmark price %v", p)
	}
	if p := got[1].BenchmarkPrice(); p != nil {
		t.Errorf("no benchmark priced %v", *p)
	}
}

// TestScoreRoundMatchesExactRationals checks the integers against an
// independent exact computation with big.Rat (truncation toward zero), and
// the floats against the integers, on random rounds.
func TestScoreRoundMatchesExactRationals(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	bps := func() uint16 {
		if rng.IntN(5) == 0 {
			return []uint16{0, 1, 5000, 9999, 10000}[rng.IntN(5)]
		}
		return uint16(rng.IntN(forecast.MaxBps + 1))
	}
	for round := 0; round < 2000; round++ {
		k := 1 + rng.IntN(12)
		out := make([]int8, k)
		bench := make([]int32, k)
		for i := range out {
			out[i] = int8(rng.IntN(3)) - 1
			bench[i] = int32(bps())
			if rng.IntN(6) == 0 {
				bench[i] = NoBenchmark
			}
		}
		entries := make([]Entry, 4)
		for a := range entries {
			if rng.IntN(8) == 0 {
				entries[a].Forfeit = true
				continue
			}
			entries[a].Predictions = make([]uint16, k)
			for i := range entries[a].Predictions {
				entries[a].Predictions[i] = bps()
			}
		}
		rs, err := ScoreRound(zip(out, bench), entries)
		if err != nil {
			t.Fatal(err)
		}
		for a, e := range entries {
			var brier, alpha big.Rat
			n, nb := 0, 0
			for i, x := range out {
				if x < 0 {
					continue
				}
				p := big.NewRat(1, 1) // forfeit: |p − x| = 1
				if !e.Forfeit {
					p = new(big.Rat).Sub(big.NewRat(int64(e.Predictions[i]), forecast.MaxBps), big.NewRat(int64(x), 1))
				}
				sq := new(big.Rat).Mul(p, p)
				brier.Add(&brier, sq)
				n++
				if bench[i] != NoBenchmark {
					b := new(big.Rat).Sub(big.NewRat(int64(bench[i]), forecast.MaxBps), big.NewRat(int64(x), 1))
					alpha.Add(&alpha, new(big.Rat).Sub(new(big.Rat).Mul(b, b), sq))
					nb++
				}
			}
			s := rs.Agents[a]
			if n != rs.N || nb != rs.AlphaN {
				t.Fatalf("round %d: counts %d/%d vs %d/%d", round, rs.N, rs.AlphaN, n, nb)
			}
			if n > 0 {
				wantB := truncBps2(brier.Quo(&brier, big.NewRat(int64(n), 1)))
				if s.BrierBps2 != wantB {
					t.Fatalf("round %d agent %d: brier %d, exact %d", round, a, s.BrierBps2, wantB)
				}
				if math.Abs(s.Brier*Bps2-float64(s.BrierBps2)) >= 1+1e-6 {
					t.Fatalf("round %d agent %d: float brier %v vs %d bps²", round, a, s.Brier, s.BrierBps2)
				}
			}
			if nb > 0 {
				wantA := truncBps2(alpha.Quo(&alpha, big.NewRat(int64(nb), 1)))
				if s.AlphaBps2 != wantA {
					t.Fatalf("round %d agent %d: alpha %d, exact %d", round, a, s.AlphaBps2, wantA)
				}
				if math.Abs(s.Alpha*Bps2-float64(s.AlphaBps2)) >= 1+1e-6 {
					t.Fatalf("round %d agent %d: float alpha %v vs %d bps²", round, a, s.Alpha, s.AlphaBps2)
				}
			}
		}
	}
}

// truncBps2 is trunc(q · 10⁸) toward zero.
func truncBps2(q *big.Rat) int64 {
	v := new(big.Rat).Mul(q, big.NewRat(Bps2, 1))
	return new(big.Int).Quo(v.Num(), v.Denom()).Int64() // Quo truncates toward zero
}

func TestRandomForecasterBrierIsOneThird(t *testing.T) {
	// A uniform forecaster's expected Brier is 1/3.
	rng := rand.New(rand.NewPCG(3, 5))
	const k, rounds = 7, 4000
	var sum float64
	for r := 0; r < rounds; r++ {
		out := make([]int8, k)
		bench := make([]int32, k)
		preds := make([]uint16, k)
		for i := range out {
			out[i] = int8(rng.IntN(2))
			bench[i] = 5000
			preds[i] = uint16(rng.IntN(forecast.MaxBps + 1))
		}
		rs, err := ScoreRound(zip(out, bench), []Entry{{Predictions: preds}})
		if err != nil {
			t.Fatal(err)
		}
		sum += rs.Agents[0].Brier
	}
	// SD of one market's (p−x)² is √(1/5 − 1/9) ≈ 0.30; over 28 000 markets
	// the mean's SE is ≈ 0.0018.
	if mean := sum / rounds; math.Abs(mean-1.0/3) > 0.01 {
		t.Errorf("random forecaster mean Brier %v, want ≈ 1/3", mean)
	}
}

// zip pairs outcomes with benchmarks, market by market.
func zip(out []int8, bench []int32) []MarketOutcome {
	if len(out) != len(bench) {
		panic("zip: lengths differ")
	}
	ms := make([]MarketOutcome, len(out))
	for i := range out {
		ms[i] = MarketOutcome{MarketID: int64(i + 1), Outcome: out[i], Benchmark: bench[i]}
	}
	return ms
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
