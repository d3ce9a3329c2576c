// Package scoreio reads the scores file that 'arena score' and the
// reports take: CSV with a header, or JSON lines, with the columns
// agent, round, market, category, forecast, benchmark, outcome[, event].
// It is the I/O side of package stats, which does none. The reader is
// hand-written for speed: it streams the input in pieces of whole lines,
// parsed in parallel with interned names and joined in input order; its
// results equal encoding/csv's on every input.
package scoreio

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/forecast-arena/arena/stats"
)

// scoreColumns are the score file's input columns; event is optional.
var scoreColumns = []string{"agent", "round", "market", "category", "forecast", "benchmark", "outcome", "event"}

const (
	colAgent = iota
	colRound
	colMarket
	colCategory
	colForecast
	colBenchmark
	colOutcome
	colEvent
	nCols
)

// Bounds of a scores file, above real ones (a million rows is some 80 MB),
// so an endless input (/dev/zero, a pipe) fails soon with a clear error
// instead of exhausting memory: the rows read take about four times their
// bytes, so the bound keeps a run under about 1 GB. Vars so tests can
// lower them.
var (
	MaxFileBytes int64 = 192 << 20
	MaxLineBytes       = 1 << 20
)

// rowParser parses rows into a part: its table's id columns hold the
// pools' provisional ids, its dictionaries are unused.
type rowParser struct {
	t     *stats.Table
	bad   *stats.InputError
	pools *[nCols]*pool // for the string columns
	// cache is a small direct-mapped cache per string column in front of
	// the pools: ids repeat heavily (agents, rounds, categories), and a
	// byte compare beats hashing and locking. A worker's parsers share
	// one (the pools' ids hold for every part).
	cache *internCache
}

type internCache [nCols][256]cacheSlot

type cacheSlot struct {
	key  []byte
	id   int32
	used bool
}

func (p *rowParser) intern(col int, b []byte) int32 {
	h := uint(len(b))
	if n := len(b); n > 0 {
		h = h*31 + uint(b[0])
		h = h*31 + uint(b[n-1])
		if n > 1 {
			h = h*31 + uint(b[n-2])
		}
	}
	s := &p.cache[col][h&255]
	if s.used && shortEqual(s.key, b) {
		return s.id
	}
	id := p.pools[col].id(b)
	s.key, s.id, s.used = append(s.key[:0], b...), id, true
	return id
}

// shortEqual is bytes.Equal, inline for up to 16 bytes (ids mostly are):
// two 8-byte words that overlap in the middle cover them.
func shortEqual(a, b []byte) bool {
	n := len(a)
	switch {
	case n != len(b):
		return false
	case n >= 8 && n <= 16:
		return binary.LittleEndian.Uint64(a) == binary.LittleEndian.Uint64(b) &&
			binary.LittleEndian.Uint64(a[n-8:]) == binary.LittleEndian.Uint64(b[n-8:])
	}
	return bytes.Equal(a, b)
}

// headerIndex maps the score file's columns to header positions; unknown, duplicate or
// missing columns are errors.
func headerIndex(fields [][]byte) ([nCols]int, error) {
	var idx [nCols]int
	for i := range idx {
		idx[i] = -1
	}
	var unknown []string
	for i, f := range fields {
		name := strings.ToLower(strings.TrimSpace(string(f)))
		c := -1
		for j, s := range scoreColumns {
			if s == name {
				c = j
			}
		}
		switch {
		case c < 0:
			unknown = append(unknown, strconv.Quote(string(f)))
		case idx[c] >= 0:
			return idx, fmt.Errorf("duplicate column %q", name)
		default:
			idx[c] = i
		}
	}
	want := strings.Join(scoreColumns[:nCols-1], ",") + "[,event]"
	if len(unknown) > 0 {
		return idx, fmt.Errorf("unknown column(s) %s: want %s", strings.Join(unknown, ", "), want)
	}
	var missing []string
	for c := range nCols - 1 { // event is optional
		if idx[c] < 0 {
			missing = append(missing, scoreColumns[c])
		}
	}
	if len(missing) > 0 {
		return idx, fmt.Errorf("missing column(s) %s: want %s", strings.Join(missing, ", "), want)
	}
	return idx, nil
}

