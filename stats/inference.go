package stats

import (
	"context"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
)

// ShrinkN is the prior weight: ranking uses n/(n+140)·ᾱ and marks an
// agent provisional while it has fewer than 140 resolved predictions
// (the Foresight Arena paper's "20 rounds, 140+ predictions" minimum).
const ShrinkN = 140

// Shrink is the shrunken alpha n/(n+140)·ᾱ for ranking.
func Shrink(alpha float64, n int) float64 { return ShrinkBy(alpha, n, ShrinkN) }

// ShrinkBy is the shrunken alpha n/(n+k)·ᾱ with prior weight k.
func ShrinkBy(alpha float64, n, k int) float64 {
	if n <= 0 {
		return 0
	}
	return float64(n) / float64(n+k) * alpha
}

// Provisional is the default flag: fewer than 140 resolved predictions.
func Provisional(n int) bool { return n < ShrinkN }

// Dense maps arbitrary cluster labels to 0..G−1 in order of first
// appearance and returns G.
func Dense[T comparable](labels []T) ([]int32, int) {
	ids := make(map[T]int32, 16)
	out := make([]int32, len(labels))
	for i, l := range labels {
		id, ok := ids[l]
		if !ok {
			id = int32(len(ids))
			ids[l] = id
		}
		out[i] = id
	}
	return out, len(ids)
}

// WeightedMean is Σ w_i v_i / Σ w_i.
func WeightedMean(v, w []float64) float64 {
	var s, sw float64
	for i := range v {
		s += w[i] * v[i]
		sw += w[i]
	}
	return s / sw
}

// ClusterSE is the cluster-robust standard error (CR1) of the weighted
// mean θ = Σ w_i v_i / Σ w_i with clusters g = 0..G−1:
//
//	V = G/(G−1) · Σ_g (Σ_{i∈g} w_i (v_i − θ))² / (Σ_i w_i)².
//
// With v = δ_i, w_i = 1/(R·n_r) and one cluster per round this equals the
// the plain SE s/√R exactly; clustering by event instead widens it when markets
// on the same event move together. Undefined with fewer than 2 clusters.
func ClusterSE(v, w []float64, cluster []int32, g int) Float {
	if g < 2 || len(v) == 0 {
		return Undef
	}
	theta := WeightedMean(v, w)
	sums := make([]float64, g)
	var sw float64
	for i := range v {
		sums[cluster[i]] += w[i] * (v[i] - theta)
		sw += w[i]
	}
	var ss float64
	for _, s := range sums {
		ss += s * s
	}
	fg := float64(g)
	return Def(math.Sqrt(fg / (fg - 1) * ss / (sw * sw)))
}

// CI is a confidence interval from a seeded bootstrap.
type CI struct {
	Lo   Float  `json:"lo"`
	Hi   Float  `json:"hi"`
	B    int    `json:"b"`
	Seed uint64 `json:"seed"`
}

// DefaultBootstrap is the default number of bootstrap replicates.
const DefaultBootstrap = 1999

// NewRand returns the package's seeded generator (PCG, whose output for a
// seed is fixed by its algorithm, so results reproduce across builds).
func NewRand(seed uint64) *rand.PCG { return rand.NewPCG(seed, 0x9e3779b97f4a7c15) }

// Bounded draws uniformly from [0, n) with Lemire's multiply-and-reject,
// written out so the stream for a seed never depends on library internals.
func Bounded(r *rand.PCG, n uint64) uint64 {
	hi, lo := bits.Mul64(r.Uint64(), n)
	if lo < n {
		thresh := -n % n
		for lo < thresh {
			hi, lo = bits.Mul64(r.Uint64(), n)
		}
	}
	return hi
}

// ClusterBootstrapCI is the block bootstrap: blocks are the clusters
// (events), resampled with replacement B times; each replicate re-estimates
// the weighted mean Σ w v / Σ w over the drawn blocks. The interval is the
// percentile interval at level (e.g. 0.95), taking order statistics
// ⌈(B+1)·a⌉ and ⌊(B+1)·(1−a)⌋ with a = (1−level)/2 (exact for B = 1999).
// Same seed → same interval. It stops with ctx, returning ctx's error.
func ClusterBootstrapCI(ctx context.Context, v, w []float64, cluster []int32, g, b int, seed uint64, level float64) (CI, error) {
	return clusterBootstrapCI(newMeter(ctx), v, w, cluster, g, b, seed, level, nil)
}

// clusterBootstrapCI is ClusterBootstrapCI, taking the draws from drawn
// when it has them.
func clusterBootstrapCI(m *meter, v, w []float64, cluster []int32, g, b int, seed uint64, level float64, drawn *draws) (CI, error) {
	ci := CI{B: b, Seed: seed}
	if g < 2 || b < 1 || len(v) == 0 {
		return ci, nil
	}
	sv := make([]float64, g)
	sw := make([]float64, g)
	for i := range v {
		sv[cluster[i]] += w[i] * v[i]
		sw[cluster[i]] += w[i]
	}
	ks := drawn.of(g, b, seed)
	r := NewRand(seed)
	est := make([]float64, b)
	for rep := range est {
		if err := m.add(g); err != nil {
			return ci, err
		}
		var a, c float64
		if ks != nil {
			for _, k := range ks[rep*g : (rep+1)*g] {
				a += sv[k]
				c += sw[k]
			}
		} else {
			for range g {
				k := Bounded(r, uint64(g))
				a += sv[k]
				c += sw[k]
			}
		}
		est[rep] = a / c
	}
	lo, hi := percentileCI(est, level)
	ci.Lo, ci.Hi = Def(lo), Def(hi)
	return ci, nil
}

