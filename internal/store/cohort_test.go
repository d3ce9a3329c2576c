package store_test

import (
	"context"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// TestPortfolioReadIsConsistent: a decision committing between the read of
// the portfolio rows and the read of their open positions must not tear
// the result (new position with old cash). The hook writes on another
// connection at exactly that point; the reader must see the state before
// the write, in full.
func TestPortfolioReadIsConsistent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		c := storetest.NewCohort(t, db, "a")
		mkt1, mkt2 := storetest.SaveMarket(t, db, "m1"), storetest.SaveMarket(t, db, "m2")
		ps, err := db.Portfolios(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		consistent := func(what string, p *arena.Portfolio) {
			t.Helper()
			sum := p.Cash
			for _, x := range p.Positions {
				sum += x.CostBasis
			}
			if sum != c.InitialCash || len(p.Positions) != int(p.Version) {
				t.Errorf("%s: torn read: version %d cash %s, %d positions, cash+cost %s", what, p.Version, p.Cash, len(p.Positions), sum)
			}
		}
		write := func(p *arena.Portfolio, mkt int64) func() {
			return func() {
				if err := db.ApplyChange(ctx, storetest.Bet(p, mkt)); err != nil {
					t.Errorf("concurrent write: %v", err)
				}
			}
		}

		restore := store.SetPortfolioReadHook(write(ps[0], mkt1))
		got, err := db.Portfolios(ctx, c.ID)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		consistent("Portfolios", got[0])

		p, err := db.Portfolio(ctx, ps[0].ID) // sees the first write
		if err != nil {
			t.Fatal(err)
		}
		consistent("after the write", p)
		restore = store.SetPortfolioReadHook(write(p, mkt2))
		got1, err := db.Portfolio(ctx, ps[0].ID)
		restore()
		if err != nil {
			t.Fatal(err)
		}
		consistent("Portfolio", got1)
		if final, _ := db.Portfolio(ctx, ps[0].ID); final.Version != 2 || len(final.Positions) != 2 {
			t.Errorf("both writes committed: %+v", final)
		}
	})
}
