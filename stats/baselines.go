package stats

import (
	"hash/fnv"
	"slices"
)

// BaselineItem is one scoreable question for the baselines report: a resolved
// binary question (or one resolution date of a dataset question) of a
// source kind, with the market/freeze price when the source has one.
type BaselineItem struct {
	Key      string // unique id; seeds the random forecaster, so results do not depend on order
	Kind     string // source kind: "market" or "dataset"
	Outcome  float64
	Price    float64 // market/freeze price, meaningful when HasPrice
	HasPrice bool
}

// Baseline forecaster names, spelled as ForecastBench's leaderboard
// spells the constant ones.
const (
	BaselineAlways0    = "Always 0"
	BaselineAlwaysHalf = "Always 0.5"
	BaselineAlways1    = "Always 1"
	BaselineMarket     = "Market price"
	BaselineRandom     = "Random uniform"
)

// KindOverall labels the rows that combine the kinds.
const KindOverall = "overall"

// BaselineRow is one forecaster on one kind: N items and their mean Brier.
type BaselineRow struct {
	Forecaster string  `json:"forecaster"`
	Kind       string  `json:"kind"`
	N          int     `json:"n"`
	Brier      float64 `json:"brier"`
}

// Baselines scores the baseline forecasters — constant 0, 0.5 and 1, the
// market/freeze price (items with a price only) and a seeded uniform random
// forecaster — on each source kind. Brier is the plain mean over items:
// ForecastBench's leaderboard scores every (question, resolution date) as
// one item, without averaging a dataset question's dates first (checked
// against its published leaderboard). When both kinds are present an
// "overall" row per forecaster follows, defined as ForecastBench defines
// it: the unweighted mean of the kinds' Brier scores, with N their sum.
// Kinds are sorted, forecasters in a fixed order; rows with N = 0 are left
// out.
func Baselines(items []BaselineItem, seed uint64) []BaselineRow {
	type acc struct {
		n int
		s float64
	}
	names := []string{BaselineAlways0, BaselineAlwaysHalf, BaselineAlways1, BaselineMarket, BaselineRandom}
	byKind := map[string]*[5]acc{}
	for _, it := range items {
		a := byKind[it.Kind]
		if a == nil {
			a = new([5]acc)
			byKind[it.Kind] = a
		}
		x := it.Outcome
		add := func(j int, p float64) { a[j].n++; a[j].s += (p - x) * (p - x) }
		add(0, 0)
		add(1, 0.5)
		add(2, 1)
		if it.HasPrice {
			add(3, it.Price)
		}
		add(4, uniform(seed, it.Key))
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	var out []BaselineRow
	for _, k := range kinds {
		for j, name := range names {
			if a := byKind[k][j]; a.n > 0 {
				out = append(out, BaselineRow{Forecaster: name, Kind: k, N: a.n, Brier: a.s / float64(a.n)})
			}
		}
	}
	if len(kinds) > 1 {
		for j, name := range names {
			var n, sum float64
			ok := true
			for _, k := range kinds {
				a := byKind[k][j]
				if a.n == 0 {
					ok = false // a forecaster absent from a kind has no overall score
					break
				}
				n += float64(a.n)
				sum += a.s / float64(a.n)
			}
			if ok {
				out = append(out, BaselineRow{Forecaster: name, Kind: KindOverall, N: int(n), Brier: sum / float64(len(kinds))})
			}
		}
	}
	return out
}

// uniform is the random forecaster's draw for an item: a hash of the seed
// and the item key mapped to [0,1), so it is the same whatever the order.
func uniform(seed uint64, key string) float64 {
	h := fnv.New64a()
	var b [8]byte
	for i := range b {
		b[i] = byte(seed >> (8 * i))
	}
	h.Write(b[:])
	h.Write([]byte(key))
	x := h.Sum64()
	// splitmix64 finaliser: FNV's low bits are weak.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return float64(x>>11) / (1 << 53)
}
