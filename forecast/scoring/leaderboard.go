package scoring

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena/forecast"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
)

// Board is the forecast leaderboard: the one model the JSON API, the
// dashboard, the reports, the demo and the export all render, so they
// agree on order, ranks and ties.
type Board struct {
	Methodology MethodStamp `json:"methodology"`
	// ScoredRounds counts the rounds the board covers; LastUpdated is
	// when the latest of them was scored (null for a board of none, or of
	// rows that name no time, as a file's).
	ScoredRounds int        `json:"scored_rounds"`
	LastUpdated  *time.Time `json:"last_updated"`
	// Rows are the ranked agents, best first, then the preliminary ones
	// (rank 0) in the same order.
	Rows []Row `json:"rows"`
	// Hidden counts the agents left out by the per-organisation limit.
	Hidden int `json:"hidden_by_organisation_limit"`
}

// Row is one agent of the leaderboard. Optional figures are null when
// undefined (no benchmark, a single round, no bootstrap).
type Row struct {
	// Rank is 1… among the ranked agents, 0 for a preliminary one.
	Rank         int    `json:"rank"`
	Agent        string `json:"agent"`
	Name         string `json:"name"`
	Organisation string `json:"organisation"`
	Model        string `json:"model"`
	// Baseline marks the random and market baselines.
	Baseline bool `json:"baseline"`
	// Preliminary: fewer resolved forecasts than the entry rule asks.
	Preliminary bool `json:"preliminary"`
	// Score is the headline: the difficulty-adjusted Brier Index
	// (100·(1 − √adjusted Brier); 50 = always 0.5, higher is better),
	// with its bootstrap interval.
	Score     *float64 `json:"score"`
	ScoreCILo *float64 `json:"score_ci_lo"`
	ScoreCIHi *float64 `json:"score_ci_hi"`
	N         int      `json:"n"`
	Rounds    int      `json:"rounds"`
	Brier     float64  `json:"brier"`
	BrierSE   *float64 `json:"brier_se"`
	// BrierIndex is the raw Brier Index; BSS the Brier skill score
	// against always 0.5; Peer the peer score (negative beats the others
	// on the same questions) over PeerN forecasts.
	BrierIndex float64  `json:"brier_index"`
	BSS        float64  `json:"bss"`
	Peer       *float64 `json:"peer_score"`
	PeerN      int      `json:"peer_n"`
	// Adjusted is the difficulty-adjusted Brier score and its interval.
	Adjusted     *float64 `json:"adjusted"`
	AdjustedCILo *float64 `json:"adjusted_ci_lo"`
	AdjustedCIHi *float64 `json:"adjusted_ci_hi"`
	// Alpha is market Brier − agent Brier per round; AlphaSE is clustered
	// by round; its interval a block bootstrap by event.
	Alpha       *float64 `json:"alpha"`
	AlphaSE     *float64 `json:"alpha_se"`
	AlphaCILo   *float64 `json:"alpha_ci_lo"`
	AlphaCIHi   *float64 `json:"alpha_ci_hi"`
	T           *float64 `json:"t"`
	P           *float64 `json:"p"`
	BeatPct     *float64 `json:"beat_pct"`
	ShrunkAlpha *float64 `json:"shrunk_alpha"`
	// Provisional: fewer benchmarked predictions than the alpha
	// shrinkage's weight.
	Provisional bool `json:"provisional"`
	// PRank1 and PTop are the shares of bootstrap replicates in which the
	// agent ranks first and among the top share of the ranked agents.
	PRank1 *float64 `json:"p_rank1"`
	PTop   *float64 `json:"p_top5"`
	// TieGroup groups ranked agents whose score intervals overlap their
	// group leader's (0 for a preliminary agent).
	TieGroup             int      `json:"tie_group"`
	RoundsToSignificance *float64 `json:"rounds_to_significance"`
	// VsLeader compares the agent with rank 1; null for the leader and
	// for an agent with no round in common with it.
	VsLeader *VsLeader `json:"vs_leader"`
}

