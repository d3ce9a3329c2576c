package trading_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
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

var (
	week = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // Sunday
	run  = week.Add(5 * time.Minute)                   // the weekly decision run
	ctx  = context.Background()
)

func usd(x float64) trading.Micros {
	m, err := arena.DollarsToMicros(x)
	if err != nil {
		panic(err)
	}
	return m
}

func mkBinary(id string, yes float64, vol float64) *arena.Market {
	return &arena.Market{Source: arena.SourceSim, SourceID: id, Kind: arena.KindMarket, Question: "Will " + id + " happen?",
		Category: "politics", Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No},
		Prices: map[string]float64{arena.Yes: yes, arena.No: 1 - yes}, Volume: vol, CloseTime: week.AddDate(0, 0, 30), Status: arena.StatusOpen}
}

func save(t *testing.T, db *store.DB, ms ...*arena.Market) {
	t.Helper()
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
}

func lineup(provider string, ids ...string) []arena.LineupEntry {
	var out []arena.LineupEntry
	for _, id := range ids {
		out = append(out, arena.LineupEntry{AgentID: id, Name: "Agent " + id, Kind: "llm", Provider: provider, Model: "m/" + id})
	}
	return out
}

func engine(db *store.DB, clk *clock.Manual, lu []arena.LineupEntry) *trading.Engine {
	return &trading.Engine{Store: db, Lineup: lu, ModelTimeout: time.Minute, ProviderLimit: 2, Now: clk.Now,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
}

func scripted(a trading.Action, seen *trading.Snapshot) trading.Decider {
	return trading.DeciderFunc(func(ctx context.Context, s trading.Snapshot) (trading.Decision, error) {
		if seen != nil {
			*seen = s
		}
		return trading.Decision{Action: a, SystemPrompt: "system", UserPrompt: "user", RawResponses: []string{"raw"},
			TokensIn: 100, TokensOut: 20, Cost: 1234}, nil
	})
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// TestWeekScenario follows one agent through a simulated week: prices move,
// one market closes unresolved without a price (valuation kept), one is
// void (refund), the others settle; every snapshot's value, return and
// cumulative Brier is compared with numbers computed by hand.
func TestWeekScenario(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.New(run)
		e := engine(db, clk, lineup("openrouter", "alpha"))
		m1, m2, m3 := mkBinary("m1", 0.40, 400), mkBinary("m2", 0.70, 300), mkBinary("m3", 0.50, 200)
		m4 := &arena.Market{Source: arena.SourceSim, SourceID: "m4", Kind: arena.KindMarket, Question: "Who wins?", Type: arena.Multi,
			Outcomes: []string{"A", "B", "C"}, Prices: map[string]float64{"A": 0.45, "B": 0.25}, Volume: 100,
			CloseTime: week.AddDate(0, 0, 30), Status: arena.StatusOpen}
		save(t, db, m1, m2, m3, m4)
		c, created, err := e.StartCohort(ctx, run)
		if err != nil || !created || !c.WeekStart.Equal(week) {
			t.Fatalf("start: %+v %v %v", c, created, err)
		}
		if again, created, _ := e.StartCohort(ctx, week.Add(3*24*time.Hour)); created || again.ID != c.ID {
			t.Fatal("second cohort in the same week")
		}
		var seen trading.Snapshot
		action := trading.Action{Kind: trading.ActionBet, Reasoning: "scenario", Bets: []trading.Bet{
			{MarketID: m1.ID, Side: "YES", Amount: usd(1000)}, // c = 0.4, 2500 shares
			{MarketID: m2.ID, Side: "no", Amount: usd(500)},   // at 0.30, c = 2000/9000
			{MarketID: m3.ID, Side: "YES", Amount: usd(2000)}, // c = 8000/8500, 4000 shares
			{MarketID: m4.ID, Side: "B", Amount: usd(250)},    // at 0.25, c = 1000/6500, 1000 shares
			{MarketID: m4.ID, Side: "c", Amount: usd(100)},    // no price for C: fails
			{MarketID: 999999, Side: "YES", Amount: usd(100)}, // not offered: fails
		}}
		rep, err := e.Run(ctx, c.ID, run, map[string]trading.Decider{"alpha": scripted(action, &seen)})
		if err != nil || rep.Count(trading.OutcomeDone) != 1 || rep.Agents[0].Executed != 4 || rep.Agents[0].Failed != 2 {
			t.Fatalf("run: %+v %v", rep, err)
		}
		// What the agent saw: the frozen frame, by volume, with exact prices.
		if len(seen.Markets) != 4 || seen.Markets[0].ID != m1.ID || seen.Markets[1].Prices[arena.Yes] != 700_000 ||
			seen.Cash != trading.InitialCash || seen.MaxBet != usd(2500) || len(seen.Positions) != 0 || seen.Markets[0].PriceLine() != "40% YES / 60% NO" {
			t.Fatalf("snapshot: %+v", seen)
		}
		ds, _ := db.Decisions(ctx, c.ID)
		var ex []trading.Execution
		json.Unmarshal(ds[0].Executions, &ex)
		if len(ds) != 1 || ds[0].Status != arena.DecisionDone || ds[0].SystemPrompt != "system" || ds[0].Cost != 1234 ||
			len(ex) != 6 || ex[4].Code != trading.CodeNoPrice || ex[5].Code != trading.CodeNoMarket || ex[1].Side != "NO" {
			t.Fatalf("decision: %+v %+v", ds, ex)
		}
		pid := mustPortfolio(t, db, c.ID, "alpha").ID

		type want struct {
			total  trading.Micros
			pct    float64
			brier  float64
			bets   int
			detail string
		}
		check := func(at time.Time, w want) {
			t.Helper()
			n, err := e.Snapshot(ctx, at)
			if err != nil || n != 1 {
				t.Fatalf("%s: snapshot %d %v", w.detail, n, err)
			}
			if n, _ := e.Snapshot(ctx, at.Add(4*time.Minute)); n != 0 {
				t.Fatalf("%s: second snapshot in the same 10 minutes", w.detail)
			}
			ss, _ := db.Snapshots(ctx, pid)
			s := ss[len(ss)-1]
			if !s.At.Equal(at.Truncate(10*time.Minute)) || s.Total != w.total || s.PnL != w.total-trading.InitialCash ||
				!near(s.PnLPct, w.pct) || !near(s.Brier, w.brier) || s.ResolvedBets != w.bets || s.Cash+s.PositionsValue != s.Total {
				t.Fatalf("%s: got %+v, want total %s, %v%%, brier %v over %d", w.detail, s, w.total, w.pct, w.brier, w.bets)
			}
		}
		// Sunday 00:10, frozen prices: 1000 + 499.999999 (1666.666666 NO shares × 0.30) + 2000 + 250, cash 6250.
		check(week.Add(10*time.Minute), want{9_999_999_999, -1e-8, 0, 0, "entry"})

		// Monday: prices move. M1 0.55; M2 YES 0.60 so NO 0.40; M3 0.45; M4 B 0.30.
		m1.Prices, m2.Prices, m3.Prices = yesNo(0.55), yesNo(0.60), yesNo(0.45)
		m4.Prices = map[string]float64{"A": 0.40, "B": 0.30}
		save(t, db, m1, m2, m3, m4)
		// 1375 + 666.666666 + 1800 + 300 + 6250
		check(week.Add(24*time.Hour), want{10_391_666_666, 3.91666666, 0, 0, "prices moved"})

		// Wednesday: M1 0.60; M2 closes unresolved with no price (keeps 0.40);
		// M3 resolves VOID (valued at cost basis until refunded).
		m1.Prices = yesNo(0.60)
		m2.Status, m2.Prices = arena.StatusClosed, nil
		save(t, db, m1, m2)
		if _, err := db.ResolveMarket(ctx, m3.ID, arena.Void, week.Add(72*time.Hour)); err != nil {
			t.Fatal(err)
		}
		check(week.Add(72*time.Hour), want{10_716_666_666, 7.16666666, 0, 0, "closed without price, void"})

		// Thursday: M1 resolves YES; settlement refunds M3 and pays M1 (2500 shares).
		if _, err := db.ResolveMarket(ctx, m1.ID, arena.Yes, week.Add(96*time.Hour)); err != nil {
			t.Fatal(err)
		}
		sr, err := e.Settle(ctx, week.Add(96*time.Hour), trading.PolicyRefund)
		if err != nil || len(sr.Markets) != 2 || sr.Settled != 1 || sr.Cancelled != 1 || sr.CohortsCompleted != 0 {
			t.Fatalf("settle: %+v %v", sr, err)
		}
		// cash 6250 + 2000 + 2500; M2 still 666.666666; M4 300. Brier: M1 (0.4 − 1)².
		check(week.Add(96*time.Hour+time.Minute), want{11_716_666_666, 17.16666666, 0.36, 1, "first settlements"})

		// Friday: M2 resolves YES (the NO bet loses), M4 resolves B (wins 1000).
		db.ResolveMarket(ctx, m2.ID, arena.Yes, week.Add(120*time.Hour))
		db.ResolveMarket(ctx, m4.ID, "B", week.Add(120*time.Hour))
		if sr, err := e.Settle(ctx, week.Add(120*time.Hour), trading.PolicyRefund); err != nil || sr.Settled != 2 {
			t.Fatalf("settle: %+v %v", sr, err)
		}
		brier := (0.36 + math.Pow(2.0/9, 2) + math.Pow(1-2.0/13, 2)) / 3 // = 0.375119682…
		check(week.Add(120*time.Hour), want{usd(11750), 17.5, brier, 3, "all settled"})
		if !near(brier, 0.37511968224) {
			t.Fatalf("hand value %v", brier)
		}

		// The books reconcile exactly from the stored trades.
		p := mustPortfolio(t, db, c.ID, "alpha")
		if p.Cash != usd(11750) || p.Realized != usd(1750) || len(p.Positions) != 0 {
			t.Fatalf("final portfolio %+v", p)
		}
		trades, _ := db.Trades(ctx, p.ID)
		kinds := map[arena.TradeKind]int{}
		for _, tr := range trades {
			kinds[tr.Kind]++
		}
		if len(trades) != 8 || kinds[arena.TradeBet] != 4 || kinds[arena.TradeSettle] != 3 || kinds[arena.TradeCancel] != 1 {
			t.Fatalf("trades %v", kinds)
		}
		sts, _ := db.Settlements(ctx)
		if len(sts) != 4 {
			t.Fatalf("settlements %+v", sts)
		}
		// Nothing open and the week is over: the cohort completes.
		if sr, _ := e.Settle(ctx, week.AddDate(0, 0, 7), trading.PolicyRefund); sr.CohortsCompleted != 1 {
			t.Fatalf("cohort not completed: %+v", sr)
		}
		if _, err := e.Run(ctx, c.ID, week.AddDate(0, 0, 7), nil); arena.ErrorKind(err) != arena.EINVALID {
			t.Fatalf("run on a completed cohort: %v", err)
		}
	})
}

