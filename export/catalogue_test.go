package export_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/testscale"
	"github.com/forecast-arena/arena/tlog"
)

var update = flag.Bool("update", false, "rewrite docs/verification.md's generated sections (the contract and the tamper catalogue)")

// edited is a copy of an export being tampered with: its tables and
// meta.json in memory, written back before verification.
type edited struct {
	t      *testing.T
	f      *fixture
	dir    string
	format string
	tables map[string]*export.Table
	meta   *export.Meta
	// known, when set, is passed to Verify as a checkpoint seen before.
	known []byte
}

func (e *edited) table(name string) *export.Table {
	if tb := e.tables[name]; tb != nil {
		return tb
	}
	b, err := os.ReadFile(filepath.Join(e.dir, name+"."+e.format))
	if err != nil {
		e.t.Fatal(err)
	}
	tb, err := export.ReadTable(bytes.NewReader(b), name, e.format)
	if err != nil {
		e.t.Fatal(err)
	}
	if tb.Columns == nil {
		tb.Columns = specOf(name).Names()
	}
	e.tables[name] = &tb
	return &tb
}

func (e *edited) idx(table, column string) int {
	i := slices.Index(e.table(table).Columns, column)
	if i < 0 {
		e.t.Fatalf("%s has no column %s", table, column)
	}
	return i
}

func (e *edited) get(table string, row int, column string) string {
	return e.table(table).Rows[row][e.idx(table, column)]
}

func (e *edited) set(table string, row int, column, v string) {
	e.table(table).Rows[row][e.idx(table, column)] = v
}

// find returns the first row where ok holds.
func (e *edited) find(table string, ok func(get func(string) string) bool) int {
	for i := range e.table(table).Rows {
		if ok(func(c string) string { return e.get(table, i, c) }) {
			return i
		}
	}
	e.t.Fatalf("no row of %s fits", table)
	return -1
}

func (e *edited) where(table string, ok func(get func(string) string) bool) func(string) string {
	i := e.find(table, ok)
	return func(c string) string { return e.get(table, i, c) }
}

// key names a row as Verify does: its key columns, "k=v" each.
func (e *edited) key(table string, row int) string {
	var parts []string
	for _, k := range specOf(table).Key {
		parts = append(parts, k+"="+e.get(table, row, k))
	}
	return strings.Join(parts, " ")
}

// at is the difference Verify must name first: a cell of a row.
func (e *edited) at(table string, row int, column string) want {
	return want{table, e.key(table, row), column}
}

func (e *edited) insert(table string, at int, r []string) {
	tb := e.table(table)
	tb.Rows = slices.Insert(tb.Rows, at, r)
}

func (e *edited) remove(table string, row int) {
	tb := e.table(table)
	tb.Rows = slices.Delete(tb.Rows, row, row+1)
}

func (e *edited) copyRow(table string, row int) []string {
	return slices.Clone(e.table(table).Rows[row])
}

func (e *edited) editMeta(change func(m *export.Meta)) {
	if e.meta == nil {
		b, err := os.ReadFile(filepath.Join(e.dir, "meta.json"))
		if err != nil {
			e.t.Fatal(err)
		}
		e.meta = new(export.Meta)
		if err := json.Unmarshal(b, e.meta); err != nil {
			e.t.Fatal(err)
		}
	}
	change(e.meta)
}

// raw changes a file's bytes (after the edits so far are written).
func (e *edited) raw(name string, change func([]byte) []byte) {
	e.flush()
	path := filepath.Join(e.dir, name)
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	e.writeFile(name, change(b))
}

// exportDigests hashes every file of the export directories.
func exportDigests(t *testing.T, dirs ...string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, dir := range dirs {
		es, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			out[filepath.Join(dir, e.Name())] = sha256.Sum256(b)
		}
	}
	return out
}

// writeFile replaces a file of the edited copy: removed first, since the
// copy's files are hard links to the fixture's.
func (e *edited) writeFile(name string, b []byte) {
	path := filepath.Join(e.dir, name)
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		e.t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *edited) file(table string) string { return table + "." + e.format }

// rehash sets every unsealed entry's leaf_hash to its leaf's hash and
// returns the leaf hashes.
func (e *edited) rehash() [][]byte {
	lt := e.table("log_entries")
	var hashes [][]byte
	for i := range lt.Rows {
		if e.get("log_entries", i, "sealed") != "true" {
			e.set("log_entries", i, "leaf_hash", hex.EncodeToString(tlog.LeafHash([]byte(e.get("log_entries", i, "leaf")))))
		}
		h, _ := hex.DecodeString(e.get("log_entries", i, "leaf_hash"))
		hashes = append(hashes, h)
	}
	return hashes
}

// resign is what an operator holding the log key can do: rehash every
// leaf, and sign a new checkpoint over them (which no witness cosigned).
func (e *edited) resign() {
	hashes := e.rehash()
	tree, err := tlog.NewTree(hashes)
	if err != nil {
		e.t.Fatal(err)
	}
	c := e.exported()
	c.Size = uint64(len(hashes))
	if c.Hash, err = tree.Root(c.Size); err != nil {
		e.t.Fatal(err)
	}
	n := e.signCheckpoint(c)
	e.checkpoint(func([]byte) []byte { return n })
}

