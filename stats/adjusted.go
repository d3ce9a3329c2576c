package stats

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// FEObs is one agent's Brier score on one question, for the difficulty-adjusted leaderboard.
type FEObs struct {
	Agent    string
	Question string
	// Stratum is the bootstrap stratum of the question (round and
	// source kind); questions are resampled within their stratum.
	Stratum string
	Brier   float64
}

// FEOptions tune AdjustedLeaderboard.
type FEOptions struct {
	// Estimation lists the agents whose scores estimate question
	// difficulty γ (the "stated estimation set"); empty means all.
	Estimation []string
	Bootstrap  int // replicates; 0 → 1999, < 0 → none
	// MaxWork caps the bootstrap's work: replicates run in order until
	// Bootstrap are done or the fits of those run have visited MaxWork
	// observations, whichever comes first (a sweep of the alternating
	// means visits every observation of a drawn question twice); the
	// result says how many ran. 0: no cap.
	MaxWork int64
	Seed    uint64
	Level   float64 // CI level; 0 → 0.95
	Tol     float64 // convergence of the alternating means; 0 → 1e-12
	MaxIter int     // 0 → 10,000
	// PairsFor limits the paired tests to those whose first agent is
	// listed; nil means every ordered pair, which grows with the square
	// of the agents (10,000 agents: 10⁸ pairs).
	PairsFor []string
	// PairsWithBest, set, limits the paired tests to those of the best
	// contender by point estimate (ties by name), overriding PairsFor.
	PairsWithBest bool
	// Contenders are the agents that compete for the places P(rank 1)
	// and P(top 5%) count (the others still enter the fit); nil means all.
	Contenders []string
	// TopShare is the share of the contenders P(top) counts; 0 → TopShare.
	TopShare float64
	// KeepReplicates keeps every replicate's adjusted scores in the
	// result (memory grows with replicates × agents; without it the
	// bootstrap keeps a few order statistics per agent).
	KeepReplicates bool
}

// FEAgent is one agent's difficulty-adjusted result.
type FEAgent struct {
	Agent    string  `json:"agent"`
	N        int     `json:"n"`     // questions scored
	Brier    float64 `json:"brier"` // raw mean Brier over those questions
	Adjusted float64 `json:"adjusted"`
	CILo     Float   `json:"ci_lo"`
	CIHi     Float   `json:"ci_hi"`
	PRank1   Float   `json:"p_rank1"` // share of replicates in which it ranks first among the contenders
	PTop     Float   `json:"p_top5"`  // share of replicates in which it is among the top TopPlaces contenders
	Tie      int     `json:"tie_group"`
	Rank     int     `json:"rank"`
}

// FEPair is the paired bootstrap test that A is better (lower adjusted
// score) than B: p = (1 + #{replicates: adj_A ≥ adj_B}) / (B + 1).
type FEPair struct {
	A string  `json:"a"`
	B string  `json:"b"`
	P float64 `json:"p"`
}

// FEResult is the difficulty-adjusted leaderboard.
type FEResult struct {
	Agents     []FEAgent `json:"agents"` // by adjusted score, best first
	Pairs      []FEPair  `json:"pairs"`  // every ordered pair of agents, or those of FEOptions.PairsFor
	Questions  int       `json:"questions"`
	Dropped    int       `json:"dropped_questions"` // answered by no estimation agent
	Iterations int       `json:"iterations"`
	// Bootstrap is the replicates run: FEOptions.Bootstrap, or fewer when
	// MaxWork stopped the bootstrap (Capped).
	Bootstrap int    `json:"bootstrap"`
	Capped    bool   `json:"bootstrap_capped,omitempty"`
	Seed      uint64 `json:"seed"`
	// Replicates are the bootstrap's adjusted scores, replicate by
	// replicate, indexed as AgentOrder (with FEOptions.KeepReplicates).
	Replicates [][]float64 `json:"-"`
	AgentOrder []string    `json:"-"`
}

// feData is the observation matrix in index form.
type feData struct {
	agents []string
	est    []bool
	allEst bool // every agent estimates difficulty
	// The observations by question, in input order within a question:
	// question q's agents are qAgent[qStart[q]:qStart[q+1]], their
	// Brier scores the same span of qBrier.
	qStart    []int
	qAgent    []int32
	qBrier    []float64
	strata    [][]int32 // question indices per stratum
	nq        int
	tol       float64
	maxIter   int
	agentOf   map[string]int
	questions []string
}

