package trading_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
)

// TestConcurrentProcesses runs the same week from two engines on two
// database handles at once (two replicas), five weeks in a row.
func TestConcurrentProcesses(t *testing.T) {
	for _, name := range storetest.Engines() {
		t.Run(name, func(t *testing.T) {
			url := storetest.URL(t, name)
			var dbs [2]*store.DB
			for i := range dbs {
				db, err := store.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				dbs[i] = db
			}
			lu := lineup("p", "a", "b", "c", "d", "e", "f", "g")
			save(t, dbs[0], mkBinary("m1", 0.5, 10))
			for w := 0; w < 5; w++ {
				now := run.AddDate(0, 0, 7*w)
				cd := newCounting(lu, 10*time.Millisecond)
				var wg sync.WaitGroup
				var cohort atomic.Int64
				done := make([]int, 2)
				for i := range dbs {
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						e := engine(dbs[i], clock.New(now), lu)
						c, _, err := e.StartCohort(ctx, now) // both replicas start the week too
						if err != nil {
							t.Error(err)
							return
						}
						cohort.Store(c.ID)
						rep, err := e.Run(ctx, c.ID, now, cd.deciders(lu))
						if err != nil {
							t.Error(err)
							return
						}
						done[i] = rep.Count(trading.OutcomeDone)
					}(i)
				}
				wg.Wait()
				for agent, n := range cd.calls {
					if n.Load() != 1 {
						t.Fatalf("week %d: %s decided %d times", w, agent, n.Load())
					}
				}
				c, _ := dbs[1].Cohort(ctx, cohort.Load())
				oneTradeEach(t, dbs[1], c)
				t.Logf("week %d: replica 1 decided %d agents, replica 2 decided %d", w, done[0], done[1])
			}
			if all, _ := dbs[0].Cohorts(ctx, ""); len(all) != 5 {
				t.Fatalf("%d cohorts for 5 weeks", len(all))
			}
		})
	}
}

// TestAmbiguousPolicies: an ambiguous market (resolved upstream, winner
// unknown) is refunded, deferred or left for the oracle as configured, and
// marked settled only when its positions are.
func TestAmbiguousPolicies(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.New(run)
		e := engine(db, clk, lineup("p", "a"))
		m := mkBinary("amb", 0.3, 10)
		save(t, db, m)
		c, _, _ := e.StartCohort(ctx, run)
		bet := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: m.ID, Side: "NO", Amount: usd(700)}}}
		if _, err := e.Run(ctx, c.ID, run, map[string]trading.Decider{"a": scripted(bet, nil)}); err != nil {
			t.Fatal(err)
		}
		// Unresolved: nothing to settle.
		if sr, _ := e.Settle(ctx, run.Add(time.Hour), trading.PolicyRefund); len(sr.Markets) != 0 {
			t.Fatalf("settled an open market: %+v", sr)
		}
		m.Status, m.Ambiguous, m.Prices = arena.StatusResolved, true, nil
		save(t, db, m)
		for _, pol := range []trading.Policy{trading.PolicyDefer, trading.PolicyOracle} {
			sr, err := e.Settle(ctx, run.Add(2*time.Hour), pol)
			if err != nil || len(sr.Markets) != 0 {
				t.Fatalf("%s settled: %+v %v", pol, sr, err)
			}
			if pol == trading.PolicyDefer && (len(sr.Deferred) != 1 || sr.Deferred[0] != m.ID) ||
				pol == trading.PolicyOracle && (len(sr.AwaitingOracle) != 1 || sr.AwaitingOracle[0] != m.ID) {
				t.Fatalf("%s report %+v", pol, sr)
			}
			if sts, _ := db.Settlements(ctx); len(sts) != 0 {
				t.Fatalf("%s recorded a settlement", pol)
			}
		}
		if _, err := e.Settle(ctx, run, "coinflip"); arena.ErrorKind(err) != arena.EINVALID {
			t.Fatalf("bad policy: %v", err)
		}
		// Until settled, the position keeps its last valuation ($700 at 0.70).
		e.Snapshot(ctx, run.Add(3*time.Hour))
		p := mustPortfolio(t, db, c.ID, "a")
		ss, _ := db.Snapshots(ctx, p.ID)
		if len(ss) != 1 || ss[0].Total != trading.InitialCash {
			t.Fatalf("valuation of an ambiguous market: %+v", ss)
		}
		sr, err := e.Settle(ctx, run.Add(4*time.Hour), trading.PolicyRefund)
		if err != nil || sr.Cancelled != 1 || len(sr.Markets) != 1 || sr.Markets[0].Policy != "refund" || sr.Markets[0].Resolution != arena.Void {
			t.Fatalf("refund: %+v %v", sr, err)
		}
		p = mustPortfolio(t, db, c.ID, "a")
		all, _ := db.PositionsOf(ctx, p.ID)
		if p.Cash != trading.InitialCash || p.Realized != 0 || len(all) != 1 || all[0].Status != arena.PositionCancelled {
			t.Fatalf("after refund %+v %+v", p, all)
		}
	})
}

