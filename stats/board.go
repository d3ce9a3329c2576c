package stats

import (
	"cmp"
	"math"
	"slices"
)

// BrierIndex is ForecastBench's Brier Index, (1 − √b)·100: 100 for a
// perfect forecaster, 50 for one that always says 0.5 (b = 0.25), 0 for
// one always certain and wrong. A difficulty-adjusted Brier score may
// fall below 0 (an agent better than the fit expects on hard questions),
// where √b is undefined; the index then takes −√|b|, which keeps it
// continuous and decreasing in b, and equal to the usual formula for b ≥ 0.
func BrierIndex(b float64) float64 {
	if b < 0 {
		return (1 + math.Sqrt(-b)) * 100
	}
	return (1 - math.Sqrt(b)) * 100
}

// ChanceBrier is the Brier score of always saying 0.5, whatever happens.
const ChanceBrier = 0.25

// BrierSkill is the Brier skill score against always saying 0.5,
// 1 − b/0.25: 0 for that forecaster, 1 for a perfect one, negative for
// one worse than chance.
func BrierSkill(b float64) float64 { return 1 - b/ChanceBrier }

// Peer is an agent's peer score: over its forecasts on questions someone
// else also answered, the mean of (its Brier − the mean Brier of the
// others on that question). Negative is better than its peers. N counts
// those forecasts; Score is undefined when N is 0.
type Peer struct {
	Agent string `json:"agent"`
	N     int    `json:"n"`
	Score Float  `json:"peer_score"`
}

// PeerScores computes every agent's peer score from observations (one per
// agent and question; FEObs' Stratum is not used), in order of the
// agents' first appearance. A question answered by one agent only has no
// peers and counts for nobody.
func PeerScores(obs []FEObs) []Peer {
	type q struct {
		sum float64
		n   int
	}
	byQ := map[string]*q{}
	for _, o := range obs {
		x := byQ[o.Question]
		if x == nil {
			x = &q{}
			byQ[o.Question] = x
		}
		x.sum += o.Brier
		x.n++
	}
	idx := map[string]int{}
	var out []Peer
	sums := []float64{}
	for _, o := range obs {
		i, ok := idx[o.Agent]
		if !ok {
			i = len(out)
			idx[o.Agent] = i
			out = append(out, Peer{Agent: o.Agent})
			sums = append(sums, 0)
		}
		x := byQ[o.Question]
		if x.n < 2 {
			continue
		}
		others := (x.sum - o.Brier) / float64(x.n-1)
		sums[i] += o.Brier - others
		out[i].N++
	}
	for i := range out {
		if out[i].N > 0 {
			out[i].Score = Def(sums[i] / float64(out[i].N))
		}
	}
	return out
}

// TopShare is the default share of agents that counts as the top in a
// bootstrap replicate's ranking: the best ⌈5%⌉ of the contenders.
const TopShare = 0.05

// TopPlaces is how many places of n contenders count as the top share:
// ⌈share·n⌉, at least one.
func TopPlaces(share float64, n int) int { return max(1, int(math.Ceil(share*float64(n)-1e-9))) }

// placeShare is an agent's share of the places of one replicate.
type placeShare struct {
	i     int
	share float64
}

// placeShares hands out one replicate's first place and top places
// (lower score is better) to the contenders: agents tied across a
// boundary share the places it leaves, so each replicate hands out
// exactly one first place and TopPlaces(n) top places. contender marks
// the agents that compete; NaN scores do not. Summing the shares over the
// replicates gives P(rank 1) and P(top).
func placeShares(scores []float64, contender []bool, share float64) (first, top []placeShare) {
	type s struct {
		i int
		v float64
	}
	var cs []s
	for i, v := range scores {
		if contender[i] && !math.IsNaN(v) {
			cs = append(cs, s{i, v})
		}
	}
	if len(cs) == 0 {
		return nil, nil
	}
	slices.SortFunc(cs, func(a, b s) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	give := func(places int) []placeShare {
		var out []placeShare
		for lo := 0; lo < len(cs) && lo < places; {
			hi := lo
			for hi < len(cs) && cs[hi].v == cs[lo].v {
				hi++
			}
			share := float64(min(hi, places)-lo) / float64(hi-lo)
			for k := lo; k < hi; k++ {
				out = append(out, placeShare{cs[k].i, share})
			}
			lo = hi
		}
		return out
	}
	return give(1), give(TopPlaces(share, len(cs)))
}

// TieGroups numbers the tie groups of n items in rank order: the first
// item not yet grouped leads a group, which every later ungrouped item
// whose interval overlaps the leader's joins. interval gives item i's
// interval, ok false for none (such an item joins no group but its own);
// skip, when set, leaves items out (group 0). The items with an interval
// sit in a tree by their lower ends that keeps the highest upper end of
// each subtree, so a leader finds its group in O(log n) an item: the
// whole takes O(n log n), where comparing every leader with every later
// item took O(n²) at thousands of agents.
func TieGroups(n int, interval func(i int) (lo, hi float64, ok bool), skip func(i int) bool) []int {
	group := make([]int, n)
	lo, hi := make([]float64, n), make([]float64, n)
	var byLo []int // items with an interval, by lower end
	for i := range n {
		if skip != nil && skip(i) {
			continue
		}
		if l, h, ok := interval(i); ok && !math.IsNaN(l) && !math.IsNaN(h) {
			lo[i], hi[i] = l, h
			byLo = append(byLo, i)
		}
	}
	slices.SortFunc(byLo, func(a, b int) int { return cmp.Compare(lo[a], lo[b]) })
	size := 1
	for size < len(byLo) {
		size *= 2
	}
	// tree[size+k] is the upper end of byLo[k] (−Inf once grouped); an
	// inner node holds the highest of its children.
	tree := make([]float64, 2*size)
	leaf := make([]int, n)
	for i := range leaf {
		leaf[i] = -1
	}
	for k := range tree {
		tree[k] = math.Inf(-1)
	}
	for k, i := range byLo {
		tree[size+k], leaf[i] = hi[i], k
	}
	for k := size - 1; k > 0; k-- {
		tree[k] = max(tree[2*k], tree[2*k+1])
	}
	remove := func(k int) {
		k += size
		tree[k] = math.Inf(-1)
		for k > 1 {
			k /= 2
			tree[k] = max(tree[2*k], tree[2*k+1])
		}
	}
	g := 0
	for i := range n {
		if (skip != nil && skip(i)) || group[i] != 0 {
			continue
		}
		g++
		group[i] = g
		if leaf[i] < 0 {
			continue
		}
		remove(leaf[i])
		// The ungrouped items with lo ≤ hi_i are the first end of byLo;
		// of those, the ones with hi ≥ lo_i overlap.
		end, _ := slices.BinarySearchFunc(byLo, hi[i], func(j int, v float64) int {
			if lo[j] <= v {
				return -1
			}
			return 1
		})
		var join func(node, from, to int)
		join = func(node, from, to int) {
			if from >= end || tree[node] < lo[i] {
				return
			}
			if node >= size {
				j := byLo[node-size]
				group[j] = g
				remove(node - size)
				return
			}
			mid := (from + to) / 2
			join(2*node, from, mid)
			join(2*node+1, mid, to)
		}
		join(1, 0, size)
	}
	return group
}