// AdjustedLeaderboard implements the difficulty-adjusted leaderboard: the two-way fixed-effects model
// b_ij = α_i + γ_j + ε_ij fitted by alternating means (Gauss–Seidel, γ
// centred each sweep) on the estimation agents; every agent's adjusted
// score is mean_j (b_ij − γ̂_j) over its questions, shifted so that a
// constant 0.5 forecaster answering every question (b = 0.25) scores 0.25.
// A seeded bootstrap resamples questions within strata and re-runs the
// whole fit per replicate, giving percentile CIs, P(rank 1), paired
// one-sided p-values and tie groups (agents whose CI overlaps the
// group leader's are tied with it). Same seed → identical result. The
// replicates are fitted on every core; their results are taken in
// replicate order, so the schedule changes nothing. It stops with ctx,
// returning ctx's error.
func AdjustedLeaderboard(ctx context.Context, obs []FEObs, opt FEOptions) (*FEResult, error) {
	if len(obs) == 0 {
		return nil, fmt.Errorf("no observations")
	}
	if opt.Bootstrap == 0 {
		opt.Bootstrap = DefaultBootstrap
	}
	if opt.Level == 0 {
		opt.Level = 0.95
	}
	if opt.TopShare == 0 {
		opt.TopShare = TopShare
	}
	d, qStratum, err := indexObservations(ctx, obs, opt)
	if err != nil {
		return nil, err
	}
	res := &FEResult{Seed: opt.Seed}
	w, err := d.estimationWeights(opt.Estimation, qStratum, res)
	if err != nil {
		return nil, err
	}
	s := d.newScratch()
	point := make([]float64, len(d.agents))
	if res.Iterations, _, err = d.fit(newMeter(ctx), w, nil, s, point); err != nil {
		return nil, fmt.Errorf("score: adjusted leaderboard: %w", err)
	}
	gamma := slices.Clone(s.gamma)
	n, raw := d.counts(w)
	agents := make([]FEAgent, len(d.agents))
	for i := range agents {
		agents[i] = FEAgent{Agent: d.agents[i], N: n[i], Brier: raw[i], Adjusted: point[i]}
	}
	if opt.PairsWithBest {
		opt.PairsFor = []string{}
		best := -1
		for i, a := range agents {
			if math.IsNaN(a.Adjusted) || (opt.Contenders != nil && !slices.Contains(opt.Contenders, a.Agent)) {
				continue
			}
			if best < 0 || a.Adjusted < agents[best].Adjusted || (a.Adjusted == agents[best].Adjusted && a.Agent < agents[best].Agent) {
				best = i
			}
		}
		if best >= 0 {
			opt.PairsFor = []string{agents[best].Agent}
		}
	}
	if opt.Bootstrap > 0 {
		b, err := d.bootstrap(ctx, agents, gamma, opt)
		if err != nil {
			return nil, fmt.Errorf("score: adjusted leaderboard: bootstrap: %w", err)
		}
		res.Pairs, res.Bootstrap, res.Capped = b.pairs, b.ran, b.ran < opt.Bootstrap
		if opt.KeepReplicates {
			res.Replicates, res.AgentOrder = b.reps, slices.Clone(d.agents)
		}
	}
	rankAndGroup(agents)
	res.Agents = agents
	return res, nil
}

