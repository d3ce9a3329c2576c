package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

var week = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // a Sunday

func lineup(ids ...string) []arena.LineupEntry {
	var out []arena.LineupEntry
	for _, id := range ids {
		out = append(out, arena.LineupEntry{AgentID: id, Name: "Agent " + id, Kind: "llm", Provider: "openrouter", Model: "x/" + id,
			InputMicrosPerMtok: 1_250_000, OutputMicrosPerMtok: 10_000_000, Spec: json.RawMessage(`{"id":"` + id + `"}`)})
	}
	return out
}

// NewCohort creates the cohort of week with the given agents.
func NewCohort(t *testing.T, db *store.DB, agents ...string) *arena.Cohort {
	t.Helper()
	c := &arena.Cohort{WeekStart: week, Lineup: lineup(agents...), InitialCash: 10_000 * arena.Dollar}
	if created, err := db.CreateCohort(context.Background(), c); err != nil || !created {
		t.Fatalf("create cohort: %v %v", created, err)
	}
	return c
}

// SaveMarket saves a binary market and returns its id.
func SaveMarket(t *testing.T, db *store.DB, id string) int64 {
	t.Helper()
	m := Binary(id, 100)
	if _, err := db.SaveMarkets(context.Background(), []*arena.Market{m}); err != nil {
		t.Fatal(err)
	}
	return m.ID
}

// Bet builds the change a $1000 YES bet at 0.5 makes to a fresh portfolio.
func Bet(p *arena.Portfolio, market int64) *arena.PortfolioChange {
	return &arena.PortfolioChange{PortfolioID: p.ID, ExpectVersion: p.Version, Cash: p.Cash - 1000*arena.Dollar, Realized: p.Realized,
		Positions: []*arena.Position{{ID: -1, MarketID: market, Side: "YES", Shares: 2000 * arena.OneShare, CostBasis: 1000 * arena.Dollar,
			Mark: 500_000, Status: arena.PositionOpen, OpenedAt: t0}},
		Trades: []*arena.Trade{{PositionID: -1, MarketID: market, Side: "YES", Kind: arena.TradeBet, Amount: 1000 * arena.Dollar,
			Shares: 2000 * arena.OneShare, Price: 500_000, CostBasis: 1000 * arena.Dollar, CashBefore: p.Cash, Confidence: 0.4, CreatedAt: t0}}}
}

func claim(db *store.DB, c *arena.Cohort, agent, owner string, now time.Time) (*arena.Decision, bool, error) {
	return db.ClaimDecision(context.Background(), arena.ClaimRequest{CohortID: c.ID, AgentID: agent, Week: week, Owner: owner,
		Now: now, StaleBefore: now.Add(-4 * time.Minute), MaxAttempts: 3})
}

