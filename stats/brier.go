package stats

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// RoundBrier is B_{a,r} = mean_i (p_i − x_i)² over the round's frozen set.
// It returns 0 for an empty round; callers skip empty rounds.
func RoundBrier(p, x []float64) float64 {
	x = x[:len(p)]
	var s float64
	for i, pi := range p {
		d := pi - x[i]
		s += d * d
	}
	if len(p) == 0 {
		return 0
	}
	return s / float64(len(p))
}

// RoundBrierAlpha is the per-round kernel of round scoring over markets that all have
// a benchmark: the agent's Brier B_{a,r}, the benchmark's B^base_r and
// α_{a,r} = B^base_r − B_{a,r}. Alpha is computed as the mean of the
// per-market differences δ_i = (b_i − x_i)² − (p_i − x_i)², which equals
// B^base − B but avoids cancellation and is exactly 0 when p = b (
// the market baseline's α is 0 exactly).
func RoundBrierAlpha(p, b, x []float64) (brier, base, alpha float64) {
	n := len(p)
	if n == 0 {
		return 0, 0, 0
	}
	b, x = b[:n], x[:n]
	var sa, sb, sd float64
	for i := range p {
		da := p[i] - x[i]
		db := b[i] - x[i]
		ea, eb := da*da, db*db
		sa += ea
		sb += eb
		sd += eb - ea
	}
	f := float64(n)
	return sa / f, sb / f, sd / f
}

// MeanTest holds the cumulative statistics of per-round values v_r:
// mean, SE = s/√R with the R−1 sample SD, t = mean/SE and the two-sided
// Student-t p with R−1 df.
type MeanTest struct {
	R    int
	Mean float64
	SD   Float // undefined when R < 2
	SE   Float // undefined when R < 2
	T    Float // undefined when SE is undefined or 0
	P    Float // undefined when T is
}

// TestMean computes the `B̄ = mean_r`, `SE = s/√R`, `t = ᾱ/SE` and the
// two-sided p from Student's t with R − 1 df. When every value is the same
// (e.g. the market baseline, α = 0 in every round) the SD is exactly 0 and
// t, p are undefined rather than ±Inf or NaN.
func TestMean(v []float64) MeanTest {
	m := MeanTest{R: len(v)}
	if len(v) == 0 {
		return m
	}
	var s float64
	lo, hi := v[0], v[0]
	for _, x := range v {
		s += x
		lo, hi = min(lo, x), max(hi, x)
	}
	r := float64(len(v))
	m.Mean = s / r
	if lo == hi {
		// Constant values: the mean is exactly that value and the SD is 0.
		m.Mean = lo
	}
	if len(v) < 2 {
		return m
	}
	var ss float64
	if lo != hi {
		for _, x := range v {
			d := x - m.Mean
			ss += d * d
		}
	}
	sd := math.Sqrt(ss / (r - 1))
	m.SD = Def(sd)
	m.SE = Def(sd / math.Sqrt(r))
	if m.SE.V > 0 {
		m.T = Def(m.Mean / m.SE.V)
		m.P = Def(StudentP(m.T.V, r-1))
	}
	return m
}

// StudentP is the two-sided p-value of t under Student's t with df degrees
// of freedom, computed from the survival function to keep precision
// in the tail.
func StudentP(t, df float64) float64 {
	if math.IsNaN(t) || df <= 0 {
		return math.NaN()
	}
	st := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	return math.Min(1, 2*st.Survival(math.Abs(t)))
}

// StudentQuantile is the p quantile of Student's t with df degrees of
// freedom: the multiplier of a t interval.
func StudentQuantile(p, df float64) float64 {
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// NormalQuantile is the exact standard normal quantile z_p.
func NormalQuantile(p float64) float64 {
	return distuv.UnitNormal.Quantile(p)
}

// NormalCDF is Φ.
func NormalCDF(z float64) float64 { return distuv.UnitNormal.CDF(z) }