func yesNo(y float64) map[string]float64 { return map[string]float64{arena.Yes: y, arena.No: 1 - y} }

func mustPortfolio(t *testing.T, db *store.DB, cohort int64, agent string) *arena.Portfolio {
	t.Helper()
	ps, err := db.Portfolios(ctx, cohort)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.AgentID == agent {
			return p
		}
	}
	t.Fatalf("no portfolio for %s", agent)
	return nil
}

// TestSecondWeekSnapshotAndSell checks what an agent sees of its positions
// a week later (side-correct prices, average entry, unrealized P/L) and a
// partial sell.
func TestSecondWeekSnapshotAndSell(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.New(run)
		e := engine(db, clk, lineup("p", "alpha"))
		m1, m2 := mkBinary("m1", 0.40, 400), mkBinary("m2", 0.70, 300)
		save(t, db, m1, m2)
		c, _, _ := e.StartCohort(ctx, run)
		bets := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: m1.ID, Side: "YES", Amount: usd(1000)}, {MarketID: m2.ID, Side: "NO", Amount: usd(500)}}}
		if _, err := e.Run(ctx, c.ID, run, map[string]trading.Decider{"alpha": scripted(bets, nil)}); err != nil {
			t.Fatal(err)
		}
		m1.Prices, m2.Prices = yesNo(0.5), yesNo(0.8)
		save(t, db, m1, m2)
		next := run.AddDate(0, 0, 7)
		clk.Set(next)
		p := mustPortfolio(t, db, c.ID, "alpha")
		var yesID int64
		for _, pos := range p.Positions {
			if pos.MarketID == m1.ID {
				yesID = pos.ID
			}
		}
		var seen trading.Snapshot
		sell := trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: yesID, Percentage: 50}, {PositionID: 424242, Percentage: 10}}}
		rep, err := e.Run(ctx, c.ID, next, map[string]trading.Decider{"alpha": scripted(sell, &seen)})
		if err != nil || rep.Agents[0].Executed != 1 || rep.Agents[0].Failed != 1 {
			t.Fatalf("run: %+v %v", rep, err)
		}
		if len(seen.Positions) != 2 {
			t.Fatalf("positions seen: %+v", seen.Positions)
		}
		y, n := seen.Positions[0], seen.Positions[1]
		if y.Side != "YES" || y.AvgEntry != 400_000 || y.Price != 500_000 || y.Value != usd(1250) || y.Unrealized != usd(250) || y.Question != "Will m1 happen?" {
			t.Fatalf("YES view %+v", y)
		}
		// NO side: average entry 0.30, current 1 − 0.8 = 0.20.
		if n.Side != "NO" || n.AvgEntry != 300_000 || n.Price != 200_000 || n.Value != 333_333_333 || n.Unrealized != 333_333_333-usd(500) {
			t.Fatalf("NO view %+v", n)
		}
		if seen.Cash != usd(8500) || seen.Total != usd(8500)+usd(1250)+333_333_333 {
			t.Fatalf("cash %s total %s", seen.Cash, seen.Total)
		}
		// Sold 1250 shares at 0.50 = $625, releasing $500 of basis.
		p = mustPortfolio(t, db, c.ID, "alpha")
		if p.Cash != usd(9125) || p.Realized != usd(125) || p.Positions[0].CostBasis != usd(500) || p.Positions[0].Shares != 1250*arena.OneShare {
			t.Fatalf("after sell %+v %+v", p, p.Positions[0])
		}
		ds, _ := db.Decisions(ctx, c.ID)
		if len(ds) != 2 || !ds[1].Week.Equal(week.AddDate(0, 0, 7)) {
			t.Fatalf("decisions %+v", ds)
		}
	})
}

