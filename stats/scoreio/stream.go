package scoreio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
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
func Read(r io.Reader, name string) (*stats.Table, error) {
	t, err := parse(&source{r: r, bounded: true, piece: pieceSize, read: readSize}, func(first []byte) bool { return isJSONL(name, first) })
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
	return parse(&source{r: bytes.NewReader(data), piece: pieceSize, read: readSize}, func([]byte) bool { return jsonl })
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
			buf = slices.Grow(buf, max(len(buf), minBuffer))
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
	t, bad := d.j.table(workers)
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
	p := d.j.add(bytes.Count(data[pos:], []byte{'\n'}) + 1)
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
	p := d.j.add(bytes.Count(data[pos:], []byte{'\n'}) + 1)
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
// single pass gives) while it copies the rows into columns allocated
// once, and lists the parts' problems in order.
type joiner struct {
	pools [nCols]*pool
	parts []*rowParser
}

// add returns a new part, next in order, with room for about rows rows.
func (j *joiner) add(rows int) *rowParser {
	t := &stats.Table{Agent: make([]int32, 0, rows), Round: make([]int32, 0, rows), Market: make([]int32, 0, rows),
		Category: make([]int32, 0, rows), Event: make([]int32, 0, rows), P: make([]float64, 0, rows), B: make([]float64, 0, rows),
		X: make([]float64, 0, rows), Line: make([]int32, 0, rows)}
	p := &rowParser{t: t, bad: &stats.InputError{}, pools: &j.pools}
	j.parts = append(j.parts, p)
	return p
}

// table joins every part into one table: each string column renumbered by
// one pass over the parts in order (the columns side by side), the
// numbers copied part by part.
func (j *joiner) table(workers int) (*stats.Table, *stats.InputError) {
	bad := &stats.InputError{}
	at := make([]int, len(j.parts)+1) // each part's first row
	for i, q := range j.parts {
		bad.Merge(q.bad)
		at[i+1] = at[i] + q.t.Len()
	}
	rows := at[len(j.parts)]
	t := &stats.Table{}
	if len(j.parts) == 1 { // renumbered in place
		t = j.parts[0].t
	} else {
		t.Agent, t.Round, t.Market = make([]int32, rows), make([]int32, rows), make([]int32, rows)
		t.Category, t.Event, t.Line = make([]int32, rows), make([]int32, rows), make([]int32, rows)
		t.P, t.B, t.X = make([]float64, rows), make([]float64, rows), make([]float64, rows)
	}
	var dicts [nStrings]*stats.Dict
	var wg sync.WaitGroup
	for k, c := range stringCols {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pl := j.pools[c]
			pl.seal()
			renum := make([]int32, pl.span())
			for i := range renum {
				renum[i] = -1
			}
			var names []string
			dst := columns(t)[k]
			for i, q := range j.parts {
				for r, id := range columns(q.t)[k] {
					n := renum[id]
					if n < 0 {
						n = int32(len(names))
						renum[id] = n
						names = append(names, pl.name(id))
					}
					dst[at[i]+r] = n
				}
			}
			dicts[k] = stats.DictOf(names)
		}()
	}
	if len(j.parts) > 1 {
		next := make(chan int, len(j.parts))
		for i := range j.parts {
			next <- i
		}
		close(next)
		for range min(workers, len(j.parts)) {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range next {
					u, o := j.parts[i].t, at[i]
					copy(t.P[o:], u.P)
					copy(t.B[o:], u.B)
					copy(t.X[o:], u.X)
					copy(t.Line[o:], u.Line)
				}
			}()
		}
	}
	wg.Wait()
	t.Agents, t.Rounds, t.Markets, t.Categories, t.Events = dicts[0], dicts[1], dicts[2], dicts[3], dicts[4]
	return t, bad
}

// dicts and columns list a table's dictionaries and their id columns, in
// one order.
func dicts(t *stats.Table) [nStrings]*stats.Dict {
	return [nStrings]*stats.Dict{t.Agents, t.Rounds, t.Markets, t.Categories, t.Events}
}

func columns(t *stats.Table) [nStrings][]int32 {
	return [nStrings][]int32{t.Agent, t.Round, t.Market, t.Category, t.Event}
}