// TestCannotTradeHoldsWithoutModelCall: an agent with no position and too
// little cash for a legal bet gets a recorded system HOLD, no model call.
func TestCannotTradeHoldsWithoutModelCall(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := engine(db, clock.New(run), lineup("p", "poor"))
		e.InitialCash = usd(199.99)
		save(t, db, mkBinary("m1", 0.5, 10))
		c, _, _ := e.StartCohort(ctx, run)
		var called atomic.Int32
		dec := trading.DeciderFunc(func(context.Context, trading.Snapshot) (trading.Decision, error) {
			called.Add(1)
			return trading.Decision{Action: trading.Hold("x")}, nil
		})
		rep, err := e.Run(ctx, c.ID, run, map[string]trading.Decider{"poor": dec})
		if err != nil || rep.Agents[0].Outcome != trading.OutcomeDone || called.Load() != 0 {
			t.Fatalf("%+v %v calls %d", rep, err, called.Load())
		}
		ds, _ := db.Decisions(ctx, c.ID)
		if !ds[0].SystemDefault || ds[0].Status != arena.DecisionDone {
			t.Fatalf("%+v", ds[0])
		}
	})
}

// TestPanickingDecider: a decider that panics records a retryable failure
// and the other agents proceed.
func TestPanickingDecider(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := engine(db, clock.New(run), lineup("p", "boom", "calm"))
		save(t, db, mkBinary("m1", 0.5, 10))
		c, _, _ := e.StartCohort(ctx, run)
		boom := trading.DeciderFunc(func(context.Context, trading.Snapshot) (trading.Decision, error) { panic("model client bug") })
		rep, err := e.Run(ctx, c.ID, run, map[string]trading.Decider{"boom": boom, "calm": scripted(trading.Hold("calm"), nil)})
		if err != nil || rep.Agents[0].Outcome != trading.OutcomeRetryable || rep.Agents[1].Outcome != trading.OutcomeDone {
			t.Fatalf("%+v %v", rep.Agents, err)
		}
		ds, _ := db.Decisions(ctx, c.ID)
		if ds[0].Status != arena.DecisionRetryable || ds[0].Error != "decider: panic: model client bug" {
			t.Fatalf("%+v", ds[0])
		}
	})
}

// outcomeForecaster knows each market's outcome (sharp) or always says 0.7 (dull).
type outcomeForecaster struct{ yes map[string]bool }

func (f outcomeForecaster) Forecast(agent, sourceID string, _ time.Time) (float64, error) {
	if agent == "dull" {
		return 0.7, nil
	}
	if f.yes[sourceID] {
		return 0.85, nil
	}
	return 0.15, nil
}

// TestSimTraderCalibration: simulated traders stake their belief, so their
// implied-confidence Brier is their forecast Brier. A sharp trader (0.85
// on the true side of every market) scores (0.85 − 1)² = 0.0225; a dull
// one (0.7 Yes everywhere, right on 3 of the 5 markets it bets) scores
// (3 × 0.09 + 2 × 0.49) / 5 = 0.25.
func TestSimTraderCalibration(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := engine(db, clock.New(run), lineup("sim", "sharp", "dull"))
		f := outcomeForecaster{yes: map[string]bool{}}
		var ms []*arena.Market
		for i := 0; i < 8; i++ {
			id := fmt.Sprintf("q%d", i)
			f.yes[id] = i%2 == 0
			ms = append(ms, mkBinary(id, 0.5, float64(100-i)))
		}
		save(t, db, ms...)
		c, _, _ := e.StartCohort(ctx, run)
		deciders := map[string]trading.Decider{
			"sharp": &trading.SimTrader{Agent: "sharp", World: f},
			"dull":  &trading.SimTrader{Agent: "dull", World: f},
		}
		if _, err := e.Run(ctx, c.ID, run, deciders); err != nil {
			t.Fatal(err)
		}
		for i, m := range ms {
			res := arena.No
			if i%2 == 0 {
				res = arena.Yes
			}
			db.ResolveMarket(ctx, m.ID, res, run.Add(time.Hour))
		}
		if _, err := e.Settle(ctx, run.Add(time.Hour), trading.PolicyRefund); err != nil {
			t.Fatal(err)
		}
		e.Snapshot(ctx, run.Add(time.Hour))
		st, err := e.Standings(ctx, c.ID)
		if err != nil || len(st) != 2 || st[0].AgentID != "sharp" || st[0].Name != "Agent sharp" || st[0].ResolvedBets != 5 ||
			st[0].OpenPositions != 0 || st[0].Valuation.Total <= st[1].Valuation.Total {
			t.Fatalf("standings %+v %v", st, err)
		}
		for agent, want := range map[string]float64{"sharp": 0.0225, "dull": 0.25} {
			p := mustPortfolio(t, db, c.ID, agent)
			ss, _ := db.Snapshots(ctx, p.ID)
			s := ss[len(ss)-1]
			if s.ResolvedBets != 5 || s.Brier < want-1e-8 || s.Brier > want+1e-8 {
				t.Fatalf("%s: brier %v over %d bets, want %v over 5", agent, s.Brier, s.ResolvedBets, want)
			}
			t.Logf("%s: Brier %.6f over %d bets, return %+.2f%%", agent, s.Brier, s.ResolvedBets, s.PnLPct)
		}
	})
}