// countingDecider bets $100 on YES in the first offered market after a
// pause, counting calls and the concurrency it saw per provider.
type countingDecider struct {
	calls    map[string]*atomic.Int32
	inflight map[string]*atomic.Int32
	maxSeen  map[string]*atomic.Int32
	provider map[string]string
	pause    time.Duration
	mu       sync.Mutex
}

func newCounting(lu []arena.LineupEntry, pause time.Duration) *countingDecider {
	c := &countingDecider{calls: map[string]*atomic.Int32{}, inflight: map[string]*atomic.Int32{}, maxSeen: map[string]*atomic.Int32{},
		provider: map[string]string{}, pause: pause}
	for _, e := range lu {
		c.calls[e.AgentID] = &atomic.Int32{}
		c.provider[e.AgentID] = e.Provider
		if c.inflight[e.Provider] == nil {
			c.inflight[e.Provider], c.maxSeen[e.Provider] = &atomic.Int32{}, &atomic.Int32{}
		}
	}
	return c
}

func (c *countingDecider) deciders(lu []arena.LineupEntry) map[string]trading.Decider {
	out := map[string]trading.Decider{}
	for _, e := range lu {
		agent := e.AgentID
		out[agent] = trading.DeciderFunc(func(ctx context.Context, s trading.Snapshot) (trading.Decision, error) {
			c.calls[agent].Add(1)
			prov := c.provider[agent]
			n := c.inflight[prov].Add(1)
			defer c.inflight[prov].Add(-1)
			c.mu.Lock()
			if n > c.maxSeen[prov].Load() {
				c.maxSeen[prov].Store(n)
			}
			c.mu.Unlock()
			select {
			case <-time.After(c.pause):
			case <-ctx.Done():
				return trading.Decision{}, ctx.Err()
			}
			return trading.Decision{Action: trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: s.Markets[0].ID, Side: "YES", Amount: usd(100)}}}}, nil
		})
	}
	return out
}