// VsLeader is an agent's paired comparison with the leader: over the
// rounds both were scored in, the mean of (agent − leader) round Brier
// with its SE, 95% CI and two-sided p, and the paired bootstrap p that
// the leader's difficulty-adjusted score is not better.
type VsLeader struct {
	Rounds    int      `json:"rounds"`
	BrierDiff float64  `json:"brier_diff"`
	SE        *float64 `json:"se"`
	CILo      *float64 `json:"ci_lo"`
	CIHi      *float64 `json:"ci_hi"`
	P         *float64 `json:"p"`
	AdjustedP *float64 `json:"adjusted_p"`
}

// ProfilesOf turns display names by agent into the records the board
// presents agents with, for boards of a file (which names agents only).
func ProfilesOf(names map[string]string) map[string]arena.AgentInfo {
	out := make(map[string]arena.AgentInfo, len(names))
	for a, n := range names {
		out[a] = arena.AgentInfo{Address: a, Name: n}
	}
	return out
}

// headline is an agent's headline score key: its adjusted Brier Index,
// or NaN without one.
func headline(adj map[string]stats.FEAgent, agent string) float64 {
	if x, ok := adj[agent]; ok && !math.IsNaN(x.Adjusted) {
		return stats.BrierIndex(x.Adjusted)
	}
	return math.NaN()
}

// Order sorts results into leaderboard order: agents with at least
// m.MinForecasts forecasts first; within each part, by headline score
// (the difficulty-adjusted Brier Index, highest first; agents without one
// after), then raw Brier (lowest first), then agent.
func Order(res []stats.AgentResult, adjusted *stats.FEResult, m Method) {
	adj := feByAgent(adjusted)
	// Each key once, then a sort of positions (the results are large to
	// move): ties keep their order, as a stable sort would.
	keys := make([]float64, len(res))
	for i := range res {
		keys[i] = headline(adj, res[i].Agent)
	}
	perm := make([]int, len(res))
	for i := range perm {
		perm[i] = i
	}
	slices.SortFunc(perm, func(i, j int) int {
		a, b := &res[i], &res[j]
		pa, pb := a.N < m.MinForecasts, b.N < m.MinForecasts
		if pa != pb {
			if pa {
				return 1
			}
			return -1
		}
		ha, hb := keys[i], keys[j]
		switch {
		case math.IsNaN(ha) != math.IsNaN(hb):
			if math.IsNaN(ha) {
				return 1
			}
			return -1
		case ha != hb && !math.IsNaN(ha):
			return cmp.Compare(hb, ha)
		}
		return cmp.Or(cmp.Compare(a.Brier, b.Brier), strings.Compare(a.Agent, b.Agent), cmp.Compare(i, j))
	})
	sorted := make([]stats.AgentResult, len(res))
	for k, i := range perm {
		sorted[k] = res[i]
	}
	copy(res, sorted)
}

func feByAgent(r *stats.FEResult) map[string]stats.FEAgent {
	out := map[string]stats.FEAgent{}
	if r != nil {
		for _, x := range r.Agents {
			out[x.Agent] = x
		}
	}
	return out
}

// Board is the leaderboard of the analysis, its agents presented by
// profiles (an agent without one shows its address).
func (a *Analysis) Board(profiles map[string]arena.AgentInfo) Board {
	b := BoardOf(&Scored{Results: a.Results, Adjusted: a.Adjusted, Peers: a.Peers}, a.Method, profiles)
	b.ScoredRounds = a.ScoredRounds
	if !a.LastScored.IsZero() {
		t := a.LastScored.UTC()
		b.LastUpdated = &t
	}
	return b
}

// BoardOf is the leaderboard of scored results (in Order's order) with
// method m: the entry rules applied, ranks, tie groups and each agent's
// comparison with the leader.
func BoardOf(s *Scored, m Method, profiles map[string]arena.AgentInfo) Board {
	b := Board{Methodology: m.Stamp(), Rows: make([]Row, 0, len(s.Results))}
	adj := feByAgent(s.Adjusted)
	perOrg := map[string]int{}
	var leader *stats.AgentResult
	var leaderP map[string]float64 // the leader's paired p-values, by the other agent
	for i := range s.Results {
		res := &s.Results[i]
		p := profiles[res.Agent]
		r := newRow(res, adj, s.Peers[res.Agent], p, m)
		if !r.Preliminary && p.Organisation != "" && m.MaxPerOrganisation > 0 {
			if perOrg[p.Organisation] >= m.MaxPerOrganisation {
				b.Hidden++
				continue
			}
			perOrg[p.Organisation]++
		}
		if !r.Preliminary {
			r.Rank = len(b.Rows) + 1
			if leader == nil {
				leader, leaderP = res, pairsOf(s.Adjusted, res.Agent)
			} else {
				r.VsLeader = vsLeader(*leader, *res, leaderP)
			}
		}
		b.Rows = append(b.Rows, r)
	}
	tieGroups(b.Rows)
	return b
}

