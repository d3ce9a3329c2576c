package stats

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// MarketAgent is the name of the benchmark baseline added by Analyze: the agent
// that echoes b_i.
const MarketAgent = "market"

// Options tune Analyze. The zero value uses the documented defaults.
type Options struct {
	Bins      int  // Murphy bin count K; 0 → 10
	NoMarket  bool // do not add the market baseline agent
	Bootstrap int  // block-bootstrap replicates for the alpha CI; 0 skips it
	Seed      uint64
	Level     float64     // CI level; 0 → 0.95
	Power     PowerParams // for rounds-to-significance; zero → power defaults
	ShrinkN   int         // prior weight of the shrunken alpha and provisional bound; 0 → ShrinkN
}

// RoundScore is one round of one agent.
type RoundScore struct {
	Round     string  `json:"round"`
	N         int     `json:"n"`
	Brier     float64 `json:"brier"`
	AlphaN    int     `json:"alpha_n"`    // markets with a benchmark
	Alpha     Float   `json:"alpha"`      // undefined without benchmarks
	BaseBrier Float   `json:"base_brier"` // B^base_r over those markets
}

// AgentResult holds every cumulative, Murphy, CORP, skill and power figure for one agent. The JSON tags of the
// exported top-level fields are exactly the score command's keys, in its order;
// Inference and Rounds carry the rest and are not marshalled with them.
type AgentResult struct {
	Agent    string  `json:"agent"`
	N        int     `json:"n"`
	Rounds   int     `json:"rounds"`
	Brier    float64 `json:"brier"`
	BrierSE  Float   `json:"brier_se"`
	Alpha    Float   `json:"alpha"`
	AlphaSE  Float   `json:"alpha_se"`
	T        Float   `json:"t"`
	P        Float   `json:"p"`
	BeatPct  Float   `json:"beat_pct"`
	Murphy   Murphy  `json:"murphy"`
	CORP     CORP    `json:"corp"`
	ECE      float64 `json:"ece"`
	LogScore float64 `json:"log_score"`

	Inference   Inference    `json:"-"`
	RoundScores []RoundScore `json:"-"`
}

// Inference holds the figures beyond the score command's JSON keys.
type Inference struct {
	AlphaN      int   `json:"alpha_n"`      // predictions with a benchmark
	AlphaRounds int   `json:"alpha_rounds"` // rounds with ≥ 1 of them
	ShrunkAlpha Float `json:"shrunk_alpha"` // n/(n+140)·ᾱ
	Provisional bool  `json:"provisional"`  // n < 140
	ClusterSE   Float `json:"alpha_cluster_se"`
	Clusters    int   `json:"clusters"`
	CI          CI    `json:"alpha_ci"` // block bootstrap by event
	// BSS is skill vs the constant 0.25 reference; BSSMarket vs the
	// benchmark's Brier on the same markets.
	BSS        Float      `json:"bss"`
	BSSMarket  Float      `json:"bss_market"`
	WinRate    WinRate    `json:"win_rate"`
	Accuracy   Proportion `json:"accuracy"`
	Boldness   Float      `json:"boldness"` // mean |b − p|
	ToSignif   Float      `json:"rounds_to_significance"`
	MissingB   int        `json:"missing_benchmark"` // predictions without a benchmark
	AlphaParts AlphaParts `json:"-"`
}

// InputError lists rows that break the input's invariants. Nothing is
// dropped: Analyze fails instead.
type InputError struct {
	Problems []string // at most MaxProblems
	Total    int
}

// MaxProblems caps the problems kept in an InputError.
const MaxProblems = 20

func (e *InputError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d invalid row(s)", e.Total)
	for _, p := range e.Problems {
		b.WriteString("\n")
		b.WriteString(p)
	}
	if e.Total > len(e.Problems) {
		fmt.Fprintf(&b, "\n… and %d more", e.Total-len(e.Problems))
	}
	return b.String()
}

// Merge records f's problems after e's, as if added to e one by one.
func (e *InputError) Merge(f *InputError) {
	for _, p := range f.Problems {
		e.Add("%s", p)
	}
	e.Total += f.Total - len(f.Problems)
}

// Add records a problem.
func (e *InputError) Add(format string, args ...any) {
	e.Total++
	if len(e.Problems) < MaxProblems {
		e.Problems = append(e.Problems, fmt.Sprintf(format, args...))
	}
}

