package polymarket

import (
	"math"
	"strings"

	"github.com/forecast-arena/arena"
)

// Resolution thresholds: a closed market has resolved to an
// outcome when its price is at least WinPrice and every other price is at
// most LosePrice.
const (
	WinPrice  = 0.99
	LosePrice = 0.01
)

// UMA statuses under which a closed market's prices are not final yet: a
// proposal can still be disputed and flipped.
var pendingUMA = map[string]bool{"proposed": true, "disputed": true, "challenged": true}

// Resolution is the status Resolve derives for a market.
type Resolution struct {
	Status     arena.MarketStatus
	Resolution string // outcome name, arena.Void, or ""
	Ambiguous  bool
}

// Resolve applies the resolution rule to a market's upstream state:
//
//   - not closed → open;
//   - closed with exactly one token marked winner → resolved to it;
//   - closed with one price ≥ 0.99 and the others ≤ 0.01 → resolved to it;
//   - closed with every price exactly 0.5 → resolved Void (a 50-50 result);
//   - closed with umaResolutionStatus "resolved" but none of the above →
//     Status closed with Ambiguous set: the source says it resolved but the
//     winner cannot be determined, so settlement goes to the oracle.
//     The status stays closed because arena.Market reserves "resolved" for
//     markets with a known resolution;
//   - otherwise (closed, awaiting resolution) → closed.
//
// While UMA reports a pending proposal or dispute the prices are not final,
// so price-based rules are not applied (an explicit winner flag still is).
func Resolve(closed bool, umaStatus string, outcomes []string, prices []float64, winners []string) Resolution {
	if !closed {
		return Resolution{Status: arena.StatusOpen}
	}
	if len(winners) == 1 {
		for _, o := range outcomes {
			if o == winners[0] {
				return Resolution{Status: arena.StatusResolved, Resolution: o}
			}
		}
	}
	uma := strings.ToLower(strings.TrimSpace(umaStatus))
	if !pendingUMA[uma] && len(prices) == len(outcomes) && len(prices) >= 2 {
		if w := priceWinner(prices); w >= 0 {
			return Resolution{Status: arena.StatusResolved, Resolution: outcomes[w]}
		}
		// 50-50 only when UMA says the market resolved: untouched default
		// prices on a merely closed market are not a resolution.
		if allHalf(prices) && uma == "resolved" {
			return Resolution{Status: arena.StatusResolved, Resolution: arena.Void}
		}
	}
	if uma == "resolved" {
		return Resolution{Status: arena.StatusClosed, Ambiguous: true}
	}
	return Resolution{Status: arena.StatusClosed}
}

// priceWinner returns the index of the single outcome priced ≥ WinPrice
// with all others ≤ LosePrice, or -1.
func priceWinner(prices []float64) int {
	w := -1
	for i, p := range prices {
		switch {
		case p >= WinPrice:
			if w >= 0 {
				return -1
			}
			w = i
		case p > LosePrice:
			return -1
		}
	}
	return w
}

// allHalf reports a 50-50 payout. Gamma prints it as "0.5"; the tolerance
// only absorbs float formatting, not a market trading near even odds.
func allHalf(prices []float64) bool {
	for _, p := range prices {
		if math.Abs(p-0.5) > 1e-9 {
			return false
		}
	}
	return true
}