// oneTradeEach asserts every agent's portfolio holds exactly one BET trade
// and one done decision.
func oneTradeEach(t *testing.T, db *store.DB, c *arena.Cohort) {
	t.Helper()
	for _, e := range c.Lineup {
		p := mustPortfolio(t, db, c.ID, e.AgentID)
		trades, _ := db.Trades(ctx, p.ID)
		if len(trades) != 1 || p.Cash != usd(9900) || p.Version != 1 {
			t.Fatalf("%s: %d trades, cash %s, version %d", e.AgentID, len(trades), p.Cash, p.Version)
		}
	}
	ds, _ := db.Decisions(ctx, c.ID)
	if len(ds) != len(c.Lineup) {
		t.Fatalf("%d decisions for %d agents", len(ds), len(c.Lineup))
	}
	for _, d := range ds {
		if d.Status != arena.DecisionDone {
			t.Fatalf("decision %+v", d)
		}
	}
}

// TestConcurrentRunsDecideOnce starts four runs of the same week at once,
// three weeks in a row: every agent is decided exactly once and trades
// once, and no provider ever has more than ProviderLimit calls in flight.
func TestConcurrentRunsDecideOnce(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		lu := append(lineup("openai", "a1", "a2", "a3"), lineup("anthropic", "b1", "b2", "b3")...)
		save(t, db, mkBinary("m1", 0.5, 10))
		for w := 0; w < 3; w++ {
			now := run.AddDate(0, 0, 7*w)
			clk := clock.New(now)
			e := engine(db, clk, lu)
			c, _, err := e.StartCohort(ctx, now)
			if err != nil {
				t.Fatal(err)
			}
			cd := newCounting(lu, 25*time.Millisecond)
			var wg sync.WaitGroup
			reps := make([]*trading.RunReport, 4)
			start := time.Now()
			for i := range reps {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					var err error
					if reps[i], err = e.Run(ctx, c.ID, now, cd.deciders(lu)); err != nil {
						t.Error(err)
					}
				}(i)
			}
			wg.Wait()
			elapsed := time.Since(start)
			done := 0
			for _, r := range reps {
				done += r.Count(trading.OutcomeDone)
				if r.Count(trading.OutcomeDone)+r.Count(trading.OutcomeSkipped) != len(lu) {
					t.Fatalf("report %+v", r.Agents)
				}
			}
			if done != len(lu) {
				t.Fatalf("week %d: %d decisions done across 4 runs, want %d", w, done, len(lu))
			}
			for agent, n := range cd.calls {
				if n.Load() != 1 {
					t.Fatalf("week %d: %s decided %d times", w, agent, n.Load())
				}
			}
			for prov, m := range cd.maxSeen {
				if m.Load() > 2 {
					t.Fatalf("provider %s had %d calls in flight (limit 2)", prov, m.Load())
				}
			}
			oneTradeEach(t, db, c)
			t.Logf("week %d: 4 concurrent runs, %d agents decided once each in %v (max in flight per provider: openai %d, anthropic %d)",
				w, len(lu), elapsed.Round(time.Millisecond), cd.maxSeen["openai"].Load(), cd.maxSeen["anthropic"].Load())
		}
	})
}

