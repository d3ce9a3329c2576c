package stats

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// tails gives the interval that sorting the same values gives (the
// order statistics percentileRanks names), for every count of values up
// to its b, NaN left out.
func TestTailsMatchPercentileCI(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, b := range []int{1, 2, 3, 9, 39, 40, 199, 999} {
		for _, level := range []float64{0.95, 0.9, 0.5, 0.99, 0.8} {
			for n := 0; n <= b; n += max(1, b/37) {
				tl := newTails(1, b, level)
				var vals []float64
				for k := range b {
					v := math.NaN()
					if k < n {
						v = math.Round(r.NormFloat64()*20) / 10 // ties too
						vals = append(vals, v)
					}
					tl.add(0, v)
				}
				lo, hi, ok := tl.interval(0, level)
				if ok != (n > 0) {
					t.Fatalf("b %d level %v n %d: ok %v", b, level, n, ok)
				}
				if n == 0 {
					continue
				}
				slices.Sort(vals)
				l, h := percentileRanks(len(vals), level)
				wlo, whi := vals[l], vals[h]
				if lo != wlo || hi != whi {
					t.Fatalf("b %d level %v n %d: [%v, %v], sorted [%v, %v]", b, level, n, lo, hi, wlo, whi)
				}
			}
		}
	}
}

// TieGroups forms the groups of comparing every leader with every later
// item, the rule it implements.
func TestTieGroupsMatchPairwise(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for trial := range 300 {
		n := r.IntN(60)
		lo, hi, ok, skip := make([]float64, n), make([]float64, n), make([]bool, n), make([]bool, n)
		width := []float64{0.01, 0.1, 1}[trial%3]
		for i := range n {
			c := r.Float64()
			lo[i], hi[i] = c-width*r.Float64(), c+width*r.Float64()
			ok[i], skip[i] = r.IntN(10) > 0, r.IntN(8) == 0
			if r.IntN(20) == 0 {
				lo[i] = math.NaN()
			}
		}
		got := TieGroups(n, func(i int) (float64, float64, bool) { return lo[i], hi[i], ok[i] }, func(i int) bool { return skip[i] })
		want := make([]int, n)
		g := 0
		for i := range n {
			if skip[i] || want[i] != 0 {
				continue
			}
			g++
			want[i] = g
			for j := i + 1; j < n; j++ {
				if !skip[j] && want[j] == 0 && ok[i] && ok[j] && lo[i] <= hi[j] && lo[j] <= hi[i] {
					want[j] = g
				}
			}
		}
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: groups %v, pairwise %v", trial, got, want)
		}
	}
}