// indexObservations numbers agents, questions and strata in order of first
// appearance and checks each observation: a Brier score in [0, 1], one per
// agent and question. It returns each question's stratum.
func indexObservations(ctx context.Context, obs []FEObs, opt FEOptions) (*feData, []int, error) {
	d := &feData{tol: opt.Tol, maxIter: opt.MaxIter, agentOf: map[string]int{}}
	if d.tol == 0 {
		d.tol = 1e-12
	}
	if d.maxIter == 0 {
		d.maxIter = 10_000
	}
	qOf := map[string]int{}
	sOf := map[string]int{}
	var qStratum []int
	type key struct{ a, q int }
	seen := map[key]bool{}
	m := newMeter(ctx)
	agentOf, questionOf := make([]int32, len(obs)), make([]int32, len(obs))
	for i, o := range obs {
		if err := m.add(1); err != nil {
			return nil, nil, fmt.Errorf("score: adjusted leaderboard: %w", err)
		}
		if !(o.Brier >= 0 && o.Brier <= 1) {
			return nil, nil, fmt.Errorf("agent %q question %q: Brier %v outside [0,1]", o.Agent, o.Question, o.Brier)
		}
		a, ok := d.agentOf[o.Agent]
		if !ok {
			a = len(d.agents)
			d.agentOf[o.Agent] = a
			d.agents = append(d.agents, o.Agent)
		}
		q, ok := qOf[o.Question]
		if !ok {
			q = len(d.questions)
			qOf[o.Question] = q
			d.questions = append(d.questions, o.Question)
			s, ok := sOf[o.Stratum]
			if !ok {
				s = len(sOf)
				sOf[o.Stratum] = s
			}
			qStratum = append(qStratum, s)
		}
		if seen[key{a, q}] {
			return nil, nil, fmt.Errorf("agent %q scored twice on question %q", o.Agent, o.Question)
		}
		seen[key{a, q}] = true
		agentOf[i], questionOf[i] = int32(a), int32(q)
	}
	d.nq = len(d.questions)
	d.qStart = make([]int, d.nq+1)
	for _, q := range questionOf {
		d.qStart[q+1]++
	}
	for q := range d.nq {
		d.qStart[q+1] += d.qStart[q]
	}
	at := slices.Clone(d.qStart[:d.nq])
	d.qAgent, d.qBrier = make([]int32, len(obs)), make([]float64, len(obs))
	for i, q := range questionOf {
		d.qAgent[at[q]], d.qBrier[at[q]] = agentOf[i], obs[i].Brier
		at[q]++
	}
	d.strata = make([][]int32, len(sOf))
	return d, qStratum, nil
}

// estimationWeights marks the estimation agents and returns the question
// weights of the point fit: 1 for a question an estimation agent answered,
// 0 otherwise. Questions no estimation agent answered have no difficulty
// estimate, so they are dropped for everyone (counted in res.Dropped)
// rather than guessed. It also fills the bootstrap strata.
func (d *feData) estimationWeights(estimation []string, qStratum []int, res *FEResult) ([]float64, error) {
	d.est = make([]bool, len(d.agents))
	if len(estimation) == 0 {
		for i := range d.est {
			d.est[i] = true
		}
	}
	defer func() { d.allEst = !slices.Contains(d.est, false) }()
	for _, name := range estimation {
		a, ok := d.agentOf[name]
		if !ok {
			return nil, fmt.Errorf("estimation agent %q has no observations", name)
		}
		d.est[a] = true
	}
	w := make([]float64, d.nq)
	for q := range d.questions {
		for _, a := range d.qAgent[d.qStart[q]:d.qStart[q+1]] {
			if d.est[a] {
				w[q] = 1
				break
			}
		}
		if w[q] == 0 {
			res.Dropped++
			continue
		}
		res.Questions++
		d.strata[qStratum[q]] = append(d.strata[qStratum[q]], int32(q))
	}
	if res.Questions == 0 {
		return nil, fmt.Errorf("no question was answered by an estimation agent")
	}
	return w, nil
}

// counts returns each agent's count of weighted questions and its raw
// mean Brier score over them (weighted by w).
func (d *feData) counts(w []float64) (n []int, raw []float64) {
	n, raw = make([]int, len(d.agents)), make([]float64, len(d.agents))
	sw := make([]float64, len(d.agents))
	for q := range d.nq {
		if w[q] == 0 {
			continue
		}
		for k := d.qStart[q]; k < d.qStart[q+1]; k++ {
			a := d.qAgent[k]
			sw[a] += w[q]
			raw[a] += w[q] * d.qBrier[k]
			n[a]++
		}
	}
	for a := range raw {
		if sw[a] > 0 {
			raw[a] /= sw[a]
		}
	}
	return n, raw
}

// countSpan is the fewest agents a goroutine counts a replicate of.
const countSpan = 4096

// booted is what the bootstrap gives: the paired tests, the replicates
// run and, when kept, their adjusted scores.
type booted struct {
	pairs []FEPair
	ran   int
	reps  [][]float64
}

// replicate is one bootstrap replicate on its way through the workers:
// its question weights, then its fit's adjusted scores, work and place
// shares.
type replicate struct {
	w, adj     []float64
	work       int64
	first, top []placeShare
	err        error
	done       chan struct{}
}

