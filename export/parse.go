package export

import (
	"bufio"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena/forecast"
)

// row is one row of a table read strictly: its cells by column, as
// written. Cells that failed their type are marked bad (and reported
// once); the getters then return zero values, and comparisons skip them.
type row struct {
	n     int // position among the file's rows, from 1
	key   string
	cells map[string]string
	bad   map[string]bool
}

func (r *row) s(c string) string { return r.cells[c] }
func (r *row) has(c string) bool { return r.cells[c] != "" }
func (r *row) ok(c string) bool  { return !r.bad[c] }

func (r *row) u(c string) uint64 {
	n, _ := strconv.ParseUint(r.cells[c], 10, 64)
	return n
}

func (r *row) i(c string) int64 {
	n, _ := strconv.ParseInt(r.cells[c], 10, 64)
	return n
}

func (r *row) b(c string) bool { return r.cells[c] == "true" }

func (r *row) t(c string) time.Time {
	t, _ := time.Parse(time.RFC3339Nano, r.cells[c])
	return t
}

// table is a table read strictly: its rows in file order, one per key.
type table struct {
	spec  TableSpec
	rows  []*row
	byKey map[string]*row
	found bool // the file exists
	// tooLarge is set when the file passed its bound: it was not read to
	// its end.
	tooLarge *TooLargeError
}

// kv names a key from its values, in key column order.
func kv(t TableSpec, vals ...string) string {
	return keyOf(t, func(c string) string { return vals[slices.Index(t.Key, c)] })
}

// readTable reads the table spec of the export in dir, reporting every
// structural fault (missing file or column, an unknown column, a
// malformed line, a badly typed cell, a second row of one key) to add.
// A missing column's cells are bad in every row.
func readTable(dir, format string, spec TableSpec, add func(Mismatch)) *table {
	tr := &tableReader{t: &table{spec: spec, byKey: map[string]*row{}}, add: add, reported: map[string]bool{}}
	t := tr.t
	f, err := openRegular(filepath.Join(dir, spec.Name+"."+format))
	if errors.Is(err, os.ErrNotExist) {
		return t
	}
	if err != nil {
		t.found = true // it exists, unreadable
		tr.fault("", "", "%v", err)
		return t
	}
	defer f.Close()
	r := newBoundedReader(f)
	t.found = true
	defer func() {
		// The bound is what stopped the read, whichever reader reported it.
		if r.err != nil {
			t.tooLarge = r.err
		}
	}()
	switch format {
	case CSV:
		tr.readCSV(r)
	case JSONL:
		tr.readJSONL(r)
	}
	return t
}

// tableReader is a table being read: its rows so far, where its faults
// are reported, and the columns already reported.
type tableReader struct {
	t        *table
	add      func(Mismatch)
	reported map[string]bool // column faults are reported once per table
}

// fault reports a fault of the table.
func (tr *tableReader) fault(key, column, format string, args ...any) {
	tr.add(Mismatch{Table: tr.t.spec.Name, Key: key, Column: column, Reason: fmt.Sprintf(format, args...)})
}

// checkColumns checks the columns a header (or a JSON object, at where)
// names: each a column of the table, once, and none missing.
func (tr *tableReader) checkColumns(where string, cols []string) {
	spec := tr.t.spec
	seen := map[string]bool{}
	fault1 := func(c, format string, args ...any) {
		if !tr.reported[c] {
			tr.reported[c] = true
			tr.fault(where, c, format, args...)
		}
	}
	for _, c := range cols {
		if _, known := spec.column(c); !known {
			fault1(c, "not a column of %s", spec.Name)
		} else if seen[c] {
			fault1(c, "named twice")
		}
		seen[c] = true
	}
	for _, c := range spec.Columns {
		if !seen[c.Name] && !c.late {
			fault1(c.Name, "missing column")
		}
	}
}

// addRow adds the row at line, its cells checked; a second row of a key
// is reported and left out.
func (tr *tableReader) addRow(line string, cols, vals []string) {
	t, spec := tr.t, tr.t.spec
	r := &row{n: len(t.rows) + 1, cells: make(map[string]string, len(spec.Columns)), bad: map[string]bool{}}
	for i, c := range cols {
		if _, known := spec.column(c); known && i < len(vals) {
			if _, dup := r.cells[c]; !dup {
				r.cells[c] = vals[i]
			}
		}
	}
	r.key = keyOf(spec, r.s)
	for _, c := range spec.Columns {
		v, present := r.cells[c.Name]
		if !present && c.late && !slices.Contains(cols, c.Name) {
			continue // an export made before the column was added
		}
		if !present {
			r.bad[c.Name] = true
			continue
		}
		if err := checkCell(c, v); err != nil {
			r.bad[c.Name] = true
			tr.fault(r.key, c.Name, "%q (%s): %v", v, line, err)
		}
	}
	if prev := t.byKey[r.key]; prev != nil {
		tr.fault(r.key, "", "a second row of this key (%s; row %d has it too)", line, prev.n)
		return
	}
	t.byKey[r.key] = r
	t.rows = append(t.rows, r)
}

