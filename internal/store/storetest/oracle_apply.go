package storetest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// settledBet opens a $1000 YES position (2000 shares) in market for the
// cohort's one portfolio and settles it as won ($2000), as the trading
// track does, and records the market settled YES.
func settledBet(t *testing.T, db *store.DB, c *arena.Cohort, market int64) *arena.Portfolio {
	t.Helper()
	ctx := context.Background()
	ps, _ := db.Portfolios(ctx, c.ID)
	if err := db.ApplyChange(ctx, Bet(ps[0], market)); err != nil {
		t.Fatal(err)
	}
	p, _ := db.Portfolio(ctx, ps[0].ID)
	pos := *p.Positions[0]
	pos.Shares, pos.CostBasis, pos.Status, pos.ClosedAt, pos.Mark = 0, 0, arena.PositionSettled, t0, arena.OnePPM
	settle := &arena.PortfolioChange{PortfolioID: p.ID, ExpectVersion: p.Version, Cash: p.Cash + 2000*arena.Dollar, Realized: 1000 * arena.Dollar,
		Positions: []*arena.Position{&pos}, Trades: []*arena.Trade{{PositionID: pos.ID, MarketID: market, Side: "YES", Kind: arena.TradeSettle,
			Amount: 2000 * arena.Dollar, Shares: 2000 * arena.OneShare, Price: arena.OnePPM, CostBasis: 1000 * arena.Dollar, CashBefore: p.Cash, CreatedAt: t0}}}
	if err := db.SettleMarket(ctx, arena.Settlement{MarketID: market, Resolution: arena.Yes, Positions: 1, SettledAt: t0}, []*arena.PortfolioChange{settle}); err != nil {
		t.Fatal(err)
	}
	p, _ = db.Portfolio(ctx, p.ID)
	return p
}

