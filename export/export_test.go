package export_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/tlog"
)

var (
	demoOnce sync.Once
	demoRes  *demo.Result
	demoErr  error
)

// played runs one small demo (real store, forecast service, log) shared by
// the tests that only read it.
func played(t *testing.T) *demo.Result {
	t.Helper()
	demoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "arena-export-test-")
		if err != nil {
			demoErr = err
			return
		}
		demoRes, demoErr = demo.Run(context.Background(), demo.Config{Seed: 5, Rounds: 4, Dir: dir,
			Server: func(p demo.Parts) http.Handler {
				return web.Build(web.Parts{Markets: p.DB, DB: p.DB, Logger: p.Logger, Forecast: p.Forecast, Trading: p.Trading}).Handler()
			}})
	})
	if demoErr != nil {
		t.Fatal(demoErr)
	}
	return demoRes
}

func TestMain(m *testing.M) {
	code := m.Run()
	if demoRes != nil {
		demoRes.Close()
		os.RemoveAll(demoRes.Dir)
	}
	os.Exit(code)
}

func exportTo(t *testing.T, res *demo.Result, format string) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := export.Write(context.Background(), export.Source{Forecast: res.Forecast, Log: res.Log}, dir, export.Options{Format: format}); err != nil {
		t.Fatal(err)
	}
	return dir
}

func verifyOK(t *testing.T, dir string, pub ed25519.PublicKey) *export.Report {
	t.Helper()
	rep, err := export.Verify(dir, export.VerifyOptions{LogKey: pub})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// verifyFails checks that verification fails naming an item that starts with item.
func verifyFails(t *testing.T, dir string, pub ed25519.PublicKey, item string) {
	t.Helper()
	_, err := export.Verify(dir, export.VerifyOptions{LogKey: pub})
	var m *export.Mismatch
	if !errors.As(err, &m) {
		t.Fatalf("want a mismatch on %q, got %v", item, err)
	}
	if !strings.HasPrefix(m.Item, item) {
		t.Fatalf("want a mismatch on %q, got %v", item, m)
	}
	t.Logf("refused: %v", m)
}

// rewrite changes the first row of a table for which change returns true.
func rewrite(t *testing.T, dir, table, format string, change func(get func(string) string, set func(string, string)) bool) {
	t.Helper()
	path := filepath.Join(dir, table+"."+format)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := export.ReadTable(bytes.NewReader(b), table, format)
	if err != nil {
		t.Fatal(err)
	}
	done := false
	for _, row := range tb.Rows {
		idx := map[string]int{}
		for i, c := range tb.Columns {
			idx[c] = i
		}
		get := func(c string) string { return row[idx[c]] }
		set := func(c, v string) { row[idx[c]] = v }
		if change(get, set) {
			done = true
			break
		}
	}
	if !done {
		t.Fatalf("no row of %s to change", table)
	}
	var out bytes.Buffer
	if err := export.WriteTable(&out, format, tb); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An untouched export verifies in both formats, with every count non-zero.
func TestExportVerifies(t *testing.T) {
	res := played(t)
	for _, format := range []string{export.JSONL, export.CSV} {
		rep := verifyOK(t, exportTo(t, res, format), res.Log.PublicKey())
		if rep.Scores == 0 || rep.Signatures == 0 || rep.CommitHashes == 0 || rep.InclusionProofs == 0 || rep.LeaderboardRows == 0 || rep.Benchmarks == 0 {
			t.Fatalf("%s: verified too little: %+v", format, rep)
		}
		t.Logf("%s: %+v", format, *rep)
	}
}

// Changing one score, prediction, benchmark or log leaf in an export, or
// presenting a head signed by another key, fails verification naming the item.
func TestTamperedExport(t *testing.T) {
	res := played(t)
	pub := res.Log.PublicKey()
	cases := []struct {
		name, table, item string
		change            func(get func(string) string, set func(string, string)) bool
	}{
		{"score", "scores", "score round", func(get func(string) string, set func(string, string)) bool {
			set("brier_bps2", strings.TrimSuffix(get("brier_bps2"), "0")+"1")
			return true
		}},
		{"prediction", "submissions", "submission round", func(get func(string) string, set func(string, string)) bool {
			if get("predictions") == "" {
				return false
			}
			p := strings.Fields(get("predictions"))
			p[0] = map[bool]string{true: "1", false: "0"}[p[0] == "0"]
			set("predictions", strings.Join(p, " "))
			return true
		}},
		{"benchmark", "round_markets", "benchmark of round", func(get func(string) string, set func(string, string)) bool {
			if get("benchmark_bps") == "" {
				return false
			}
			set("benchmark_bps", map[bool]string{true: "5001", false: "5000"}[get("benchmark_bps") == "5000"])
			return true
		}},
		{"log leaf", "log_entries", "log entry", func(get func(string) string, set func(string, string)) bool {
			if get("kind") != tlog.KindScore {
				return false
			}
			set("leaf", strings.Replace(get("leaf"), `"forfeit":false`, `"forfeit":true`, 1))
			return true
		}},
		{"log leaf with its hash", "log_entries", "tree head", func(get func(string) string, set func(string, string)) bool {
			if get("kind") != tlog.KindReveal {
				return false
			}
			leaf := strings.Replace(get("leaf"), `"predictions":[`, `"predictions":[1`, 1)
			set("leaf", leaf)
			set("leaf_hash", hex.EncodeToString(tlog.LeafHash([]byte(leaf))))
			return true
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := exportTo(t, res, export.JSONL)
			rewrite(t, dir, c.table, export.JSONL, c.change)
			verifyFails(t, dir, pub, c.item)
		})
	}
	t.Run("head from another key", func(t *testing.T) {
		dir := exportTo(t, res, export.CSV)
		_, other, _ := ed25519.GenerateKey(nil)
		path := filepath.Join(dir, "meta.json")
		b, _ := os.ReadFile(path)
		var meta struct {
			Head tlog.Head `json:"head"`
		}
		if err := jsonUnmarshal(b, &meta); err != nil {
			t.Fatal(err)
		}
		root, _ := hex.DecodeString(meta.Head.RootHash)
		sig := hex.EncodeToString(ed25519.Sign(other, tlog.Message(meta.Head.TreeSize, root, meta.Head.Timestamp)))
		otherPub := hex.EncodeToString(other.Public().(ed25519.PublicKey))
		b = bytes.Replace(b, []byte(meta.Head.Signature), []byte(sig), -1)
		b = bytes.Replace(b, []byte(meta.Head.PublicKey), []byte(otherPub), -1)
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		verifyFails(t, dir, pub, "tree head")
	})
}

// A dishonest operator who edits the database before exporting is caught:
// the log holds what was accepted.
func TestTamperedDatabase(t *testing.T) {
	res := played(t)
	pub := res.Log.PublicKey()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(res.Dir, "arena.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cases := []struct {
		name, do, undo, item string
	}{
		{"score", `UPDATE round_scores SET brier_bps2 = brier_bps2 + 1 WHERE round_id = (SELECT MIN(round_id) FROM round_scores) AND agent = 'random'`,
			`UPDATE round_scores SET brier_bps2 = brier_bps2 - 1 WHERE round_id = (SELECT MIN(round_id) FROM round_scores) AND agent = 'random'`, "score round"},
		{"prediction", `UPDATE submissions SET predictions = '[1,1,1,1,1,1,1]' WHERE rowid = (SELECT MIN(rowid) FROM submissions WHERE predictions IS NOT NULL)`,
			"", "submission round"},
		{"benchmark", `UPDATE round_markets SET benchmark_bps = benchmark_bps + 1 WHERE round_id = (SELECT MIN(round_id) FROM round_markets WHERE benchmark_bps IS NOT NULL) AND idx = 0`,
			`UPDATE round_markets SET benchmark_bps = benchmark_bps - 1 WHERE round_id = (SELECT MIN(round_id) FROM round_markets WHERE benchmark_bps IS NOT NULL) AND idx = 0`, "benchmark of round"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var before string
			if c.name == "prediction" {
				if err := db.QueryRow(`SELECT predictions FROM submissions WHERE rowid = (SELECT MIN(rowid) FROM submissions WHERE predictions IS NOT NULL)`).Scan(&before); err != nil {
					t.Fatal(err)
				}
				c.undo = `UPDATE submissions SET predictions = '` + before + `' WHERE rowid = (SELECT MIN(rowid) FROM submissions WHERE predictions IS NOT NULL)`
			}
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
			verifyFails(t, exportTo(t, res, export.JSONL), pub, c.item)
		})
	}
	// Restored, the export verifies again.
	verifyOK(t, exportTo(t, res, export.JSONL), pub)
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

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }

// The verification guide's table of exported files lists exactly the
// exported tables and their columns, in order.
func TestDocsListExportedTables(t *testing.T) {
	b, err := os.ReadFile("../docs/verification.md")
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "### Exported files")
	if !ok {
		t.Fatal("docs/verification.md has no 'Exported files' section")
	}
	var got []export.Spec
	for _, line := range strings.Split(sec, "\n") {
		if !strings.HasPrefix(line, "| `") {
			if len(got) > 0 {
				break
			}
			continue
		}
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		sp := export.Spec{Name: strings.Trim(cells[0], "`")}
		for _, c := range strings.Split(cells[1], ", ") {
			sp.Columns = append(sp.Columns, strings.Trim(c, "`"))
		}
		got = append(got, sp)
	}
	if want := append(slices.Clip(export.Specs), export.TracesSpec); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("docs/verification.md lists\n%v\nthe export writes\n%v", got, want)
	}
}