// TestInterruptedRunResumes cancels a run after some agents, then reruns
// the week: every agent ends with exactly one decision and one trade.
func TestInterruptedRunResumes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ids := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
		lu := lineup("one", ids...)
		save(t, db, mkBinary("m1", 0.5, 10))
		clk := clock.New(run)
		e := engine(db, clk, lu)
		e.ProviderLimit = 1 // one at a time, so the cut is mid-run
		c, _, _ := e.StartCohort(ctx, run)
		cd := newCounting(lu, 0)
		inner := cd.deciders(lu)
		rctx, cancel := context.WithCancel(ctx)
		defer cancel()
		var n atomic.Int32
		interrupting := map[string]trading.Decider{}
		for id, d := range inner {
			interrupting[id] = trading.DeciderFunc(func(dctx context.Context, s trading.Snapshot) (trading.Decision, error) {
				if n.Add(1) == 3 {
					cancel() // the process is stopped during the third model call
					<-dctx.Done()
					return trading.Decision{RawResponses: []string{"partial"}}, dctx.Err()
				}
				return d.Decide(dctx, s)
			})
		}
		rep, err := e.Run(rctx, c.ID, run, interrupting)
		if !errors.Is(err, context.Canceled) || rep.Count(trading.OutcomeDone) != 2 {
			t.Fatalf("interrupted run: %v %+v", err, rep.Agents)
		}
		rep, err = e.Run(ctx, c.ID, run, inner)
		if err != nil || rep.Count(trading.OutcomeDone) != 6 || rep.Count(trading.OutcomeSkipped) != 2 {
			t.Fatalf("rerun: %v %+v", err, rep.Agents)
		}
		oneTradeEach(t, db, c)
		ds, _ := db.Decisions(ctx, c.ID)
		retried := 0
		for _, d := range ds {
			if d.Attempts == 2 {
				retried++
			}
		}
		if retried != 1 {
			t.Fatalf("%d decisions retried, want the interrupted one", retried)
		}
		// A third run finds nothing to do.
		if rep, _ := e.Run(ctx, c.ID, run, inner); rep.Count(trading.OutcomeSkipped) != len(ids) {
			t.Fatalf("third run %+v", rep.Agents)
		}
	})
}

