package safefile

import (
	"bytes"
	"errors"
	"io"
)

// Bounded reads from R and fails a read that passes Max bytes in all or
// MaxLine bytes in one line (newline excluded): a file a user names may
// be endless, as /dev/zero is, or one endless line. A bound passed is a
// *LimitError, returned by every read from then on.
type Bounded struct {
	R            io.Reader
	Max, MaxLine int64

	n, lineLen int64
	line       int // lines ended before the one being read
	err        *LimitError
}

// LimitError is a read past one of Bounded's bounds.
type LimitError struct {
	// Line is the 1-based line that passed MaxLine, 0 when the whole
	// passed Max.
	Line int
	Max  int64 // the bound passed
}

func (e *LimitError) Error() string {
	if e.Line > 0 {
		return "line too long"
	}
	return "input too large"
}

// ErrLimit is what every LimitError is.
var ErrLimit = errors.New("input past its bound")

func (e *LimitError) Unwrap() error { return ErrLimit }

// Read reads from R, failing with a *LimitError once a bound is passed.
func (b *Bounded) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	n, err := b.R.Read(p)
	b.n += int64(n)
	// Every line ending in this read is measured, the one begun in an
	// earlier read included; the rest counts towards the next.
	for chunk := p[:n]; ; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			b.lineLen += int64(len(chunk))
			break
		}
		if b.lineLen += int64(i); b.lineLen > b.MaxLine {
			break
		}
		if int64(len(chunk)) <= b.MaxLine {
			// No line between the first and the last newline can be
			// too long: count them at once.
			last := bytes.LastIndexByte(chunk, '\n')
			b.line += 1 + bytes.Count(chunk[i+1:last+1], []byte{'\n'})
			b.lineLen = int64(len(chunk) - last - 1)
			break
		}
		b.line, b.lineLen, chunk = b.line+1, 0, chunk[i+1:]
	}
	switch {
	case b.lineLen > b.MaxLine:
		b.err = &LimitError{Line: b.line + 1, Max: b.MaxLine}
	case b.n > b.Max:
		b.err = &LimitError{Max: b.Max}
	}
	if b.err != nil {
		return 0, b.err
	}
	return n, err
}