// Analyze scores every agent of t (cumulative, Murphy, CORP, skill and power) and, when any row has a
// benchmark, the market baseline as agent "market". Rows must agree on the
// outcome and benchmark of a (round, market), and an agent may forecast a
// market once per round; violations fail with their line numbers.
// Agents are returned by name, the market baseline last. It stops with
// ctx, returning ctx's error.
func Analyze(ctx context.Context, t *Table, opt Options) ([]AgentResult, error) {
	n := t.Len()
	if n == 0 {
		return nil, fmt.Errorf("no rows to score")
	}
	if opt.Power == (PowerParams{}) {
		opt.Power = DefaultPowerParams()
	}
	if opt.Level == 0 {
		opt.Level = 0.95
	}
	if opt.ShrinkN == 0 {
		opt.ShrinkN = ShrinkN
	}
	in, err := checkInput(t, opt)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("score: analyze: %w", err)
	}
	return scoreAgents(ctx, t, in, opt)
}

// checkedInput is the rows' order and runs that checkInput found sound.
type checkedInput struct {
	order      []int32 // the rows by agent, by round within an agent
	spans      []span  // each agent's run of order
	marketRows []int32 // the first row of each benchmarked (round, market), by round
	addMarket  bool    // whether the market baseline is scored
}

// checkInput orders the rows by agent and checks the input's invariants
// on the way, failing with an *InputError that lists every violation.
func checkInput(t *Table, opt Options) (checkedInput, error) {
	// The rows by round, then by agent (by round within an agent). The
	// checks of the (round, market) pairs, on the first order, go beside
	// the second order and the checks of the agents' runs on it.
	byRound := countingSort(t.Round, t.Rounds.Len(), nil)
	var pairs pairChecks
	checked := make(chan struct{})
	go func() {
		defer close(checked)
		pairs = checkPairs(t, byRound)
	}()
	order := countingSort(t.Agent, t.Agents.Len(), byRound)
	runs := checkRuns(t, order)
	<-checked
	marketRows := pairs.marketRows
	addMarket := pairs.anyB && !opt.NoMarket
	spans := runs.spans
	// The problems in the order of one pass after the other: the pairs',
	// then the runs', the reserved name among them where its run ended.
	bad := &InputError{}
	bad.Merge(pairs.bad)
	for k := 0; k <= runs.bad.Total; k++ {
		if addMarket && k == runs.marketAt {
			bad.Add("%s: agent name %q is reserved for the benchmark baseline when benchmarks are present",
				t.where(int(runs.marketRow)), MarketAgent)
		}
		switch {
		case k < len(runs.bad.Problems):
			bad.Add("%s", runs.bad.Problems[k])
		case k < runs.bad.Total:
			bad.Total++
		}
	}
	if bad.Total > 0 {
		return checkedInput{}, bad
	}
	return checkedInput{order: order, spans: spans, marketRows: marketRows, addMarket: addMarket}, nil
}

// scoreAgents scores every agent of the checked input and, when asked,
// the market baseline.
func scoreAgents(ctx context.Context, t *Table, in checkedInput, opt Options) ([]AgentResult, error) {
	order, spans, marketRows, addMarket := in.order, in.spans, in.marketRows, in.addMarket

	// Agents are independent: score them on all cores, each worker with its
	// own scratch, in two jobs an agent (its rounds and inference; its
	// decompositions over all predictions) so that the cores share the work
	// evenly however few the agents. Results do not depend on the schedule.
	agents := len(spans)
	if addMarket {
		agents++
	}
	out := make([]AgentResult, agents)
	spread := make([]decompositions, agents)
	// The forecasts, benchmarks and outcomes in the agents' order, laid
	// once for both jobs of every agent: each job then reads its agent's
	// run in one stretch instead of gathering it row by row.
	p, b, x := inOrder(t, order)
	workers := min(runtime.GOMAXPROCS(0), 2*agents)
	next := make(chan int, 2*agents)
	for j := range 2 * agents {
		next <- j
	}
	close(next)
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g := newGrouper(t, newMeter(ctx))
			for j := range next {
				if errs[w] != nil {
					continue
				}
				a, name, idx := j/2, MarketAgent, marketRows
				var rp, rb, rx []float64
				if a < len(spans) {
					s := spans[a]
					name, idx = t.Agents.Names[s.agent], order[s.lo:s.hi]
					rp, rb, rx = p[s.lo:s.hi], b[s.lo:s.hi], x[s.lo:s.hi]
				} else {
					rp, rb, rx = g.gatherEcho(idx)
				}
				if j%2 == 0 {
					out[a], errs[w] = g.agent(name, idx, rp, rb, rx, opt)
				} else {
					spread[a], errs[w] = g.decompose(rp, rx, opt)
				}
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("score: analyze: %w", err)
	}
	for a, d := range spread {
		out[a].Murphy, out[a].CORP, out[a].ECE, out[a].LogScore = d.murphy, d.corp, d.ece, d.logScore
	}
	slices.SortFunc(out[:len(spans)], func(a, b AgentResult) int { return strings.Compare(a.Agent, b.Agent) })
	return out, nil
}

