package rounds_test

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// Re-resolving a market re-scores, in the transaction that records it,
// every scored round that froze its outcome, with the track's hook
// (Rescore, the trigger's scoring), and keeps the scores before and after;
// a round that froze it as unresolved, or is not scored yet, is left
// alone; when the oracle has no track hook wired, or a hook fails,
// nothing changes.
func TestRescoreOnReResolution(t *testing.T) {
	storetest.Each(t, testRescore)
}

func testRescore(t *testing.T, db *store.DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	m0, m1, m2 := storetest.SaveMarket(t, db, "r0"), storetest.SaveMarket(t, db, "r1"), storetest.SaveMarket(t, db, "r2")
	newRound := func(ids ...int64) *arena.Round {
		r := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour), CreatedAt: t0}
		for _, id := range ids {
			r.Markets = append(r.Markets, arena.RoundMarket{MarketID: id})
		}
		if err := db.CreateRound(ctx, r); err != nil {
			t.Fatal(err)
		}
		return r
	}
	ok := func(arena.SubmissionState) error { return nil }
	const alice, bob = "0x00000000000000000000000000000000000A11CE", "0x0000000000000000000000000000000000000B0B"
	submit := func(r *arena.Round, preds []uint16) {
		for _, a := range []string{alice, bob} {
			n, _ := db.Nonce(ctx, a)
			if err := db.Submit(ctx, arena.SubmitCommit, &arena.Submission{RoundID: r.ID, Agent: a, CommitHash: "0x01", CommitNonce: n, CommitSig: "0x02"}, t0, ok); err != nil {
				t.Fatal(err)
			}
		}
		n, _ := db.Nonce(ctx, alice) // bob never reveals: a forfeit
		if err := db.Submit(ctx, arena.SubmitReveal, &arena.Submission{RoundID: r.ID, Agent: alice, Predictions: preds, Salt: "0x03", RevealNonce: n, RevealSig: "0x04"},
			t0.Add(2*time.Hour), ok); err != nil {
			t.Fatal(err)
		}
	}
	bench := func(bps int32) arena.RoundMarket {
		if bps < 0 {
			return arena.RoundMarket{}
		}
		p := float64(bps) / 10000
		return arena.RoundMarket{Benchmark: &p, BenchmarkBps: bps, BenchmarkTime: t0.Add(time.Hour), BenchmarkSource: arena.PriceSim}
	}
	// trigger freezes a round as the forecast track does.
	trigger := func(r *arena.Round, frozen []int8) {
		rd, err := db.Round(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		byID, err := db.MarketsByID(ctx, marketIDs(rd))
		if err != nil {
			t.Fatal(err)
		}
		var ms []*arena.Market
		for _, rm := range rd.Markets {
			ms = append(ms, byID[rm.MarketID])
		}
		subs, _ := db.Submissions(ctx, r.ID)
		scores, rows, err := scoring.ScoreFrozen(rd, frozen, ms, subs)
		if err != nil {
			t.Fatal(err)
		}
		if err := db.SaveRoundResult(ctx, r.ID, frozen, scores, rows, t0.Add(4*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}

	// Round 1 scores all three markets; round 2 froze r1 as unresolved;
	// round 3 is not scored yet.
	r1, r2, r3 := newRound(m0, m1, m2), newRound(m1, m2), newRound(m1)
	submit(r1, []uint16{8000, 3000, 6000})
	submit(r2, []uint16{5000, 5000})
	if err := db.SetBenchmarks(ctx, r1.ID, []arena.RoundMarket{bench(5000), bench(4000), bench(-1)}, t0.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, m2, arena.No, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	trigger(r2, []int8{scoring.OutcomeUnresolved, scoring.OutcomeNo})
	if _, err := db.ResolveMarket(ctx, m0, arena.Yes, t0.Add(3*time.Hour)); err != nil {
		t.Fatal(err)
	}
	res := &arena.OracleResolution{MarketID: m1, Verdict: arena.OracleVerdict{Architecture: "majority", Decision: arena.OracleYes, Rule: "majority", Unanimous: true, Composite: 1.9},
		Policy: arena.DefaultOraclePolicy, CreatedAt: t0.Add(3 * time.Hour)}
	if err := db.SaveOracleResolution(ctx, res); err != nil {
		t.Fatal(err)
	}
	trigger(r1, []int8{1, 1, 0})
	before1, _ := db.RoundScores(ctx, r1.ID)
	before2, _ := db.RoundScores(ctx, r2.ID)
	rows1, _ := db.ScoredForecasts(ctx)

	// Alice (8000, 3000, 6000 bps) over YES, YES, NO: Brier
	// ⌊(2000² + 7000² + 6000²)/3⌋ = 29666666; Alpha over r0, r1 (benchmarks
	// 5000, 4000): ((5000² − 2000²) + (6000² − 7000²))/2 = 4000000. Bob
	// forfeits: Brier 10⁸, Alpha base − 10⁸ = 30500000 − 10⁸.
	want := func(scores []arena.RoundScore, aliceBrier, aliceAlpha, bobAlpha int64, n, an int) {
		t.Helper()
		got := map[string]arena.RoundScore{}
		for _, s := range scores {
			got[s.Agent] = s
		}
		a, b := got[alice], got[bob]
		if a.BrierBps2 != aliceBrier || a.AlphaBps2 == nil || *a.AlphaBps2 != aliceAlpha || a.Scored != n || a.Benchmarked != an ||
			b.BrierBps2 != 100_000_000 || b.AlphaBps2 == nil || *b.AlphaBps2 != bobAlpha || !b.Forfeit {
			t.Fatalf("scores %+v %+v, want alice %d/%d bob 10⁸/%d over %d/%d", a, b, aliceBrier, aliceAlpha, bobAlpha, n, an)
		}
	}
	want(before1, 29_666_666, 4_000_000, 30_500_000-100_000_000, 3, 2)

	unchanged := func(what string, resolution string) {
		t.Helper()
		if m, _ := db.Market(ctx, m1); m.Resolution != resolution {
			t.Fatalf("%s: market %+v", what, m)
		}
		if s, _ := db.RoundScores(ctx, r1.ID); !reflect.DeepEqual(s, before1) {
			t.Fatalf("%s: scores changed %+v", what, s)
		}
		if h, _ := db.OracleResolutions(ctx, m1); len(h) != 1 {
			t.Fatalf("%s: %d resolutions", what, len(h))
		}
	}
	// Without the tracks' hooks, or with a failing one: refused, nothing
	// changes.
	in := arena.OracleDecisionInput{MarketID: m1, Decision: arena.OracleNo, Arbiter: "bob", Reason: "the source corrected it", ReResolve: true, At: t0.Add(5 * time.Hour)}
	if _, _, err := (&oracle.Service{Store: db, Logger: quiet}).Decide(ctx, in); err == nil {
		t.Fatal("re-resolution without the tracks' hooks accepted")
	}
	unchanged("no hooks", arena.Yes)
	boom := errors.New("scorer failed")
	failing := func(context.Context, arena.ResolutionTx, *arena.ResolutionChange) error { return boom }
	if _, _, err := db.DecideOracle(ctx, in, rounds.Rescore, failing); !errors.Is(err, boom) {
		t.Fatalf("failing hook: %v", err)
	}
	unchanged("failing hook", arena.Yes)

	// Re-resolved NO: round 1 only. Alice ⌊(2000² + 3000² + 6000²)/3⌋ =
	// 16333333, Alpha ((5000² − 2000²) + (4000² − 3000²))/2 = 14000000;
	// base (5000² + 4000²)/2 = 20500000.
	rr, _, err := db.DecideOracle(ctx, in, rounds.Rescore)
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Rescored) != 1 {
		t.Fatalf("re-scored %+v", rr.Rescored)
	}
	x := rr.Rescored[0]
	if x.RoundID != r1.ID || x.MarketID != m1 || x.ResolutionID != rr.ID || x.Index != 1 || x.PrevOutcome != 1 || x.Outcome != 0 ||
		!reflect.DeepEqual(x.Outcomes, []int8{1, 0, 0}) || !reflect.DeepEqual(x.Previous, before1) || !x.At.Equal(in.At) {
		t.Fatalf("audit %+v", x)
	}
	after1, _ := db.RoundScores(ctx, r1.ID)
	want(after1, 16_333_333, 14_000_000, 20_500_000-100_000_000, 3, 2)
	if !reflect.DeepEqual(after1, x.Scores) {
		t.Fatalf("stored %+v, audit says %+v", after1, x.Scores)
	}
	rd, _ := db.Round(ctx, r1.ID)
	if o := rd.Markets[1].Outcome; o == nil || *o != 0 {
		t.Fatalf("frozen outcome %v", o)
	}
	if s, _ := db.RoundScores(ctx, r2.ID); !reflect.DeepEqual(s, before2) {
		t.Fatalf("round 2 (r1 unresolved when frozen) re-scored: %+v", s)
	}
	if rd3, _ := db.Round(ctx, r3.ID); rd3.Markets[0].Outcome != nil || !rd3.TriggeredAt.IsZero() {
		t.Fatalf("round 3 (not scored) touched: %+v", rd3.Markets[0])
	}
	rows2, _ := db.ScoredForecasts(ctx)
	if len(rows2) != len(rows1) {
		t.Fatalf("%d scored forecasts, had %d", len(rows2), len(rows1))
	}
	for _, f := range rows2 {
		if f.RoundID == r1.ID && f.MarketID == m1 && f.Outcome != 0 {
			t.Fatalf("scored forecast %+v", f)
		}
	}
	hist, _ := db.OracleResolutions(ctx, m1)
	if len(hist) != 2 || len(hist[0].Rescored) != 0 || !reflect.DeepEqual(hist[1].Rescored, rr.Rescored) {
		t.Fatalf("history %+v", hist)
	}

	// VOID drops r1 from round 1: Alice over r0 and r2,
	// (2000² + 6000²)/2 = 20000000, Alpha over r0 alone 5000² − 2000² =
	// 21000000, base 25000000.
	in.Decision, in.Reason, in.At = arena.OracleVoid, "the market was annulled", t0.Add(6*time.Hour)
	rv, _, err := db.DecideOracle(ctx, in, rounds.Rescore)
	if err != nil || len(rv.Rescored) != 1 || rv.Rescored[0].PrevOutcome != 0 || rv.Rescored[0].Outcome != -1 || !reflect.DeepEqual(rv.Rescored[0].Previous, after1) {
		t.Fatalf("void %+v %v", rv, err)
	}
	void1, _ := db.RoundScores(ctx, r1.ID)
	want(void1, 20_000_000, 21_000_000, 25_000_000-100_000_000, 2, 1)
	rows3, _ := db.ScoredForecasts(ctx)
	for _, f := range rows3 {
		if f.RoundID == r1.ID && f.MarketID == m1 {
			t.Fatalf("void market still scored: %+v", f)
		}
	}
	if len(rows3) != len(rows1)-3 { // alice, bob and the random baseline lose one row each
		t.Fatalf("%d scored forecasts after VOID, had %d", len(rows3), len(rows1))
	}
	// Same outcome again: nothing to re-score, nothing recorded.
	in.Decision, in.Reason = arena.OracleVoid, "confirmed"
	if again, _, err := db.DecideOracle(ctx, in, rounds.Rescore); err != nil || again.ID != rv.ID || len(again.Rescored) != 0 {
		t.Fatalf("same outcome: %+v %v", again, err)
	}
	if hist, _ := db.OracleResolutions(ctx, m1); len(hist) != 3 {
		t.Fatalf("same outcome recorded: %d resolutions", len(hist))
	}
}

func marketIDs(r *arena.Round) []int64 {
	ids := make([]int64, len(r.Markets))
	for i, m := range r.Markets {
		ids[i] = m.MarketID
	}
	return ids
}
