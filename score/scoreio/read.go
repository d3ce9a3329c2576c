// Package scoreio reads the scores file that 'arena score' and the
// reports take: CSV with a header, or JSON lines, with the columns
// agent, round, market, category, forecast, benchmark, outcome[, event].
// It is the I/O side of package score, which does none. The CSV reader is
// hand-written for speed (one pass, interned names, parallel chunks on
// large files); its results equal encoding/csv's on every input.
package scoreio

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"math/bits"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unsafe"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/score"
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

// ReadFile reads a scores file: JSONL when the name ends in .jsonl/.ndjson
// or the first non-blank byte is '{', CSV with a header otherwise.
func ReadFile(path string) (*score.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read scores: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads a scores file from r; name (its path) names it in errors and,
// by its extension, may say it is JSONL. A file larger than MaxFileBytes
// or with a line longer than MaxLineBytes is refused as soon as the read
// gets there.
func Read(r io.Reader, name string) (*score.Table, error) {
	data, err := readBounded(r)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	t, err := Parse(data, isJSONL(name, data))
	if err != nil {
		return nil, arena.Errorf(arena.EINVALID, "%s: %w", name, err)
	}
	return t, nil
}

// readBounded reads r to the end within MaxFileBytes and MaxLineBytes.
func readBounded(r io.Reader) ([]byte, error) {
	data := make([]byte, 0, 64<<10)
	line, lineStart := 1, 0 // the line being read and where it starts
	for {
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)] // grow as append does
		}
		n, err := r.Read(data[len(data):cap(data)])
		k := len(data)
		data = data[:k+n]
		for {
			j := bytes.IndexByte(data[k:], '\n')
			if j < 0 || k+j-lineStart > MaxLineBytes {
				break
			}
			k, line, lineStart = k+j+1, line+1, k+j+1
		}
		switch {
		case len(data)-lineStart > MaxLineBytes:
			return nil, arena.Errorf(arena.EINVALID, "line %d is longer than %s, the limit of a line", line, arena.SizeText(int64(MaxLineBytes)))
		case int64(len(data)) > MaxFileBytes:
			return nil, arena.Errorf(arena.EINVALID, "larger than %s, the limit of a scores file", arena.SizeText(MaxFileBytes))
		case err == io.EOF:
			return data, nil
		case err != nil:
			return nil, err
		}
	}
}

func isJSONL(path string, data []byte) bool {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson", ".json":
		return true
	case ".csv":
		return false
	}
	d := bytes.TrimLeft(bytes.TrimPrefix(data, bom), " \t\r\n")
	return len(d) > 0 && d[0] == '{'
}

var bom = []byte("\xef\xbb\xbf")

// Parse parses a whole input, CSV or (jsonl) JSON lines. Every malformed row is collected
// (up to score.MaxProblems with a total) and the parse fails: nothing is
// silently dropped.
func Parse(data []byte, jsonl bool) (*score.Table, error) {
	data = bytes.TrimPrefix(data, bom)
	p := &rowParser{t: score.NewTable(bytes.Count(data, []byte{'\n'}) + 1), bad: &score.InputError{}}
	var err error
	if jsonl {
		err = p.jsonl(data)
	} else {
		err = p.csv(data)
	}
	if err != nil {
		return nil, err
	}
	if p.bad.Total > 0 {
		return nil, p.bad
	}
	if p.t.Len() == 0 {
		return nil, fmt.Errorf("no data rows")
	}
	return p.t, nil
}

type rowParser struct {
	t   *score.Table
	bad *score.InputError
	// Per string column, a small direct-mapped cache in front of the
	// dictionary's map: ids repeat heavily (agents, rounds, categories),
	// and a byte compare beats hashing into a large map.
	cache [nCols][256]cacheSlot
}

type cacheSlot struct {
	key []byte
	id  int32
}

func (p *rowParser) intern(col int, d *score.Dict, b []byte) int32 {
	h := uint(len(b))
	if n := len(b); n > 0 {
		h = h*31 + uint(b[0])
		h = h*31 + uint(b[n-1])
		if n > 1 {
			h = h*31 + uint(b[n-2])
		}
	}
	s := &p.cache[col][h&255]
	if s.key != nil && bytes.Equal(s.key, b) {
		return s.id
	}
	id := d.IDBytes(b)
	s.key, s.id = append(s.key[:0], b...), id
	if s.key == nil {
		s.key = []byte{} // non-nil marks the slot used, even for ""
	}
	return id
}