func fmtB(t *Table, i int) string {
	if !t.HasB(i) {
		return "empty"
	}
	return fmt.Sprint(t.B[i])
}

// countingSort returns the rows of src (all rows in order when nil)
// ordered by key, stable: a counting sort, O(n). nk bounds the keys.
func countingSort(key []int32, nk int, src []int32) []int32 {
	c := make([]int32, nk+1)
	dst := make([]int32, len(key))
	if src == nil {
		for _, k := range key {
			c[k+1]++
		}
		for j := 1; j <= nk; j++ {
			c[j] += c[j-1]
		}
		for i, k := range key {
			dst[c[k]] = int32(i)
			c[k]++
		}
		return dst
	}
	for _, i := range src {
		c[key[i]+1]++
	}
	for j := 1; j <= nk; j++ {
		c[j] += c[j-1]
	}
	for _, i := range src {
		dst[c[key[i]]] = i
		c[key[i]]++
	}
	return dst
}

// pairChecks are what checkPairs finds.
type pairChecks struct {
	marketRows []int32 // the first row of each benchmarked (round, market), by round
	anyB       bool    // any of those
	bad        *InputError
}

// checkPairs checks that the rows of each (round, market) agree on its
// outcome and benchmark, on the rows by round: a per-market stamp of the
// round replaces a map keyed by (round, market).
func checkPairs(t *Table, byRound []int32) pairChecks {
	c := pairChecks{bad: &InputError{}}
	mRound := make([]int32, t.Markets.Len())
	mFirst := make([]int32, t.Markets.Len())
	for i := range mRound {
		mRound[i] = -1
	}
	for _, i32 := range byRound {
		i := int(i32)
		m, r := t.Market[i], t.Round[i]
		if mRound[m] != r {
			mRound[m], mFirst[m] = r, i32
			if t.HasB(i) {
				c.anyB = true
				c.marketRows = append(c.marketRows, i32)
			}
			continue
		}
		j := int(mFirst[m])
		if t.X[i] != t.X[j] {
			c.bad.Add("%s: outcome %v of market %q in round %q conflicts with %s (%v)", t.where(i), t.X[i],
				t.Markets.Names[m], t.Rounds.Names[r], t.where(j), t.X[j])
		}
		if hb, hj := t.HasB(i), t.HasB(j); hb != hj || (hb && t.B[i] != t.B[j]) {
			c.bad.Add("%s: benchmark %s of market %q in round %q conflicts with %s (%s)", t.where(i), fmtB(t, i),
				t.Markets.Names[m], t.Rounds.Names[r], t.where(j), fmtB(t, j))
		}
	}
	return c
}

// span is one agent's run of rows in the agents' order.
type span struct{ agent, lo, hi int }

// runChecks are what checkRuns finds.
type runChecks struct {
	spans []span
	bad   *InputError
	// marketAt is how many problems come before the end of the run of an
	// agent named MarketAgent (its first row marketRow), -1 for none:
	// whether that name is reserved depends on the pairs' benchmarks.
	marketAt  int
	marketRow int32
}

