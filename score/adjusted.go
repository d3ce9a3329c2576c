package score

import (
	"fmt"
	"math"
	"slices"
	"strings"
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
	Seed       uint64
	Level      float64 // CI level; 0 → 0.95
	Tol        float64 // convergence of the alternating means; 0 → 1e-12
	MaxIter    int     // 0 → 10,000
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
	// result (memory grows with replicates × agents).
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
	Bootstrap  int       `json:"bootstrap"`
	Seed       uint64    `json:"seed"`
	// Replicates are the bootstrap's adjusted scores, replicate by
	// replicate, indexed as AgentOrder (with FEOptions.KeepReplicates).
	Replicates [][]float64 `json:"-"`
	AgentOrder []string    `json:"-"`
}

// feData is the observation matrix in index form.
type feData struct {
	agents    []string
	est       []bool
	qAgent    [][]int32   // per question: agents that answered it
	qBrier    [][]float64 // aligned with qAgent
	strata    [][]int32   // question indices per stratum
	nq        int
	tol       float64
	maxIter   int
	iters     int
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
// group leader's are tied with it). Same seed → identical result.
func AdjustedLeaderboard(obs []FEObs, opt FEOptions) (*FEResult, error) {
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
	d, qStratum, err := indexObservations(obs, opt)
	if err != nil {
		return nil, err
	}
	res := &FEResult{Bootstrap: max(opt.Bootstrap, 0), Seed: opt.Seed}
	w, err := d.estimationWeights(opt.Estimation, qStratum, res)
	if err != nil {
		return nil, err
	}
	point, n, raw, gamma := d.fit(w, nil)
	res.Iterations = d.iters
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
		var reps [][]float64
		res.Pairs, reps = d.bootstrap(agents, w, gamma, opt)
		if opt.KeepReplicates {
			res.Replicates, res.AgentOrder = reps, slices.Clone(d.agents)
		}
	}
	rankAndGroup(agents)
	res.Agents = agents
	return res, nil
}