func (p *rowParser) csv(data []byte) error {
	line := 1
	pos := 0
	var fields [][]byte
	var scratch []byte
	// Header.
	for pos < len(data) && len(bytes.TrimSpace(lineAt(data, pos))) == 0 {
		pos = nextLine(data, pos)
		line++
	}
	if pos >= len(data) {
		return fmt.Errorf("empty file: want a CSV header %s", strings.Join(scoreColumns[:nCols-1], ",")+"[,event] or JSONL rows")
	}
	hline := line
	fields, _, pos, n, err := splitRecord(data, pos, fields[:0], scratch[:0])
	if err != nil {
		return fmt.Errorf("line %d: %v", hline, err)
	}
	line += n
	idx, err := headerIndex(fields)
	if err != nil {
		return fmt.Errorf("line %d: %v", hline, err)
	}
	ncol := len(fields)

	// Large unquoted inputs are parsed in parallel chunks split at line
	// boundaries (a quote could hide a newline inside a field, so any quote
	// means one sequential pass), then merged in order.
	workers := runtime.GOMAXPROCS(0)
	if workers < 2 || len(data)-pos < parallelMin || bytes.IndexByte(data[pos:], '"') >= 0 {
		p.body(data, pos, line, idx, ncol)
		return nil
	}
	bounds := []int{pos}
	for k := 1; k < workers; k++ {
		cut := pos + (len(data)-pos)*k/workers
		if i := bytes.IndexByte(data[cut:], '\n'); i >= 0 && cut+i+1 > bounds[len(bounds)-1] {
			bounds = append(bounds, cut+i+1)
		}
	}
	bounds = append(bounds, len(data))
	parts := make([]*rowParser, len(bounds)-1)
	var wg sync.WaitGroup
	startLine := line
	for k := range parts {
		pk := p
		if k > 0 {
			startLine += bytes.Count(data[bounds[k-1]:bounds[k]], []byte{'\n'})
			pk = &rowParser{t: score.NewTable((bounds[k+1] - bounds[k]) / 32), bad: &score.InputError{}}
			parts[k] = pk
		}
		wg.Add(1)
		go func(pk *rowParser, lo, hi, line int) {
			defer wg.Done()
			pk.body(data[:hi], lo, line, idx, ncol)
		}(pk, bounds[k], bounds[k+1], startLine)
	}
	wg.Wait()
	for _, pk := range parts[1:] {
		p.merge(pk)
	}
	return nil
}

// parallelMin is the input size from which the CSV body is parsed in parallel.
var parallelMin = 4 << 20 // a var so tests can force either path

// body parses CSV records from pos to the end of data; line is pos's line.
func (p *rowParser) body(data []byte, pos, line int, idx [nCols]int, ncol int) {
	var fields [][]byte
	var scratch []byte
	var n int
	var err error
	for pos < len(data) {
		start := line
		if data[pos] == '\n' || (data[pos] == '\r' && (pos+1 == len(data) || data[pos+1] == '\n')) {
			pos = nextLine(data, pos)
			line++
			continue
		}
		fields, scratch, pos, n, err = splitRecord(data, pos, fields[:0], scratch[:0])
		line += n
		if err != nil {
			p.bad.Add("line %d: %v", start, err)
			continue
		}
		if len(fields) != ncol {
			p.bad.Add("line %d: %d fields, want %d as in the header", start, len(fields), ncol)
			continue
		}
		var f [nCols][]byte
		for c := range nCols {
			if idx[c] >= 0 {
				f[c] = fields[idx[c]]
			}
		}
		p.add(f, start)
	}
}

