package trading

import (
	"context"
	"sort"

	"github.com/forecast-arena/arena"
)

// Resettle is the trading track's part of applying a market's resolution
// (an arena.ResolutionHook, run inside the transaction that records it):
// when the market is settled already, every position its settlement
// closed is corrected through its portfolio's Ledger (see
// Ledger.Resettle), one change per portfolio, and the settlement records
// the new resolution. A market not settled yet is left to Settle, which
// pays by the resolution in force.
func Resettle(ctx context.Context, tx arena.ResolutionTx, c *arena.ResolutionChange) error {
	return resettle(ctx, tx, c)
}

func resettle(ctx context.Context, tx arena.ResettleTx, c *arena.ResolutionChange) error {
	if c.Market.Resolution == "" {
		return nil // a first resolution: nothing was settled on another
	}
	id := c.Market.ID
	s, ok, err := tx.Settlement(ctx, id)
	if err != nil || !ok {
		return err
	}
	trades, err := tx.MarketTrades(ctx, id)
	if err != nil {
		return err
	}
	ps, err := tx.MarketPositions(ctx, id)
	if err != nil {
		return err
	}
	byID := make(map[int64]*arena.Position, len(ps))
	for _, p := range ps {
		byID[p.ID] = p
	}
	settled, err := SettledPositions(trades, byID)
	if err != nil {
		return err
	}
	byPortfolio := map[int64][]SettledPosition{}
	for _, sp := range settled {
		byPortfolio[sp.Position.PortfolioID] = append(byPortfolio[sp.Position.PortfolioID], sp)
	}
	pids := make([]int64, 0, len(byPortfolio))
	for pid := range byPortfolio {
		pids = append(pids, pid)
	}
	// Portfolios are locked in id order, as settlements lock them, so two
	// writers never wait on each other in a cycle.
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	cohorts := map[int64]*arena.Cohort{}
	for _, pid := range pids {
		p, err := tx.LockPortfolio(ctx, pid)
		if err != nil {
			return err
		}
		co := cohorts[p.CohortID]
		if co == nil {
			if co, err = tx.Cohort(ctx, p.CohortID); err != nil {
				return err
			}
			cohorts[p.CohortID] = co
		}
		l, err := NewLedger(p, co.InitialCash)
		if err != nil {
			return err
		}
		for _, sp := range byPortfolio[pid] {
			if _, err := l.Resettle(sp, c.Outcome, c.Market.Type, c.At); err != nil {
				return err
			}
		}
		if !l.Changed() {
			continue
		}
		ch, err := l.Change()
		if err != nil {
			return err
		}
		if err := tx.ApplyChange(ctx, ch); err != nil {
			return err
		}
	}
	if s.Resolution == c.Outcome {
		return nil
	}
	return tx.Resettled(ctx, id, c.Outcome)
}