// draws keeps the clusters a seeded block bootstrap draws, by cluster
// count: every agent's bootstrap starts the same seeded stream, so agents
// with as many clusters draw the same ones (a round of one-shot agents:
// thousands of agents of three clusters), and a worker draws them once.
// Only few clusters are kept (g·b ≤ maxDraws each).
type draws struct {
	b    int
	seed uint64
	byG  map[int][]int32
}

const maxDraws = 1 << 16

// of returns the g·b draws for g clusters, nil when not kept (d nil, or
// too many).
func (d *draws) of(g, b int, seed uint64) []int32 {
	if d == nil || g*b > maxDraws {
		return nil
	}
	if d.byG == nil || d.b != b || d.seed != seed {
		d.b, d.seed, d.byG = b, seed, map[int][]int32{}
	}
	ks, ok := d.byG[g]
	if !ok {
		r := NewRand(seed)
		ks = make([]int32, g*b)
		for i := range ks {
			ks[i] = int32(Bounded(r, uint64(g)))
		}
		d.byG[g] = ks
	}
	return ks
}

// percentileCI is the level interval of bootstrap replicates v (at least
// one; v may be reordered): the ((B+1)·q)-th order statistics at each
// tail, the rule every bootstrap interval here uses. Many replicates
// without NaN go through tails, which picks the two order statistics
// without sorting them all.
func percentileCI(v []float64, level float64) (float64, float64) {
	if len(v) > 64 && !slices.ContainsFunc(v, math.IsNaN) {
		t := newTails(1, len(v), level)
		for _, x := range v {
			t.add(0, x)
		}
		lo, hi, _ := t.interval(0, level)
		return lo, hi
	}
	slices.Sort(v)
	lo, hi := percentileRanks(len(v), level)
	return v[lo], v[hi]
}

// percentileRanks are the positions (from 0, in ascending order) of the
// order statistics percentileCI takes of n ≥ 1 values.
func percentileRanks(n int, level float64) (lo, hi int) {
	tail := (1 - level) / 2
	lo = min(max(int(math.Ceil(float64(n+1)*tail-1e-9))-1, 0), n-1)
	hi = min(max(int(math.Floor(float64(n+1)*(1-tail)+1e-9))-1, 0), n-1)
	return lo, hi
}

// tails keeps, for each of a number of series, the k smallest and the k
// largest of the values added to it (NaN left out): all that
// percentileCI reads of at most b values, in memory that grows with k
// (about 2.5% of b at 95%) instead of b.
type tails struct {
	k      int
	n      []int     // values added per series
	lo, hi []float64 // per series k slots: a max-heap of the smallest, a min-heap of the largest
	// edge holds each full series' heap tops, side by side: most values
	// fall between them and are dropped after reading one cache line.
	edge []float64
}

// newTails keeps the order statistics of at most b values at level.
func newTails(series, b int, level float64) *tails {
	lo, hi := percentileRanks(b, level)
	// percentileRanks(n) for n ≤ b ranks no deeper into either tail than
	// for b, but for rounding: one slot more covers it.
	k := min(max(lo+2, b-hi+1), b)
	return &tails{k: k, n: make([]int, series), lo: make([]float64, series*k), hi: make([]float64, series*k), edge: make([]float64, 2*series)}
}

func (t *tails) add(s int, v float64) {
	if math.IsNaN(v) {
		return
	}
	n := t.n[s]
	t.n[s]++
	if n >= t.k && v >= t.edge[2*s] && v <= t.edge[2*s+1] {
		return
	}
	// hi holds the largest negated, so that both heaps keep their
	// greatest on top.
	lo, hi := t.lo[s*t.k:(s+1)*t.k], t.hi[s*t.k:(s+1)*t.k]
	if n < t.k {
		lo[n], hi[n] = v, -v
		siftUp(lo, n)
		siftUp(hi, n)
	} else {
		if v < lo[0] {
			lo[0] = v
			siftDown(lo)
		}
		if -v < hi[0] {
			hi[0] = -v
			siftDown(hi)
		}
	}
	t.edge[2*s], t.edge[2*s+1] = lo[0], -hi[0]
}

// interval is percentileCI of series s's values; ok is false for none.
func (t *tails) interval(s int, level float64) (lo, hi float64, ok bool) {
	n := t.n[s]
	if n == 0 {
		return 0, 0, false
	}
	m := min(n, t.k)
	small := slices.Clone(t.lo[s*t.k : s*t.k+m])
	large := make([]float64, m)
	for i, v := range t.hi[s*t.k : s*t.k+m] {
		large[i] = -v
	}
	slices.Sort(small)
	slices.Sort(large)
	// large holds the m largest in ascending order: value n−1−j from the
	// top is large[m−1−(n−1−hi)].
	l, h := percentileRanks(n, level)
	return small[l], large[m-n+h], true
}

// siftUp and siftDown restore a max-heap after h[i] or h[0] changed.
func siftUp(h []float64, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !(h[i] > h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func siftDown(h []float64) {
	for i := 0; ; {
		c := 2*i + 1
		if c >= len(h) {
			return
		}
		if c+1 < len(h) && h[c+1] > h[c] {
			c++
		}
		if !(h[c] > h[i]) {
			return
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
}
