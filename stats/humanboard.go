package stats

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// Kinds of items on a human-comparison board.
const (
	KindDataset = "dataset"
	KindMarket  = "market"
)

// BoardItem is one forecaster's forecast of one item of a board scored as
// ForecastBench scores its human leaderboard: a dataset item is one
// (question, resolution date), scored once resolved; a market item is one
// question, scored against its outcome once resolved and, before that,
// against the market's value on the resolution set's date.
type BoardItem struct {
	Forecaster string
	Human      bool // a human group's aggregate or a human forecaster
	Item       string
	Kind       string // KindDataset or KindMarket
	Resolved   bool
	Forecast   float64
	Outcome    float64 // 0 or 1 when resolved; the market value otherwise
}

// BoardOptions tune Board.
type BoardOptions struct {
	Bootstrap int // replicates; 0 → DefaultBootstrap
	Seed      uint64
}

// Mean is a mean Brier score over N items, undefined when N is 0.
type Mean struct {
	Brier Float `json:"brier"`
	N     int   `json:"n"`
}

// BoardRow is one forecaster's line of the board.
type BoardRow struct {
	Rank             int    `json:"rank"`
	Forecaster       string `json:"forecaster"`
	Human            bool   `json:"human"`
	Dataset          Mean   `json:"dataset"`
	MarketResolved   Mean   `json:"market_resolved"`
	MarketUnresolved Mean   `json:"market_unresolved"`
	Market           Mean   `json:"market"`
	OverallResolved  Mean   `json:"overall_resolved"`
	Overall          Mean   `json:"overall"`
	// CILo and CIHi are the percentile bootstrap 95% interval of Overall,
	// items resampled within their kind.
	CILo Float `json:"ci_lo"`
	CIHi Float `json:"ci_hi"`
	// PVsFirst is the one-sided pairwise bootstrap p-value that rank 1 is
	// no better than this forecaster; BetterThanFirst the share of the
	// items both forecast on which this one's Brier score is lower.
	// Undefined for rank 1.
	PVsFirst        Float `json:"p_vs_first"`
	BetterThanFirst Float `json:"better_than_first"`
	BrierIndex      Float `json:"brier_index"`
	BSS             Float `json:"bss"`
	Peer            Float `json:"peer"`
	Adjusted        Float `json:"adjusted_brier"`
	PRank1          Float `json:"p_rank1"`
}

// kindMeans are one forecaster's Brier sums and counts by kind.
type kindMeans struct {
	ds, mr, mu    float64
	nds, nmr, nmu int
}

func meanOf(s float64, n int) Mean {
	if n == 0 {
		return Mean{}
	}
	return Mean{Brier: Def(s / float64(n)), N: n}
}

// halves is ForecastBench's overall score: the unweighted mean of the
// dataset and market means, or the one that exists.
func halves(a, b Mean) Mean {
	switch {
	case a.N == 0:
		return b
	case b.N == 0:
		return a
	}
	return Mean{Brier: Def((a.Brier.V + b.Brier.V) / 2), N: a.N + b.N}
}

// Board scores every forecaster on its items. Overall is the unweighted
// mean of the dataset and market (resolved and unresolved) means, and
// Overall resolved the same over resolved market items; forecasters are
// ranked by Overall, lower first (then by name).
// Unresolved dataset items are not scored. Same seed → same board. It
// stops with ctx, returning ctx's error.
func Board(ctx context.Context, items []BoardItem, opt BoardOptions) ([]BoardRow, error) {
	if opt.Bootstrap == 0 {
		opt.Bootstrap = DefaultBootstrap
	}
	g, err := gatherBoard(items)
	if err != nil || len(g.order) == 0 {
		return nil, err
	}
	rows := g.rankedRows()
	if err := g.bootstrap(ctx, rows, opt); err != nil {
		return nil, err
	}
	if err := g.adjust(ctx, rows, opt); err != nil {
		return nil, err
	}
	return rows, nil
}

// boardForecaster is one forecaster's scored items on the board.
type boardForecaster struct {
	human bool
	km    kindMeans
	brier map[string]float64 // by item
	kind  map[string]string
	items []string // scored items, in input order
}

// boardInput is the board's items gathered by forecaster.
type boardInput struct {
	by    map[string]*boardForecaster
	order []string // forecasters in input order
	obs   []FEObs  // every scored item, for the peer and adjusted scores
}