// TestStaleClaimTakenOver leaves a claim behind (a run killed after
// claiming): reruns skip it while it may still be live and take it over
// after twice the model timeout.
func TestStaleClaimTakenOver(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		lu := lineup("one", "a", "b", "c")
		save(t, db, mkBinary("m1", 0.5, 10))
		clk := clock.New(run)
		e := engine(db, clk, lu)
		c, _, _ := e.StartCohort(ctx, run)
		if _, ok, err := db.ClaimDecision(ctx, arena.ClaimRequest{CohortID: c.ID, AgentID: "b", Week: week, Owner: "killed-9", Now: run, StaleBefore: run}); !ok || err != nil {
			t.Fatal("setup claim", err)
		}
		cd := newCounting(lu, 0)
		clk.Set(run.Add(time.Minute))
		rep, _ := e.Run(ctx, c.ID, run, cd.deciders(lu))
		if rep.Count(trading.OutcomeDone) != 2 || rep.Agents[1].Outcome != trading.OutcomeSkipped || cd.calls["b"].Load() != 0 {
			t.Fatalf("live claim not respected: %+v", rep.Agents)
		}
		clk.Set(run.Add(2*time.Minute + time.Second)) // ModelTimeout is 1 minute
		rep, _ = e.Run(ctx, c.ID, run, cd.deciders(lu))
		if rep.Count(trading.OutcomeDone) != 1 || rep.Agents[1].Outcome != trading.OutcomeDone {
			t.Fatalf("stale claim not taken over: %+v", rep.Agents)
		}
		oneTradeEach(t, db, c)
	})
}