// bootstrap resamples questions within strata opt.Bootstrap times (or
// until opt.MaxWork), refits each replicate (warm-started from gamma),
// sets every agent's percentile CI, P(rank 1) and P(top 5%), and returns
// the paired comparisons (for each pair, the one-sided p-value of "A is
// no better than B"). The weights are drawn in replicate order from one
// seeded stream and the fits run on every core; each replicate is taken
// in order, so the figures do not depend on the schedule.
func (d *feData) bootstrap(ctx context.Context, agents []FEAgent, gamma []float64, opt FEOptions) (booted, error) {
	t := d.newTally(opt)
	if err := d.replicates(ctx, gamma, opt, t.contender, t.take); err != nil {
		return t.out, err
	}
	t.finish(d, agents, opt.Level)
	return t.out, nil
}

// tally gathers what the bootstrap's replicates show, taken in order:
// every agent's tails of adjusted scores (its CI), its shares of rank 1
// and of the top, and the paired tests of the first agents against every
// other.
type tally struct {
	opt       FEOptions
	na        int
	contender []bool
	firsts    []int // the first agents of the paired tests
	tl        *tails
	rank1     []float64
	top       []float64
	ge, valid []int32 // per (first, other): replicates where first ≥ other, where both are defined
	out       booted
	spent     int64
}

func (d *feData) newTally(opt FEOptions) *tally {
	na := len(d.agents)
	t := &tally{opt: opt, na: na, contender: make([]bool, na)}
	var contenders map[string]bool
	if opt.Contenders != nil {
		contenders = map[string]bool{}
		for _, a := range opt.Contenders {
			contenders[a] = true
		}
	}
	for i, a := range d.agents {
		t.contender[i] = contenders == nil || contenders[a]
		if opt.PairsFor == nil || slices.Contains(opt.PairsFor, a) {
			t.firsts = append(t.firsts, i)
		}
	}
	t.tl = newTails(na, opt.Bootstrap, opt.Level)
	t.rank1, t.top = make([]float64, na), make([]float64, na)
	t.ge, t.valid = make([]int32, len(t.firsts)*na), make([]int32, len(t.firsts)*na)
	return t
}

// count adds a replicate's scores of agents [lo, hi) to their tails and
// paired tests.
func (t *tally) count(adj []float64, lo, hi int) {
	for i, v := range adj[lo:hi] {
		t.tl.add(lo+i, v)
	}
	for f, i := range t.firsts {
		if math.IsNaN(adj[i]) {
			continue
		}
		row := f * t.na
		for j := lo; j < hi; j++ {
			if v := adj[j]; j != i && !math.IsNaN(v) {
				t.valid[row+j]++
				if adj[i] >= v {
					t.ge[row+j]++
				}
			}
		}
	}
}

// take counts one fitted replicate and says whether the bootstrap goes
// on (its work budget, opt.MaxWork, not yet spent).
func (t *tally) take(rp *replicate) bool {
	// Many agents are counted on every core, each its own range (the
	// workers still fitting wait their turn for a core).
	if parts := min(runtime.GOMAXPROCS(0), t.na/countSpan); parts > 1 {
		var wg sync.WaitGroup
		for k := range parts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				t.count(rp.adj, k*t.na/parts, (k+1)*t.na/parts)
			}()
		}
		wg.Wait()
	} else {
		t.count(rp.adj, 0, t.na)
	}
	for _, s := range rp.first {
		t.rank1[s.i] += s.share
	}
	for _, s := range rp.top {
		t.top[s.i] += s.share
	}
	if t.opt.KeepReplicates {
		t.out.reps = append(t.out.reps, rp.adj)
	}
	t.out.ran++
	t.spent += rp.work
	return t.opt.MaxWork <= 0 || t.spent < t.opt.MaxWork
}

// finish sets every agent's CI and place shares and lists the paired
// tests.
func (t *tally) finish(d *feData, agents []FEAgent, level float64) {
	for i := range agents {
		if lo, hi, ok := t.tl.interval(i, level); ok {
			agents[i].CILo, agents[i].CIHi = Def(lo), Def(hi)
		}
		if t.contender[i] {
			agents[i].PRank1 = Def(t.rank1[i] / float64(t.out.ran))
			agents[i].PTop = Def(t.top[i] / float64(t.out.ran))
		}
	}
	for f, i := range t.firsts {
		for j := range t.na {
			if j != i {
				k := f*t.na + j
				t.out.pairs = append(t.out.pairs, FEPair{A: d.agents[i], B: d.agents[j], P: float64(1+t.ge[k]) / float64(t.valid[k]+1)})
			}
		}
	}
}