// gatherBoard checks the items and gathers the scored ones (every market
// item, the resolved dataset items) by forecaster.
func gatherBoard(items []BoardItem) (boardInput, error) {
	g := boardInput{by: map[string]*boardForecaster{}}
	for _, it := range items {
		if it.Kind != KindDataset && it.Kind != KindMarket {
			return g, fmt.Errorf("score: board item %s of %s: kind %q", it.Item, it.Forecaster, it.Kind)
		}
		if !(it.Forecast >= 0 && it.Forecast <= 1) || !(it.Outcome >= 0 && it.Outcome <= 1) {
			return g, fmt.Errorf("score: board item %s of %s: forecast %v, outcome %v outside [0,1]", it.Item, it.Forecaster, it.Forecast, it.Outcome)
		}
		if it.Kind == KindDataset && !it.Resolved {
			continue
		}
		f := g.by[it.Forecaster]
		if f == nil {
			f = &boardForecaster{human: it.Human, brier: map[string]float64{}, kind: map[string]string{}}
			g.by[it.Forecaster] = f
			g.order = append(g.order, it.Forecaster)
		}
		if _, dup := f.brier[it.Item]; dup {
			return g, fmt.Errorf("score: board item %s forecast twice by %s", it.Item, it.Forecaster)
		}
		b := (it.Forecast - it.Outcome) * (it.Forecast - it.Outcome)
		f.brier[it.Item], f.kind[it.Item] = b, it.Kind
		f.items = append(f.items, it.Item)
		switch {
		case it.Kind == KindDataset:
			f.km.ds += b
			f.km.nds++
		case it.Resolved:
			f.km.mr += b
			f.km.nmr++
		default:
			f.km.mu += b
			f.km.nmu++
		}
		g.obs = append(g.obs, FEObs{Agent: it.Forecaster, Question: it.Item, Stratum: it.Kind, Brier: b})
	}
	return g, nil
}

// rankedRows makes each forecaster's row of means and ranks the rows by
// overall Brier, then name.
func (g boardInput) rankedRows() []BoardRow {
	rows := make([]BoardRow, len(g.order))
	for i, name := range g.order {
		f, k := g.by[name], g.by[name].km
		r := BoardRow{Forecaster: name, Human: f.human,
			Dataset: meanOf(k.ds, k.nds), MarketResolved: meanOf(k.mr, k.nmr), MarketUnresolved: meanOf(k.mu, k.nmu),
			Market: meanOf(k.mr+k.mu, k.nmr+k.nmu)}
		r.OverallResolved = halves(r.Dataset, r.MarketResolved)
		r.Overall = halves(r.Dataset, r.Market)
		if r.Overall.N > 0 {
			r.BrierIndex, r.BSS = Def(BrierIndex(r.Overall.Brier.V)), Def(BrierSkill(r.Overall.Brier.V))
		}
		rows[i] = r
	}
	slices.SortStableFunc(rows, func(a, b BoardRow) int {
		if c := cmp.Compare(a.Overall.Brier.V, b.Overall.Brier.V); c != 0 {
			return c
		}
		return cmp.Compare(a.Forecaster, b.Forecaster)
	})
	for i := range rows {
		rows[i].Rank = i + 1
	}
	return rows
}

// bootstrap sets each row's overall CI and, below the first row, its
// paired comparison with the first, all from one seeded stream.
func (g boardInput) bootstrap(ctx context.Context, rows []BoardRow, opt BoardOptions) error {
	r, m := NewRand(opt.Seed), newMeter(ctx)
	for i := range rows {
		f := g.by[rows[i].Forecaster]
		rows[i].CILo, rows[i].CIHi = overallCI(f.items, f.brier, f.kind, opt.Bootstrap, r)
		if err := m.add(opt.Bootstrap * len(f.items)); err != nil {
			return fmt.Errorf("score: board: %w", err)
		}
	}
	first := g.by[rows[0].Forecaster]
	for i := 1; i < len(rows); i++ {
		f := g.by[rows[i].Forecaster]
		rows[i].PVsFirst, rows[i].BetterThanFirst = pairedVsFirst(first.brier, f.brier, f.items, f.kind, opt.Bootstrap, r)
		if err := m.add(opt.Bootstrap * len(f.items)); err != nil {
			return fmt.Errorf("score: board: %w", err)
		}
	}
	return nil
}

