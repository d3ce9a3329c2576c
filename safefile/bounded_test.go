package safefile

import (
	"errors"
	"io"
	"strings"
	"testing"
)

func TestBounded(t *testing.T) {
	for _, c := range []struct {
		name, in  string
		max, line int64
		want      *LimitError // nil: read whole
	}{
		{"within both", "ab\ncd\n", 10, 2, nil},
		{"the third line too long", "ab\ncd\nefg\n", 100, 2, &LimitError{Line: 3, Max: 2}},
		{"an unended line too long", "ab\ncdef", 100, 3, &LimitError{Line: 2, Max: 3}},
		{"too large in all", "ab\ncd\nef\n", 5, 2, &LimitError{Max: 5}},
	} {
		// One byte a read, and the whole at once.
		for _, bytewise := range []bool{true, false} {
			b := &Bounded{R: strings.NewReader(c.in), Max: c.max, MaxLine: c.line}
			var r io.Reader = b
			if bytewise {
				r = oneByte{b}
			}
			got, err := io.ReadAll(r)
			var le *LimitError
			switch {
			case c.want == nil && (err != nil || string(got) != c.in):
				t.Errorf("%s: %q %v", c.name, got, err)
			case c.want != nil && (!errors.As(err, &le) || *le != *c.want || !errors.Is(err, ErrLimit)):
				t.Errorf("%s: %v, want %+v", c.name, err, c.want)
			}
			if c.want != nil {
				if _, again := b.Read(make([]byte, 8)); again == nil {
					t.Errorf("%s: a read after the bound passed", c.name)
				}
			}
		}
	}
}

// oneByte reads one byte at a time.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) { return o.r.Read(p[:min(1, len(p))]) }
