package venue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/forecast-arena/arena"
)

// Venues send numbers as JSON numbers or as decimal strings (Kalshi's
// "0.3900" prices and "10160.15" volumes), and leave fields out or null.
// The readers below accept those shapes, so one odd field skips one
// market instead of failing a whole page.

// Number is a JSON number, a decimal string, or null or absent (Set is
// false). A value that is neither, or not finite, fails to decode.
type Number struct {
	V   float64
	Set bool
}

func (n *Number) UnmarshalJSON(b []byte) error {
	*n = Number{}
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		if s = strings.TrimSpace(s); s == "" {
			return nil
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("not a finite number: %.40q", s)
	}
	*n = Number{V: v, Set: true}
	return nil
}

// Or is the number when set, else def.
func (n Number) Or(def float64) float64 {
	if n.Set {
		return n.V
	}
	return def
}

// Probability reads a probability: ok is false when the number is unset;
// a number outside [0,1] is an error.
func (n Number) Probability(what string) (p float64, ok bool, err error) {
	if !n.Set {
		return 0, false, nil
	}
	if n.V < 0 || n.V > 1 {
		return 0, false, fmt.Errorf("%s %v is not in [0,1]", what, n.V)
	}
	return n.V, true, nil
}

// maxMillis bounds epoch times: the year 9999, past which no venue
// schedules anything and time arithmetic overflows.
const maxMillis = 253402300799999

// Millis reads epoch milliseconds (Manifold's times): zero when unset;
// a negative or absurd value is an error.
func Millis(n Number) (time.Time, error) {
	if !n.Set {
		return time.Time{}, nil
	}
	if n.V < 0 || n.V > maxMillis {
		return time.Time{}, fmt.Errorf("epoch milliseconds %v out of range", n.V)
	}
	return time.UnixMilli(int64(n.V)).UTC(), nil
}

// Seconds reads epoch seconds, possibly fractional (Kalshi's candle ends,
// Metaculus's aggregation times): zero when unset.
func Seconds(n Number) (time.Time, error) {
	if !n.Set {
		return time.Time{}, nil
	}
	if n.V < 0 || n.V > maxMillis/1000 {
		return time.Time{}, fmt.Errorf("epoch seconds %v out of range", n.V)
	}
	sec, frac := math.Modf(n.V)
	return time.Unix(int64(sec), int64(frac*1e9)).UTC(), nil
}

// Time reads an RFC 3339 time, with or without fractional seconds, as
// UTC: zero when empty.
func Time(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("unrecognised time %.40q", s)
	}
	return t.UTC(), nil
}

// FirstSet is the first of ts that is not zero, in UTC; zero when all
// are.
func FirstSet(ts ...time.Time) time.Time {
	for _, t := range ts {
		if !t.IsZero() {
			return t.UTC()
		}
	}
	return time.Time{}
}

// Or is s trimmed, or def when that is empty.
func Or(s, def string) string {
	if s = strings.TrimSpace(s); s != "" {
		return s
	}
	return def
}

// TimeField is one time an upstream object holds: its field's name, its
// value as sent, and where its reading goes.
type TimeField[T any] struct {
	Name  string
	Value T
	Dst   *time.Time
}

// Times reads each field with read (Time, Millis, Seconds); the first it
// cannot read makes the object a bad_date skip.
func Times[T any](venue, id string, read func(T) (time.Time, error), fields ...TimeField[T]) error {
	for _, f := range fields {
		t, err := read(f.Value)
		if err != nil {
			return Skip(venue, SkipBadDate, id, "%s: %v", f.Name, err)
		}
		*f.Dst = t
	}
	return nil
}

// ID checks a venue's id: 1 to 128 letters, digits, '.', '_' or '-'
// (Kalshi's KXBTCD-26JUL2502-T74299.99, Manifold's 0u0LdllyhO, Metaculus's
// 43339). It names a market in the store and in the venue's URLs, so
// anything else is refused rather than escaped.
func ID(s string) (string, bool) {
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 128 {
		return "", false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return "", false
		}
	}
	return s, true
}

// Text is upstream free text as the arena stores it: valid UTF-8 (an
// invalid byte becomes U+FFFD), CRLF as LF, without control characters
// but newline and tab, without bidirectional controls (they would show
// the text in another order than it is stored), trimmed, and cut to max
// characters with an ellipsis. The venue wrote the text; the arena keeps
// what is readable of it rather than refuse a question for a stray
// character, as arena.CleanText refuses a user's.
func Text(s string, max int) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\n' && r != '\t' || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, s)
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) > max {
		s = strings.TrimSpace(string([]rune(s)[:max-1])) + "…"
	}
	return s
}

// Lengths of the stored text fields.
const (
	MaxQuestion = 1000
	MaxCriteria = 20000
	MaxLabel    = 200 // a category, an event's name
)

// BinaryPrices maps a Yes price to both outcomes: No is its complement,
// without the float noise of 1 − p (no venue prices finer than 1e-6).
func BinaryPrices(yes float64) map[string]float64 {
	return map[string]float64{arena.Yes: yes, arena.No: Round(1 - yes)}
}

// Round removes the float noise of a computed price, 1 − p or (bid +
// ask) / 2, keeping twelve decimals.
func Round(p float64) float64 { return math.Round(p*1e12) / 1e12 }

// YesPoint is a Yes price observed at fetched, held at t, with its
// provenance. Times are truncated to the second, as the store keeps
// them.
func YesPoint(t time.Time, p float64, src arena.PriceSource, fetched time.Time) arena.PricePoint {
	return arena.PricePoint{Outcome: arena.Yes, Time: t.UTC().Truncate(time.Second), Price: p, Source: src, FetchedAt: fetched.UTC()}
}

// Decode unmarshals one upstream object into v; an error is a
// *SkipError: invalid_json when raw is not an object, bad_field when a
// field is. salvage reads the object's id for the log.
func Decode(venue string, raw []byte, v any, salvage func([]byte) string) error {
	if err := json.Unmarshal(raw, v); err != nil {
		reason := SkipInvalidJSON
		t := bytes.TrimSpace(raw)
		if len(t) > 0 && t[0] == '{' && json.Valid(t) {
			reason = SkipBadField
		}
		return Skip(venue, reason, salvage(raw), "%v", err)
	}
	return nil
}

// Reason is the reason of a *SkipError, or SkipInvalid.
func Reason(err error) SkipReason {
	var se *SkipError
	if errors.As(err, &se) {
		return se.Reason
	}
	return SkipInvalid
}

// Nearest returns the point closest to t within tol. On a tie the earlier
// point wins, so a benchmark never prefers information from after t.
func Nearest(pts []arena.PricePoint, t time.Time, tol time.Duration) (arena.PricePoint, bool) {
	best, found := arena.PricePoint{}, false
	var bestD time.Duration
	for _, p := range pts {
		d := p.Time.Sub(t).Abs()
		if d > tol {
			continue
		}
		if !found || d < bestD || (d == bestD && p.Time.Before(best.Time)) {
			best, bestD, found = p, d, true
		}
	}
	return best, found
}
