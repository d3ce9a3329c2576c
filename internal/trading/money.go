package trading

import (
	"math"
	"math/bits"

	"github.com/forecast-arena/arena"
)

// Aliases so callers of this package need not import the root for money.
type (
	Micros = arena.Micros
	PPM    = arena.PPM
	Shares = arena.Shares
)

// Dollar is one US dollar in micro-dollars.
const Dollar = arena.Dollar

// Betting rules: starting cash, minimum bet, maximum share of cash per bet.
const (
	InitialCash Micros = 10_000 * Dollar
	MinBet      Micros = 50 * Dollar
	// MaxBetDivisor: a single bet may be at most cash/4 (25% of current cash).
	MaxBetDivisor = 4
)

// PriceFromFloat freezes a probability as an exact price, rounding to the
// nearest part per million. It reports false for NaN or values outside [0,1].
func PriceFromFloat(p float64) (PPM, bool) {
	if math.IsNaN(p) || p < 0 || p > 1 {
		return 0, false
	}
	return PPM(math.Round(p * float64(arena.OnePPM))), true
}

// mulDiv returns floor(a*b/c) for a, b >= 0 and c > 0 with a 128-bit
// intermediate; ok is false when an argument is out of range or the result
// does not fit in int64.
func mulDiv(a, b, c int64) (int64, bool) {
	if a < 0 || b < 0 || c <= 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi >= uint64(c) {
		return 0, false
	}
	q, _ := bits.Div64(hi, lo, uint64(c))
	if q > math.MaxInt64 {
		return 0, false
	}
	return int64(q), true
}

// SharesFor is the number of micro-shares amount buys at price, rounded
// down to the micro-share: shares = amount / price.
func SharesFor(amount Micros, price PPM) (Shares, bool) {
	if price <= 0 {
		return 0, false
	}
	s, ok := mulDiv(int64(amount), int64(arena.OnePPM), int64(price))
	return Shares(s), ok
}

// ValueOf is shares × price in micro-dollars, rounded down to the micro-dollar.
func ValueOf(s Shares, price PPM) (Micros, bool) {
	v, ok := mulDiv(int64(s), int64(price), int64(arena.OnePPM))
	return Micros(v), ok
}
