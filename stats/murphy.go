package stats

import "math"

// DefaultBins is the Murphy bin count K.
const DefaultBins = 10

// Bin is one non-empty bin of the Murphy partition (also the classic
// reliability diagram): forecasts in [Lo, Hi), the last bin closed at 1.
type Bin struct {
	K       int     `json:"k"`
	Lo      float64 `json:"lo"`
	Hi      float64 `json:"hi"`
	N       int     `json:"n"`
	MeanP   float64 `json:"mean_p"`   // p̄_k
	ObsFreq float64 `json:"obs_freq"` // ō_k
}

// Murphy is the Murphy decomposition. Brier = UNC + REL − RES + Residual holds
// exactly by construction; Residual is the binning error, reported and
// never folded into the other terms.
type Murphy struct {
	UNC      float64 `json:"unc"`
	REL      float64 `json:"rel"`
	RES      float64 `json:"res"`
	Residual float64 `json:"residual"`
	Bins     []Bin   `json:"bins"`
	Brier    float64 `json:"-"`
	N        int     `json:"-"`
	K        int     `json:"-"`
}

// BinOf is the Murphy bin = min(⌊pK⌋, K − 1), evaluated in float64.
func BinOf(p float64, k int) int {
	b := int(p * float64(k))
	if b >= k {
		b = k - 1
	}
	if b < 0 {
		b = 0
	}
	return b
}

// Decompose computes the Murphy decomposition over all N predictions with k equal bins (k < 1
// means DefaultBins):
//
//	UNC = ō(1−ō), REL = (1/N) Σ n_k (p̄_k − ō_k)², RES = (1/N) Σ n_k (ō_k − ō)²,
//	brier = (1/N) Σ (p_i − x_i)², residual = brier − (UNC + REL − RES).
//
// Empty bins are excluded. It is one pass over the data.
func Decompose(p, x []float64, k int) Murphy {
	if k < 1 {
		k = DefaultBins
	}
	m := Murphy{N: len(p), K: k}
	if len(p) == 0 {
		return m
	}
	x = x[:len(p)]
	type acc struct {
		n      int
		sp, sx float64
	}
	var small [DefaultBins]acc
	bins := small[:]
	if k > DefaultBins {
		bins = make([]acc, k)
	} else {
		bins = bins[:k]
	}
	fk := float64(k)
	var sse, sx float64
	for i, pi := range p {
		xi := x[i]
		d := pi - xi
		sse += d * d
		sx += xi
		b := int(pi * fk)
		if b >= k {
			b = k - 1
		}
		a := &bins[b]
		a.n++
		a.sp += pi
		a.sx += xi
	}
	n := float64(len(p))
	obar := sx / n
	m.Brier = sse / n
	m.UNC = obar * (1 - obar)
	var rel, res float64
	for j, a := range bins {
		if a.n == 0 {
			continue
		}
		nk := float64(a.n)
		pk, ok := a.sp/nk, a.sx/nk
		rel += nk * (pk - ok) * (pk - ok)
		res += nk * (ok - obar) * (ok - obar)
		m.Bins = append(m.Bins, Bin{K: j, Lo: float64(j) / fk, Hi: float64(j+1) / fk, N: a.n, MeanP: pk, ObsFreq: ok})
	}
	m.REL = rel / n
	m.RES = res / n
	m.Residual = m.Brier - (m.UNC + m.REL - m.RES)
	return m
}

// ECE is expected calibration error Σ_k (n_k/N)·|p̄_k − ō_k| over the
// Murphy bins of m.
func (m Murphy) ECE() float64 {
	if m.N == 0 {
		return 0
	}
	var s float64
	for _, b := range m.Bins {
		s += float64(b.N) * math.Abs(b.MeanP-b.ObsFreq)
	}
	return s / float64(m.N)
}

// AlphaParts is The Murphy corollary over a shared market set:
// α = B_base − B_agent = (RES_agent − RES_base) + (REL_base − REL_agent)
// + (residual_base − residual_agent). Alpha here is the mean over
// predictions (not rounds), which is what the identity is about.
type AlphaParts struct {
	Alpha        float64 `json:"alpha"`
	ResGain      float64 `json:"res_gain"`      // RES_agent − RES_base
	RelGap       float64 `json:"rel_gap"`       // REL_base − REL_agent
	ResidualDiff float64 `json:"residual_diff"` // residual_base − residual_agent
	Agent        Murphy  `json:"agent"`
	Base         Murphy  `json:"base"`
}

// DecomposeAlpha applies Decompose to the agent (p) and the benchmark (b)
// on the same outcomes and splits their Brier difference per the Murphy decomposition.
func DecomposeAlpha(p, b, x []float64, k int) AlphaParts {
	a := Decompose(p, x, k)
	m := Decompose(b, x, k)
	return AlphaParts{
		Alpha:        m.Brier - a.Brier,
		ResGain:      a.RES - m.RES,
		RelGap:       m.REL - a.REL,
		ResidualDiff: m.Residual - a.Residual,
		Agent:        a, Base: m,
	}
}