// testOracleApplyAtomic: a resolution that changes a market's earlier one
// runs the hooks given inside the transaction that records it, handing
// them the market as it was and the new outcome; what a hook writes
// through the transaction commits with the resolution, and a hook's
// failure rolls back everything, the resolution and the other hooks'
// writes included. A first resolution runs no hook.
func testOracleApplyAtomic(t *testing.T, db *store.DB) {
	ctx := context.Background()
	c := NewCohort(t, db, "a")
	m := SaveMarket(t, db, "applied")
	if _, err := db.ResolveMarket(ctx, m, arena.Yes, t0); err != nil {
		t.Fatal(err)
	}
	p := settledBet(t, db, c, m)
	if _, err := db.DisputeOracle(ctx, &arena.OracleDispute{MarketID: m, Admin: "ann", Reason: "the source misread the rules"}); err != nil {
		t.Fatal(err)
	}
	// takeBack is what a trading hook does for NO: the $2000 payout is
	// taken back through the store's primitives.
	var seen *arena.ResolutionChange
	takeBack := func(ctx context.Context, tx arena.ResolutionTx, ch *arena.ResolutionChange) error {
		seen = ch
		s, ok, err := tx.Settlement(ctx, m)
		if err != nil || !ok || s.Resolution != arena.Yes {
			t.Errorf("settlement in the hook: %+v %v %v", s, ok, err)
		}
		trades, _ := tx.MarketTrades(ctx, m)
		pos, _ := tx.MarketPositions(ctx, m)
		lp, err := tx.LockPortfolio(ctx, p.ID)
		if err != nil {
			return err
		}
		co, err := tx.Cohort(ctx, lp.CohortID)
		if err != nil || co.InitialCash != 10_000*arena.Dollar || len(trades) != 2 || len(pos) != 1 || pos[0].Status != arena.PositionSettled {
			t.Errorf("hook reads: cohort %+v %v, %d trades, positions %+v", co, err, len(trades), pos)
		}
		q := *pos[0]
		q.Mark = 0
		if err := tx.ApplyChange(ctx, &arena.PortfolioChange{PortfolioID: lp.ID, ExpectVersion: lp.Version, Cash: lp.Cash - 2000*arena.Dollar,
			Realized: lp.Realized - 2000*arena.Dollar, Positions: []*arena.Position{&q}, Trades: []*arena.Trade{{PositionID: q.ID, MarketID: m, Side: "YES",
				Kind: arena.TradeResettle, Amount: -2000 * arena.Dollar, Shares: 2000 * arena.OneShare, CostBasis: 1000 * arena.Dollar, CashBefore: lp.Cash, CreatedAt: ch.At}}}); err != nil {
			return err
		}
		return tx.Resettled(ctx, m, ch.Outcome)
	}
	boom := errors.New("the other track failed")
	fail := func(context.Context, arena.ResolutionTx, *arena.ResolutionChange) error { return boom }
	at := t0.Add(time.Hour)
	in := arena.OracleDecisionInput{MarketID: m, Decision: arena.OracleNo, Arbiter: "bob", Reason: "the rules say no", At: at}
	if _, _, err := db.DecideOracle(ctx, in, takeBack, fail); !errors.Is(err, boom) {
		t.Fatalf("failing hook: %v", err)
	}
	if seen == nil || seen.Market.Resolution != arena.Yes || seen.Outcome != arena.No || !seen.At.Equal(at) || seen.Resolution.ID == 0 {
		t.Fatalf("change handed to the hooks: %+v", seen)
	}
	unchanged := func(what string) {
		t.Helper()
		got, _ := db.Portfolio(ctx, p.ID)
		trades, _ := db.Trades(ctx, p.ID)
		sts, _ := db.Settlements(ctx)
		mk, _ := db.Market(ctx, m)
		if _, err := db.OracleResolutions(ctx, m); arena.ErrorKind(err) != arena.ENOTFOUND || mk.Resolution != arena.Yes ||
			got.Cash != p.Cash || got.Version != p.Version || len(trades) != 2 || sts[0].Resolution != arena.Yes {
			t.Fatalf("%s: resolution %v, market %+v, portfolio %+v, %d trades, settlements %+v", what, err, mk, got, len(trades), sts)
		}
	}
	unchanged("a hook failed")

	if _, _, err := db.DecideOracle(ctx, in, takeBack); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Portfolio(ctx, p.ID)
	trades, _ := db.Trades(ctx, p.ID)
	sts, _ := db.Settlements(ctx)
	mk, _ := db.Market(ctx, m)
	hist, _ := db.OracleResolutions(ctx, m)
	if mk.Resolution != arena.No || got.Cash != p.Cash-2000*arena.Dollar || len(trades) != 3 || trades[2].Kind != arena.TradeResettle ||
		sts[0].Resolution != arena.No || sts[0].Policy != "re-resolved" || len(hist) != 1 || hist[0].Status != arena.OracleDecided ||
		hist[0].Evidence.Question != "Will applied happen?" {
		t.Fatalf("applied: market %+v, portfolio %+v, trades %d, settlements %+v, history %+v", mk, got, len(trades), sts, hist)
	}

	// A first resolution (an escalated market decided) runs the hooks too
	// (the forecast track logs it there): a failing one rolls it back.
	esc := SaveMarket(t, db, "first")
	if err := db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: esc, Verdict: oracleVerdict(true, arena.OracleNo), Policy: arena.DefaultOraclePolicy}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: esc, Decision: arena.OracleNo, Arbiter: "ann"}, fail); !errors.Is(err, boom) {
		t.Fatalf("first resolution with a failing hook: %v", err)
	}
	if mk, _ := db.Market(ctx, esc); mk.Resolution != "" {
		t.Fatalf("a failing hook left the first resolution %+v", mk)
	}
	if _, changed, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: esc, Decision: arena.OracleNo, Arbiter: "ann"}); err != nil || !changed {
		t.Fatalf("first resolution: %v %v", changed, err)
	}
}