// checkRuns splits the rows by agent into runs and finds the markets an
// agent forecasts twice in a round.
func checkRuns(t *Table, order []int32) runChecks {
	c := runChecks{bad: &InputError{}, marketAt: -1}
	stamp := make([]int32, t.Markets.Len())
	seenAt := make([]int32, t.Markets.Len())
	for i := range stamp {
		stamp[i] = -1
	}
	run := int32(0)
	for k := 0; k < len(order); {
		a := t.Agent[order[k]]
		lo := k
		for k < len(order) && t.Agent[order[k]] == a {
			r := t.Round[order[k]]
			for k < len(order) && t.Agent[order[k]] == a && t.Round[order[k]] == r {
				i := order[k]
				m := t.Market[i]
				if stamp[m] == run {
					c.bad.Add("%s: agent %q forecasts market %q in round %q twice (also %s)", t.where(int(i)),
						t.Agents.Names[a], t.Markets.Names[m], t.Rounds.Names[r], t.where(int(seenAt[m])))
				}
				stamp[m], seenAt[m] = run, i
				k++
			}
			run++
		}
		c.spans = append(c.spans, span{int(a), lo, k})
		if t.Agents.Names[a] == MarketAgent {
			c.marketAt, c.marketRow = c.bad.Total, order[lo]
		}
	}
	return c
}

// grouper holds scratch space reused across agents: the per-row arrays
// of one agent are reused by the next (none of them is kept in a result),
// so that a worker allocates for its largest agent, not for every row.
type grouper struct {
	t          *Table
	m          *meter
	p, x, b    []float64
	dv, w      []float64
	pb, bb, xb []float64
	roundOfB   []int32
	cl         []int32
	keys, sort []uint64 // CORP's
	logs       *logMemo
	drawn      draws
	emptyEvent int32
	evStamp    []int32 // per event id: agent pass that last saw it
	evID       []int32
	mkStamp    []int32
	mkID       []int32
	pass       int32
}

func newGrouper(t *Table, m *meter) *grouper {
	// The empty event's id, by a scan of the names (the map of a DictOf
	// is built at its first use, which analyses running side by side
	// must not race to).
	g := &grouper{t: t, m: m, emptyEvent: int32(slices.Index(t.Events.Names, ""))}
	g.evStamp, g.evID = make([]int32, t.Events.Len()), make([]int32, t.Events.Len())
	g.mkStamp, g.mkID = make([]int32, t.Markets.Len()), make([]int32, t.Markets.Len())
	for i := range g.evStamp {
		g.evStamp[i] = -1
	}
	for i := range g.mkStamp {
		g.mkStamp[i] = -1
	}
	return g
}

// inOrder returns the forecasts, benchmarks and outcomes of t's rows in
// order, a permutation of them. Each row is read once, in input order,
// and written to its place: the writes run on in as many stretches as
// there are agents, where reading the rows in order would jump through
// the columns once per agent.
func inOrder(t *Table, order []int32) (p, b, x []float64) {
	n := len(order)
	at := make([]int32, n)
	for k, i := range order {
		at[i] = int32(k)
	}
	p, b, x = make([]float64, n), make([]float64, n), make([]float64, n)
	for i, k := range at {
		p[k], b[k], x[k] = t.P[i], t.B[i], t.X[i]
	}
	return p, b, x
}

// gatherEcho copies the benchmarks and outcomes of rows idx into g's
// scratch, the benchmarks as forecasts too (the market baseline).
func (g *grouper) gatherEcho(idx []int32) (p, b, x []float64) {
	t := g.t
	n := len(idx)
	p, x, b = grow(&g.p, n), grow(&g.x, n), grow(&g.b, n)
	for k, i := range idx {
		p[k], b[k], x[k] = t.B[i], t.B[i], t.X[i]
	}
	return p, b, x
}

// decompositions are an agent's figures over all its predictions.
type decompositions struct {
	murphy        Murphy
	corp          CORP
	ece, logScore float64
}

// decompose computes the Murphy and CORP decompositions, ECE and log
// score of forecasts p with outcomes x. It fails only when g's meter
// finds its context ended.
func (g *grouper) decompose(p, x []float64, opt Options) (decompositions, error) {
	if err := g.m.add(len(p)); err != nil {
		return decompositions{}, err
	}
	if g.logs == nil {
		g.logs = new(logMemo)
	}
	d := decompositions{murphy: Decompose(p, x, opt.Bins), corp: decomposeCORP(p, x, &g.keys, &g.sort), logScore: logScore(p, x, g.logs)}
	d.ece = d.murphy.ECE()
	return d, nil
}