func newRow(res *stats.AgentResult, adj map[string]stats.FEAgent, peer stats.Peer, p arena.AgentInfo, m Method) Row {
	inf := res.Inference
	r := Row{Agent: res.Agent, Name: cmp.Or(p.Name, res.Agent), Organisation: p.Organisation, Model: p.Model,
		Baseline: res.Agent == forecast.RandomAgent || res.Agent == forecast.MarketAgent, Preliminary: res.N < m.MinForecasts,
		N: res.N, Rounds: res.Rounds, Brier: res.Brier, BrierSE: res.BrierSE.Ptr(),
		BrierIndex: stats.BrierIndex(res.Brier), BSS: stats.BrierSkill(res.Brier), Peer: peer.Score.Ptr(), PeerN: peer.N,
		Alpha: res.Alpha.Ptr(), AlphaSE: res.AlphaSE.Ptr(), AlphaCILo: inf.CI.Lo.Ptr(), AlphaCIHi: inf.CI.Hi.Ptr(),
		T: res.T.Ptr(), P: res.P.Ptr(), BeatPct: res.BeatPct.Ptr(), ShrunkAlpha: inf.ShrunkAlpha.Ptr(), Provisional: inf.Provisional,
		RoundsToSignificance: inf.ToSignif.Ptr()}
	if x, ok := adj[res.Agent]; ok && !math.IsNaN(x.Adjusted) {
		v, idx := x.Adjusted, stats.BrierIndex(x.Adjusted)
		r.Adjusted, r.AdjustedCILo, r.AdjustedCIHi = &v, x.CILo.Ptr(), x.CIHi.Ptr()
		r.Score = &idx
		if x.CILo.OK && x.CIHi.OK { // the index falls as the Brier score rises
			lo, hi := stats.BrierIndex(x.CIHi.V), stats.BrierIndex(x.CILo.V)
			r.ScoreCILo, r.ScoreCIHi = &lo, &hi
		}
		r.PRank1, r.PTop = x.PRank1.Ptr(), x.PTop.Ptr()
	}
	return r
}

// pairsOf are the paired p-values of the adjusted fit whose first agent
// is a, by the second.
func pairsOf(adjusted *stats.FEResult, a string) map[string]float64 {
	out := map[string]float64{}
	if adjusted != nil {
		for _, p := range adjusted.Pairs {
			if p.A == a {
				out[p.B] = p.P
			}
		}
	}
	return out
}

func vsLeader(lead, res stats.AgentResult, leaderP map[string]float64) *VsLeader {
	d := stats.PairedRounds(lead.RoundScores, res.RoundScores)
	if d.R == 0 {
		return nil
	}
	v := &VsLeader{Rounds: d.R, BrierDiff: d.Mean, SE: d.SE.Ptr(), CILo: d.CILo.Ptr(), CIHi: d.CIHi.Ptr(), P: d.P.Ptr()}
	if p, ok := leaderP[res.Agent]; ok {
		v.AdjustedP = &p
	}
	return v
}

// tieGroups numbers the tie groups of the ranked rows: the best agent
// not yet grouped leads a group, which every later ungrouped agent whose
// score interval overlaps the leader's joins.
func tieGroups(rows []Row) {
	groups := stats.TieGroups(len(rows), func(i int) (float64, float64, bool) {
		if rows[i].ScoreCILo == nil || rows[i].ScoreCIHi == nil {
			return 0, 0, false
		}
		return *rows[i].ScoreCILo, *rows[i].ScoreCIHi, true
	}, func(i int) bool { return rows[i].Preliminary })
	for i := range rows {
		rows[i].TieGroup = groups[i]
	}
}