// TestZeroExecutionsIsRetryable: a BET whose every execution fails is not
// a decision; a later run retries it, up to MaxAttempts.
func TestZeroExecutionsIsRetryable(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		lu := lineup("one", "a", "b")
		save(t, db, mkBinary("m1", 0.5, 10))
		clk := clock.New(run)
		e := engine(db, clk, lu)
		e.MaxAttempts = 2
		c, _, _ := e.StartCohort(ctx, run)
		bad := scripted(trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: 987654, Side: "YES", Amount: usd(100)}}}, nil)
		hold := scripted(trading.Hold("nothing worth it"), nil)
		rep, _ := e.Run(ctx, c.ID, run, map[string]trading.Decider{"a": bad, "b": hold})
		if rep.Agents[0].Outcome != trading.OutcomeRetryable || rep.Agents[1].Outcome != trading.OutcomeDone {
			t.Fatalf("%+v", rep.Agents)
		}
		ds, _ := db.Decisions(ctx, c.ID)
		if ds[0].Status != arena.DecisionRetryable || ds[0].Error == "" || len(ds[0].RawResponses) != 1 || ds[1].Status != arena.DecisionDone {
			t.Fatalf("decisions %+v", ds)
		}
		if p := mustPortfolio(t, db, c.ID, "a"); p.Cash != trading.InitialCash || p.Version != 0 {
			t.Fatalf("failed decision changed the portfolio %+v", p)
		}
		good := scripted(trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: mustMarket(t, db, "m1"), Side: "YES", Amount: usd(100)}}}, nil)
		if rep, _ := e.Run(ctx, c.ID, run, map[string]trading.Decider{"a": good, "b": hold}); rep.Agents[0].Outcome != trading.OutcomeDone {
			t.Fatalf("retry: %+v", rep.Agents)
		}
		// An agent that keeps failing stops being retried after MaxAttempts.
		c2, _, _ := e.StartCohort(ctx, run.AddDate(0, 0, 7))
		for i := 0; i < 3; i++ {
			e.Run(ctx, c2.ID, run.AddDate(0, 0, 7), map[string]trading.Decider{"a": bad})
		}
		ds, _ = db.Decisions(ctx, c2.ID)
		if len(ds) != 1 || ds[0].Attempts != 2 || ds[0].Status != arena.DecisionRetryable {
			t.Fatalf("attempts %+v", ds)
		}
	})
}

func mustMarket(t *testing.T, db *store.DB, sourceID string) int64 {
	t.Helper()
	m, err := db.MarketBySource(ctx, arena.SourceSim, sourceID)
	if err != nil {
		t.Fatal(err)
	}
	return m.ID
}

// hashForecaster is a deterministic stand-in for sim.World: each agent's
// probability is a fixed function of (agent, market).
type hashForecaster struct{}

func (hashForecaster) Forecast(agent, sourceID string, _ time.Time) (float64, error) {
	h := fnv.New64a()
	h.Write([]byte(agent + "|" + sourceID))
	return 0.02 + 0.96*float64(h.Sum64()%10_000)/10_000, nil
}

type tradeKey struct {
	agent, side  string
	market       string
	amount       trading.Micros
	shares       trading.Shares
	price        trading.PPM
	conf         float64
	kind         arena.TradeKind
	cashBefore   trading.Micros
	decisionWeek bool
}