// BenchmarkRun measures a full decision run (claim, snapshot, execute,
// record) of 7 simulated traders on SQLite, reporting decisions per second.
func BenchmarkRun(b *testing.B) {
	db, err := store.Open(ctx, storetest.URL(b, "sqlite"))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	var ms []*arena.Market
	for i := 0; i < 50; i++ {
		ms = append(ms, mkBinary(fmt.Sprintf("q%02d", i), 0.05+0.018*float64(i), float64(1000-i)))
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		b.Fatal(err)
	}
	agents := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7"}
	lu := lineup("sim", agents...)
	deciders := map[string]trading.Decider{}
	for _, a := range agents {
		deciders[a] = &trading.SimTrader{Agent: a, World: hashForecaster{}}
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		now := run.AddDate(0, 0, 7*i)
		e := engine(db, clock.New(now), lu)
		e.ProviderLimit = 7
		c, _, err := e.StartCohort(ctx, now)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := e.Run(ctx, c.ID, now, deciders); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*len(agents))/b.Elapsed().Seconds(), "decisions/s")
}

// TestRunTimeStampsTrades: trades carry the run's time (`--now`), not the
// wall clock, while the claim keeps the wall clock (staleness is judged
// between live processes).
func TestRunTimeStampsTrades(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		wall := run.Add(50 * time.Hour) // later the same week
		e := engine(db, clock.New(wall), lineup("p", "a"))
		m := mkBinary("m1", 0.5, 10)
		save(t, db, m)
		c, _, _ := e.StartCohort(ctx, run)
		bet := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: m.ID, Side: "YES", Amount: usd(100)}}}
		rep, err := e.Run(ctx, c.ID, run, map[string]trading.Decider{"a": scripted(bet, nil)})
		if err != nil || rep.Count(trading.OutcomeDone) != 1 {
			t.Fatalf("%+v %v", rep, err)
		}
		p := mustPortfolio(t, db, c.ID, "a")
		tr, _ := db.Trades(ctx, p.ID)
		all, _ := db.PositionsOf(ctx, p.ID)
		if len(tr) != 1 || !tr[0].CreatedAt.Equal(run) || len(all) != 1 || !all[0].OpenedAt.Equal(run) {
			t.Fatalf("trade/position not stamped at the run's time %s: %+v %+v", run, tr, all)
		}
		ds, _ := db.Decisions(ctx, c.ID)
		if !ds[0].ClaimedAt.Equal(wall) {
			t.Fatalf("claim at %s, want the wall clock %s", ds[0].ClaimedAt, wall)
		}
	})
}

// finishFails is a store whose FinishDecision fails with a plain
// (non-conflict) error, like a dropped connection.
type finishFails struct {
	*store.DB
}

func (finishFails) FinishDecision(context.Context, *arena.Decision, *arena.PortfolioChange) error {
	return fmt.Errorf("store: commit: connection reset by peer")
}

// TestFinishFailureIsRecorded: when recording a decision fails for a reason
// other than a conflict, the retryable row says why.
func TestFinishFailureIsRecorded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := engine(db, clock.New(run), lineup("p", "a"))
		m := mkBinary("m1", 0.5, 10)
		save(t, db, m)
		c, _, _ := e.StartCohort(ctx, run)
		e.Store = finishFails{db}
		bet := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: m.ID, Side: "YES", Amount: usd(100)}}}
		rep, _ := e.Run(ctx, c.ID, run, map[string]trading.Decider{"a": scripted(bet, nil)})
		if rep.Agents[0].Outcome != trading.OutcomeRetryable || rep.Agents[0].Status != arena.DecisionRetryable {
			t.Fatalf("%+v", rep.Agents)
		}
		ds, _ := db.Decisions(ctx, c.ID)
		if len(ds) != 1 || ds[0].Status != arena.DecisionRetryable || !strings.Contains(ds[0].Error, "connection reset by peer") {
			t.Fatalf("decision row %+v", ds)
		}
	})
}
