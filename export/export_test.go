package export_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/csv"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/redact"
)

func exportTo(t *testing.T, f *fixture, format string) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := export.Write(context.Background(), f.source(), dir, export.Options{Format: format, Checkpoint: mustCheckpoint(t, f)}); err != nil {
		t.Fatal(err)
	}
	return dir
}

// mustCheckpoint publishes a checkpoint of the fixture's log as it stands
// and returns its note.
func mustCheckpoint(t *testing.T, f *fixture) []byte {
	t.Helper()
	n, err := f.checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func verifyOK(t *testing.T, dir string, pub ed25519.PublicKey) *export.Report {
	t.Helper()
	rep, err := export.Verify(dir, export.VerifyOptions{LogKey: pub})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// verifyFails checks that verification fails with its first difference
// in table at column.
func verifyFails(t *testing.T, dir string, pub ed25519.PublicKey, table, column string) {
	t.Helper()
	_, err := export.Verify(dir, export.VerifyOptions{LogKey: pub})
	var m *export.Mismatch
	if !errors.As(err, &m) || m.Table != table || m.Column != column {
		t.Fatalf("want a difference in %s %s, got %v", table, column, err)
	}
	t.Logf("refused: %v", err)
}

// Untouched exports verify in both formats, with every count non-zero; so
// do the earlier one and the one with a sealed commit.
func TestExportVerifies(t *testing.T) {
	f := played(t)
	pub := f.res.App.TLog.PublicKey()
	for format, dir := range f.base {
		rep := verifyOK(t, dir, pub)
		if rep.Scores == 0 || rep.Signatures == 0 || rep.CommitHashes == 0 || rep.InclusionProofs == 0 || rep.LeaderboardRows == 0 ||
			rep.Benchmarks == 0 || rep.Checkpoint == nil || rep.LogSize != uint64(rep.LogEntries) || rep.SealedEntries != 0 || rep.Cells == 0 {
			t.Fatalf("%s: verified too little: %+v", format, rep)
		}
		t.Logf("%s: %+v", format, *rep)
	}
	verifyOK(t, f.early, pub)
	if rep := verifyOK(t, f.sealed, pub); rep.SealedEntries != 1 {
		t.Fatalf("sealed export: %+v", rep)
	}
}

// A dishonest operator who edits the database before exporting is caught:
// the log holds what was accepted. What the export does not carry (the
// raw benchmark price beside its logged basis points) no longer reaches
// it.
func TestTamperedDatabase(t *testing.T) {
	f := played(t)
	pub := f.res.App.TLog.PublicKey()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(f.res.Dir, "arena.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const firstScored = `(SELECT MIN(round_id) FROM round_markets WHERE benchmark_bps IS NOT NULL)`
	cases := []struct {
		name, do, undo, table, column string
	}{
		{"score", `UPDATE round_scores SET brier_bps2 = brier_bps2 + 1 WHERE round_id = 1 AND agent = 'random'`,
			`UPDATE round_scores SET brier_bps2 = brier_bps2 - 1 WHERE round_id = 1 AND agent = 'random'`, "scores", "brier_bps2"},
		{"prediction", `UPDATE submissions SET predictions = '[1,1,1,1,1,1,1]' WHERE round_id = 1 AND rowid = (SELECT MIN(rowid) FROM submissions WHERE round_id = 1)`,
			"", "submissions", "predictions"},
		{"benchmark bps", `UPDATE round_markets SET benchmark_bps = benchmark_bps + 1 WHERE round_id = ` + firstScored + ` AND idx = 0`,
			`UPDATE round_markets SET benchmark_bps = benchmark_bps - 1 WHERE round_id = ` + firstScored + ` AND idx = 0`, "round_markets", "benchmark_bps"},
		{"benchmark price", `UPDATE round_markets SET benchmark = benchmark + 0.1 WHERE round_id = 1 AND idx = 0`,
			`UPDATE round_markets SET benchmark = benchmark - 0.1 WHERE round_id = 1 AND idx = 0`, "", ""},
		{"invalidated", `UPDATE rounds SET invalidated = TRUE WHERE id = 1`, `UPDATE rounds SET invalidated = FALSE WHERE id = 1`, "rounds", "invalidated"},
		{"committed late", `UPDATE submissions SET committed_at = committed_at + 3600000000 WHERE round_id = 2 AND rowid = (SELECT MIN(rowid) FROM submissions WHERE round_id = 2)`,
			`UPDATE submissions SET committed_at = committed_at - 3600000000 WHERE round_id = 2 AND rowid = (SELECT MIN(rowid) FROM submissions WHERE round_id = 2)`,
			"submissions", "committed_at"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.name == "prediction" {
				var was string
				if err := db.QueryRow(`SELECT predictions FROM submissions WHERE round_id = 1 AND rowid = (SELECT MIN(rowid) FROM submissions WHERE round_id = 1)`).Scan(&was); err != nil {
					t.Fatal(err)
				}
				c.undo = `UPDATE submissions SET predictions = '` + was + `' WHERE round_id = 1 AND rowid = (SELECT MIN(rowid) FROM submissions WHERE round_id = 1)`
			}
			before := exportTo(t, f, export.JSONL)
			if r, err := db.Exec(c.do); err != nil {
				t.Fatal(err)
			} else if n, _ := r.RowsAffected(); n != 1 {
				t.Fatalf("%d rows changed", n)
			}
			defer func() {
				if _, err := db.Exec(c.undo); err != nil {
					t.Fatal(err)
				}
			}()
			dir := exportTo(t, f, export.JSONL)
			if c.table != "" {
				verifyFails(t, dir, pub, c.table, c.column)
				return
			}
			verifyOK(t, dir, pub)
			for _, sp := range export.Specs {
				a, _ := os.ReadFile(filepath.Join(before, sp.Name+".jsonl"))
				b, _ := os.ReadFile(filepath.Join(dir, sp.Name+".jsonl"))
				if !bytes.Equal(a, b) {
					t.Errorf("%s changed", sp.Name)
				}
			}
		})
	}
	// Restored, the export verifies again.
	verifyOK(t, exportTo(t, f, export.JSONL), pub)
}

// CSV cells that a spreadsheet would evaluate are escaped, and read back intact.
func TestCSVFormulaEscape(t *testing.T) {
	tb := export.Table{Name: "x", Columns: []string{"a", "b"}, Rows: [][]string{{"=HYPERLINK(\"http://evil\")", "-12"}, {"+1", "@SUM(A1)"}, {"'=quoted", "plain"}}}
	var buf bytes.Buffer
	if err := export.WriteTable(&buf, export.CSV, tb); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n")[1:] {
		if c := strings.TrimPrefix(line, `"`); strings.ContainsRune("=+-@", rune(c[0])) {
			t.Fatalf("unescaped formula cell in %q", line)
		}
	}
	back, err := export.ReadTable(&buf, "x", export.CSV)
	if err != nil {
		t.Fatal(err)
	}
	for i := range tb.Rows {
		for j := range tb.Rows[i] {
			if back.Rows[i][j] != tb.Rows[i][j] {
				t.Fatalf("cell %d,%d: %q read back as %q", i, j, tb.Rows[i][j], back.Rows[i][j])
			}
		}
	}
}

func FuzzReadTable(f *testing.F) {
	f.Add([]byte("a,b\n'=1,-2\n"), true)
	f.Add([]byte(`{"a":"1","b":"x"}`+"\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, csv bool) {
		format := export.JSONL
		if csv {
			format = export.CSV
		}
		tb, err := export.ReadTable(bytes.NewReader(data), "f", format)
		if err != nil {
			return
		}
		var out bytes.Buffer
		if err := export.WriteTable(&out, format, tb); err != nil {
			t.Fatal(err)
		}
	})
}

// With prompts, an export adds the triggered rounds' traces, secrets
// redacted; without, it has no traces file; either way it verifies.
func TestExportWithPrompts(t *testing.T) {
	f := played(t)
	res := f.res
	ctx := context.Background()
	secret := "sk-ant-api03-" + strings.Repeat("x", 40)
	tr := &arena.ForecastTrace{RoundID: 1, Agent: "0x00000000000000000000000000000000000000AA", AgentID: "llm-a", Submitted: true, Calls: 2,
		InputTokens: 1200, OutputTokens: 80, Cost: 1500, Trace: []byte(`{"prompt":"Will it rain? key ` + secret + `","answer":"0.7"}`)}
	if err := res.DB.SaveTrace(ctx, tr); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	counts, err := export.Write(ctx, export.Source{Forecast: res.App.Rounds, Log: res.App.TLog, Traces: res.DB}, dir, export.Options{Format: export.JSONL, WithPrompts: true, Redact: redact.String, Checkpoint: mustCheckpoint(t, f)})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "traces.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if counts["traces"] != 1 || !strings.Contains(string(b), "Will it rain?") || strings.Contains(string(b), secret) || !strings.Contains(string(b), `"cost_micros":"1500"`) {
		t.Fatalf("traces: %d rows: %s", counts["traces"], b)
	}
	verifyOK(t, dir, res.App.TLog.PublicKey())
	if _, err := os.Stat(filepath.Join(exportTo(t, f, export.JSONL), "traces.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("a default export has a traces file (%v)", err)
	}
	if _, err := export.Write(ctx, export.Source{Forecast: res.App.Rounds, Log: res.App.TLog}, t.TempDir(), export.Options{WithPrompts: true, Checkpoint: mustCheckpoint(t, f)}); err == nil {
		t.Fatal("with prompts and no trace store: no error")
	}
}

// steps records a progress report's calls.
type steps [][2]int

func (s *steps) add(done, total int) { *s = append(*s, [2]int{done, total}) }

// counted checks a report that knew its total from the first step and
// counted every step to it.
func (s steps) counted(t *testing.T, what string, total int) {
	t.Helper()
	if len(s) != total {
		t.Fatalf("%s: %d steps reported, want %d: %v", what, len(s), total, s)
	}
	for i, st := range s {
		if st != [2]int{i + 1, total} {
			t.Fatalf("%s: step %d reported as %v, want [%d %d]", what, i, st, i+1, total)
		}
	}
}

// Export and verification report their progress over a total known at
// the first step: the tables written; the tables read, then the checks.
func TestExportProgress(t *testing.T) {
	f := played(t)
	var w, v steps
	dir := t.TempDir()
	if _, err := export.Write(context.Background(), f.source(), dir, export.Options{Format: export.JSONL, Progress: w.add, Checkpoint: mustCheckpoint(t, f)}); err != nil {
		t.Fatal(err)
	}
	w.counted(t, "export", len(export.Specs))
	if _, err := export.Verify(dir, export.VerifyOptions{LogKey: f.res.App.TLog.PublicKey(), Progress: v.add}); err != nil {
		t.Fatal(err)
	}
	if len(v) <= len(export.Contract) {
		t.Fatalf("verify reported %d steps, fewer than its %d tables and its checks", len(v), len(export.Contract))
	}
	v.counted(t, "verify", v[0][1])
}

// A CSV export reads with a strict numeric reader: every cell of the
// numeric columns is a plain number, negative ones included, with no
// apostrophe in front (only text cells are guarded against formulas).
func TestCSVNumbersStayNumbers(t *testing.T) {
	f := played(t)
	b, err := os.ReadFile(filepath.Join(f.base[export.CSV], "scores.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(bytes.NewReader(b)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	negative := 0
	for _, col := range []string{"brier", "alpha", "brier_bps2", "alpha_bps2"} {
		i := slices.Index(recs[0], col)
		if i < 0 {
			t.Fatalf("scores.csv has no column %s", col)
		}
		for n, r := range recs[1:] {
			if r[i] == "" {
				continue
			}
			v, err := strconv.ParseFloat(r[i], 64)
			if err != nil {
				t.Fatalf("scores.csv line %d, %s: %v", n+2, col, err)
			}
			if v < 0 {
				negative++
			}
		}
	}
	if negative == 0 {
		t.Fatal("no negative number in scores.csv: the check proves nothing")
	}
	for _, c := range []struct{ in, out string }{
		{"-0.0322", "-0.0322"}, {"-1", "-1"}, {"-1e-05", "-1e-05"}, {"2.5e+10", "2.5e+10"},
		{"-1+2", "'-1+2"}, {"=1+2", "'=1+2"}, {"+1", "'+1"}, {"-", "'-"}, {"@SUM(A1)", "'@SUM(A1)"}, {"'-1", "''-1"}, {"-0x10", "'-0x10"},
		{"-Inf", "'-Inf"}, {"- 1", "'- 1"}, {"-1\n", "'-1\n"},
	} {
		if got := export.EscapeCell(c.in); got != c.out || export.UnescapeCell(got) != c.in {
			t.Errorf("EscapeCell(%q) = %q (back: %q), want %q", c.in, got, export.UnescapeCell(got), c.out)
		}
	}
}