// add validates one row's fields and appends it, or records why not.
func (p *rowParser) add(f *[nCols][]byte, line int) {
	for _, c := range []int{colAgent, colRound, colMarket} {
		if len(f[c]) == 0 {
			p.bad.Add("line %d: empty %s", line, scoreColumns[c])
			return
		}
	}
	pv, err := parseProb(f[colForecast])
	if err != nil {
		p.bad.Add("line %d: forecast %v", line, err)
		return
	}
	var bv float64
	hasB := len(trimSpace(f[colBenchmark])) > 0
	if hasB {
		if bv, err = parseProb(f[colBenchmark]); err != nil {
			p.bad.Add("line %d: benchmark %v", line, err)
			return
		}
	}
	var x float64
	switch o := f[colOutcome]; {
	case len(o) == 1 && o[0] == '0':
	case len(o) == 1 && o[0] == '1':
		x = 1
	default:
		v, err := parseFloat(trimSpace(o))
		if err != nil || (v != 0 && v != 1) {
			p.bad.Add("line %d: outcome %q is not 0 or 1", line, o)
			return
		}
		x = v
	}
	p.t.Append(p.intern(colAgent, f[colAgent]), p.intern(colRound, f[colRound]), p.intern(colMarket, f[colMarket]),
		p.intern(colCategory, f[colCategory]), p.intern(colEvent, f[colEvent]), pv+0, bv+0, hasB, x, line)
}

// trimSpace is bytes.TrimSpace, at once when b starts and ends with a
// printable ASCII byte (neither an ASCII space nor part of a Unicode
// one), as numbers do.
func trimSpace(b []byte) []byte {
	if n := len(b); n > 0 && b[0] > ' ' && b[0] < utf8.RuneSelf && b[n-1] > ' ' && b[n-1] < utf8.RuneSelf {
		return b
	}
	return bytes.TrimSpace(b)
}

func parseProb(b []byte) (float64, error) {
	v, err := parseFloat(trimSpace(b))
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", b)
	}
	if !(v >= 0 && v <= 1) {
		return 0, fmt.Errorf("%s outside [0,1]", b)
	}
	return v, nil
}

// pow10 holds the exactly representable powers of ten.
var pow10 = [...]float64{1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22}

// parseFloat parses a decimal like "0.1234" with Clinger's fast path: when
// the digits fit in 2^53 and the scale is an exact power of ten, one IEEE
// division is correctly rounded, i.e. the same float strconv returns. Any
// other form goes to strconv.ParseFloat.
func parseFloat(b []byte) (float64, error) {
	var mant uint64
	digits, scale := 0, -1
	for i, c := range b {
		switch {
		case c >= '0' && c <= '9':
			mant = mant*10 + uint64(c-'0')
			digits++
			if scale >= 0 {
				scale++
			}
		case c == '.' && scale < 0 && i+1 < len(b):
			scale = 0
		default:
			digits = 99 // not a plain decimal
		}
		if digits > 15 {
			return strconv.ParseFloat(unsafe.String(unsafe.SliceData(b), len(b)), 64)
		}
	}
	if digits == 0 {
		return strconv.ParseFloat(string(b), 64) // error with a copy of the input
	}
	if scale <= 0 {
		return float64(mant), nil
	}
	return float64(mant) / pow10[scale], nil
}

func lineAt(data []byte, pos int) []byte {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return data[pos : pos+i]
	}
	return data[pos:]
}

func nextLine(data []byte, pos int) int {
	if i := bytes.IndexByte(data[pos:], '\n'); i >= 0 {
		return pos + i + 1
	}
	return len(data)
}