// replicates draws opt.Bootstrap resamples of the questions within their
// strata from one seeded stream, fits them on every core (warm-started
// from gamma) and hands each to take in the order drawn, until take says
// stop; a replicate drawn past that point is cancelled and dropped.
func (d *feData) replicates(ctx context.Context, gamma []float64, opt FEOptions, contender []bool, take func(*replicate) bool) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := runtime.GOMAXPROCS(0)
	jobs := make(chan *replicate)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, m := d.newScratch(), newMeter(wctx)
			for rp := range jobs {
				_, rp.work, rp.err = d.fit(m, rp.w, gamma, s, rp.adj)
				if rp.err == nil {
					rp.first, rp.top = placeShares(rp.adj, contender, opt.TopShare)
				}
				close(rp.done)
			}
		}()
	}
	var queue, free []*replicate
	r := NewRand(opt.Seed)
	more, err := true, error(nil)
	next := func() { // take the oldest replicate in flight
		rp := queue[0]
		queue = queue[1:]
		<-rp.done
		switch {
		case !more:
		case rp.err != nil:
			more, err = false, rp.err
		default:
			more = take(rp)
		}
		if !opt.KeepReplicates {
			free = append(free, rp)
		}
	}
	for b := 0; b < opt.Bootstrap && more; b++ {
		if e := ctx.Err(); e != nil {
			more, err = false, e
			break
		}
		var rp *replicate
		if n := len(free); n > 0 {
			rp, free = free[n-1], free[:n-1]
			clear(rp.w)
		} else {
			rp = &replicate{w: make([]float64, d.nq), adj: make([]float64, len(d.agents))}
		}
		rp.done = make(chan struct{})
		d.resample(r, rp.w)
		queue = append(queue, rp)
		jobs <- rp
		if len(queue) > 2*workers {
			next()
		}
	}
	close(jobs)
	for len(queue) > 0 {
		if !more {
			cancel() // the rest is not needed
		}
		next()
	}
	wg.Wait()
	if e := ctx.Err(); e != nil {
		err = e // a worker's may be its own context's
	}
	return err
}

// resample adds to w one draw with replacement of each stratum's
// questions, as many as it holds.
func (d *feData) resample(r *rand.PCG, w []float64) {
	for _, qs := range d.strata {
		for range qs {
			w[qs[Bounded(r, uint64(len(qs)))]]++
		}
	}
}

// rankAndGroup sorts agents by adjusted score (then name), numbers their
// ranks and forms tie groups: the best remaining agent leads a group, and
// every remaining agent whose CI overlaps the leader's joins it.
func rankAndGroup(agents []FEAgent) {
	slices.SortStableFunc(agents, func(a, b FEAgent) int {
		if a.Adjusted != b.Adjusted {
			if a.Adjusted < b.Adjusted {
				return -1
			}
			return 1
		}
		return strings.Compare(a.Agent, b.Agent)
	})
	groups := TieGroups(len(agents), func(i int) (float64, float64, bool) {
		return agents[i].CILo.V, agents[i].CIHi.V, agents[i].CILo.OK
	}, nil)
	for i := range agents {
		agents[i].Rank, agents[i].Tie = i+1, groups[i]
	}
}

// fitScratch is the working space of one fit, reused across replicates:
// γ (the fit's result), α, the per-agent sums and the weighted questions.
type fitScratch struct {
	gamma, alpha, sw, sb []float64
	drawn                []int32
}

func (d *feData) newScratch() *fitScratch {
	na := len(d.agents)
	return &fitScratch{gamma: make([]float64, d.nq), alpha: make([]float64, na), sw: make([]float64, na), sb: make([]float64, na)}
}