// testOracleDispute: an admin disputes a market its source resolved; the
// market keeps that resolution (syncs cannot change it) until the oracle
// or an arbiter decides; every other case is refused with the way out.
func testOracleDispute(t *testing.T, db *store.DB) {
	ctx := context.Background()
	up, open, multi := Binary("up", 100), Binary("open", 100), Binary("multi", 100)
	multi.Type, multi.Outcomes, multi.Prices = arena.Multi, []string{"A", "B", "C"}, map[string]float64{"A": 0.5, "B": 0.3, "C": 0.2}
	if _, err := db.SaveMarkets(ctx, []*arena.Market{up, open, multi}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, up.ID, arena.Yes, t0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, multi.ID, "A", t0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		d    arena.OracleDispute
		kind string
		msg  string
	}{
		{arena.OracleDispute{MarketID: up.ID, Admin: "ann", Reason: " "}, arena.EINVALID, "needs a reason"},
		{arena.OracleDispute{MarketID: up.ID, Reason: "wrong"}, arena.EINVALID, "admin's name is required"},
		{arena.OracleDispute{MarketID: 99999, Admin: "ann", Reason: "wrong"}, arena.ENOTFOUND, "not found"},
		{arena.OracleDispute{MarketID: open.ID, Admin: "ann", Reason: "wrong"}, arena.ECONFLICT, "flag it for the oracle instead"},
		{arena.OracleDispute{MarketID: multi.ID, Admin: "ann", Reason: "wrong"}, arena.EINVALID, "binary markets only"},
	} {
		if _, err := db.DisputeOracle(ctx, &c.d); arena.ErrorKind(err) != c.kind || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("dispute %+v: %v, want %s (%s)", c.d, err, c.kind, c.msg)
		}
	}
	if ds, _ := db.OracleDisputes(ctx); len(ds) != 0 {
		t.Fatalf("disputes after refusals: %+v", ds)
	}
	// The ways out of the old dead end: flag and re-resolve point to a dispute.
	if err := db.FlagOracle(ctx, arena.OracleFlag{MarketID: up.ID, Reason: "wrong"}); arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), "dispute it instead") {
		t.Errorf("flag of a market its source resolved: %v", err)
	}
	rr := arena.OracleDecisionInput{MarketID: up.ID, Decision: arena.OracleNo, Arbiter: "bob", Reason: "wrong", ReResolve: true}
	if _, _, err := db.DecideOracle(ctx, rr); arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), "dispute it first") {
		t.Errorf("re-resolution of a market its source resolved: %v", err)
	}
	if _, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: up.ID, Decision: arena.OracleNo, Arbiter: "bob"}); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Errorf("arbiter decision on an undisputed market: %v", err)
	}

	d := &arena.OracleDispute{MarketID: up.ID, Admin: " ann ", Reason: "the source misread its own rules", CreatedAt: t0.Add(time.Hour)}
	if _, err := db.DisputeOracle(ctx, d); err != nil {
		t.Fatal(err)
	}
	if _, err := db.DisputeOracle(ctx, &arena.OracleDispute{MarketID: up.ID, Admin: "bob", Reason: "again"}); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("second dispute: %v", err)
	}
	ds, err := db.OracleDisputes(ctx)
	got, err2 := db.OracleDispute(ctx, up.ID)
	if err != nil || err2 != nil || len(ds) != 1 || ds[0] != *got || got.Admin != "ann" || got.Resolution != arena.Yes ||
		got.Reason != "the source misread its own rules" || !got.CreatedAt.Equal(t0.Add(time.Hour)) {
		t.Fatalf("disputes %+v %v, dispute %+v %v", ds, err, got, err2)
	}
	if _, err := db.OracleDispute(ctx, open.ID); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("dispute of an undisputed market: %v", err)
	}
	// The market keeps the source's resolution; a sync saying NO changes
	// nothing, and a hand resolution is refused.
	sync := Binary("up", 100)
	sync.Status, sync.Resolution, sync.ResolvedAt, sync.History = arena.StatusResolved, arena.No, t0.Add(2*time.Hour), nil
	if _, err := db.SaveMarkets(ctx, []*arena.Market{sync}); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.Market(ctx, up.ID); m.Resolution != arena.Yes || m.Ambiguous {
		t.Fatalf("disputed market after a sync: %+v", m)
	}
	if _, err := db.ResolveMarket(ctx, up.ID, arena.No, t0); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("hand resolution of a disputed market: %v", err)
	}
	// The panel runs on it (escalated: the source's resolution stays), then
	// an arbiter decides NO: applied over the source's YES.
	if err := db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: up.ID, Verdict: oracleVerdict(true, arena.OracleNo), Policy: arena.DefaultOraclePolicy}); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.Market(ctx, up.ID); m.Resolution != arena.Yes {
		t.Fatalf("escalated dispute changed the market: %+v", m)
	}
	if _, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: up.ID, Decision: arena.OracleNo, Arbiter: "bob", Reason: "rules"}); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.Market(ctx, up.ID); m.Resolution != arena.No {
		t.Fatalf("decided dispute: %+v", m)
	}
	if _, err := db.SaveMarkets(ctx, []*arena.Market{Binary("up", 100)}); err != nil {
		t.Fatal(err)
	}
	if m, _ := db.Market(ctx, up.ID); m.Resolution != arena.No {
		t.Fatalf("decided dispute after a sync: %+v", m)
	}
	if _, err := db.DisputeOracle(ctx, &arena.OracleDispute{MarketID: up.ID, Admin: "ann", Reason: "again"}); arena.ErrorKind(err) != arena.ECONFLICT ||
		!strings.Contains(err.Error(), "re-resolve it instead") {
		t.Fatalf("dispute of an oracle resolution: %v", err)
	}
}