// cutFields splits the record at pos when it has no quote: it appends to
// cuts the position of each comma and then of the newline (or the end of
// data) that ends the record. It returns false at a quote, which needs
// splitRecord's state machine. Eight bytes at a time (SWAR): each word
// gives the marks of its commas, newlines and quotes at once, and its
// commas before the first newline are taken from the marks.
func cutFields(data []byte, pos int, cuts []int) ([]int, bool) {
	i := pos
	for ; i+8 <= len(data); i += 8 {
		w := binary.LittleEndian.Uint64(data[i:])
		commas, nl, quotes := bytesEqual(w, ','), bytesEqual(w, '\n'), bytesEqual(w, '"')
		if nl != 0 {
			before := nl&-nl - 1 // the marks below the first newline's
			commas, quotes = commas&before, quotes&before
		}
		if quotes != 0 {
			return cuts, false
		}
		for ; commas != 0; commas &= commas - 1 {
			cuts = append(cuts, i+bits.TrailingZeros64(commas)/8)
		}
		if nl != 0 {
			return append(cuts, i+bits.TrailingZeros64(nl)/8), true
		}
	}
	for ; i < len(data); i++ {
		switch data[i] {
		case '"':
			return cuts, false
		case ',':
			cuts = append(cuts, i)
		case '\n':
			return append(cuts, i), true
		}
	}
	return append(cuts, i), true
}

// field is field k of the record at pos that cutFields split at cuts; the
// last field leaves out the CR of a CRLF.
func field(data []byte, pos int, cuts []int, k int) []byte {
	start, end := pos, cuts[k]
	if k > 0 {
		start = cuts[k-1] + 1
	}
	if k == len(cuts)-1 && end > start && data[end-1] == '\r' {
		end--
	}
	return data[start:end]
}

// splitRecord splits the CSV record at pos (RFC 4180: quoted fields may
// hold commas, doubled quotes and newlines). Fields alias data on the fast
// path (no quote in the line) and scratch otherwise. It returns the next
// position and the number of lines consumed.
func splitRecord(data []byte, pos int, fields [][]byte, scratch []byte) ([][]byte, []byte, int, int, error) {
	var arr [16]int
	if cuts, ok := cutFields(data, pos, arr[:0]); ok {
		for k := range cuts {
			fields = append(fields, field(data, pos, cuts, k))
		}
		return fields, scratch, min(cuts[len(cuts)-1]+1, len(data)), 1, nil
	}
	// Slow path: a state machine over data from pos; fields go to scratch
	// and are sliced out once the record is complete.
	lines := 1
	var ends []int
	i := pos
	for {
		if i < len(data) && data[i] == '"' {
			i++
			for {
				if i >= len(data) {
					return fields, scratch, len(data), lines, errUnterminated
				}
				c := data[i]
				if c == '"' {
					if i+1 < len(data) && data[i+1] == '"' {
						scratch = append(scratch, '"')
						i += 2
						continue
					}
					i++
					break
				}
				if c == '\r' && i+1 < len(data) && data[i+1] == '\n' {
					i++ // a CRLF in a quoted field is a newline, as encoding/csv reads it
					continue
				}
				if c == '\n' {
					lines++
				}
				scratch = append(scratch, c)
				i++
			}
			if i < len(data) && data[i] != ',' && data[i] != '\n' && !(data[i] == '\r' && (i+1 == len(data) || data[i+1] == '\n')) {
				return fields, scratch, nextLine(data, i), lines, fmt.Errorf("unexpected %q after a quoted field", data[i])
			}
		} else {
			from := len(scratch) // this field's first byte in scratch
			for i < len(data) && data[i] != ',' && data[i] != '\n' {
				if data[i] == '"' {
					return fields, scratch, nextLine(data, i), lines, fmt.Errorf("bare quote in an unquoted field")
				}
				scratch = append(scratch, data[i])
				i++
			}
			// A CR before the newline ends the line, not the field; it is
			// only this field's to drop (an empty last field after "\r,"
			// must not eat the previous field's CR).
			if i < len(data) && data[i] == '\n' && len(scratch) > from && scratch[len(scratch)-1] == '\r' {
				scratch = scratch[:len(scratch)-1]
			}
		}
		ends = append(ends, len(scratch))
		if i < len(data) && data[i] == '\r' {
			i++
		}
		if i >= len(data) || data[i] == '\n' {
			start := 0
			for _, e := range ends {
				fields = append(fields, scratch[start:e])
				start = e
			}
			return fields, scratch, min(i+1, len(data)), lines, nil
		}
		i++ // the comma
	}
}

