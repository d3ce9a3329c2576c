package stats

import (
	"math"
	"strconv"
)

// Float is a figure that may be undefined: t and p when SE = 0, Alpha
// without benchmarks, an SE from a single round. Undefined values marshal
// to JSON null and print as "—" or "" (CSV), never NaN or ±Inf.
type Float struct {
	V  float64
	OK bool
}

// Def returns a defined Float; a NaN or infinite v is treated as undefined
// so that no NaN ever leaves the package.
func Def(v float64) Float {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return Float{}
	}
	return Float{V: v, OK: true}
}

// Undef is the undefined Float.
var Undef = Float{}

// MarshalJSON writes the number, or null when undefined.
func (f Float) MarshalJSON() ([]byte, error) {
	if !f.OK || math.IsNaN(f.V) || math.IsInf(f.V, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f.V, 'g', -1, 64), nil
}

// UnmarshalJSON reads a number or null.
func (f *Float) UnmarshalJSON(b []byte) error {
	if string(b) == "null" {
		*f = Float{}
		return nil
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil {
		return err
	}
	*f = Def(v)
	return nil
}

// Format prints the value with prec decimals, or undef when undefined.
func (f Float) Format(prec int, undef string) string {
	if !f.OK {
		return undef
	}
	return strconv.FormatFloat(f.V, 'f', prec, 64)
}

// Ptr returns the value as a pointer, nil when undefined (as for JSON).
func (f Float) Ptr() *float64 {
	if !f.OK || math.IsNaN(f.V) || math.IsInf(f.V, 0) {
		return nil
	}
	v := f.V
	return &v
}
