package stats

import (
	"math"
	"testing"
)

func TestPairedRounds(t *testing.T) {
	rs := func(kv ...any) []RoundScore {
		var out []RoundScore
		for i := 0; i < len(kv); i += 2 {
			out = append(out, RoundScore{Round: kv[i].(string), Brier: kv[i+1].(float64)})
		}
		return out
	}
	for _, c := range []struct {
		name       string
		a, b       []RoundScore
		r          int
		mean       float64
		se, lo, hi float64 // NaN: undefined
		p          float64
	}{
		{"no common round", rs("1", 0.2), rs("2", 0.3), 0, 0, math.NaN(), math.NaN(), math.NaN(), math.NaN()},
		{"one common round", rs("1", 0.2, "2", 0.1), rs("2", 0.3), 1, 0.2, math.NaN(), math.NaN(), math.NaN(), math.NaN()},
		// Differences 0.1 and 0.3: mean 0.2, sd √0.02, SE 0.1, t(1 df) 0.975
		// quantile 12.7062, p two-sided of t = 2 with 1 df = 0.29517.
		{"two rounds", rs("1", 0.2, "2", 0.1, "3", 0.5), rs("1", 0.3, "2", 0.4), 2, 0.2, 0.1, 0.2 - 1.270620474, 0.2 + 1.270620474, 0.2951672353},
		// The same difference every round: SD 0, t and p undefined.
		{"constant difference", rs("1", 0.1, "2", 0.2), rs("1", 0.15, "2", 0.25), 2, 0.05, 0, 0.05, 0.05, math.NaN()},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := PairedRounds(c.a, c.b)
			near := func(f Float, want float64) bool {
				if math.IsNaN(want) {
					return !f.OK
				}
				return f.OK && math.Abs(f.V-want) < 1e-6
			}
			if got.R != c.r || math.Abs(got.Mean-c.mean) > 1e-12 || !near(got.SE, c.se) || !near(got.CILo, c.lo) || !near(got.CIHi, c.hi) || !near(got.P, c.p) {
				t.Errorf("got %+v", got)
			}
		})
	}
}
