package oracle

import (
	"fmt"
	"math"
	"testing"

	arena "github.com/forecast-arena/arena"
)

func TestOracleAccuracy(t *testing.T) {
	vote := func(agent string, d arena.OracleDecision) arena.OracleVote {
		if d == "" {
			return arena.OracleVote{Agent: agent, Failure: "timeout"}
		}
		return arena.OracleVote{Agent: agent, Decision: d, Confidence: 0.8}
	}
	run := func(id int64, status, arch string, panel arena.OracleDecision, escalate bool, final arena.OracleDecision, votes ...arena.OracleVote) arena.OracleResolution {
		return arena.OracleResolution{MarketID: id, Seq: 1, Status: status, Final: final,
			Verdict: arena.OracleVerdict{Architecture: arch, Decision: panel, Escalate: escalate, Round1: votes}}
	}
	reres := func(r arena.OracleResolution, final arena.OracleDecision) arena.OracleResolution {
		r.Seq, r.Status, r.Final = r.Seq+1, arena.OracleDecided, final
		return r
	}
	Y, N, E := arena.OracleYes, arena.OracleNo, arena.OracleTooEarly
	m1 := run(1, arena.OracleAuto, "majority", Y, false, Y, vote("a", Y), vote("b", Y), vote("c", E))
	m2 := run(2, arena.OracleDecided, "majority", Y, true, Y, vote("a", Y), vote("b", N), vote("c", ""))
	m3 := run(3, arena.OracleDecided, "majority", N, true, arena.OracleVoid, vote("a", N))
	m4 := run(4, arena.OracleAuto, "majority", Y, false, Y, vote("a", Y))
	m5 := run(5, arena.OracleEscalated, "majority", N, true, "", vote("a", N))
	m6 := run(6, arena.OracleDecided, "weighted", N, true, Y, vote("a", N), vote("b", Y), vote("c", N))
	got := OracleAccuracy([][]arena.OracleResolution{
		{m6, reres(m6, N)}, // arbiter YES, later corrected to NO: the panel's NO agrees
		{m1, reres(m1, N)}, // auto YES re-resolved NO: disagrees
		{m2},               // escalated, arbiter agrees with the panel's YES
		{m3},               // VOID: not a YES/NO truth
		{m4},               // never audited
		{m5},               // still waiting
		nil,
	})
	if got.N != 3 || got.Agreed != 2 || !got.Accuracy.OK || math.Abs(got.Accuracy.V-2.0/3) > 1e-12 {
		t.Fatalf("overall %+v", got.AuditRate)
	}
	// Wilson 95% for 2 of 3 by hand: centre (2/3 + z²/6)/(1 + z²/3) =
	// 0.5731, half-width z·√(2/27 + z²/36)/(1 + z²/3) = 0.3654.
	if lo, hi := got.Wilson[0].V, got.Wilson[1].V; math.Abs(lo-0.2077) > 5e-4 || math.Abs(hi-0.9385) > 5e-4 {
		t.Errorf("wilson [%.4f, %.4f], want [0.2077, 0.9385]", lo, hi)
	}
	if got.AutoAudited.N != 1 || got.AutoAudited.Agreed != 0 || got.Escalated.N != 2 || got.Escalated.Agreed != 2 {
		t.Errorf("auto %+v escalated %+v", got.AutoAudited, got.Escalated)
	}
	if a, w := got.ByArchitecture["majority"], got.ByArchitecture["weighted"]; a.N != 2 || a.Agreed != 1 || w.N != 1 || w.Agreed != 1 || len(got.ByArchitecture) != 2 {
		t.Errorf("by architecture %+v", got.ByArchitecture)
	}
	for id, want := range map[string][4]int{"a": {3, 2, 0, 0}, "b": {3, 0, 0, 0}, "c": {3, 1, 1, 1}} {
		r := got.ByResolver[id]
		if r.N != want[0] || r.Agreed != want[1] || r.Abstained != want[2] || r.Failed != want[3] {
			t.Errorf("resolver %s %+v, want n/agreed/abstained/failed %v", id, r, want)
		}
	}
	if len(got.Markets) != 3 || got.Markets[0].MarketID != 1 || got.Markets[0].Agreed || got.Markets[2].MarketID != 6 || !got.Markets[2].Agreed {
		t.Errorf("markets %+v", got.Markets)
	}
	// Leaderboard over every YES/NO final (m1 NO, m2 YES, m4 YES, m6 NO):
	// a 3 of 4, c 1 of 3 (an abstention and a failure), b 0 of 3.
	var board []string
	for _, r := range got.Resolvers {
		board = append(board, fmt.Sprintf("%s %d/%d", r.Agent, r.Agreed, r.Decisions))
	}
	if fmt.Sprint(board) != "[a 3/4 c 1/3 b 0/3]" {
		t.Errorf("resolver leaderboard %v", board)
	}
	if empty := OracleAccuracy(nil); empty.N != 0 || empty.Accuracy.OK || empty.Wilson[0].OK || len(empty.Markets) != 0 {
		t.Errorf("no audits %+v", empty)
	}
}
