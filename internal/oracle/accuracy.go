package oracle

import (
	"sort"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
)

// AuditRate is agreement with human audits: n audited, how many agreed,
// the share (null when n is 0) and its Wilson 95% interval.
type AuditRate struct {
	N        int            `json:"n"`
	Agreed   int            `json:"agreed"`
	Accuracy stats.Float    `json:"accuracy"`
	Wilson   [2]stats.Float `json:"wilson"`
}

// ResolverRate is one resolver's round-1 votes on audited markets; an
// abstention or a failure does not agree.
type ResolverRate struct {
	AuditRate
	Abstained int `json:"abstained"`
	Failed    int `json:"failed"`
}

// Accuracy is the oracle's published accuracy against human audits.
type Accuracy struct {
	AuditRate
	// AutoAudited: markets the panel resolved by itself that a human later
	// re-resolved (or confirmed by re-resolution); Escalated: markets an
	// arbiter decided after the panel escalated them, the panel's own
	// answer compared with the arbiter's.
	AutoAudited    AuditRate               `json:"auto_audited"`
	Escalated      AuditRate               `json:"escalated"`
	ByArchitecture map[string]AuditRate    `json:"by_architecture"`
	ByResolver     map[string]ResolverRate `json:"by_resolver"`
	Markets        []AuditedMarket         `json:"markets"`
	// Resolvers is the resolver leaderboard: every round-1 vote on a market
	// whose final decision is YES or NO (audited or not), against that
	// decision; best agreement first.
	Resolvers []ResolverStanding `json:"resolvers"`
}

// ResolverStanding is one resolver's record against final outcomes.
type ResolverStanding struct {
	Agent     string         `json:"agent"`
	Decisions int            `json:"decisions"` // round-1 calls on markets with a YES/NO final decision
	Agreed    int            `json:"agreed"`
	Agreement stats.Float    `json:"agreement"`
	Wilson    [2]stats.Float `json:"wilson"`
}

// AuditedMarket is one market counted: the panel's answer, the human's
// (the market's final decision) and whether they agree.
type AuditedMarket struct {
	MarketID     int64                `json:"market_id"`
	Architecture string               `json:"architecture"`
	Panel        arena.OracleDecision `json:"panel"`
	Human        arena.OracleDecision `json:"human"`
	Escalated    bool                 `json:"escalated"`
	Agreed       bool                 `json:"agreed"`
}

func auditRate(k, n int) AuditRate {
	r := rate(k, n)
	return AuditRate{N: n, Agreed: k, Accuracy: r.Accuracy, Wilson: wilson(k, n)}
}

// OracleAccuracy measures the panel against human audits from stored
// histories (one per market, oldest resolution first). A market counts
// when a human decided it after the panel: the first run escalated and an
// arbiter decided, or the panel resolved it and a human later re-resolved
// it. The truth is the market's latest human decision; a VOID one is not a
// YES/NO answer and is left out, as is a market no human has looked at.
// The panel's answer is its first run's decision; each resolver is judged
// by its round-1 vote in that run.
func OracleAccuracy(histories [][]arena.OracleResolution) Accuracy {
	type tally struct{ k, n int }
	var all, auto, esc tally
	arch := map[string]*tally{}
	type rtally struct{ k, n, abst, fail int }
	res := map[string]*rtally{}
	out := Accuracy{Markets: []AuditedMarket{}}
	board := map[string]*tally{}
	for _, h := range histories {
		if len(h) == 0 {
			continue
		}
		first, last := h[0], h[len(h)-1]
		if first.Verdict.Architecture == "" {
			continue // an arbiter decided a dispute without a panel run: no panel to audit
		}
		if last.Final.Binary() {
			for _, v := range first.Verdict.Round1 {
				if board[v.Agent] == nil {
					board[v.Agent] = &tally{}
				}
				board[v.Agent].n++
				if v.Answered() && v.Decision == last.Final {
					board[v.Agent].k++
				}
			}
		}
		human := first.Status == arena.OracleDecided || len(h) > 1
		if !human || !last.Final.Binary() {
			continue
		}
		truth := last.Final
		panel := first.Verdict.Decision
		agreed := panel == truth
		m := AuditedMarket{MarketID: first.MarketID, Architecture: first.Verdict.Architecture, Panel: panel, Human: truth,
			Escalated: first.Verdict.Escalate, Agreed: agreed}
		out.Markets = append(out.Markets, m)
		add := func(t *tally) {
			t.n++
			if agreed {
				t.k++
			}
		}
		add(&all)
		if m.Escalated {
			add(&esc)
		} else {
			add(&auto)
		}
		if arch[m.Architecture] == nil {
			arch[m.Architecture] = &tally{}
		}
		add(arch[m.Architecture])
		for _, v := range first.Verdict.Round1 {
			r := res[v.Agent]
			if r == nil {
				r = &rtally{}
				res[v.Agent] = r
			}
			r.n++
			switch {
			case !v.Answered():
				r.fail++
			case v.Decision == arena.OracleTooEarly:
				r.abst++
			case v.Decision == truth:
				r.k++
			}
		}
	}
	sort.Slice(out.Markets, func(i, j int) bool { return out.Markets[i].MarketID < out.Markets[j].MarketID })
	out.AuditRate, out.AutoAudited, out.Escalated = auditRate(all.k, all.n), auditRate(auto.k, auto.n), auditRate(esc.k, esc.n)
	out.ByArchitecture = map[string]AuditRate{}
	for a, t := range arch {
		out.ByArchitecture[a] = auditRate(t.k, t.n)
	}
	out.ByResolver = map[string]ResolverRate{}
	for a, t := range res {
		out.ByResolver[a] = ResolverRate{AuditRate: auditRate(t.k, t.n), Abstained: t.abst, Failed: t.fail}
	}
	out.Resolvers = []ResolverStanding{}
	for a, t := range board {
		r := auditRate(t.k, t.n)
		out.Resolvers = append(out.Resolvers, ResolverStanding{Agent: a, Decisions: t.n, Agreed: t.k, Agreement: r.Accuracy, Wilson: r.Wilson})
	}
	sort.Slice(out.Resolvers, func(i, j int) bool {
		a, b := out.Resolvers[i], out.Resolvers[j]
		if a.Agreement.V != b.Agreement.V {
			return a.Agreement.V > b.Agreement.V
		}
		return a.Agent < b.Agent
	})
	return out
}
