package trading_test

import (
	"context"
	"encoding/json"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
)

// tradesCounter counts the reads of cohorts' trades: one per cohort each
// time a leaderboard is computed.
type tradesCounter struct {
	trading.Store
	reads atomic.Int32
}

func (c *tradesCounter) CohortTrades(ctx context.Context, cohortID int64) ([]*arena.Trade, error) {
	c.reads.Add(1)
	return c.Store.CohortTrades(ctx, cohortID)
}

// TestLeaderboardCache: the leaderboard is computed again after every
// change to what it shows, and only then. After each step the cached
// engine's leaderboard equals the one an engine without a cache computes,
// in both orders; a step that changes nothing it reads (a snapshot, the
// price of a market nobody holds or bet on) reuses the cached one. The
// steps include changes no snapshot or settlement records: a trade, a
// price move, a decision that only costs, and the resolution of a market
// whose position was sold before.
func TestLeaderboardCache(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		clk := clock.New(run)
		counter := &tradesCounter{Store: db}
		e := engine(db, clk, lineup("p", "a", "b"))
		e.Store = counter
		m1, m2, m3 := mkBinary("m1", 0.40, 400), mkBinary("m2", 0.70, 300), mkBinary("m3", 0.50, 200)
		save(t, db, m1, m2, m3)
		c, _, err := e.StartCohort(ctx, run)
		if err != nil {
			t.Fatal(err)
		}
		check := func(step string, window time.Duration, recompute bool) trading.LeaderboardJSON {
			t.Helper()
			before := counter.reads.Load()
			var got trading.LeaderboardJSON
			for _, by := range trading.Sorts {
				lb, err := e.Leaderboard(ctx, window, by)
				if err != nil {
					t.Fatalf("%s: %v", step, err)
				}
				want, err := engine(db, clk, nil).Leaderboard(ctx, window, by)
				if err != nil {
					t.Fatal(err)
				}
				g, _ := json.Marshal(lb)
				w, _ := json.Marshal(want)
				if string(g) != string(w) {
					t.Fatalf("%s, sort %s: cached leaderboard\n%s\nwant\n%s", step, by, g, w)
				}
				if by == trading.Sorts[0] {
					got = lb
				}
			}
			if computed := counter.reads.Load() != before; computed != recompute {
				t.Fatalf("%s: computed again %v, want %v", step, computed, recompute)
			}
			return got
		}
		check("first read", 0, true)
		check("nothing changed", 0, false)

		act := func(agent string, a trading.Action, at time.Time) {
			t.Helper()
			rep, err := e.Run(ctx, c.ID, at, map[string]trading.Decider{agent: scripted(a, nil)})
			if err != nil || rep.Count(trading.OutcomeDone) != 1 {
				t.Fatalf("run %s: %+v %v", agent, rep, err)
			}
		}
		act("a", trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{{MarketID: m1.ID, Side: "YES", Amount: usd(1000)}}}, run)
		if lb := check("a bet", 0, true); lb.Rows[0].Decisions != 1 {
			t.Fatalf("after a's bet: %+v", lb.Rows)
		}
		act("b", trading.Hold("nothing to do"), run)
		check("b held, paying for the call", 0, true)
		if _, err := e.Snapshot(ctx, run); err != nil {
			t.Fatal(err)
		}
		check("a snapshot (the trading data's version moves)", 0, true)

		m1.Prices = yesNo(0.60)
		save(t, db, m1)
		if lb := check("the held market's price moved", 0, true); lb.Rows[0].Agent != "a" || lb.Rows[0].MeanReturnPct != 5 {
			t.Fatalf("a's $1000 at 0.40 is worth $1500 at 0.60: %+v", lb.Rows[0])
		}
		m3.Prices = yesNo(0.10)
		save(t, db, m3)
		check("a market nobody holds moved (the markets' version moves)", 0, true)
		check("nothing changed since", 0, false)

		next := run.AddDate(0, 0, 7)
		clk.Set(next)
		pos := mustPortfolio(t, db, c.ID, "a").Positions[0]
		act("a", trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: pos.ID, Percentage: 100}}}, next)
		check("a sold", 0, true)
		if _, err := db.ResolveMarket(ctx, m1.ID, arena.Yes, next); err != nil {
			t.Fatal(err)
		}
		if lb := check("the sold bet's market resolved", 0, true); lb.Rows[0].ResolvedBets != 1 || lb.Rows[0].Brier == nil {
			t.Fatalf("a's sold bet counts once resolved: %+v", lb.Rows[0])
		}

		// A new week's cohort; then the window moves past the first.
		if _, _, err := e.StartCohort(ctx, next); err != nil {
			t.Fatal(err)
		}
		if lb := check("a second cohort", 0, true); lb.Rows[0].Cohorts != 2 {
			t.Fatalf("two cohorts: %+v", lb.Rows)
		}
		fortnight := 14 * 24 * time.Hour
		check("the last two weeks", fortnight, true)
		clk.Set(next.AddDate(0, 0, 7))
		if lb := check("the window moved past the first cohort", fortnight, true); lb.Rows[0].Cohorts != 1 {
			t.Fatalf("one cohort in the last two weeks: %+v", lb.Rows)
		}
		check("every cohort, cached under its own window", 0, false)
		// The cache is bounded: reading many other windows drops the
		// least recently read.
		for d := range 20 {
			if _, err := e.Leaderboard(ctx, time.Duration(d+1)*24*time.Hour, ""); err != nil {
				t.Fatal(err)
			}
		}
		check("every cohort, after twenty other windows", 0, true)
	})
}
