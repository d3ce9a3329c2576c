package arena

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// Money and quantities are exact integers: the ledger reconciles to the
// micro-dollar, and the API writes amounts as exact decimal dollars.

// Micros is an amount of money in integer micro-dollars (1 USD = 1,000,000).
type Micros int64

// Dollar is one US dollar.
const Dollar Micros = 1_000_000

// PPM is a price in parts per million of one dollar per share: a
// probability 0.53 is 530000. Prices from sources (float64) are rounded to
// the nearest PPM when they are frozen for execution.
type PPM int64

// OnePPM is the price 1.0.
const OnePPM PPM = 1_000_000

// Shares is a quantity of shares in micro-shares (1 share = 1,000,000). One
// micro-share settles to exactly one micro-dollar when it wins.
type Shares int64

// OneShare is one whole share.
const OneShare Shares = 1_000_000

// Dollars returns the amount as a float, for display and statistics only.
func (m Micros) Dollars() float64 { return float64(m) / float64(Dollar) }

// String formats m as dollars with thousands separators and at least two
// decimals, keeping every significant micro digit: "$10,000.00",
// "-$0.125", "$1,234.567891". Logs and errors use it, so nothing is hidden.
func (m Micros) String() string {
	u := magnitude(m)
	fs := strings.TrimRight(strconv.FormatUint(u%1_000_000+1_000_000, 10)[1:], "0")
	for len(fs) < 2 {
		fs += "0"
	}
	return formatDollars(m < 0, u/1_000_000, fs)
}

// Cents formats m for tables: rounded half away from zero to the cent,
// "$152,273.55"; an amount that rounds to zero has no sign.
func (m Micros) Cents() string {
	c := (magnitude(m) + 5_000) / 10_000
	return formatDollars(m < 0 && c > 0, c/100, strconv.FormatUint(c%100+100, 10)[1:])
}

func magnitude(m Micros) uint64 {
	if m < 0 {
		return uint64(-m) // -MinInt64 wraps to itself, which as uint64 is still right
	}
	return uint64(m)
}

func formatDollars(neg bool, whole uint64, frac string) string {
	ws := strconv.FormatUint(whole, 10)
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.WriteByte('$')
	for i, c := range ws {
		if i > 0 && (len(ws)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	b.WriteByte('.')
	b.WriteString(frac)
	return b.String()
}

// Float returns the price as a probability in [0,1].
func (p PPM) Float() float64 { return float64(p) / float64(OnePPM) }

// Float returns the quantity in whole shares.
func (s Shares) Float() float64 { return float64(s) / float64(OneShare) }

// maxDollars bounds amounts converted from floats so every product in the
// ledger fits in 128 bits and the result in int64.
const maxDollars = 1e12

// DollarsToMicros converts a dollar amount (as models write it) to
// micro-dollars, rounding to the nearest micro-dollar. NaN, infinities and
// absurd magnitudes are rejected.
func DollarsToMicros(d float64) (Micros, error) {
	if math.IsNaN(d) || math.IsInf(d, 0) || math.Abs(d) > maxDollars {
		return 0, Errorf(EINVALID, "amount %v is not a valid dollar amount", d)
	}
	return Micros(math.Round(d * float64(Dollar))), nil
}

// Dollars is an exact amount of money written as a JSON number of dollars
// with up to six decimals ("10000", "-12.5", "0.000001"): the micro-dollar
// ledger is never rounded through a float on the way out.
type Dollars Micros

// MarshalJSON implements json.Marshaler.
func (d Dollars) MarshalJSON() ([]byte, error) {
	m := int64(d)
	neg := m < 0
	u := uint64(m)
	if neg {
		u = uint64(-m)
	}
	s := strconv.FormatUint(u/1_000_000, 10)
	if f := u % 1_000_000; f != 0 {
		s += "." + strings.TrimRight(strconv.FormatUint(f+1_000_000, 10)[1:], "0")
	}
	if neg {
		s = "-" + s
	}
	return []byte(s), nil
}

// UnmarshalJSON reads a decimal number of dollars back exactly.
func (d *Dollars) UnmarshalJSON(b []byte) error {
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return err
	}
	s := n.String()
	neg := strings.HasPrefix(s, "-")
	whole, frac, _ := strings.Cut(strings.TrimPrefix(s, "-"), ".")
	if len(frac) > 6 || strings.ContainsAny(s, "eE") {
		f, err := n.Float64()
		if err != nil {
			return err
		}
		m, err := DollarsToMicros(f)
		*d = Dollars(m)
		return err
	}
	w, err := strconv.ParseInt(whole, 10, 64)
	if err != nil {
		return err
	}
	fv, _ := strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64)
	v := w*1_000_000 + fv
	if neg {
		v = -v
	}
	*d = Dollars(v)
	return nil
}