func testCohortUniquePerWeek(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ids := make([]int64, 8)
	if wins := race(t, len(ids), func(i int) (bool, error) {
		c := &arena.Cohort{WeekStart: week, Lineup: lineup("a", "b"), InitialCash: 10_000 * arena.Dollar}
		created, err := db.CreateCohort(ctx, c)
		ids[i] = c.ID
		return created, err
	}); wins != 1 {
		t.Fatalf("%d cohorts created for one week", wins)
	}
	for _, id := range ids {
		if id != ids[0] || id == 0 {
			t.Fatalf("claimants saw different cohorts: %v", ids)
		}
	}
	all, err := db.Cohorts(ctx, "")
	if err != nil || len(all) != 1 {
		t.Fatalf("cohorts: %d %v", len(all), err)
	}
	c := all[0]
	if !c.WeekStart.Equal(week) || c.Status != arena.CohortActive || len(c.Lineup) != 2 || c.Lineup[1].Model != "x/b" ||
		c.Lineup[0].OutputMicrosPerMtok != 10_000_000 || string(c.Lineup[0].Spec) != `{"id":"a"}` {
		t.Fatalf("cohort round trip: %+v", c)
	}
	ps, err := db.Portfolios(ctx, c.ID)
	if err != nil || len(ps) != 2 || ps[0].AgentID != "a" || ps[0].Cash != 10_000*arena.Dollar || ps[0].Version != 0 {
		t.Fatalf("portfolios: %+v %v", ps, err)
	}
	for _, bad := range []*arena.Cohort{
		{WeekStart: week.Add(24 * time.Hour), Lineup: lineup("a"), InitialCash: 1},
		{WeekStart: week.Add(time.Minute), Lineup: lineup("a"), InitialCash: 1},
		{WeekStart: week.AddDate(0, 0, 7), Lineup: lineup("a", "a"), InitialCash: 1},
		{WeekStart: week.AddDate(0, 0, 7), InitialCash: 1},
		{WeekStart: week.AddDate(0, 0, 7), Lineup: lineup("a")},
	} {
		if _, err := db.CreateCohort(ctx, bad); arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("accepted %+v: %v", bad, err)
		}
	}
	if _, err := db.CohortByWeek(ctx, week.AddDate(0, 0, 7)); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("missing week: %v", err)
	}
	// Asking again for a week that has its cohort uses up no number: the
	// next week's cohort is numbered next.
	next := func(w time.Time) int64 {
		c := &arena.Cohort{WeekStart: w, Lineup: lineup("a"), InitialCash: arena.Dollar}
		if _, err := db.CreateCohort(ctx, c); err != nil {
			t.Fatal(err)
		}
		return c.ID
	}
	w2 := week.AddDate(0, 0, 14)
	first := next(w2)
	for range 3 {
		if id := next(w2); id != first {
			t.Fatalf("week %s: cohort %d, then %d", w2, first, id)
		}
	}
	if id := next(w2.AddDate(0, 0, 7)); id != first+1 {
		t.Errorf("after cohort %d and three repeated starts of its week, the next is %d", first, id)
	}
}