// leaf rewrites a log entry's leaf, replacing the first match of the
// regular expression re (its first group) with v.
func (e *edited) leaf(row int, re, v string) {
	l := e.get("log_entries", row, "leaf")
	m := regexp.MustCompile(re).FindStringSubmatchIndex(l)
	if len(m) < 4 {
		e.t.Fatalf("leaf %s has no %s", l, re)
	}
	e.set("log_entries", row, "leaf", l[:m[2]]+v+l[m[3]:])
}

func (e *edited) flush() {
	for name, tb := range e.tables {
		var b bytes.Buffer
		if err := export.WriteTable(&b, e.format, *tb); err != nil {
			e.t.Fatal(err)
		}
		e.writeFile(e.file(name), b.Bytes())
	}
	e.tables = map[string]*export.Table{}
	if e.meta != nil {
		b, _ := json.MarshalIndent(e.meta, "", "  ")
		e.writeFile("meta.json", b)
		e.meta = nil
	}
}

// want is the first difference Verify must report; the zero want: the
// export must verify.
type want struct{ table, key, column string }

func (w want) String() string {
	if w.table == "" {
		return "verifies"
	}
	s := "`" + w.table + "`"
	if w.column != "" {
		s += " `" + w.column + "`"
	}
	return s
}

// tamper is one case of the catalogue: an edit of an export and the
// first difference it must produce.
type tamper struct {
	name    string
	formats []string // default JSON Lines
	from    string   // fixture export: "" the base one, "sealed", "early", "checkpoint"
	// trustExport verifies without --log-key: the export's own key is
	// trusted.
	trustExport bool
	edit        func(e *edited) want
}

func specOf(name string) export.TableSpec {
	for _, t := range export.Contract {
		if t.Name == name {
			return t
		}
	}
	panic(name)
}

func isAgent(get func(string) string) bool { return strings.HasPrefix(get("agent"), "0x") }

// TestTamperCatalogue edits a small demo's export in every table and
// column (changed, emptied, badly typed, duplicated, deleted, reordered,
// swapped between agents, out of range, truncated, signed by another key,
// with a rolled-back or forked head) and checks that Verify fails on each,
// naming the table, row and column it changed first; and that the edits
// that must not matter (whitespace, the order of rows and keys, what the
// contract lists as claimed display data) still verify. docs/verification.md
// lists every case (go test -run TestTamperCatalogue -update rewrites it).
func TestTamperCatalogue(t *testing.T) {
	f := played(t)
	cases := catalogue()
	wants := make([]want, len(cases))
	names := map[string]bool{}
	for _, c := range cases {
		if names[c.name] {
			t.Fatalf("two cases named %q", c.name)
		}
		names[c.name] = true
	}
	bases := []string{f.base[export.JSONL], f.base[export.CSV], f.sealed, f.early, f.checkpointed}
	before := exportDigests(t, bases...)
	t.Run("cases", func(t *testing.T) {
		for i, c := range cases {
			formats := c.formats
			if formats == nil {
				formats = []string{export.JSONL}
			}
			for j, format := range formats {
				name := c.name
				if len(formats) > 1 {
					name += " (" + format + ")"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					from := map[string]string{"": f.base[format], "sealed": f.sealed, "early": f.early, "checkpoint": f.checkpointed}[c.from]
					e := &edited{t: t, f: f, dir: linkExport(t, from), format: format, tables: map[string]*export.Table{}}
					w := c.edit(e)
					e.flush()
					if j == 0 {
						wants[i] = w
					}
					// Every edit names its difference (the table in the docs);
					// at full size every edited export is verified, otherwise
					// every fifth.
					if !testscale.Full() && i%5 != 0 {
						return
					}
					var opt export.VerifyOptions
					if !c.trustExport {
						opt.LogKey = f.res.App.TLog.PublicKey()
					}
					if e.known != nil {
						opt.KnownCheckpoints = [][]byte{e.known}
					}
					_, err := export.Verify(e.dir, opt)
					if w.table == "" {
						if err != nil {
							t.Fatalf("want it to verify: %v", err)
						}
						return
					}
					var fail *export.Failed
					if !errors.As(err, &fail) {
						t.Fatalf("want a difference at %s [%s] %s, got %v", w.table, w.key, w.column, err)
					}
					if m := fail.Mismatches[0]; m.Table != w.table || m.Key != w.key || m.Column != w.column || m.Reason == "" {
						t.Fatalf("want the first difference at %s [%s] %s, got %v", w.table, w.key, w.column, err)
					}
					t.Logf("%v", err)
				})
			}
		}
	})
	if after := exportDigests(t, bases...); !maps.Equal(before, after) {
		t.Fatal("an edited copy wrote through its hard links into the fixture's exports")
	}
	failing := 0
	for _, w := range wants {
		if w.table != "" {
			failing++
		}
	}
	t.Logf("%d cases: %d must fail, %d must verify", len(cases), failing, len(cases)-failing)
	if failing < 150 {
		t.Errorf("the catalogue has %d failing edits, want at least 150", failing)
	}
	if t.Failed() {
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d edits of which %d must fail and %d must verify.\n\n", len(cases), failing, len(cases)-failing)
	b.WriteString("| # | Edit | Formats | First difference named |\n|---|---|---|---|\n")
	for i, c := range cases {
		formats := "jsonl"
		if c.formats != nil {
			formats = strings.Join(c.formats, ", ")
		}
		fmt.Fprintf(&b, "| %d | %s | %s | %s |\n", i+1, c.name, formats, wants[i])
	}
	checkDocSection(t, "catalogue", b.String())
}
