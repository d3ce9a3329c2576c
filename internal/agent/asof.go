package agent

import (
	"time"

	arena "github.com/forecast-arena/arena"
)

// AsOf is the as-of guard: what an agent forecasting at Time may see.
// Every data tool and searchWeb consult it, and the backtest's
// contamination guard applies its rule to a model's training cutoff.
// Nothing dated after Time passes, Time itself included. Live marks the
// present (a live round): then undated material can be from no later and
// passes too. A zero Time shows nothing dated.
type AsOf struct {
	Time time.Time
	Live bool
}

// Sees reports whether something dated t may be seen: t is at or before
// the as-of time. A model trained up to its cutoff may likewise know
// anything dated up to it, so only a question due strictly after the
// cutoff is free of contamination.
func (a AsOf) Sees(t time.Time) bool { return !t.After(a.Time) }

// Points keeps, in order, the price points that may be seen (reusing the
// array of pts).
func (a AsOf) Points(pts []arena.PricePoint) []arena.PricePoint {
	out := pts[:0]
	for _, p := range pts {
		if a.Sees(p.Time) {
			out = append(out, p)
		}
	}
	return out
}

// Listed reports whether a market's listed price, last updated at
// updated, may stand in for a price history with no point: live only (a
// backtest has nothing but dated history), and only if updated by the
// as-of time.
func (a AsOf) Listed(updated time.Time) bool { return a.Live && a.Sees(updated) }

// Source reports whether a source published at published (nil: undated)
// may be seen: dated and seen, or undated in a live round.
func (a AsOf) Source(published *time.Time) bool {
	if published == nil {
		return a.Live
	}
	return a.Sees(*published)
}
