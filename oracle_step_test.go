package arena_test

import (
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
)

// The oracle's state machine: what an arbiter's decision and a panel's
// resolution may do to a market's oracle history.
func TestOracleSteps(t *testing.T) {
	escalated := &arena.OracleResolution{Seq: 1, Status: arena.OracleEscalated}
	auto := &arena.OracleResolution{Seq: 1, Status: arena.OracleAuto, Final: arena.OracleYes}
	revised := &arena.OracleResolution{Seq: 2, Status: arena.OracleDecided, Final: arena.OracleNo, Arbiter: "bob"}
	decide := arena.OracleDecisionInput{MarketID: 5, Decision: arena.OracleNo}
	reresolve := arena.OracleDecisionInput{MarketID: 5, Decision: arena.OracleNo, ReResolve: true}
	for _, c := range []struct {
		name               string
		in                 arena.OracleDecisionInput
		prev               *arena.OracleResolution
		disputed, resolved bool
		want               arena.OracleStep
		err                string // part of the refusal; "" accepted
	}{
		{"decide an escalated market", decide, escalated, false, false, arena.OracleDecideEscalated, ""},
		{"settle a dispute without a panel run", decide, nil, true, true, arena.OracleSettleDispute, ""},
		{"decide over the panel's resolution", decide, auto, false, true, 0, "re-resolve it instead"},
		{"decide a market nobody asked about", decide, nil, false, false, 0, "neither escalated to an arbiter nor disputed"},
		{"re-resolve the panel's resolution", reresolve, auto, false, true, arena.OracleRevise, ""},
		{"re-resolve to what is in force", arena.OracleDecisionInput{MarketID: 5, Decision: arena.OracleYes, ReResolve: true}, auto, false, true, arena.OracleUnchanged, ""},
		{"re-resolve an escalated market", reresolve, escalated, false, false, 0, "an escalated market is decided"},
		{"re-resolve the source's resolution", reresolve, nil, false, true, 0, "dispute it first"},
		{"re-resolve a revision since replaced", arena.OracleDecisionInput{MarketID: 5, Decision: arena.OracleYes, ReResolve: true, Revises: 1}, revised, false, true, 0, "resolution 2 (NO by bob) was recorded since"},
		{"re-resolve the latest by number", arena.OracleDecisionInput{MarketID: 5, Decision: arena.OracleYes, ReResolve: true, Revises: 2}, revised, false, true, arena.OracleRevise, ""},
	} {
		got, err := c.in.Step(c.prev, c.disputed, c.resolved)
		switch {
		case c.err == "" && (err != nil || got != c.want):
			t.Errorf("%s: %v, %v; want step %v", c.name, got, err, c.want)
		case c.err != "" && (err == nil || arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), c.err)):
			t.Errorf("%s: %v; want a conflict saying %q", c.name, err, c.err)
		}
	}
	for _, c := range []struct {
		name       string
		prev       *arena.OracleResolution
		disputed   bool
		resolution string
		err        string
	}{
		{"an unresolved market", nil, false, "", ""},
		{"a disputed source resolution", nil, true, "Yes", ""},
		{"a source resolution", nil, false, "Yes", "already resolved (Yes)"},
		{"a market waiting for an arbiter", escalated, false, "", "waiting for an arbiter"},
		{"a market the oracle resolved", auto, true, "Yes", "already resolved by the oracle (YES)"},
	} {
		err := arena.PanelStep(5, c.prev, c.disputed, c.resolution)
		if (c.err == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %v; want %q", c.name, err, c.err)
		}
	}
}