// agent computes one AgentResult from rows idx (grouped by round), whose
// forecasts, benchmarks and outcomes are p, b, x, but for the
// decompositions (decompose). It fails only when g's meter finds its
// context ended.
func (g *grouper) agent(name string, idx []int32, p, b, x []float64, opt Options) (AgentResult, error) {
	if err := g.m.add(len(idx)); err != nil {
		return AgentResult{}, err
	}
	res := AgentResult{Agent: name, N: len(idx)}
	ar := g.rounds(&res, idx, p, b, x)
	cumulative(&res, &ar, p, x, opt)
	if len(ar.alphas) > 0 {
		if err := g.alphaInference(&res, &ar, opt); err != nil {
			return AgentResult{}, err
		}
	}
	return res, nil
}

// agentRounds is what one pass over an agent's rounds gathers.
type agentRounds struct {
	briers, alphas        []float64
	alphaBase, alphaAgent []float64 // round means on the benchmarked set, for BSS vs market
	// The benchmarked predictions: forecasts, benchmarks and outcomes;
	// δ = (b−x)² − (p−x)²; their round's count of them; their clusters
	// (cluster SE, bootstrap); and Σ |b − p| over them.
	pb, bb, xb, dv []float64
	roundOfB, cl   []int32
	clusters       int32
	sAbs           float64
}

// rounds scores each round of the agent's rows idx (grouped by round) into
// res.RoundScores: Brier over all markets, Alpha over benchmarked ones.
// The slices it returns are g's scratch.
func (g *grouper) rounds(res *AgentResult, idx []int32, p, b, x []float64) agentRounds {
	t := g.t
	n := len(idx)
	// When every prediction has a benchmark (the usual case) the
	// benchmarked subset is the whole agent: reuse p, b, x, copy nothing.
	allB := true
	for _, v := range b {
		if v != v {
			allB = false
			break
		}
	}
	ar := agentRounds{dv: grow(&g.dv, n)[:0], roundOfB: grow(&g.roundOfB, n)[:0], cl: grow(&g.cl, n)[:0]}
	if allB {
		ar.pb, ar.bb, ar.xb = p, b, x
	} else {
		ar.pb, ar.bb, ar.xb = grow(&g.pb, n)[:0], grow(&g.bb, n)[:0], grow(&g.xb, n)[:0]
	}
	res.RoundScores = make([]RoundScore, 0, n/4+1)
	g.pass++
	for lo := 0; lo < n; {
		r := t.Round[idx[lo]]
		hi := lo
		for hi < n && t.Round[idx[hi]] == r {
			hi++
		}
		rs := RoundScore{Round: t.Rounds.Names[r], N: hi - lo, Brier: RoundBrier(p[lo:hi], x[lo:hi])}
		ar.briers = append(ar.briers, rs.Brier)
		var sd, sa, sb float64
		nb := 0
		for k := lo; k < hi; k++ {
			if b[k] != b[k] {
				continue
			}
			nb++
			ea, eb := (p[k]-x[k])*(p[k]-x[k]), (b[k]-x[k])*(b[k]-x[k])
			sa += ea
			sb += eb
			d := eb - ea
			sd += d
			ar.dv = append(ar.dv, d)
			if !allB {
				ar.pb, ar.bb, ar.xb = append(ar.pb, p[k]), append(ar.bb, b[k]), append(ar.xb, x[k])
			}
			ar.roundOfB = append(ar.roundOfB, int32(nb)) // replaced by the round's n_b below
			ar.sAbs += math.Abs(b[k] - p[k])
			ar.cl = append(ar.cl, g.cluster(idx[k], &ar.clusters))
		}
		if nb > 0 {
			f := float64(nb)
			rs.AlphaN = nb
			rs.Alpha = Def(sd / f)
			rs.BaseBrier = Def(sb / f)
			ar.alphas = append(ar.alphas, sd/f)
			ar.alphaBase = append(ar.alphaBase, sb/f)
			ar.alphaAgent = append(ar.alphaAgent, sa/f)
			for k := len(ar.roundOfB) - nb; k < len(ar.roundOfB); k++ {
				ar.roundOfB[k] = int32(nb)
			}
		}
		res.RoundScores = append(res.RoundScores, rs)
		lo = hi
	}
	return ar
}

// cluster numbers row i's cluster within the agent being scored (g.pass):
// its event, or its market when it has none; *next counts the clusters.
func (g *grouper) cluster(i int32, next *int32) int32 {
	if ev := g.t.Event[i]; ev != g.emptyEvent {
		if g.evStamp[ev] != g.pass {
			g.evStamp[ev], g.evID[ev] = g.pass, *next
			*next++
		}
		return g.evID[ev]
	}
	m := g.t.Market[i]
	if g.mkStamp[m] != g.pass {
		g.mkStamp[m], g.mkID[m] = g.pass, *next
		*next++
	}
	return g.mkID[m]
}