// errUnterminated is a quoted field still open at the end of the data:
// in a stream, more input may close it.
var errUnterminated = errors.New("unterminated quoted field")

const (
	ones  = 0x0101010101010101
	lows7 = 0x7f7f7f7f7f7f7f7f
)

// bytesEqual marks, in its high bit, each byte of w equal to c: exactly,
// every byte (a byte is 0 after the xor iff its low seven bits carry
// nothing into the high bit and the high bit is clear).
func bytesEqual(w uint64, c byte) uint64 {
	v := w ^ (uint64(c) * ones)
	return ^((v&lows7 + lows7) | v | lows7)
}

// jsonRow is one JSONL row: the score file's keys; round and ids may be numbers.
type jsonRow struct {
	Agent     *jsonID    `json:"agent"`
	Round     *jsonID    `json:"round"`
	Market    *jsonID    `json:"market"`
	Category  *jsonID    `json:"category"`
	Event     *jsonID    `json:"event"`
	Forecast  *float64   `json:"forecast"`
	Benchmark *jsonMaybe `json:"benchmark"`
	Outcome   *float64   `json:"outcome"`
}

// jsonID accepts a string or a number (round 3 and round "3" are the same).
type jsonID string

func (s *jsonID) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '"' {
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = jsonID(v)
		return nil
	}
	var n json.Number
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("want a string or number, got %s", b)
	}
	*s = jsonID(n.String())
	return nil
}

// jsonMaybe is a number, or null / "" for "no benchmark".
type jsonMaybe struct {
	v  float64
	ok bool
}

func (m *jsonMaybe) UnmarshalJSON(b []byte) error {
	switch string(b) {
	case "null", `""`:
		*m = jsonMaybe{}
		return nil
	}
	if err := json.Unmarshal(b, &m.v); err != nil {
		return fmt.Errorf("want a number, null or \"\", got %s", b)
	}
	m.ok = true
	return nil
}

// jsonl parses JSON lines from data, whose first line is line first.
func (p *rowParser) jsonl(data []byte, first int) {
	line := first - 1
	for pos := 0; pos < len(data); {
		l := lineAt(data, pos)
		pos = nextLine(data, pos)
		line++
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		var r jsonRow
		dec := json.NewDecoder(bytes.NewReader(l))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil {
			p.bad.Add("line %d: %v", line, err)
			continue
		}
		if dec.More() {
			p.bad.Add("line %d: more than one JSON value", line)
			continue
		}
		var missing []string
		for name, ok := range map[string]bool{"agent": r.Agent != nil, "round": r.Round != nil, "market": r.Market != nil,
			"forecast": r.Forecast != nil, "outcome": r.Outcome != nil} {
			if !ok {
				missing = append(missing, name)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			p.bad.Add("line %d: missing key(s) %s", line, strings.Join(missing, ", "))
			continue
		}
		row := stats.Row{Agent: string(*r.Agent), Round: string(*r.Round), Market: string(*r.Market),
			Forecast: *r.Forecast, Outcome: *r.Outcome}
		if r.Category != nil {
			row.Category = string(*r.Category)
		}
		if r.Event != nil {
			row.Event = string(*r.Event)
		}
		if r.Benchmark != nil && r.Benchmark.ok {
			row.Benchmark, row.HasBenchmark = r.Benchmark.v, true
		}
		if err := row.Validate(); err != nil {
			p.bad.Add("line %d: %v", line, err)
			continue
		}
		p.t.Append(p.pools[colAgent].id([]byte(row.Agent)), p.pools[colRound].id([]byte(row.Round)), p.pools[colMarket].id([]byte(row.Market)),
			p.pools[colCategory].id([]byte(row.Category)), p.pools[colEvent].id([]byte(row.Event)),
			row.Forecast+0, row.Benchmark+0, row.HasBenchmark, row.Outcome, line)
	}
}

// strconvParse is strconv.ParseFloat on a string (the reference the fast
// path must match; kept here so tests need no unsafe).
func strconvParse(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