// indexObservations numbers agents, questions and strata in order of first
// appearance and checks each observation: a Brier score in [0, 1], one per
// agent and question. It returns each question's stratum.
func indexObservations(obs []FEObs, opt FEOptions) (*feData, []int, error) {
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
	for _, o := range obs {
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
			d.qAgent = append(d.qAgent, nil)
			d.qBrier = append(d.qBrier, nil)
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
		d.qAgent[q] = append(d.qAgent[q], int32(a))
		d.qBrier[q] = append(d.qBrier[q], o.Brier)
	}
	d.nq = len(d.questions)
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
	for _, name := range estimation {
		a, ok := d.agentOf[name]
		if !ok {
			return nil, fmt.Errorf("estimation agent %q has no observations", name)
		}
		d.est[a] = true
	}
	w := make([]float64, d.nq)
	for q := range d.questions {
		for _, a := range d.qAgent[q] {
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

// bootstrap resamples questions within strata opt.Bootstrap times, refits
// each replicate (warm-started from gamma), sets every agent's percentile
// CI, P(rank 1) and P(top 5%), and returns the paired comparisons (for
// each ordered pair, the one-sided p-value of "A is no better than B")
// and the replicates.
func (d *feData) bootstrap(agents []FEAgent, w, gamma []float64, opt FEOptions) ([]FEPair, [][]float64) {
	na := len(agents)
	reps := make([][]float64, opt.Bootstrap)
	r := NewRand(opt.Seed)
	rank1, top := make([]float64, na), make([]float64, na)
	contender := make([]bool, na)
	for i, a := range d.agents {
		contender[i] = opt.Contenders == nil || slices.Contains(opt.Contenders, a)
	}
	for b := range reps {
		clear(w)
		for _, qs := range d.strata {
			for range qs {
				w[qs[Bounded(r, uint64(len(qs)))]]++
			}
		}
		adj, _, _, _ := d.fit(w, gamma)
		reps[b] = adj
		rankShares(adj, contender, opt.TopShare, rank1, top)
	}
	col := make([]float64, 0, len(reps))
	for i := range agents {
		col = col[:0]
		for _, rep := range reps {
			if !math.IsNaN(rep[i]) {
				col = append(col, rep[i])
			}
		}
		if len(col) > 0 {
			lo, hi := percentileCI(col, opt.Level)
			agents[i].CILo, agents[i].CIHi = Def(lo), Def(hi)
		}
		if contender[i] {
			agents[i].PRank1 = Def(rank1[i] / float64(len(reps)))
			agents[i].PTop = Def(top[i] / float64(len(reps)))
		}
	}
	var pairs []FEPair
	for i := range na {
		if opt.PairsFor != nil && !slices.Contains(opt.PairsFor, d.agents[i]) {
			continue
		}
		for j := range na {
			if i == j {
				continue
			}
			ge, valid := 0, 0
			for _, rep := range reps {
				if math.IsNaN(rep[i]) || math.IsNaN(rep[j]) {
					continue
				}
				valid++
				if rep[i] >= rep[j] {
					ge++
				}
			}
			pairs = append(pairs, FEPair{A: d.agents[i], B: d.agents[j], P: float64(1+ge) / float64(valid+1)})
		}
	}
	return pairs, reps
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
	group := 0
	for i := range agents {
		if agents[i].Tie != 0 {
			continue
		}
		group++
		agents[i].Tie = group
		for j := i + 1; j < len(agents); j++ {
			if agents[j].Tie == 0 && overlaps(agents[i], agents[j]) {
				agents[j].Tie = group
			}
		}
	}
	for i := range agents {
		agents[i].Rank = i + 1
	}
}

func overlaps(a, b FEAgent) bool {
	if !a.CILo.OK || !b.CILo.OK {
		return false
	}
	return a.CILo.V <= b.CIHi.V && b.CILo.V <= a.CIHi.V
}

// fit runs the alternating means with question weights w (bootstrap
// multiplicities; 0 = left out), warm-started from gamma0 when given. It
// returns each agent's rescaled adjusted score (NaN when the agent has no
// weighted question), question count, raw mean Brier, and γ̂.
func (d *feData) fit(w []float64, gamma0 []float64) (adj []float64, n []int, raw []float64, gamma []float64) {
	na := len(d.agents)
	gamma = make([]float64, d.nq)
	if gamma0 != nil {
		copy(gamma, gamma0)
	}
	alpha := make([]float64, na)
	sw := make([]float64, na)
	sb := make([]float64, na)
	n = make([]int, na)
	raw = make([]float64, na)
	for q := range d.nq {
		if w[q] == 0 {
			continue
		}
		for k, a := range d.qAgent[q] {
			sw[a] += w[q]
			raw[a] += w[q] * d.qBrier[q][k]
			n[a]++
		}
	}
	for a := range raw {
		if sw[a] > 0 {
			raw[a] /= sw[a]
		}
	}
	d.iters = 0
	for it := 1; it <= d.maxIter; it++ {
		d.iters = it
		// α_i = weighted mean over i's questions of (b_ij − γ_j), estimation agents.
		clear(sb)
		for q := range d.nq {
			if w[q] == 0 {
				continue
			}
			for k, a := range d.qAgent[q] {
				if d.est[a] {
					sb[a] += w[q] * (d.qBrier[q][k] - gamma[q])
				}
			}
		}
		for a := range alpha {
			if d.est[a] && sw[a] > 0 {
				alpha[a] = sb[a] / sw[a]
			}
		}
		// γ_j = mean over estimation agents answering j of (b_ij − α_i),
		// then centred (weighted) so the fit is identified.
		var change, sg, swq float64
		for q := range d.nq {
			if w[q] == 0 {
				continue
			}
			var s float64
			c := 0
			for k, a := range d.qAgent[q] {
				if d.est[a] {
					s += d.qBrier[q][k] - alpha[a]
					c++
				}
			}
			g := s / float64(c)
			change = math.Max(change, math.Abs(g-gamma[q]))
			gamma[q] = g
			sg += w[q] * g
			swq += w[q]
		}
		m := sg / swq
		for q := range gamma {
			if w[q] != 0 {
				gamma[q] -= m
			}
		}
		if change < d.tol {
			break
		}
	}
	// Adjusted score over each agent's questions, then the shift that puts
	// the constant 0.5 forecaster (b = 0.25 everywhere) at 0.25:
	// its adjusted score is 0.25 − mean_j γ_j = 0.25 (γ is centred), so no
	// shift is needed once γ is centred on the same weights.
	adj = make([]float64, na)
	clear(sb)
	for q := range d.nq {
		if w[q] == 0 {
			continue
		}
		for k, a := range d.qAgent[q] {
			sb[a] += w[q] * (d.qBrier[q][k] - gamma[q])
		}
	}
	for a := range adj {
		if sw[a] > 0 {
			adj[a] = sb[a] / sw[a]
		} else {
			adj[a] = math.NaN()
		}
	}
	return adj, n, raw, gamma
}
