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
//   - closed with umaResolutionStatus "resolved" and every price exactly
//     0.5 → resolved Void (a 50-50 result);
//   - closed with every price 0 → Status closed with Ambiguous set: no
//     outcome is worth anything, which is not a trading state but a
//     finished market whose payout Gamma does not record (the recorded
//     legacy market 12 closed in 2020 at ["0","0"]). It is not Void, which
//     Gamma prints as 0.5 each; the oracle settles it;
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
		if allEqual(prices, 0.5) && uma == "resolved" {
			return Resolution{Status: arena.StatusResolved, Resolution: arena.Void}
		}
		if allEqual(prices, 0) {
			return Resolution{Status: arena.StatusClosed, Ambiguous: true}
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

// allEqual reports whether every price is v: a 50-50 payout (Gamma prints
// "0.5") or no payout at all ("0"). The tolerance only absorbs float
// formatting, not a market trading near those prices.
func allEqual(prices []float64, v float64) bool {
	for _, p := range prices {
		if math.Abs(p-v) > 1e-9 {
			return false
		}
	}
	return true
}
