package scoreio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
)

// ReadFile reads a scores file: JSONL when the name ends in .jsonl/.ndjson
// or the first non-blank byte is '{', CSV with a header otherwise.
func ReadFile(path string) (*stats.Table, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("read scores: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads a scores file from r; name (its path) names it in errors and,
// by its extension, may say it is JSONL. The input is streamed: it is
// parsed piece by piece as it is read, so memory holds a few pieces of it
// beside the rows, never the whole input. A file larger than MaxFileBytes
// or with a line longer than MaxLineBytes is refused as soon as the read
// gets there.
//
// When r has a Stat method (an *os.File has) that gives a regular file's
// size, the rows' columns are made once at about their final size instead
// of grown; the size is a hint only.
func Read(r io.Reader, name string) (*stats.Table, error) {
	src := &source{r: r, bounded: true, piece: pieceSize, read: readSize}
	if f, ok := r.(interface{ Stat() (fs.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			src.size = min(fi.Size(), MaxFileBytes)
		}
	}
	t, err := parse(src, func(first []byte) bool { return isJSONL(name, first) })
	var re *readError
	switch {
	case errors.As(err, &re):
		return nil, fmt.Errorf("%s: %w", name, re.err)
	case err != nil:
		return nil, arena.Errorf(arena.EINVALID, "%s: %w", name, err)
	}
	return t, nil
}

// Parse parses a whole input held in memory, CSV or (jsonl) JSON lines,
// without Read's bounds. Every malformed row is collected (up to
// stats.MaxProblems with a total) and the parse fails: nothing is
// silently dropped.
func Parse(data []byte, jsonl bool) (*stats.Table, error) {
	return parse(&source{r: bytes.NewReader(data), size: int64(len(data)), piece: pieceSize, read: readSize}, func([]byte) bool { return jsonl })
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

// The stream's sizes: the input is read readSize bytes at a time and
// parsed in pieces of about pieceSize bytes of whole lines, a piece per
// worker at a time, each into rows of its own that are joined in input
// order at the end.
const (
	readSize  = 256 << 10
	pieceSize = 1 << 20
)

// minBuffer is a buffer's first size: buffers grow to the pieces they
// hold, so a small input takes little memory.
const minBuffer = 16 << 10

// readError is a failure of the read itself (a bound, the reader's
// error), which Read reports apart from a parse's.
type readError struct{ err error }

func (e *readError) Error() string { return e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// source reads the input, checking the bounds as the read goes (when
// bounded), and counts its lines.
type source struct {
	r           io.Reader
	size        int64 // the input's size when known (a regular file), else 0
	bounded     bool
	piece, read int   // pieceSize and readSize but in tests
	total       int64 // bytes read
	lines       int   // newlines read
	lineLen     int   // bytes read of the last, unfinished line
	eof         bool
}

// fill reads into buf, growing it when full, until it holds want bytes or
// the input ends.
func (s *source) fill(buf []byte, want int) ([]byte, error) {
	for len(buf) < want && !s.eof {
		if len(buf) == cap(buf) {
			n := max(len(buf), minBuffer)
			if s.total >= int64(s.piece) || s.size >= int64(s.piece) {
				// The input fills pieces: grown at once to what is wanted,
				// not by doubling from minBuffer through every size.
				n = max(n, want-len(buf))
			}
			buf = slices.Grow(buf, n)
		}
		room := min(cap(buf)-len(buf), s.read)
		if s.bounded { // never read past the first byte beyond the bound
			room = int(min(int64(room), MaxFileBytes+1-s.total))
		}
		n, err := s.r.Read(buf[len(buf) : len(buf)+room])
		if n > 0 {
			if err := s.account(buf[len(buf) : len(buf)+n]); err != nil {
				return buf, err
			}
			buf = buf[:len(buf)+n]
		}
		switch {
		case err == io.EOF:
			s.eof = true
		case err != nil:
			return buf, &readError{err}
		}
	}
	return buf, nil
}

// account counts the lines of b, read just now, and checks the bounds.
func (s *source) account(b []byte) error {
	s.total += int64(len(b))
	first := bytes.IndexByte(b, '\n')
	if first < 0 {
		s.lineLen += len(b)
	} else {
		if s.bounded && s.lineLen+first > MaxLineBytes {
			return s.tooLong(s.lines + 1)
		}
		last := bytes.LastIndexByte(b, '\n')
		if s.bounded && last-first-1 > MaxLineBytes {
			// A line between the first newline and the last may be too
			// long: look at each.
			for at, n := first, s.lines+2; at < last; n++ {
				j := bytes.IndexByte(b[at+1:], '\n')
				if j > MaxLineBytes {
					return s.tooLong(n)
				}
				at += j + 1
			}
		}
		s.lines += 1 + bytes.Count(b[first+1:], []byte{'\n'})
		s.lineLen = len(b) - last - 1
	}
	switch {
	case !s.bounded:
	case s.lineLen > MaxLineBytes:
		return s.tooLong(s.lines + 1)
	case s.total > MaxFileBytes:
		return &readError{arena.Errorf(arena.EINVALID, "larger than %s, the limit of a scores file", arena.SizeText(MaxFileBytes))}
	}
	return nil
}

func (s *source) tooLong(line int) error {
	return &readError{arena.Errorf(arena.EINVALID, "line %d is longer than %s, the limit of a line", line, arena.SizeText(int64(MaxLineBytes)))}
}

// stream cuts the input into pieces of whole lines. A piece's buffer is
// the reader's until it is handed back with done.
type stream struct {
	src  *source
	buf  []byte // read and not handed out: whole lines, then at most part of one
	line int    // the line buf starts on
	free chan []byte
	bufs int // buffers made, at most cap(free)
}

func newStream(src *source, buf []byte, buffers int) *stream {
	return &stream{src: src, buf: buf, line: 1, free: make(chan []byte, buffers), bufs: 1}
}

// next returns the next piece, the line it starts on and whether it is
// the last; a nil piece at the end of the input. A piece ends with a
// newline, but for the last one.
func (st *stream) next() (piece []byte, line int, last bool, err error) {
	buf, err := st.src.fill(st.buf, st.src.piece)
	for err == nil && !st.src.eof && bytes.IndexByte(buf, '\n') < 0 {
		buf, err = st.src.fill(buf, len(buf)+st.src.read) // a line longer than a piece
	}
	st.buf = buf
	if err != nil || len(buf) == 0 {
		return nil, 0, true, err
	}
	cut := len(buf)
	if !st.src.eof {
		cut = bytes.LastIndexByte(buf, '\n') + 1
	}
	rest := st.take()
	st.buf = append(rest, buf[cut:]...)
	piece, line = buf[:cut], st.line
	// The rest holds no newline: the next piece starts on the line after
	// the last newline read.
	st.line = st.src.lines + 1
	return piece, line, st.src.eof && len(st.buf) == 0, nil
}

// take returns an empty buffer: one handed back, a new one while fewer
// than the stream's quota exist, or the next one handed back.
func (st *stream) take() []byte {
	select {
	case b := <-st.free:
		return b[:0]
	default:
	}
	if st.bufs < cap(st.free) {
		st.bufs++
		return make([]byte, 0, minBuffer)
	}
	return (<-st.free)[:0]
}

// done hands a piece's buffer back (free has room for every buffer made).
func (st *stream) done(b []byte) { st.free <- b }

// parse reads the whole input from src: JSON lines when jsonl says so of
// its first bytes, CSV otherwise.
func parse(src *source, jsonl func(first []byte) bool) (*stats.Table, error) {
	buf, err := src.fill(make([]byte, 0, minBuffer), src.piece)
	// The kind shows at the first byte past the BOM and blanks.
	for blank := 0; err == nil && !src.eof; {
		d := bytes.TrimPrefix(buf, bom)
		blank += len(d[blank:]) - len(bytes.TrimLeft(d[blank:], " \t\r\n"))
		if blank < len(d) {
			break
		}
		buf, err = src.fill(buf, len(buf)+src.read)
	}
	if err != nil {
		return nil, err
	}
	isJSON := jsonl(buf)
	buf = bytes.TrimPrefix(buf, bom)
	workers := runtime.GOMAXPROCS(0)
	d := &driver{st: newStream(src, buf, 2*workers+2), jobs: make(chan *job, workers)}
	d.j.hint = estimateRows(src.size, maxRows(buf), len(buf))
	for _, c := range stringCols {
		d.j.pools[c] = newPool()
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d.work(isJSON)
		}()
	}
	if isJSON {
		err = d.jsonl()
	} else {
		err = d.csv()
	}
	close(d.jobs)
	wg.Wait()
	if err != nil {
		return nil, err
	}
	if d.csvHeader != nil && d.csvHeader.err != nil {
		return nil, d.csvHeader.err
	}
	t, bad := d.j.table()
	if bad.Total > 0 {
		return nil, bad
	}
	if t.Len() == 0 {
		return nil, fmt.Errorf("no data rows")
	}
	return t, nil
}

var errEmpty = fmt.Errorf("empty file: want a CSV header %s or JSONL rows", strings.Join(scoreColumns[:nCols-1], ",")+"[,event]")

// driver hands the pieces to the workers and their parts, in input
// order, to the joiner.
type driver struct {
	st        *stream
	jobs      chan *job
	j         joiner
	csvHeader *header
}

// job is one piece for a worker: parse data from pos, which is on line.
type job struct {
	data      []byte
	pos, line int
	hdr       *header // nil for JSON lines
	part      *rowParser
}

// work parses the jobs it receives into their parts.
func (d *driver) work(jsonl bool) {
	cache := new(internCache)
	for j := range d.jobs {
		p := j.part
		p.cache = cache
		if jsonl {
			p.jsonl(j.data[j.pos:], j.line)
		} else {
			p.body(j.data, j.pos, j.line, j.hdr, true)
		}
		d.st.done(j.data)
		p.cache = nil
	}
}

// submit queues a piece for the workers, its part next in order.
func (d *driver) submit(data []byte, pos, line int, hdr *header) {
	p := d.j.add(maxRows(data[pos:]))
	d.jobs <- &job{data: data, pos: pos, line: line, hdr: hdr, part: p}
}

// jsonl parses JSON lines, each piece on its own.
func (d *driver) jsonl() error {
	for {
		piece, line, _, err := d.st.next()
		if err != nil || piece == nil {
			return err
		}
		d.submit(piece, 0, line, nil)
	}
}

// header is the CSV header once read: each column's field, the field
// count, or why the header is refused.
type header struct {
	done bool
	idx  [nCols]int
	ncol int
	err  error
}

// csv parses CSV. Pieces without a quote are parsed on their own, in
// parallel: each of their newlines ends a record. A quoted field may hold
// a newline, so from the first piece with a quote on (or a header that a
// piece does not hold) the rest is parsed in one pass, records running on
// from one piece into the next.
func (d *driver) csv() error {
	h := &header{}
	d.csvHeader = h
	piece, line, last, err := d.st.next()
	if err != nil {
		return err
	}
	if piece == nil {
		h.err = errEmpty
		return nil
	}
	pos := 0
	if bytes.IndexByte(piece, '"') < 0 {
		var ok bool
		if pos, line, ok = h.parse(piece, 0, line, last); h.err != nil {
			return nil
		}
		if ok {
			d.submit(piece, pos, line, h)
			for !last {
				if piece, line, last, err = d.st.next(); err != nil || piece == nil {
					return err
				}
				if bytes.IndexByte(piece, '"') >= 0 {
					return d.sequential(piece, 0, line, last, h)
				}
				d.submit(piece, 0, line, h)
			}
			return nil
		}
	}
	return d.sequential(piece, pos, line, last, h)
}

// sequential parses the rest of the input in one pass: from data[pos:],
// on line, then every following piece.
func (d *driver) sequential(data []byte, pos, line int, last bool, h *header) error {
	p := d.j.addRest(maxRows(data[pos:]))
	p.cache = new(internCache)
	buf := append(make([]byte, 0, len(data)-pos+minBuffer), data[pos:]...)
	d.st.done(data)
	pos = 0
	for {
		ok := h.done
		if !ok {
			pos, line, ok = h.parse(buf, pos, line, last)
			if h.err != nil {
				return nil
			}
		}
		if ok {
			pos, line = p.body(buf, pos, line, h, last)
		}
		if last {
			return nil
		}
		piece, _, l, err := d.st.next()
		if err != nil {
			return err
		}
		if piece == nil { // the input ended with the piece before
			last = true
			continue
		}
		buf = append(buf[:copy(buf, buf[pos:])], piece...)
		pos, last = 0, l
		d.st.done(piece)
	}
}

// parse reads the header from data[pos:], on line, past blank lines. It
// returns where the rows start and their line, or ok false when data
// (not the last) ends before the header does; a refused header sets h.err.
func (h *header) parse(data []byte, pos, line int, last bool) (int, int, bool) {
	for pos < len(data) {
		i := bytes.IndexByte(data[pos:], '\n')
		if i < 0 && !last {
			return pos, line, false
		}
		end := len(data)
		if i >= 0 {
			end = pos + i
		}
		if len(bytes.TrimSpace(data[pos:end])) > 0 {
			break
		}
		pos, line = min(end+1, len(data)), line+1
	}
	if pos >= len(data) {
		if !last {
			return pos, line, false
		}
		h.err = errEmpty
		return pos, line, true
	}
	fields, _, next, n, err := splitRecord(data, pos, nil, nil)
	if !last && !complete(data, next, err) {
		return pos, line, false
	}
	if err == nil {
		h.idx, err = headerIndex(fields)
	}
	if err != nil {
		h.err = fmt.Errorf("line %d: %v", line, err)
		return pos, line, true
	}
	h.done, h.ncol = true, len(fields)
	return next, line + n, true
}

// complete reports whether a record that splitRecord ended at next, with
// err, is whole without the input that follows data: it ends with a
// newline outside quotes.
func complete(data []byte, next int, err error) bool {
	return err != errUnterminated && next > 0 && data[next-1] == '\n'
}

// body parses CSV records from pos, on line, to the end of data, or, when
// data is not the last of the input, to the end of the last whole record.
// It returns where it stopped and that position's line.
func (p *rowParser) body(data []byte, pos, line int, h *header, last bool) (int, int) {
	var fields [][]byte
	var scratch []byte
	var next, n int
	var err error
	var cutArr [16]int
	cuts := cutArr[:0]
	for pos < len(data) {
		start := line
		switch c := data[pos]; {
		case c == '\n', c == '\r' && pos+1 < len(data) && data[pos+1] == '\n':
			pos = nextLine(data, pos)
			line++
			continue
		case c == '\r' && pos+1 == len(data):
			if !last {
				return pos, line // a CR ending a blank line, or the input
			}
			return len(data), line + 1
		}
		var f [nCols][]byte
		// The fast path, for a record without a quote: fields found by
		// their cuts, no slice of fields written.
		if cuts, ok := cutFields(data, pos, cuts[:0]); ok {
			end := cuts[len(cuts)-1]
			if !last && end == len(data) {
				return pos, line
			}
			if len(cuts) != h.ncol {
				p.bad.Add("line %d: %d fields, want %d as in the header", start, len(cuts), h.ncol)
			} else {
				for c, k := range h.idx {
					if k >= 0 {
						f[c] = field(data, pos, cuts, k)
					}
				}
				p.add(&f, start)
			}
			pos, line = min(end+1, len(data)), line+1
			continue
		}
		fields, scratch, next, n, err = splitRecord(data, pos, fields[:0], scratch[:0])
		if !last && !complete(data, next, err) {
			return pos, line
		}
		pos = next
		line += n
		if err != nil {
			p.bad.Add("line %d: %v", start, err)
			continue
		}
		if len(fields) != h.ncol {
			p.bad.Add("line %d: %d fields, want %d as in the header", start, len(fields), h.ncol)
			continue
		}
		for c, k := range h.idx {
			if k >= 0 {
				f[c] = fields[k]
			}
		}
		p.add(&f, start)
	}
	return pos, line
}

// joiner joins the parts in input order: it renumbers the pools'
// provisional ids in order of first appearance in the input (the ids a
// single pass gives) and lists the parts' problems in order.
//
// The parts' rows are not copied into a table of their own: each part
// appends into a window of one set of columns (rows), as many rows as its
// piece can hold, so the table is those columns once the windows are moved
// together over the gaps that lines giving no row (the header, blank or
// bad lines) leave, and the ids renumbered in place. Copying every part
// into fresh columns cost as much again in memory first touched (page
// faults) as the rows themselves. The columns are sized from the input's
// size when it is known; when a window does not fit, larger ones are made
// with room at their front for the rows before, which the join moves in.
type joiner struct {
	pools [nCols]*pool
	parts []*rowParser
	rows  *stats.Table // the newest columns, of length 0: the windows are slices of them
	used  int          // rows of rows reserved by windows
	hint  int          // the rows the input is expected to hold, 0 when unknown
	// at is each part's window in rows, -1 for a part in older columns.
	at []int
}

// minRowBytes is the fewest bytes a row takes with the newline after it:
// seven fields (six commas), agent, round and market not empty, forecast
// and outcome a digit each. A JSON line takes more. No piece can give
// more rows than its bytes over this.
const minRowBytes = 12

// maxRows is the most rows data can give: one per line, one per
// minRowBytes bytes.
func maxRows(data []byte) int {
	lines := bytes.Count(data, []byte{'\n'})
	if len(data) > 0 && data[len(data)-1] != '\n' {
		lines++
	}
	return min(lines, len(data)/minRowBytes+1)
}

// estimateRows is the rows an input of size bytes is expected to hold
// when its first bytes hold rows in first bytes (0 when unknown): a
// little more than the same rate gives, at most one per minRowBytes.
func estimateRows(size int64, rows, first int) int {
	if size <= 0 || first <= 0 || rows <= 0 {
		return 0
	}
	est := float64(size) / float64(first) * float64(rows) * 1.02
	return int(min(est, float64(size/minRowBytes+1))) + 64
}

// add returns a new part, next in order, with a window for rows rows.
func (j *joiner) add(rows int) *rowParser {
	if j.rows == nil || j.used+rows > cap(j.rows.P) {
		j.grow(rows)
	}
	w := j.used
	j.used += rows
	t := &stats.Table{Agent: window(j.rows.Agent, w, rows), Round: window(j.rows.Round, w, rows),
		Market: window(j.rows.Market, w, rows), Category: window(j.rows.Category, w, rows),
		Event: window(j.rows.Event, w, rows), P: window(j.rows.P, w, rows), B: window(j.rows.B, w, rows),
		X: window(j.rows.X, w, rows), Line: window(j.rows.Line, w, rows)}
	p := &rowParser{t: t, bad: &stats.InputError{}, pools: &j.pools}
	j.parts = append(j.parts, p)
	j.at = append(j.at, w)
	return p
}

// addRest returns the last part, with a window of at least rows rows and
// all the room the columns have left: its rows run on to the end of the
// input.
func (j *joiner) addRest(rows int) *rowParser {
	if j.rows != nil {
		rows = max(rows, cap(j.rows.P)-j.used)
	}
	return j.add(rows)
}

// window is a part's columns: n rows of col from w, appends past them
// going to new memory rather than into the next window.
func window[T any](col []T, w, n int) []T { return col[w : w : w+n] }

// grow makes new columns for a window of rows rows after the ones
// reserved: the expected size, or twice the last.
func (j *joiner) grow(rows int) {
	n := j.used + rows
	if j.rows == nil {
		n = max(n, j.hint)
	} else {
		n = max(n, 2*cap(j.rows.P))
		for i := range j.at {
			j.at[i] = -1 // the windows made so far stay in the older columns
		}
	}
	j.rows = newColumns(n)
}

func newColumns(n int) *stats.Table {
	t := &stats.Table{Agent: make([]int32, 0, n), Round: make([]int32, 0, n), Market: make([]int32, 0, n),
		Category: make([]int32, 0, n), Event: make([]int32, 0, n), P: make([]float64, 0, n), B: make([]float64, 0, n),
		X: make([]float64, 0, n), Line: make([]int32, 0, n)}
	adviseHuge(t.Agent)
	adviseHuge(t.Round)
	adviseHuge(t.Market)
	adviseHuge(t.Category)
	adviseHuge(t.Event)
	adviseHuge(t.P)
	adviseHuge(t.B)
	adviseHuge(t.X)
	adviseHuge(t.Line)
	return t
}

// table joins every part into one table: each column moved part by part
// in input order to where its rows go (the ids renumbered on the way, one
// pass per column, the columns side by side).
//
// The moves happen in place, in the newest columns, when every part there
// goes no further back than its window starts (it can only move down, so
// a part never overwrites a later one's rows before they are read), which
// holds unless a part outgrew its window; otherwise into new columns.
func (j *joiner) table() (*stats.Table, *stats.InputError) {
	bad := &stats.InputError{}
	at := make([]int, len(j.parts)+1) // each part's first row
	for i, q := range j.parts {
		bad.Merge(q.bad)
		at[i+1] = at[i] + q.t.Len()
	}
	rows := at[len(j.parts)]
	dst := j.rows
	if dst == nil || rows > cap(dst.P) {
		dst = newColumns(rows)
	} else {
		for i, q := range j.parts {
			if q.t.Len() > 0 && j.at[i] >= 0 && inWindow(q.t.P, dst.P, j.at[i]) && at[i] > j.at[i] {
				dst = newColumns(rows)
				break
			}
		}
	}
	t := &stats.Table{Agent: dst.Agent[:rows], Round: dst.Round[:rows], Market: dst.Market[:rows],
		Category: dst.Category[:rows], Event: dst.Event[:rows], P: dst.P[:rows], B: dst.B[:rows],
		X: dst.X[:rows], Line: dst.Line[:rows]}
	var dicts [nStrings]*stats.Dict
	var wg sync.WaitGroup
	for k, c := range stringCols {
		wg.Go(func() {
			pl := j.pools[c]
			pl.seal()
			renum := make([]int32, pl.span())
			for i := range renum {
				renum[i] = -1
			}
			var names []string
			out := columns(t)[k]
			for i, q := range j.parts {
				o := out[at[i]:]
				for r, id := range columns(q.t)[k] { // o[r] is never after the id read
					n := renum[id]
					if n < 0 {
						n = int32(len(names))
						renum[id] = n
						names = append(names, pl.name(id))
					}
					o[r] = n
				}
			}
			dicts[k] = stats.DictOf(names)
		})
	}
	wg.Go(func() { moveParts(j.parts, at, t.P, func(q *stats.Table) []float64 { return q.P }) })
	wg.Go(func() { moveParts(j.parts, at, t.B, func(q *stats.Table) []float64 { return q.B }) })
	wg.Go(func() { moveParts(j.parts, at, t.X, func(q *stats.Table) []float64 { return q.X }) })
	wg.Go(func() { moveParts(j.parts, at, t.Line, func(q *stats.Table) []int32 { return q.Line }) })
	wg.Wait()
	t.Agents, t.Rounds, t.Markets, t.Categories, t.Events = dicts[0], dicts[1], dicts[2], dicts[3], dicts[4]
	return t, bad
}

// inWindow reports whether part (not empty) starts at row w of col.
func inWindow[T any](part, col []T, w int) bool {
	return w < cap(col) && &part[0] == &col[:w+1][w]
}

// moveParts moves each part's column, in input order, to its rows in dst
// (nothing to do for a part already there).
func moveParts[T any](parts []*rowParser, at []int, dst []T, col func(*stats.Table) []T) {
	for i, q := range parts {
		if c := col(q.t); len(c) > 0 && &c[0] != &dst[at[i]] {
			copy(dst[at[i]:], c)
		}
	}
}

// dicts and columns list a table's dictionaries and their id columns, in
// one order.
func dicts(t *stats.Table) [nStrings]*stats.Dict {
	return [nStrings]*stats.Dict{t.Agents, t.Rounds, t.Markets, t.Categories, t.Events}
}

func columns(t *stats.Table) [nStrings][]int32 {
	return [nStrings][]int32{t.Agent, t.Round, t.Market, t.Category, t.Event}
}
