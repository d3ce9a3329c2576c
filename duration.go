package arena

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// Duration is a time.Duration in JSON files and bodies: it is written as a
// Go duration string ("72h0m0s") and read from one ("90s", "168h") or
// from a number of seconds.
type Duration time.Duration

func (d Duration) String() string { return time.Duration(d).String() }

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads a duration string or a number of seconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		v, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("duration %q: want a duration like \"120s\" or a number of seconds", s)
		}
		*d = Duration(v)
		return nil
	}
	f, err := strconv.ParseFloat(string(b), 64)
	if err != nil || f != f || f > 1e9 || f < -1e9 {
		return fmt.Errorf("duration %s: want a duration like \"120s\" or a number of seconds", b)
	}
	*d = Duration(f * float64(time.Second))
	return nil
}
