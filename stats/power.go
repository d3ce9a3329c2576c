package stats

import "math"

// Power analysis defaults.
const (
	DefaultKappa    = 0.05 // one-sided significance κ
	DefaultPower    = 0.8  // π
	DefaultQ        = 0.5  // q̄
	DefaultBoldness = 0.15 // d = mean |b − p|
	DefaultK        = 7    // markets per round
)

// DefaultAlphas are the α* rows of the Foresight Arena paper's Table 1.
var DefaultAlphas = []float64{0.005, 0.01, 0.02, 0.03, 0.05, 0.1}

// PowerParams are the inputs of the power formula n = ⌈((z_{1−κ} + z_π)/α*)² · Var(δ)⌉ (docs/methodology.md).
type PowerParams struct {
	Kappa    float64 // one-sided significance level κ
	Power    float64 // target power π
	Q        float64 // q̄, mean true probability
	Boldness float64 // d = mean |b − p|
	K        int     // markets per round
	// Var, when > 0, replaces the homogeneous 4q̄(1−q̄)d² with a
	// measured per-market Var(δ) (e.g. from a pilot sample).
	Var float64
}

// DefaultPowerParams returns the power analysis defaults.
func DefaultPowerParams() PowerParams {
	return PowerParams{Kappa: DefaultKappa, Power: DefaultPower, Q: DefaultQ, Boldness: DefaultBoldness, K: DefaultK}
}

// Variance is the per-market Var(δ) = 4q(1−q)d² at the
// homogeneous q̄ and d.
func (pp PowerParams) Variance() float64 {
	if pp.Var > 0 {
		return pp.Var
	}
	return 4 * pp.Q * (1 - pp.Q) * pp.Boldness * pp.Boldness
}

// zSum is z_{1−κ} + z_π with exact normal quantiles (the paper rounds
// them to 1.645 + 0.842, which moves its first row by two).
func (pp PowerParams) zSum() float64 {
	return NormalQuantile(1-pp.Kappa) + NormalQuantile(pp.Power)
}

// N is the power analysis's n = ⌈((z_{1−κ} + z_π)/α*)² · 4q̄(1−q̄)·d²⌉; 0 when α* ≤ 0 or the
// variance is 0 (nothing to detect / nothing to learn).
func (pp PowerParams) N(alpha float64) int {
	v := pp.Variance()
	if !(alpha > 0) || !(v > 0) {
		return 0
	}
	z := pp.zSum() / alpha
	n := z * z * v
	if n > 1<<53 {
		return math.MaxInt // beyond any sample: saturate rather than overflow
	}
	// Guard against n landing a hair above an integer through rounding.
	return int(math.Ceil(n - 1e-9))
}

// Rounds is ⌈n/k⌉.
func (pp PowerParams) Rounds(n int) int {
	k := pp.K
	if k < 1 {
		k = 1
	}
	r := n / k
	if n%k != 0 {
		r++ // ⌈n/k⌉ without overflowing near MaxInt
	}
	return r
}

// MinDetectable is the inverse: the smallest α* detected with power π at
// significance κ from n predictions, α* = (z_{1−κ} + z_π)·√(Var/n).
func (pp PowerParams) MinDetectable(n int) Float {
	if n <= 0 {
		return Undef
	}
	return Def(pp.zSum() * math.Sqrt(pp.Variance()/float64(n)))
}

// PowerAt is the power of the one-sided z-test at n predictions and true
// edge α*: Φ(α*/SE − z_{1−κ}) with SE = √(Var/n) (seed Appendix A.2).
func (pp PowerParams) PowerAt(alpha float64, n int) Float {
	v := pp.Variance()
	if n <= 0 || !(v > 0) {
		return Undef
	}
	se := math.Sqrt(v / float64(n))
	return Def(NormalCDF(alpha/se - NormalQuantile(1-pp.Kappa)))
}

// PowerRow is one row of the power table.
type PowerRow struct {
	Alpha  float64 `json:"alpha"`
	N      int     `json:"n"`
	Rounds int     `json:"rounds"`
}

// Table returns the power analysis's n and rounds for each α*.
func (pp PowerParams) Table(alphas []float64) []PowerRow {
	rows := make([]PowerRow, len(alphas))
	for i, a := range alphas {
		n := pp.N(a)
		rows[i] = PowerRow{Alpha: a, N: n, Rounds: pp.Rounds(n)}
	}
	return rows
}

// RoundsToSignificance is the "rounds until significance" for an agent
// with observed mean edge alpha and boldness d after nDone predictions in
// rDone rounds: the remaining rounds, at the agent's observed markets per
// round, until n reaches the power requirement for that edge.
// Undefined when the observed edge is not positive (it will never become
// significant as a positive edge) or the agent never departs from the market.
func RoundsToSignificance(pp PowerParams, alpha, d float64, nDone, rDone int) Float {
	pp.Boldness, pp.Var = d, 0
	need := pp.N(alpha)
	if need == 0 {
		return Undef
	}
	if nDone >= need {
		return Def(0)
	}
	k := float64(pp.K)
	if rDone > 0 && nDone > 0 {
		k = float64(nDone) / float64(rDone)
	}
	return Def(math.Ceil(float64(need-nDone)/k - 1e-9))
}