// cumulative sets the agent's figures over all its rounds: Brier, the
// counts and skill vs the constant 0.25 reference, accuracy.
func cumulative(res *AgentResult, ar *agentRounds, p, x []float64, opt Options) {
	res.Rounds = len(ar.briers)
	bt := TestMean(ar.briers)
	res.Brier, res.BrierSE = bt.Mean, bt.SE
	inf := &res.Inference
	inf.AlphaN, inf.AlphaRounds, inf.MissingB = len(ar.dv), len(ar.alphas), res.N-len(ar.dv)
	inf.Provisional = len(ar.dv) < opt.ShrinkN
	inf.BSS = SkillScore(res.Brier, 0.25)
	inf.Accuracy = Accuracy(p, x)
}

// alphaInference sets the figures of the agent's alpha, which needs a
// benchmarked round: its test, shrinkage, skill vs the market, wins,
// boldness, power, clustered SE, bootstrap CI (opt.Bootstrap > 0) and
// decomposition. It fails only when g's meter finds its context ended.
func (g *grouper) alphaInference(res *AgentResult, ar *agentRounds, opt Options) error {
	inf := &res.Inference
	at := TestMean(ar.alphas)
	res.Alpha, res.AlphaSE, res.T, res.P = Def(at.Mean), at.SE, at.T, at.P
	beat := 0
	for _, a := range ar.alphas {
		if a > 0 {
			beat++
		}
	}
	res.BeatPct = Def(100 * float64(beat) / float64(len(ar.alphas)))
	inf.ShrunkAlpha = Def(ShrinkBy(at.Mean, len(ar.dv), opt.ShrinkN))
	inf.BSSMarket = SkillScore(mean(ar.alphaAgent), mean(ar.alphaBase))
	inf.WinRate = Wins(ar.pb, ar.bb, ar.xb)
	inf.Boldness = Def(ar.sAbs / float64(len(ar.dv)))
	inf.ToSignif = RoundsToSignificance(opt.Power, at.Mean, inf.Boldness.V, len(ar.dv), len(ar.alphas))
	// Weights w_i = 1/(R·n_r) make the weighted mean of δ equal ᾱ.
	w := grow(&g.w, len(ar.dv))
	fr := float64(len(ar.alphas))
	for k := range w {
		w[k] = 1 / (fr * float64(ar.roundOfB[k]))
	}
	inf.Clusters = int(ar.clusters)
	inf.ClusterSE = ClusterSE(ar.dv, w, ar.cl, int(ar.clusters))
	if opt.Bootstrap > 0 {
		var err error
		if inf.CI, err = clusterBootstrapCI(g.m, ar.dv, w, ar.cl, int(ar.clusters), opt.Bootstrap, opt.Seed, opt.Level, &g.drawn); err != nil {
			return err
		}
	}
	inf.AlphaParts = DecomposeAlpha(ar.pb, ar.bb, ar.xb, opt.Bins)
	return nil
}

// grow returns (*buf)[:n], reallocating *buf when it holds fewer than n.
func grow[T any](buf *[]T, n int) []T {
	if cap(*buf) < n {
		*buf = make([]T, n)
	}
	return (*buf)[:n]
}

func mean(v []float64) float64 {
	var s float64
	for _, x := range v {
		s += x
	}
	return s / float64(len(v))
}

// Subset returns the rows idx of t as a new table sharing t's dictionaries
// (for per-category reports).
func (t *Table) Subset(idx []int) *Table {
	s := &Table{Agents: t.Agents, Rounds: t.Rounds, Markets: t.Markets, Categories: t.Categories, Events: t.Events}
	for _, i := range idx {
		s.Agent = append(s.Agent, t.Agent[i])
		s.Round = append(s.Round, t.Round[i])
		s.Market = append(s.Market, t.Market[i])
		s.Category = append(s.Category, t.Category[i])
		s.Event = append(s.Event, t.Event[i])
		s.P = append(s.P, t.P[i])
		s.B = append(s.B, t.B[i])
		s.X = append(s.X, t.X[i])
		if i < len(t.Line) {
			s.Line = append(s.Line, t.Line[i])
		}
	}
	return s
}