// fit runs the alternating means with question weights w (bootstrap
// multiplicities; 0 = left out), warm-started from gamma0 when given,
// leaving γ̂ in s.gamma and writing each agent's rescaled adjusted score
// into adj (NaN when the agent has no weighted question). It returns the
// sweeps run and the observations visited, and stops with m's context.
// Every sum adds its terms in question order, then input order.
func (d *feData) fit(m *meter, w, gamma0 []float64, s *fitScratch, adj []float64) (iters int, work int64, err error) {
	if gamma0 != nil {
		copy(s.gamma, gamma0)
	} else {
		clear(s.gamma)
	}
	clear(s.alpha)
	rows := d.draw(w, s)
	work = int64(rows)
	for it := 1; it <= d.maxIter; it++ {
		iters = it
		work += 2 * int64(rows)
		if err := m.add(2 * rows); err != nil {
			return iters, work, err
		}
		d.agentEffects(w, s)
		if d.questionEffects(w, s) < d.tol {
			break
		}
	}
	work += int64(rows)
	d.adjustedScores(w, s, adj)
	return iters, work, nil
}

// draw lists in s.drawn the questions of weight w > 0 and sums each
// agent's weight over them into s.sw; it returns their observations.
func (d *feData) draw(w []float64, s *fitScratch) (rows int) {
	clear(s.sw)
	drawn := s.drawn[:0]
	for q := range d.nq {
		if w[q] == 0 {
			continue
		}
		drawn = append(drawn, int32(q))
		rows += d.qStart[q+1] - d.qStart[q]
		for _, a := range d.qAgent[d.qStart[q]:d.qStart[q+1]] {
			s.sw[a] += w[q]
		}
	}
	s.drawn = drawn
	return rows
}

// agentEffects sets α_i, the weighted mean over i's questions of
// (b_ij − γ_j), for the estimation agents.
func (d *feData) agentEffects(w []float64, s *fitScratch) {
	qAgent, qBrier, est, gamma, sb := d.qAgent, d.qBrier, d.est, s.gamma, s.sb
	clear(sb)
	for _, q := range s.drawn {
		wq, gq := w[q], gamma[q]
		lo, hi := d.qStart[q], d.qStart[q+1]
		if d.allEst {
			for k, a := range qAgent[lo:hi] {
				sb[a] += wq * (qBrier[lo+k] - gq)
			}
			continue
		}
		for k, a := range qAgent[lo:hi] {
			if est[a] {
				sb[a] += wq * (qBrier[lo+k] - gq)
			}
		}
	}
	for a := range s.alpha {
		if est[a] && s.sw[a] > 0 {
			s.alpha[a] = sb[a] / s.sw[a]
		}
	}
}

// questionEffects sets γ_j, the mean over the estimation agents
// answering j of (b_ij − α_i), then centres γ (weighted) so the fit is
// identified. It returns the largest change of a γ_j.
func (d *feData) questionEffects(w []float64, s *fitScratch) (change float64) {
	qAgent, qBrier, est, alpha, gamma := d.qAgent, d.qBrier, d.est, s.alpha, s.gamma
	var sg, swq float64
	for _, q := range s.drawn {
		lo, hi := d.qStart[q], d.qStart[q+1]
		var sum float64
		c := 0
		if d.allEst {
			for k, a := range qAgent[lo:hi] {
				sum += qBrier[lo+k] - alpha[a]
			}
			c = hi - lo
		} else {
			for k, a := range qAgent[lo:hi] {
				if est[a] {
					sum += qBrier[lo+k] - alpha[a]
					c++
				}
			}
		}
		g := sum / float64(c)
		change = math.Max(change, math.Abs(g-gamma[q]))
		gamma[q] = g
		sg += w[q] * g
		swq += w[q]
	}
	mean := sg / swq
	for _, q := range s.drawn {
		gamma[q] -= mean
	}
	return change
}

// adjustedScores writes each agent's adjusted score over its questions
// into adj (NaN for an agent without a weighted question). The constant
// 0.5 forecaster (b = 0.25 everywhere) needs no shift to sit at 0.25: its
// adjusted score is 0.25 − mean_j γ_j = 0.25, γ being centred on the
// same weights.
func (d *feData) adjustedScores(w []float64, s *fitScratch, adj []float64) {
	sb := s.sb
	clear(sb)
	for _, q := range s.drawn {
		wq, gq := w[q], s.gamma[q]
		lo, hi := d.qStart[q], d.qStart[q+1]
		for k, a := range d.qAgent[lo:hi] {
			sb[a] += wq * (d.qBrier[lo+k] - gq)
		}
	}
	for a := range adj {
		if s.sw[a] > 0 {
			adj[a] = sb[a] / s.sw[a]
		} else {
			adj[a] = math.NaN()
		}
	}
}
