package sim

import (
	"fmt"
	"math"
	"time"

	"github.com/forecast-arena/arena"
)

// MarketsAt is what an outside observer of the world sees at now: every
// market opened by now, in index order, with its price at now (open), last
// price (closed) or settlement prices (resolved), and its full price history
// up to min(now, close). Nothing in it depends on the world after now.
func (w *World) MarketsAt(now time.Time) []*arena.Market {
	return w.MarketsSince(time.Time{}, now)
}

// MarketsSince is MarketsAt(now) with History limited to points after since,
// for incremental syncs (a full history at the default step is ≈ 2,000
// points a market).
func (w *World) MarketsSince(since, now time.Time) []*arena.Market {
	now = now.UTC()
	out := make([]*arena.Market, 0, len(w.markets))
	for _, m := range w.markets {
		if now.Before(m.spec.Open) {
			continue
		}
		out = append(out, w.view(m, since, now))
	}
	return out
}

func (w *World) view(m *market, since, now time.Time) *arena.Market {
	s := m.spec
	mk := &arena.Market{
		Source:     arena.SourceSim,
		SourceID:   s.SourceID,
		Kind:       arena.KindMarket,
		Origin:     s.Venue,
		Question:   s.Question,
		Criteria:   "Resolves Yes if the simulated quantity is above the stated level at close, No otherwise; some markets are voided and resolve 50-50.",
		Background: fmt.Sprintf("Synthetic %s market from the Forecast Arena simulator (seed %d).", s.Category, w.cfg.Seed),
		Category:   s.Category,
		EventID:    s.EventID,
		Type:       arena.Binary,
		Outcomes:   []string{arena.Yes, arena.No},
		Liquidity:  m.liq,
		OpenTime:   s.Open,
		CloseTime:  s.Close,
		Slug:       "sim-" + s.SourceID,
		EventSlug:  "sim-" + s.EventID,
		UpdatedAt:  now,
	}
	// Volume accrues over the market's life, so it too depends only on now.
	seen := now.Sub(s.Open)
	if now.After(s.Close) {
		seen = s.Close.Sub(s.Open)
	}
	frac := float64(seen) / float64(s.Close.Sub(s.Open))
	mk.Volume = math.Round(m.volume * math.Pow(frac, 0.7))

	last := w.index(m, now)
	resolveAt := s.Close.Add(w.cfg.ResolveDelay)
	switch {
	case now.Before(s.Close):
		mk.Status = arena.StatusOpen
		mk.Prices = binaryPrices(m.price[last])
	case now.Before(resolveAt):
		mk.Status = arena.StatusClosed
		mk.Prices = binaryPrices(m.price[last])
	default:
		mk.Status = arena.StatusResolved
		mk.ResolvedAt = resolveAt
		switch {
		case m.void:
			mk.Resolution = arena.Void
			mk.Prices = map[string]float64{arena.Yes: 0.5, arena.No: 0.5}
		case m.outcome() == 1:
			mk.Resolution = arena.Yes
			mk.Prices = map[string]float64{arena.Yes: 1, arena.No: 0}
		default:
			mk.Resolution = arena.No
			mk.Prices = map[string]float64{arena.Yes: 0, arena.No: 1}
		}
	}

	first := 0
	if !since.IsZero() && !since.Before(s.Open) {
		first = w.index(m, since) + 1
	}
	if first <= last {
		mk.History = make([]arena.PricePoint, 0, last-first+1)
		for k := first; k <= last; k++ {
			t := w.gridTime(m, k)
			mk.History = append(mk.History, arena.PricePoint{
				Outcome:   arena.Yes,
				Time:      t,
				Price:     bpsProb(m.price[k]),
				Source:    arena.PriceSim,
				FetchedAt: t,
			})
		}
	}
	return mk
}

// binaryPrices maps a Yes price in basis points to both outcomes; No is the
// exact complement in basis points, so the two always sum to 1.
func binaryPrices(yes uint16) map[string]float64 {
	return map[string]float64{arena.Yes: bpsProb(yes), arena.No: bpsProb(10000 - yes)}
}

// LiveMarkets is MarketsSince(since, now) as a live source sees it: the history
// of an open market also ends with its price in force at now, stamped now,
// as a sync records the price it fetched. So a benchmark lookup near any
// instant at which a sync ran finds a price point, whatever the grid step.
func (w *World) LiveMarkets(since, now time.Time) []*arena.Market {
	now = now.UTC()
	ms := w.MarketsSince(since, now)
	for _, mk := range ms {
		n := len(mk.History)
		if mk.Status != arena.StatusOpen || (n > 0 && mk.History[n-1].Time.Equal(now)) {
			continue
		}
		mk.History = append(mk.History, arena.PricePoint{Outcome: arena.Yes, Time: now, Price: mk.Prices[arena.Yes],
			Source: arena.PriceSim, FetchedAt: now})
	}
	return ms
}