// readCSV reads a CSV table: a header, then a row per record.
func (tr *tableReader) readCSV(r io.Reader) {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	header, err := cr.Read()
	if err == io.EOF {
		tr.fault("", "", "no header row")
		return
	}
	if err != nil {
		tr.fault("", "", "%v", err)
		return
	}
	tr.checkColumns("", header)
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		line, _ := cr.FieldPos(0)
		where := fmt.Sprintf("line %d", line)
		if err != nil {
			tr.fault(where, "", "%v", err)
			break // a broken quote leaves the rest unreadable
		}
		if len(rec) != len(header) {
			tr.fault(where, "", "%d cells, the header names %d", len(rec), len(header))
			continue
		}
		for i, c := range rec {
			// One spelling: a cell a spreadsheet would evaluate is
			// written escaped, and nothing else is.
			if rec[i] = UnescapeCell(c); EscapeCell(rec[i]) != c {
				tr.fault(where, header[i], "%q is not written as the export writes it (%q)", c, EscapeCell(rec[i]))
			}
		}
		tr.addRow(where, header, rec)
	}
}

// readJSONL reads a JSON Lines table: a row per object, each naming its
// columns.
func (tr *tableReader) readJSONL(r io.Reader) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxRowBytes+1)
	for line := 1; sc.Scan(); line++ {
		where := fmt.Sprintf("line %d", line)
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		cols, vals, err := decodeObject(sc.Bytes())
		if err != nil {
			tr.fault(where, "", "%v", err)
			continue
		}
		// Key order carries no meaning in a JSON object.
		tr.checkColumns(where, cols)
		tr.addRow(where, cols, vals)
	}
	if err := sc.Err(); err != nil {
		tr.fault("", "", "%v", err)
	}
}

// checkCell checks that v is a value of c written the one way the export
// writes it.
func checkCell(c Column, v string) error {
	if v == "" {
		if c.opt {
			return nil
		}
		return errors.New("empty")
	}
	canon := func(ok bool, want string) error {
		if !ok {
			return fmt.Errorf("not %s", want)
		}
		return nil
	}
	switch c.typ {
	case tUint:
		n, err := strconv.ParseUint(v, 10, 64)
		return canon(err == nil && strconv.FormatUint(n, 10) == v, "an unsigned integer")
	case tInt:
		n, err := strconv.ParseInt(v, 10, 64)
		return canon(err == nil && strconv.FormatInt(n, 10) == v, "an integer")
	case tFloat:
		f, err := strconv.ParseFloat(v, 64)
		return canon(err == nil && flt(f) == v && !math.IsInf(f, 0), "a number")
	case tBool:
		return canon(v == "true" || v == "false", "true or false")
	case tTime:
		t, err := time.Parse(time.RFC3339Nano, v)
		return canon(err == nil && tm(t) == v && strings.HasSuffix(v, "Z"), "an RFC 3339 UTC time")
	case tAddr:
		return canon(isAddress(v), "a checksummed 0x address")
	case tAgent:
		return canon(isAddress(v) || v == forecast.RandomAgent || v == forecast.MarketAgent, "a checksummed 0x address or a baseline")
	case tHash:
		return canon(isHex(v, "0x", 32), "0x and 64 lowercase hex digits")
	case tSig:
		return canon(isHex(v, "0x", forecast.SignatureLen), "0x and 130 lowercase hex digits")
	case tHex32:
		return canon(isHex(v, "", 32), "64 lowercase hex digits")
	case tPreds:
		_, err := parsePreds(v)
		return err
	case tText:
		return canon(utf8.ValidString(v) && !strings.ContainsRune(v, 0), "UTF-8 text")
	case tEnum:
		return canon(slices.Contains(c.enum, v), "one of "+strings.Join(c.enum, ", "))
	}
	return fmt.Errorf("export: column %s has no type", c.Name)
}

func isAddress(v string) bool {
	return len(v) == 42 && common.IsHexAddress(v) && common.HexToAddress(v).Hex() == v
}

func isHex(v, prefix string, n int) bool {
	h, ok := strings.CutPrefix(v, prefix)
	if !ok || len(h) != 2*n || strings.ToLower(h) != h {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil
}

// parsePreds reads predictions as written: basis points separated by
// single spaces.
func parsePreds(s string) ([]uint16, error) {
	f := strings.Split(s, " ")
	out := make([]uint16, len(f))
	for i, v := range f {
		n, err := strconv.ParseUint(v, 10, 16)
		if err != nil || strconv.FormatUint(n, 10) != v || n > forecast.MaxBps {
			return nil, fmt.Errorf("prediction %q is not basis points (0 … %d)", v, forecast.MaxBps)
		}
		out[i] = uint16(n)
	}
	return out, nil
}
