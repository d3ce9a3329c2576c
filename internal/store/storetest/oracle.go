package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

func oracleVerdict(escalate bool, d arena.OracleDecision) arena.OracleVerdict {
	v := arena.OracleVerdict{Architecture: "majority", Decision: d, Rule: "majority", Unanimous: !escalate, Composite: 1.9, Escalate: escalate,
		Round1: []arena.OracleVote{{Agent: "a", Round: 1, Decision: d, Confidence: 0.9, Reasoning: "r", Prompt: "p", Raw: `{"decision":"YES"}`, InputTokens: 10, CostMicros: 7}},
		Round2: []arena.OracleVote{}, At: t0}
	if escalate {
		v.Reasons = []string{"split"}
	}
	return v
}

func testOracleResolutions(t *testing.T, db *store.DB) {
	{
		ctx := context.Background()
		auto, esc, other := SaveMarket(t, db, "auto"), SaveMarket(t, db, "esc"), SaveMarket(t, db, "other")
		pk := arena.EvidencePacket{Question: "Q", Criteria: "C", RetrievedAt: t0, Query: "q", Sources: []arena.EvidenceSource{{Title: "t", URL: "u", Highlights: []string{"h"}}}}
		pol := arena.DefaultOraclePolicy

		// Auto: resolves the market in the same transaction.
		r := &arena.OracleResolution{MarketID: auto, Evidence: pk, Verdict: oracleVerdict(false, arena.OracleYes), Policy: pol, CreatedAt: t0}
		if err := db.SaveOracleResolution(ctx, r); err != nil {
			t.Fatal(err)
		}
		if r.Status != arena.OracleAuto || r.Final != arena.OracleYes || r.Seq != 1 || r.ID == 0 {
			t.Fatalf("saved %+v", r)
		}
		m, _ := db.Market(ctx, auto)
		if m.Resolution != arena.Yes || m.Status != arena.StatusResolved {
			t.Fatalf("market after auto resolution: %+v", m)
		}
		got, err := db.OracleResolutions(ctx, auto)
		if err != nil || len(got) != 1 || !reflect.DeepEqual(got[0], *r) {
			t.Fatalf("read back %v\n%+v\nwant %+v", err, got, *r)
		}
		if err := db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: auto, Verdict: oracleVerdict(false, arena.OracleNo), Policy: pol}); arena.ErrorKind(err) != arena.ECONFLICT {
			t.Fatalf("second run on a resolved market: %v", err)
		}

		// Escalated: nothing resolves; the queue holds it.
		e := &arena.OracleResolution{MarketID: esc, Evidence: pk, Verdict: oracleVerdict(true, arena.OracleNo), Policy: pol, CreatedAt: t0.Add(time.Minute)}
		if err := db.SaveOracleResolution(ctx, e); err != nil {
			t.Fatal(err)
		}
		if m, _ := db.Market(ctx, esc); m.Resolution != "" || e.Status != arena.OracleEscalated || e.Final != "" {
			t.Fatalf("escalated market resolved: %+v %+v", m, e)
		}
		q, err := db.OracleQueue(ctx)
		if err != nil || len(q) != 1 || q[0].MarketID != esc {
			t.Fatalf("queue %+v %v", q, err)
		}
		if err := db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: esc, Verdict: oracleVerdict(false, arena.OracleNo), Policy: pol}); arena.ErrorKind(err) != arena.ECONFLICT {
			t.Fatalf("run on an escalated market: %v", err)
		}

		// Bad decisions change nothing.
		for _, in := range []arena.OracleDecisionInput{
			{MarketID: esc, Decision: "MAYBE", Arbiter: "ann"},
			{MarketID: esc, Decision: arena.OracleYes},
			{MarketID: other, Decision: arena.OracleYes, Arbiter: "ann"},
			{MarketID: auto, Decision: arena.OracleNo, Arbiter: "ann"},
			{MarketID: auto, Decision: arena.OracleNo, Arbiter: "ann", ReResolve: true, Reason: "  "},
			{MarketID: esc, Decision: arena.OracleNo, Arbiter: "ann", ReResolve: true, Reason: "x"},
		} {
			if _, _, err := db.DecideOracle(ctx, in); err == nil {
				t.Errorf("%+v accepted", in)
			}
		}
		if _, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: other, Decision: arena.OracleYes, Arbiter: "ann"}); arena.ErrorKind(err) != arena.ECONFLICT {
			t.Errorf("not escalated: %v", err)
		}
		for _, re := range []bool{false, true} {
			in := arena.OracleDecisionInput{MarketID: 1 << 40, Decision: arena.OracleYes, Arbiter: "ann", Reason: "r", ReResolve: re}
			if _, _, err := db.DecideOracle(ctx, in); arena.ErrorKind(err) != arena.ENOTFOUND {
				t.Errorf("unknown market (re-resolve %v): %v, want not found", re, err)
			}
		}
		if _, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: auto, Decision: arena.OracleNo, Arbiter: "ann", ReResolve: true}); arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("re-resolution without reason: %v", err)
		}

		// The arbiter decides: resolved, out of the queue.
		at := t0.Add(time.Hour)
		d, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: esc, Decision: arena.OracleVoid, Arbiter: "ann", Reason: "criteria unclear", At: at})
		if err != nil || d.Status != arena.OracleDecided || d.Final != arena.OracleVoid || !d.DecidedAt.Equal(at) || d.Arbiter != "ann" {
			t.Fatalf("decide %+v %v", d, err)
		}
		if m, _ := db.Market(ctx, esc); m.Resolution != arena.Void {
			t.Fatalf("decided market %+v", m)
		}
		if q, _ := db.OracleQueue(ctx); len(q) != 0 {
			t.Fatalf("queue after decision %+v", q)
		}

		// Re-resolution with a reason appends and changes the market.
		rr, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: auto, Decision: arena.OracleNo, Arbiter: "bob", Reason: "source corrected", ReResolve: true, At: at})
		if err != nil || rr.Seq != 2 || rr.Final != arena.OracleNo || rr.Reason != "source corrected" {
			t.Fatalf("re-resolve %+v %v", rr, err)
		}
		if m, _ := db.Market(ctx, auto); m.Resolution != arena.No {
			t.Fatalf("re-resolved market %+v", m)
		}
		hist, _ := db.OracleResolutions(ctx, auto)
		if len(hist) != 2 || hist[0].Final != arena.OracleYes || hist[1].Final != arena.OracleNo || len(hist[1].Verdict.Round1) != 1 {
			t.Fatalf("history %+v", hist)
		}
		if _, err := db.OracleResolutions(ctx, other); arena.ErrorKind(err) != arena.ENOTFOUND {
			t.Errorf("no resolutions: %v", err)
		}
	}
}