// testOracleReResolveRace: arbiters re-resolving the same resolution at
// once are serialised per market: exactly one applies, every other gets
// the typed conflict (CodeResolutionChanged), never a storage error; a
// re-resolution to the decision in force records nothing.
func testOracleReResolveRace(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := SaveMarket(t, db, "race")
	if err := db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: m, Verdict: oracleVerdict(true, arena.OracleNo), Policy: arena.DefaultOraclePolicy}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: m, Decision: arena.OracleVoid, Arbiter: "ann", Reason: "unclear"}); err != nil {
		t.Fatal(err)
	}
	won := race(t, 24, func(i int) (bool, error) {
		in := arena.OracleDecisionInput{MarketID: m, Decision: []arena.OracleDecision{arena.OracleYes, arena.OracleNo}[i%2], Arbiter: "arbiter",
			Reason: "corrected", ReResolve: true, Revises: 1}
		_, changed, err := db.DecideOracle(ctx, in)
		if arena.ErrorCode(err) == arena.CodeResolutionChanged {
			return false, nil // lost to the one applied
		}
		return changed, err // the winner's decision again: unchanged
	})
	hist, _ := db.OracleResolutions(ctx, m)
	if won != 1 || len(hist) != 2 || hist[1].Seq != 2 {
		t.Fatalf("%d re-resolutions applied, history %d long; want exactly one", won, len(hist))
	}
	// The same decision again, naming the resolution in force: nothing new.
	same, _, err := db.DecideOracle(ctx, arena.OracleDecisionInput{MarketID: m, Decision: hist[1].Final, Arbiter: "carol", Reason: "confirming", ReResolve: true, Revises: 2})
	if again, _ := db.OracleResolutions(ctx, m); err != nil || same.ID != hist[1].ID || len(again) != 2 {
		t.Fatalf("same decision: %+v %v, history %d long", same, err, len(again))
	}
}

// testOracleInputText: NUL and other control characters (but newline and
// tab) in a flag's reason, a dispute's admin or reason, or a decision's
// arbiter or reason, and over-long text, are refused as invalid on every
// engine, before anything is stored.
func testOracleInputText(t *testing.T, db *store.DB) {
	ctx := context.Background()
	open, up, esc := SaveMarket(t, db, "open"), SaveMarket(t, db, "up"), SaveMarket(t, db, "esc")
	if _, err := db.ResolveMarket(ctx, up, arena.Yes, t0); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: esc, Verdict: oracleVerdict(true, arena.OracleNo), Policy: arena.DefaultOraclePolicy}); err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("x", arena.MaxReasonChars+1)
	for _, bad := range []string{"a\x00b", "\x00", "bell\x07", "cr\rlf", "esc\x1b[31m", "del\x7f", "c1\u0085c1", "\xff\xfe", long} {
		for what, err := range map[string]error{
			"flag reason":      db.FlagOracle(ctx, arena.OracleFlag{MarketID: open, Reason: bad}),
			"dispute admin":    disputeErr(db, arena.OracleDispute{MarketID: up, Admin: bad, Reason: "r"}),
			"dispute reason":   disputeErr(db, arena.OracleDispute{MarketID: up, Admin: "ann", Reason: bad}),
			"decision arbiter": decideErr(db, arena.OracleDecisionInput{MarketID: esc, Decision: arena.OracleNo, Arbiter: bad}),
			"decision reason":  decideErr(db, arena.OracleDecisionInput{MarketID: esc, Decision: arena.OracleNo, Arbiter: "ann", Reason: bad}),
		} {
			if arena.ErrorKind(err) != arena.EINVALID {
				t.Errorf("%s %q: %v, want invalid", what, bad, err)
			}
		}
	}
	if fs, _ := db.OracleFlags(ctx); len(fs) != 0 {
		t.Errorf("flags stored: %+v", fs)
	}
	if ds, _ := db.OracleDisputes(ctx); len(ds) != 0 {
		t.Errorf("disputes stored: %+v", ds)
	}
	if q, _ := db.OracleQueue(ctx); len(q) != 1 {
		t.Errorf("queue %+v", q)
	}
	// Newlines and tabs are text; surrounding space is trimmed.
	if err := db.FlagOracle(ctx, arena.OracleFlag{MarketID: open, Reason: " line one\n\tline two "}); err != nil {
		t.Fatal(err)
	}
	if fs, _ := db.OracleFlags(ctx); len(fs) != 1 || fs[0].Reason != "line one\n\tline two" {
		t.Errorf("flags %+v", fs)
	}
}

func decideErr(db *store.DB, in arena.OracleDecisionInput) error {
	_, _, err := db.DecideOracle(context.Background(), in)
	return err
}

func disputeErr(db *store.DB, d arena.OracleDispute) error {
	_, err := db.DisputeOracle(context.Background(), &d)
	return err
}