func testDecisionClaims(t *testing.T, db *store.DB) {
	ctx := context.Background()
	c := NewCohort(t, db, "a", "b")
	mkt := SaveMarket(t, db, "m1")
	now := week.Add(5 * time.Minute)

	// Concurrent claimants: exactly one wins.
	if wins := race(t, 8, func(i int) (bool, error) {
		_, ok, err := claim(db, c, "a", fmt.Sprint("run", i), now)
		return ok, err
	}); wins != 1 {
		t.Fatalf("%d claimants won", wins)
	}
	// A live claim is not taken; a stale one is.
	cur, ok, err := claim(db, c, "a", "late", now.Add(time.Minute))
	if err != nil || ok || cur.Status != arena.DecisionClaimed {
		t.Fatalf("live claim taken: %v %v", ok, err)
	}
	first := cur.Owner
	taken, ok, err := claim(db, c, "a", "rescuer", now.Add(10*time.Minute))
	if err != nil || !ok || taken.Owner != "rescuer" || taken.Attempts != 2 {
		t.Fatalf("stale claim not taken over: %+v %v %v", taken, ok, err)
	}
	// The original owner can no longer finish: nothing it computed lands.
	ps, _ := db.Portfolios(ctx, c.ID)
	stale := *cur
	stale.Owner = first
	if err := db.FinishDecision(ctx, &stale, Bet(ps[0], mkt)); arena.ErrorCode(err) != arena.CodeClaimLost {
		t.Fatalf("lost claim finished: %v", err)
	}
	if tr, _ := db.Trades(ctx, ps[0].ID); len(tr) != 0 {
		t.Fatalf("trades written by a lost claim: %d", len(tr))
	}
	// The owner finishes with a change: decision and ledger land together.
	taken.SystemPrompt, taken.UserPrompt, taken.RawResponses = "sys", "user", []string{"bad", `{"action":"BET"}`}
	taken.Action, taken.Executions = json.RawMessage(`{"action":"BET"}`), json.RawMessage(`[{"ok":true}]`)
	taken.Retries, taken.TokensIn, taken.TokensOut, taken.Cost, taken.LatencyMS = 1, 1200, 300, 4500, 812
	ch := Bet(ps[0], mkt)
	if err := db.FinishDecision(ctx, taken, ch); err != nil {
		t.Fatal(err)
	}
	if ch.Positions[0].ID <= 0 || ch.Trades[0].PositionID != ch.Positions[0].ID || ch.Trades[0].DecisionID != taken.ID {
		t.Fatalf("ids not assigned: %+v %+v", ch.Positions[0], ch.Trades[0])
	}
	p, err := db.Portfolio(ctx, ps[0].ID)
	if err != nil || p.Cash != 9000*arena.Dollar || p.Version != 1 || len(p.Positions) != 1 || p.Positions[0].Shares != 2000*arena.OneShare {
		t.Fatalf("portfolio after decision: %+v %v", p, err)
	}
	trades, _ := db.Trades(ctx, p.ID)
	if len(trades) != 1 || trades[0].Confidence != 0.4 || trades[0].DecisionID != taken.ID || trades[0].Price != 500_000 {
		t.Fatalf("trades: %+v", trades)
	}
	if ct, err := db.CohortTrades(ctx, c.ID); err != nil || len(ct) != 1 || *ct[0] != *trades[0] {
		t.Fatalf("cohort trades: %+v %v", ct, err)
	}
	// Done rows are never claimed again, however late.
	if _, ok, _ := claim(db, c, "a", "again", now.Add(time.Hour)); ok {
		t.Fatal("finished decision claimed again")
	}
	ds, _ := db.Decisions(ctx, c.ID)
	if len(ds) != 1 || ds[0].Status != arena.DecisionDone || ds[0].RawResponses[0] != "bad" || ds[0].TokensIn != 1200 ||
		ds[0].Cost != 4500 || string(ds[0].Executions) != `[{"ok":true}]` || ds[0].FinishedAt.IsZero() {
		t.Fatalf("decision audit: %+v", ds[0])
	}
	// A stale version cannot be applied twice.
	if err := db.ApplyChange(ctx, Bet(ps[0], mkt)); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("stale version applied: %v", err)
	}

	// Retryable failures are reclaimed until MaxAttempts.
	for i := 1; i <= 3; i++ {
		d, ok, err := claim(db, c, "b", "r", now)
		if err != nil || !ok || d.Attempts != i {
			t.Fatalf("attempt %d: %+v %v %v", i, d, ok, err)
		}
		d.Error = "no executions"
		if err := db.FailDecision(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	if d, ok, _ := claim(db, c, "b", "r", now); ok || d.Status != arena.DecisionRetryable || d.Error != "no executions" {
		t.Fatalf("claimed past MaxAttempts: %+v", d)
	}
	// Costs by agent: every decision row counts, failed ones too (their
	// model calls were paid for).
	if cs, err := db.DecisionCosts(ctx, c.ID); err != nil || len(cs) != 2 ||
		cs[0] != (arena.DecisionCost{AgentID: "a", Decisions: 1, Cost: 4500}) || cs[1] != (arena.DecisionCost{AgentID: "b", Decisions: 1}) {
		t.Fatalf("decision costs: %+v %v", cs, err)
	}
}

func testSettleSnapshotsAndCompletion(t *testing.T, db *store.DB) {
	ctx := context.Background()
	c := NewCohort(t, db, "a")
	mkt := SaveMarket(t, db, "m1")
	ps, _ := db.Portfolios(ctx, c.ID)
	ch := Bet(ps[0], mkt)
	if err := db.ApplyChange(ctx, ch); err != nil {
		t.Fatal(err)
	}
	// The same provisional position cannot be opened twice (one open per side).
	again := Bet(ps[0], mkt)
	again.ExpectVersion = 1
	if err := db.ApplyChange(ctx, again); arena.ErrorCode(err) != "position_exists" {
		t.Fatalf("second open position: %v", err)
	}
	if ids, _ := db.OpenPositionMarkets(ctx); len(ids) != 1 || ids[0] != mkt {
		t.Fatalf("open markets %v", ids)
	}
	// Frames are stored once.
	f1, err := db.SaveFrame(ctx, c.ID, week, []byte(`{"n":1}`))
	f2, _ := db.SaveFrame(ctx, c.ID, week, []byte(`{"n":2}`))
	if err != nil || string(f1) != `{"n":1}` || string(f2) != `{"n":1}` {
		t.Fatalf("frame: %s %s %v", f1, f2, err)
	}
	// Snapshots: one per portfolio and floored 10-minute timestamp.
	pid, posID := ps[0].ID, ch.Positions[0].ID
	s := arena.ValuationSnapshot{PortfolioID: pid, At: week.Add(17 * time.Minute), Cash: 9000 * arena.Dollar,
		PositionsValue: 1200 * arena.Dollar, Total: 10_200 * arena.Dollar, PnL: 200 * arena.Dollar, PnLPct: 2}
	n, err := db.SaveSnapshots(ctx, []arena.ValuationSnapshot{s}, map[int64]arena.PPM{posID: 600_000})
	s.At, s.Total = week.Add(19*time.Minute), 1 // same bucket: ignored
	n2, _ := db.SaveSnapshots(ctx, []arena.ValuationSnapshot{s}, nil)
	if err != nil || n != 1 || n2 != 0 {
		t.Fatalf("snapshots inserted %d then %d: %v", n, n2, err)
	}
	snaps, _ := db.Snapshots(ctx, pid)
	if len(snaps) != 1 || !snaps[0].At.Equal(week.Add(10*time.Minute)) || snaps[0].Total != 10_200*arena.Dollar || snaps[0].PnLPct != 2 {
		t.Fatalf("snapshots: %+v", snaps)
	}
	if p, _ := db.Portfolio(ctx, pid); p.Positions[0].Mark != 600_000 {
		t.Fatalf("mark not updated: %+v", p.Positions[0])
	}
	// Settlement refuses to mark the market while a position stays open.
	if err := db.SettleMarket(ctx, arena.Settlement{MarketID: mkt, Resolution: arena.Yes, SettledAt: t0}, nil); arena.ErrorCode(err) != "positions_open" {
		t.Fatalf("settled with open positions: %v", err)
	}
	if n, _ := db.CompleteCohorts(ctx, week.AddDate(0, 0, 7), t0); n != 0 {
		t.Fatal("cohort with open positions completed")
	}
	p, _ := db.Portfolio(ctx, pid)
	pos := *p.Positions[0]
	pos.Shares, pos.CostBasis, pos.Status, pos.ClosedAt, pos.Mark = 0, 0, arena.PositionSettled, t0, arena.OnePPM
	settle := &arena.PortfolioChange{PortfolioID: pid, ExpectVersion: p.Version, Cash: 11_000 * arena.Dollar, Realized: 1000 * arena.Dollar,
		Positions: []*arena.Position{&pos}, Trades: []*arena.Trade{{PositionID: pos.ID, MarketID: mkt, Side: "YES", Kind: arena.TradeSettle,
			Amount: 2000 * arena.Dollar, Shares: 2000 * arena.OneShare, Price: arena.OnePPM, CostBasis: 1000 * arena.Dollar, CashBefore: 9000 * arena.Dollar, CreatedAt: t0}}}
	if err := db.SettleMarket(ctx, arena.Settlement{MarketID: mkt, Resolution: arena.Yes, Positions: 1, SettledAt: t0}, []*arena.PortfolioChange{settle}); err != nil {
		t.Fatal(err)
	}
	if sts, _ := db.Settlements(ctx); len(sts) != 1 || sts[0].Resolution != arena.Yes || sts[0].Positions != 1 {
		t.Fatalf("settlements %+v", sts)
	}
	if ids, _ := db.OpenPositionMarkets(ctx); len(ids) != 0 {
		t.Fatalf("open markets after settlement %v", ids)
	}
	all, _ := db.PositionsOf(ctx, pid)
	if len(all) != 1 || all[0].Status != arena.PositionSettled || !all[0].ClosedAt.Equal(t0) {
		t.Fatalf("positions %+v", all)
	}
	trades, _ := db.Trades(ctx, pid)
	if len(trades) != 2 || trades[1].Kind != arena.TradeSettle || trades[1].DecisionID != 0 {
		t.Fatalf("trades %+v", trades)
	}
	// Not before its week is over; then it completes.
	if n, _ := db.CompleteCohorts(ctx, week, t0); n != 0 {
		t.Fatal("completed during its own week")
	}
	if n, err := db.CompleteCohorts(ctx, week.AddDate(0, 0, 7), t0); n != 1 || err != nil {
		t.Fatalf("complete: %d %v", n, err)
	}
	if got, _ := db.Cohort(ctx, c.ID); got.Status != arena.CohortCompleted || !got.CompletedAt.Equal(t0) {
		t.Fatalf("cohort %+v", got)
	}
}

// testStaleClaimsRespectMaxAttempts: a claim abandoned again and again (the
// process dies mid-decision) is taken over only until MaxAttempts.
func testStaleClaimsRespectMaxAttempts(t *testing.T, db *store.DB) {
	c := NewCohort(t, db, "a")
	now := week.Add(5 * time.Minute)
	for i := 1; i <= 3; i++ {
		at := now.Add(time.Duration(i-1) * 10 * time.Minute)
		d, ok, err := claim(db, c, "a", fmt.Sprint("crash", i), at)
		if err != nil || !ok || d.Attempts != i {
			t.Fatalf("claim %d: %+v %v %v", i, d, ok, err)
		}
	}
	d, ok, err := claim(db, c, "a", "crash4", now.Add(time.Hour))
	if err != nil || ok || d.Owner != "crash3" || d.Attempts != 3 || d.Status != arena.DecisionClaimed {
		t.Fatalf("stale claim taken past MaxAttempts: %+v %v %v", d, ok, err)
	}
}

// testDecisionKeepsSnapshotMark: a decision updating an existing position
// (a partial sell) does not overwrite the mark a later snapshot wrote with
// the stale mark its ledger loaded.
func testDecisionKeepsSnapshotMark(t *testing.T, db *store.DB) {
	ctx := context.Background()
	c := NewCohort(t, db, "a")
	mkt := SaveMarket(t, db, "m1")
	ps, _ := db.Portfolios(ctx, c.ID)
	if err := db.ApplyChange(ctx, Bet(ps[0], mkt)); err != nil {
		t.Fatal(err)
	}
	loaded, _ := db.Portfolio(ctx, ps[0].ID) // the decision's ledger copy, mark 0.5
	pos := *loaded.Positions[0]
	if _, err := db.SaveSnapshots(ctx, nil, map[int64]arena.PPM{pos.ID: 700_000}); err != nil {
		t.Fatal(err)
	}
	next := week.AddDate(0, 0, 7)
	d, ok, err := db.ClaimDecision(ctx, arena.ClaimRequest{CohortID: c.ID, AgentID: "a", Week: next, Owner: "o", Now: next, StaleBefore: next})
	if err != nil || !ok {
		t.Fatalf("claim: %v %v", ok, err)
	}
	// Sell half at 0.6: 1000 shares, $600, releasing $500 of cost.
	pos.Shares, pos.CostBasis = 1000*arena.OneShare, 500*arena.Dollar
	ch := &arena.PortfolioChange{PortfolioID: loaded.ID, ExpectVersion: loaded.Version, Cash: loaded.Cash + 600*arena.Dollar,
		Realized: 100 * arena.Dollar, Positions: []*arena.Position{&pos},
		Trades: []*arena.Trade{{PositionID: pos.ID, MarketID: mkt, Side: "YES", Kind: arena.TradeSell, Amount: 600 * arena.Dollar,
			Shares: 1000 * arena.OneShare, Price: 600_000, CostBasis: 500 * arena.Dollar, CashBefore: loaded.Cash, CreatedAt: next}}}
	if err := db.FinishDecision(ctx, d, ch); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Portfolio(ctx, loaded.ID)
	if len(got.Positions) != 1 || got.Positions[0].Shares != 1000*arena.OneShare || got.Positions[0].Mark != 700_000 {
		t.Fatalf("position after the decision: %+v", got.Positions)
	}
}