// With prompts, an export adds the triggered rounds' traces, secrets
// redacted; without, it has no traces file; either way it verifies.
func TestExportWithPrompts(t *testing.T) {
	res := played(t)
	ctx := context.Background()
	secret := "sk-ant-api03-" + strings.Repeat("x", 40)
	tr := &arena.ForecastTrace{RoundID: 1, Agent: "0x00000000000000000000000000000000000000aA", AgentID: "llm-a", Submitted: true, Calls: 2,
		InputTokens: 1200, OutputTokens: 80, Cost: 1500, Trace: []byte(`{"prompt":"Will it rain? key ` + secret + `","answer":"0.7"}`)}
	if err := res.DB.SaveTrace(ctx, tr); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	counts, err := export.Write(ctx, export.Source{Forecast: res.Forecast, Log: res.Log, Traces: res.DB}, dir, export.Options{Format: export.JSONL, WithPrompts: true, Redact: redact.String})
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
	verifyOK(t, dir, res.Log.PublicKey())
	if _, err := os.Stat(filepath.Join(exportTo(t, res, export.JSONL), "traces.jsonl")); !os.IsNotExist(err) {
		t.Fatalf("a default export has a traces file (%v)", err)
	}
	if _, err := export.Write(ctx, export.Source{Forecast: res.Forecast, Log: res.Log}, t.TempDir(), export.Options{WithPrompts: true}); err == nil {
		t.Fatal("with prompts and no trace store: no error")
	}
}
