package export

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/safefile"
)

// Bounds of an export's files, which verifiers read from others: far
// above a real export's, so an endless or padded file fails soon with a
// clear error instead of exhausting memory.
const (
	MaxTableBytes = 4 << 30
	MaxRowBytes   = 64 << 20 // one line of a table
	// meta.json is a few hundred bytes; an export of the retired format
	// listed every signed tree head in it (about 300 bytes each), and
	// the bound still reads such a file, so that verify refuses it by
	// its format rather than by its size.
	MaxMetaBytes = 64 << 20
)

// ReadTable reads a table written by WriteTable. Every row must have every
// column; a JSON object must have exactly the columns of the first row.
// A table larger than MaxTableBytes, or with a line longer than
// MaxRowBytes, is refused as soon as the read gets there.
func ReadTable(r io.Reader, name, format string) (Table, error) {
	t := Table{Name: name}
	r = newBoundedReader(r)
	switch format {
	case CSV:
		cr := csv.NewReader(r)
		recs, err := cr.ReadAll()
		if err != nil {
			return t, fmt.Errorf("export: %s: %w", name, err)
		}
		if len(recs) == 0 {
			return t, fmt.Errorf("export: %s: no header row", name)
		}
		t.Columns = recs[0]
		for _, rec := range recs[1:] {
			row := make([]string, len(rec))
			for i, c := range rec {
				row[i] = UnescapeCell(c)
			}
			t.Rows = append(t.Rows, row)
		}
		return t, nil
	case JSONL:
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 0, 64<<10), MaxRowBytes+1)
		line := 0
		for sc.Scan() {
			line++
			if len(sc.Bytes()) == 0 {
				continue
			}
			cols, vals, err := decodeObject(sc.Bytes())
			if err != nil {
				return t, fmt.Errorf("export: %s line %d: %w", name, line, err)
			}
			if t.Columns == nil {
				t.Columns = cols
			} else if fmt.Sprint(cols) != fmt.Sprint(t.Columns) {
				return t, fmt.Errorf("export: %s line %d: columns %v, want %v", name, line, cols, t.Columns)
			}
			t.Rows = append(t.Rows, vals)
		}
		if err := sc.Err(); err != nil {
			return t, fmt.Errorf("export: %s: %w", name, err)
		}
		return t, nil
	}
	return t, fmt.Errorf("export: format %q: want csv or jsonl", format)
}

// decodeObject decodes one JSON object of string values, keeping key order.
func decodeObject(b []byte) ([]string, []string, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, nil, fmt.Errorf("not a JSON object")
	}
	var cols, vals []string
	seen := map[string]bool{}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := k.(string)
		if seen[key] {
			return nil, nil, fmt.Errorf("duplicate key %q", key)
		}
		seen[key] = true
		var raw json.RawMessage
		var v string
		if err := dec.Decode(&raw); err != nil {
			return nil, nil, fmt.Errorf("value of %q: %w", key, err)
		}
		if err := json.Unmarshal(raw, &v); err != nil || raw[0] != '"' {
			return nil, nil, fmt.Errorf("value of %q: %s is not a string", key, raw)
		}
		cols, vals = append(cols, key), append(vals, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if dec.More() {
		return nil, nil, fmt.Errorf("trailing data")
	}
	return cols, vals, nil
}

// boundedReader fails a read past MaxTableBytes in all or maxRow bytes in
// one line.
type boundedReader struct {
	r                  io.Reader
	n, lineLen, maxRow int64
	err                *TooLargeError // the bound passed, once it is
}

func newBoundedReader(r io.Reader) *boundedReader {
	return &boundedReader{r: r, maxRow: MaxRowBytes}
}

func (b *boundedReader) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	b.n += int64(n)
	// Every line ending in this read is measured, the one begun in an
	// earlier read included; the rest counts towards the next.
	for chunk := p[:n]; ; {
		i := bytes.IndexByte(chunk, '\n')
		if i < 0 {
			b.lineLen += int64(len(chunk))
			break
		}
		if b.lineLen += int64(i); b.lineLen > b.maxRow {
			break
		}
		b.lineLen, chunk = 0, chunk[i+1:]
	}
	switch {
	case b.n > MaxTableBytes:
		b.err = &TooLargeError{fmt.Sprintf("larger than %d GiB, the limit of an export table", MaxTableBytes>>30)}
	case b.lineLen > b.maxRow:
		b.err = &TooLargeError{fmt.Sprintf("a line longer than %d MiB, the limit of a row", b.maxRow>>20)}
	}
	if b.err != nil {
		return 0, b.err
	}
	return n, err
}

// TooLargeError is a file of an export past its bound: verification stops
// there rather than read on.
type TooLargeError struct{ what string }

func (e *TooLargeError) Error() string { return e.what }

// readFileBounded reads a small file of an export whole, refusing one
// larger than limit.
func readFileBounded(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(b)) > limit {
		err = &TooLargeError{fmt.Sprintf("larger than %d MiB, the limit of %s", limit>>20, filepath.Base(path))}
	}
	return b, err
}

// ErrDuplicateKey is wrapped by the errors about a JSON object that names
// a key twice: encoding/json would keep the last value silently, so two
// readers of one file could see different values (arena.ErrDuplicateKey).
var ErrDuplicateKey = arena.ErrDuplicateKey

// openRegular opens the file of an export at path for reading, refusing
// anything but a regular file (a symbolic link to one is followed): a
// FIFO would block the read for ever, a device would never end
// (safefile.OpenRegular).
func openRegular(path string) (*os.File, error) {
	f, err := safefile.OpenRegular(path)
	if nr := (*safefile.NotRegularError)(nil); errors.As(err, &nr) {
		return nil, fmt.Errorf("%s is not a regular file (%s): refused, since reading it may never end", filepath.Base(path), nr.Kind)
	}
	return f, err
}