// TestOrderIndependence runs the same week with simulated traders three
// ways — sequentially, fully concurrent with random delays, and
// interrupted then resumed — on fresh databases: the trades are identical.
func TestOrderIndependence(t *testing.T) {
	for _, engineName := range storetest.Engines() {
		t.Run(engineName, func(t *testing.T) {
			agents := []string{"s1", "s2", "s3", "s4", "s5", "s6"}
			var lu []arena.LineupEntry
			for i, a := range agents {
				lu = append(lu, arena.LineupEntry{AgentID: a, Name: a, Kind: "sim", Provider: fmt.Sprint("p", i%2)})
			}
			results := make([][]tradeKey, 3)
			for mode := 0; mode < 3; mode++ {
				db, err := store.Open(ctx, storetest.URL(t, engineName))
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				var ms []*arena.Market
				for i := 0; i < 12; i++ {
					ms = append(ms, mkBinary(fmt.Sprintf("q%02d", i), 0.1+0.07*float64(i), float64(1000-i)))
				}
				save(t, db, ms...)
				clk := clock.New(run)
				e := engine(db, clk, lu)
				e.ProviderLimit = []int{1, 6, 1}[mode]
				c, _, _ := e.StartCohort(ctx, run)
				rng := rand.New(rand.NewPCG(uint64(mode), 1))
				var mu sync.Mutex
				deciders := map[string]trading.Decider{}
				for _, a := range agents {
					st := &trading.SimTrader{Agent: a, World: hashForecaster{}, MaxBets: 4}
					deciders[a] = trading.DeciderFunc(func(dctx context.Context, s trading.Snapshot) (trading.Decision, error) {
						mu.Lock()
						delay := time.Duration(rng.IntN(15)) * time.Millisecond
						mu.Unlock()
						time.Sleep(delay)
						return st.Decide(dctx, s)
					})
				}
				if mode == 2 {
					rctx, cancel := context.WithCancel(ctx)
					defer cancel()
					var n atomic.Int32
					cut := map[string]trading.Decider{}
					for a, d := range deciders {
						cut[a] = trading.DeciderFunc(func(dctx context.Context, s trading.Snapshot) (trading.Decision, error) {
							if n.Add(1) == 4 {
								cancel()
								return trading.Decision{}, dctx.Err()
							}
							return d.Decide(dctx, s)
						})
					}
					e.Run(rctx, c.ID, run, cut)
					clk.Set(run.Add(3 * time.Hour)) // resumed hours later: same frozen prices
					ms[0].Prices = yesNo(0.99)
					save(t, db, ms[0])
				}
				rep, err := e.Run(ctx, c.ID, run, deciders)
				if err != nil {
					t.Fatal(err)
				}
				for _, a := range rep.Agents {
					if a.Status != arena.DecisionDone {
						t.Fatalf("mode %d: %+v", mode, a)
					}
				}
				for _, a := range agents {
					p := mustPortfolio(t, db, c.ID, a)
					trades, _ := db.Trades(ctx, p.ID)
					for _, tr := range trades {
						m, _ := db.Market(ctx, tr.MarketID)
						results[mode] = append(results[mode], tradeKey{a, tr.Side, m.SourceID, tr.Amount, tr.Shares, tr.Price, tr.Confidence, tr.Kind, tr.CashBefore, true})
					}
				}
			}
			if len(results[0]) < len(agents) {
				t.Fatalf("too few trades to compare: %d", len(results[0]))
			}
			for mode := 1; mode < 3; mode++ {
				if fmt.Sprint(results[mode]) != fmt.Sprint(results[0]) {
					t.Fatalf("mode %d trades differ:\n%v\nvs\n%v", mode, results[mode], results[0])
				}
			}
			t.Logf("%d trades identical across sequential, concurrent and interrupted+resumed runs", len(results[0]))
		})
	}
}