// adjust sets each row's peer score and difficulty-adjusted score.
func (g boardInput) adjust(ctx context.Context, rows []BoardRow, opt BoardOptions) error {
	peers := map[string]Float{}
	for _, p := range PeerScores(g.obs) {
		peers[p.Agent] = p.Score
	}
	adj, err := AdjustedLeaderboard(ctx, g.obs, FEOptions{Bootstrap: opt.Bootstrap, Seed: opt.Seed, PairsFor: []string{}})
	if err != nil {
		return fmt.Errorf("score: board: %w", err)
	}
	fe := map[string]FEAgent{}
	for _, a := range adj.Agents {
		fe[a.Agent] = a
	}
	for i := range rows {
		rows[i].Peer = peers[rows[i].Forecaster]
		if a, ok := fe[rows[i].Forecaster]; ok {
			rows[i].Adjusted, rows[i].PRank1 = Def(a.Adjusted), a.PRank1
		}
	}
	return nil
}

// splitKinds returns the values of items by kind (dataset, market).
func splitKinds(items []string, v map[string]float64, kind map[string]string) (ds, mk []float64) {
	for _, it := range items {
		if kind[it] == KindDataset {
			ds = append(ds, v[it])
		} else {
			mk = append(mk, v[it])
		}
	}
	return ds, mk
}

// resampledHalves is one bootstrap replicate of the overall statistic:
// items drawn with replacement within each kind, then the mean of the
// kinds' means (or the one kind's mean).
func resampledHalves(ds, mk []float64, r *rand.PCG) float64 {
	m := func(v []float64) float64 {
		s := 0.0
		for range v {
			s += v[Bounded(r, uint64(len(v)))]
		}
		return s / float64(len(v))
	}
	switch {
	case len(ds) == 0:
		return m(mk)
	case len(mk) == 0:
		return m(ds)
	}
	return (m(ds) + m(mk)) / 2
}

// overallCI is the percentile bootstrap 95% interval of the overall score.
func overallCI(items []string, brier map[string]float64, kind map[string]string, reps int, r *rand.PCG) (Float, Float) {
	ds, mk := splitKinds(items, brier, kind)
	if len(ds)+len(mk) == 0 || reps <= 0 {
		return Undef, Undef
	}
	v := make([]float64, reps)
	for b := range v {
		v[b] = resampledHalves(ds, mk, r)
	}
	lo, hi := percentileCI(v, 0.95)
	return Def(lo), Def(hi)
}

// pairedVsFirst compares a forecaster with rank 1 on the items both forecast,
// as ForecastBench's pairwise test does: the per-item differences
// (this − first) by kind give the observed overall difference; the
// differences are centred on zero (the null of equal accuracy) and
// resampled within kind; p is the share of replicates at least as large as
// the observed difference. better is the share of common items on which
// this forecaster's Brier score is strictly lower.
func pairedVsFirst(first, this map[string]float64, items []string, kind map[string]string, reps int, r *rand.PCG) (p, better Float) {
	d := map[string]float64{}
	var common []string
	wins := 0
	for _, it := range items {
		b, ok := first[it]
		if !ok {
			continue
		}
		d[it] = this[it] - b
		common = append(common, it)
		if this[it] < b {
			wins++
		}
	}
	if len(common) == 0 {
		return Undef, Undef
	}
	better = Def(float64(wins) / float64(len(common)))
	if reps <= 0 {
		return Undef, better
	}
	ds, mk := splitKinds(common, d, kind)
	mean := func(v []float64) float64 {
		s := 0.0
		for _, x := range v {
			s += x
		}
		return s / float64(len(v))
	}
	var observed float64
	switch {
	case len(ds) == 0:
		observed = mean(mk)
	case len(mk) == 0:
		observed = mean(ds)
	default:
		observed = (mean(ds) + mean(mk)) / 2
	}
	centre := func(v []float64) {
		if len(v) == 0 {
			return
		}
		m := mean(v)
		for i := range v {
			v[i] -= m
		}
	}
	centre(ds)
	centre(mk)
	ge := 0
	for range reps {
		// A tolerance keeps replicates equal to the observed difference
		// but for rounding (all differences equal, say) counted as equal.
		if resampledHalves(ds, mk, r) >= observed-1e-12 {
			ge++
		}
	}
	return Def(float64(ge) / float64(reps)), better
}

// Median is the median of x (the mean of the two middle values when len(x)
// is even, as pandas computes it); NaN for no values. x is not modified.
func Median(x []float64) float64 {
	if len(x) == 0 {
		return math.NaN()
	}
	s := slices.Clone(x)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}
