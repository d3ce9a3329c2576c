package trading_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
)

func TestDecisionSchedule(t *testing.T) {
	s := trading.DecisionSchedule{Offset: 5 * time.Minute, Every: 10 * time.Minute}
	sun := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		now    time.Time
		period time.Time
		due    bool
	}{
		{sun.Add(-time.Second), sun.AddDate(0, 0, -7).Add(7*24*time.Hour - 10*time.Minute + 5*time.Minute), true}, // Saturday 23:59:59: last period of the previous week
		{sun, sun.Add(5 * time.Minute), false},
		{sun.Add(4*time.Minute + 59*time.Second), sun.Add(5 * time.Minute), false},
		{sun.Add(5 * time.Minute), sun.Add(5 * time.Minute), true},
		{sun.Add(14*time.Minute + 59*time.Second), sun.Add(5 * time.Minute), true},
		{sun.Add(15 * time.Minute), sun.Add(15 * time.Minute), true},
		{sun.Add(50 * time.Hour), sun.Add(50*time.Hour - 5*time.Minute), true},
	} {
		p, due := s.Period(c.now)
		if !p.Equal(c.period) || due != c.due {
			t.Errorf("Period(%s) = %s %v, want %s %v", c.now.Format(time.RFC3339), p.Format(time.RFC3339), due, c.period.Format(time.RFC3339), c.due)
		}
	}
}

// TestJobsDriveAWeek runs the trading jobs under the real scheduler,
// stepped on a settable clock: Sunday 00:00 starts the cohort, 00:05 (not before) runs the decisions
// (one agent fails retryably and is decided at 00:15), snapshots land on
// 10-minute boundaries and the hourly check settles a resolved market.
func TestJobsDriveAWeek(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		m1 := mkBinary("m1", 0.40, 100)
		save(t, db, m1)
		clk := clock.New(week.Add(30 * time.Second))
		e := engine(db, clk, lineup("p", "a", "b"))
		var bFails atomic.Int32
		bFails.Store(1)
		bet := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: m1.ID, Side: "YES", Amount: usd(1000)}}}
		var calls atomic.Int32
		deciders := func(_ context.Context, c *arena.Cohort) (map[string]trading.Decider, error) {
			calls.Add(1)
			return map[string]trading.Decider{
				"a": scripted(bet, nil),
				"b": trading.DeciderFunc(func(ctx context.Context, s trading.Snapshot) (trading.Decision, error) {
					if bFails.Add(-1) >= 0 {
						return trading.Decision{}, errors.New("provider outage")
					}
					return scripted(bet, nil).Decide(ctx, s)
				}),
			}, nil
		}
		sched := &jobs.Scheduler{Store: db, Jobs: trading.Jobs(e, trading.JobsConfig{Deciders: deciders, Policy: trading.PolicyRefund}),
			Now: clk.Now, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
		step := func(at time.Duration) {
			t.Helper()
			clk.Set(week.Add(at))
			if err := sched.RunDue(ctx); err != nil {
				t.Fatalf("at 00:%02d: %v", int(at.Minutes()), err)
			}
		}

		step(30 * time.Second)
		c, err := db.CohortByWeek(ctx, week)
		if err != nil {
			t.Fatalf("no cohort at 00:00: %v", err)
		}
		step(4 * time.Minute)
		if ds, _ := db.Decisions(ctx, c.ID); len(ds) != 0 || calls.Load() != 0 {
			t.Fatalf("decisions before 00:05: %d", len(ds))
		}
		status := func(agent string) arena.DecisionStatus {
			ds, _ := db.Decisions(ctx, c.ID)
			for _, d := range ds {
				if d.AgentID == agent {
					return d.Status
				}
			}
			return ""
		}
		step(5 * time.Minute)
		if status("a") != arena.DecisionDone || status("b") != arena.DecisionRetryable {
			t.Fatalf("after the 00:05 run: a %s, b %s", status("a"), status("b"))
		}
		step(15 * time.Minute)
		if status("b") != arena.DecisionDone {
			t.Fatalf("after the 00:15 resumption: b %s", status("b"))
		}
		// 00:25: nothing is pending, so no deciders are built and no run happens.
		n := calls.Load()
		step(25 * time.Minute)
		if runs, _ := db.JobRuns(ctx, trading.JobDecisionRun); len(runs) != 3 || !runs[2].Period.Equal(week.Add(25*time.Minute)) || !runs[2].Finished {
			t.Fatalf("decision runs %+v, want the 00:05, 00:15 and 00:25 periods", runs)
		}
		if calls.Load() != n+1 { // deciders built to count pending agents, then no Run
			t.Fatalf("deciders built %d times after everything was decided", calls.Load()-n)
		}
		oneBet := func(agent string) {
			p := mustPortfolio(t, db, c.ID, agent)
			if tr, _ := db.Trades(ctx, p.ID); len(tr) != 1 || p.Cash != usd(9000) {
				t.Fatalf("%s: %d trades, cash %s", agent, len(tr), p.Cash)
			}
		}
		oneBet("a")
		oneBet("b")

		// Snapshots at 00:00 (empty portfolios), 00:10 and 00:20, and the
		// settlement check at 01:00.
		pa := mustPortfolio(t, db, c.ID, "a")
		if s, _ := db.Snapshots(ctx, pa.ID); len(s) != 3 {
			t.Fatalf("%d snapshots by 00:25, want 3 (00:00, 00:10, 00:20)", len(s))
		}
		if _, err := db.ResolveMarket(ctx, m1.ID, arena.Yes, week.Add(50*time.Minute)); err != nil {
			t.Fatal(err)
		}
		step(time.Hour)
		if p := mustPortfolio(t, db, c.ID, "a"); len(p.Positions) != 0 {
			t.Fatalf("not settled at 01:00: %+v", p.Positions)
		}
		// 1000 / 0.40 = 2500 shares paid $1 each.
		if p := mustPortfolio(t, db, c.ID, "a"); p.Cash != usd(11500) || p.Realized != usd(1500) {
			t.Fatalf("after settlement %+v", p)
		}
		snaps, _ := db.Snapshots(ctx, pa.ID)
		for _, s := range snaps {
			if s.At.Sub(s.At.Truncate(10*time.Minute)) != 0 || s.At.Before(week) {
				t.Fatalf("snapshot at %s", s.At)
			}
		}
		for _, name := range []string{trading.JobCohortStart, trading.JobSnapshot, trading.JobSettle} {
			runs, _ := db.JobRuns(ctx, name)
			for _, r := range runs {
				if r.Error != "" {
					t.Errorf("%s %s: %s", name, r.Period, r.Error)
				}
			}
			if len(runs) == 0 {
				t.Errorf("job %s never ran", name)
			}
		}
	})
}