// merge appends q's rows and problems after p's, re-interning q's ids.
func (p *rowParser) merge(q *rowParser) {
	for _, msg := range q.bad.Problems {
		p.bad.Add("%s", msg)
	}
	p.bad.Total += q.bad.Total - len(q.bad.Problems)
	remap := func(into, from *score.Dict) []int32 {
		ids := make([]int32, from.Len())
		for i, name := range from.Names {
			ids[i] = into.ID(name)
		}
		return ids
	}
	t, u := p.t, q.t
	ag, rd, mk, ct, ev := remap(t.Agents, u.Agents), remap(t.Rounds, u.Rounds), remap(t.Markets, u.Markets),
		remap(t.Categories, u.Categories), remap(t.Events, u.Events)
	for i := range u.Len() {
		t.Append(ag[u.Agent[i]], rd[u.Round[i]], mk[u.Market[i]], ct[u.Category[i]], ev[u.Event[i]],
			u.P[i], u.B[i], u.HasB(i), u.X[i], int(u.Line[i]))
	}
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
func (p *rowParser) add(f [nCols][]byte, line int) {
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
	hasB := len(bytes.TrimSpace(f[colBenchmark])) > 0
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
		v, err := parseFloat(bytes.TrimSpace(o))
		if err != nil || (v != 0 && v != 1) {
			p.bad.Add("line %d: outcome %q is not 0 or 1", line, o)
			return
		}
		x = v
	}
	t := p.t
	t.Append(p.intern(colAgent, t.Agents, f[colAgent]), p.intern(colRound, t.Rounds, f[colRound]),
		p.intern(colMarket, t.Markets, f[colMarket]), p.intern(colCategory, t.Categories, f[colCategory]),
		p.intern(colEvent, t.Events, f[colEvent]), pv+0, bv+0, hasB, x, line)
}

func parseProb(b []byte) (float64, error) {
	v, err := parseFloat(bytes.TrimSpace(b))
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

// splitRecord splits the CSV record at pos (RFC 4180: quoted fields may
// hold commas, doubled quotes and newlines). Fields alias data on the fast
// path (no quote in the line) and scratch otherwise. It returns the next
// position and the number of lines consumed.
func splitRecord(data []byte, pos int, fields [][]byte, scratch []byte) ([][]byte, []byte, int, int, error) {
	// Fast path: one pass to the end of the line, splitting at commas;
	// a quote anywhere sends the record to the slow path. Eight bytes at a
	// time (SWAR): a word without ',', '\n' or '"' is skipped whole.
	start, i := pos, pos
	for {
		for i+8 <= len(data) {
			w := binary.LittleEndian.Uint64(data[i:])
			if m := specialBytes(w); m != 0 {
				i += bits.TrailingZeros64(m) / 8
				break
			}
			i += 8
		}
		for i < len(data) && data[i] != ',' && data[i] != '\n' && data[i] != '"' {
			i++
		}
		if i < len(data) && data[i] == ',' {
			fields = append(fields, data[start:i])
			i++
			start = i
			continue
		}
		break
	}
	if i == len(data) || data[i] == '\n' {
		end := i
		if end > start && data[end-1] == '\r' {
			end--
		}
		fields = append(fields, data[start:end])
		return fields, scratch, min(i+1, len(data)), 1, nil
	}
	fields = fields[:0]
	// Slow path: a state machine over data from pos; fields go to scratch
	// and are sliced out once the record is complete.
	lines := 1
	var ends []int
	i = pos
	for {
		if i < len(data) && data[i] == '"' {
			i++
			for {
				if i >= len(data) {
					return fields, scratch, len(data), lines, fmt.Errorf("unterminated quoted field")
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

const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// specialBytes marks (in each byte's high bit) the bytes of w equal to ',',
// '\n' or '"'. The lowest mark is exact, which is all the scanner uses.
func specialBytes(w uint64) uint64 {
	zero := func(v uint64) uint64 { return (v - ones) &^ v & highs }
	return zero(w^(','*ones)) | zero(w^('\n'*ones)) | zero(w^('"'*ones))
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

func (p *rowParser) jsonl(data []byte) error {
	line := 0
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
		row := score.Row{Agent: string(*r.Agent), Round: string(*r.Round), Market: string(*r.Market),
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
		if err := p.t.Add(row, line); err != nil {
			p.bad.Add("line %d: %v", line, err)
		}
	}
	return nil
}

// strconvParse is strconv.ParseFloat on a string (the reference the fast
// path must match; kept here so tests need no unsafe).
func strconvParse(s string) (float64, error) { return strconv.ParseFloat(s, 64) }