func TestAggregateLeaderboard(t *testing.T) {
	w1, w2 := week, week.AddDate(0, 0, 7)
	val := func(pnl trading.Micros) trading.Valuation {
		total := trading.InitialCash + pnl
		return trading.Valuation{Total: total, PnL: pnl, PnLPct: trading.ReturnPct(total, trading.InitialCash)}
	}
	rows := trading.Aggregate([]trading.CohortResult{
		{AgentID: "a", Name: "A old", CohortID: 1, WeekStart: w1, Valuation: val(usd(1000)), Decisions: 1, Cost: 1500,
			Bets: []trading.BetOutcome{{Confidence: 0.8, Price: 600_000, Won: true}, {Confidence: 0.4, Price: 300_000, Won: false}}},
		{AgentID: "a", Name: "A new", CohortID: 2, WeekStart: w2, Active: true, Valuation: val(-usd(500)), Decisions: 2, Cost: 4500,
			Bets: []trading.BetOutcome{{Confidence: 1, Price: 900_000, Won: true}}},
		{AgentID: "b", Name: "B", CohortID: 1, WeekStart: w1, Valuation: val(usd(2000)), Bankrupt: true},
	})
	if len(rows) != 2 || rows[0].AgentID != "b" || rows[1].AgentID != "a" {
		t.Fatalf("order %+v", rows)
	}
	a, b := rows[1], rows[0]
	// a: returns +10% and −5% → mean 2.5%; bets (0.8−1)², (0.4−0)², (1−1)² → 0.2/3;
	// market (0.6−1)², (0.3)², (0.9−1)² → 0.26/3.
	if a.Name != "A new" || a.Cohorts != 2 || a.ActiveCohorts != 1 || !near(a.MeanReturnPct, 2.5) || a.TotalPnL != usd(500) ||
		a.ResolvedBets != 3 || !near(a.Brier, 0.2/3) || !near(a.MarketBrier, 0.26/3) || !near(a.BrierSkill, 1-0.2/3/0.25) ||
		!near(a.SkillVsMarket, 1-0.2/0.26) || a.Decisions != 3 || a.Cost != 6000 {
		t.Fatalf("a %+v", a)
	}
	if b.Bankruptcies != 1 || b.ResolvedBets != 0 || b.Decisions != 0 || b.Cost != 0 || !math.IsNaN(b.Brier) || !math.IsNaN(b.SkillVsMarket) || !near(b.MeanReturnPct, 20) {
		t.Fatalf("b %+v", b)
	}
	trading.SortByBrier(rows)
	if rows[0].AgentID != "a" {
		t.Fatalf("by Brier: %+v", rows)
	}
}

// TestDecisionJobStartsMissingCohort: if the Sunday cohort-start run failed
// (its period is claimed once), the decision job creates the week's cohort
// itself and runs it.
func TestDecisionJobStartsMissingCohort(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		m1 := mkBinary("m1", 0.40, 100)
		save(t, db, m1)
		e := engine(db, clock.New(run), lineup("p", "a"))
		bet := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: m1.ID, Side: "YES", Amount: usd(1000)}}}
		deciders := func(context.Context, *arena.Cohort) (map[string]trading.Decider, error) {
			return map[string]trading.Decider{"a": scripted(bet, nil)}, nil
		}
		var decide trading.Job
		for _, j := range trading.Jobs(e, trading.JobsConfig{Deciders: deciders}) {
			if j.Name == trading.JobDecisionRun {
				decide = j
			}
		}
		if err := decide.Run(ctx, run); err != nil {
			t.Fatal(err)
		}
		c, err := db.CohortByWeek(ctx, week)
		if err != nil {
			t.Fatalf("no cohort after the decision job: %v", err)
		}
		if ds, _ := db.Decisions(ctx, c.ID); len(ds) != 1 || ds[0].Status != arena.DecisionDone {
			t.Fatalf("decisions %+v", ds)
		}
		// Running again neither creates a second cohort nor decides twice.
		if err := decide.Run(ctx, run.Add(10*time.Minute)); err != nil {
			t.Fatal(err)
		}
		if cs, _ := db.Cohorts(ctx, ""); len(cs) != 1 {
			t.Fatalf("%d cohorts", len(cs))
		}
		if tr, _ := db.Trades(ctx, mustPortfolio(t, db, c.ID, "a").ID); len(tr) != 1 {
			t.Fatalf("%d trades", len(tr))
		}
	})
}
