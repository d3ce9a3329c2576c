package relay_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/relay"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog/tlogtest"
)

// verifyExport compares the export in dir with the chain, as arena verify
// --export DIR --chain does after the export's own checks.
func (e *env) verifyExport(dir string) *relay.VerifyReport {
	e.t.Helper()
	rec, err := export.Load(dir)
	if err != nil {
		e.t.Fatal(err)
	}
	rep, err := relay.Verify(context.Background(), rec, e.client, e.addrs.PredictionArena,
		relay.VerifyOptions{Name: "the export", SealedUntilTrigger: true, Also: rec.RoundIDs()})
	if err != nil {
		e.t.Fatal(err)
	}
	return rep
}

// editCell rewrites one cell of an exported CSV table: the row whose
// column match equals value gets column col set by f.
func editCell(t *testing.T, dir, table, match, value, col string, f func(string) string) {
	t.Helper()
	path := filepath.Join(dir, table+".csv")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := export.ReadTable(strings.NewReader(string(b)), table, export.CSV)
	if err != nil {
		t.Fatal(err)
	}
	mi, ci := -1, -1
	for i, c := range tb.Columns {
		if c == match {
			mi = i
		}
		if c == col {
			ci = i
		}
	}
	if mi < 0 || (f != nil && ci < 0) {
		t.Fatalf("table %s has no column %s or %s", table, match, col)
	}
	var rows [][]string
	edited := 0
	for _, r := range tb.Rows {
		if r[mi] == value {
			if f == nil {
				continue // drop the row
			}
			r[ci] = f(r[ci])
			edited++
		}
		rows = append(rows, r)
	}
	if f != nil && edited == 0 {
		t.Fatalf("no %s row with %s = %s", table, match, value)
	}
	var sb strings.Builder
	if err := export.WriteTable(&sb, export.CSV, export.Table{Name: table, Columns: tb.Columns, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// An export of a mirrored round agrees with the chain item by item; an
// export changed after mirroring (as an operator rewriting its history
// and re-signing its log would) differs from the chain, and the first
// difference names the changed item.
func TestVerifyExportAgainstChain(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	e := newEnv(t, db)
	ctx := context.Background()
	_, agents := e.scenario(func() { e.passes(4, nil) })
	e.passes(4, nil)
	// A second round, open: its round and market list are compared, its
	// commits are sealed in the export until it is triggered.
	r2, _ := e.newRound("s", 2)
	e.commit(r2, agentKey("erin"), []uint16{4000, 6000})
	e.passes(3, nil)

	dir := t.TempDir()
	if _, err := export.Write(ctx, export.Source{Forecast: e.svc, Log: e.log}, dir, export.Options{Format: export.CSV, Checkpoint: tlogtest.Checkpoint(t, e.log)}); err != nil {
		t.Fatal(err)
	}
	if _, err := export.Verify(dir, export.VerifyOptions{}); err != nil {
		t.Fatalf("the export alone: %v", err)
	}
	rep := e.verifyExport(dir)
	if len(rep.Mismatches) != 0 || rep.Rounds != 2 || rep.Markets != 6 || rep.Benchmarks != 4 || rep.Commits != 3 || rep.Reveals != 2 ||
		rep.Outcomes != 1 || rep.Scores != 3 || rep.Sealed != 1 || len(rep.NotOnChain) != 0 {
		t.Fatalf("untouched export: %+v", rep)
	}
	alice, bob, carol := agents[0].Address().Hex(), agents[1].Address().Hex(), agents[2].Address().Hex()
	plus1 := func(v string) string {
		if v == "" {
			return "1"
		}
		return v[:len(v)-1] + string(rune((v[len(v)-1]-'0'+1)%10+'0'))
	}
	for _, tc := range []struct {
		name, table, match, value, col string
		f                              func(string) string
		want                           string
	}{
		{"score", "scores", "agent", alice, "brier_bps2", plus1, "score of " + alice},
		{"forfeit", "scores", "agent", bob, "forfeit", func(string) string { return "false" }, "score of " + bob},
		{"prediction", "submissions", "agent", carol, "predictions", func(string) string { return "6500 6500 9999 0" }, "reveal of " + carol},
		{"commit hash", "submissions", "agent", alice, "commit_hash", func(string) string { return "0x" + strings.Repeat("ab", 32) }, "commit of " + alice},
		{"dropped submission", "submissions", "agent", bob, "", nil, "commit of " + bob + " on chain has no submission"},
		{"benchmark", "round_markets", "idx", "1", "benchmark_bps", plus1, "market 1: benchmark"},
		{"outcome", "round_markets", "idx", "0", "outcome", func(string) string { return "0" }, "market 0: outcome"},
		{"market", "markets", "source_id", "m2", "source_id", func(string) string { return "m9" }, "market 2: condition id"},
		{"schedule", "rounds", "id", "1", "reveal_deadline", laterByAnHour, "schedule or market count differ"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := t.TempDir()
			copyDir(t, dir, d)
			editCell(t, d, tc.table, tc.match, tc.value, tc.col, tc.f)
			rep := e.verifyExport(d)
			if len(rep.Mismatches) == 0 || !strings.Contains(rep.Mismatches[0], tc.want) {
				t.Fatalf("first difference %q, want one naming %q (all: %v)", first(rep.Mismatches), tc.want, rep.Mismatches)
			}
		})
	}
}

func laterByAnHour(v string) string {
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		panic(err)
	}
	return t.Add(time.Hour).Format(time.RFC3339Nano)
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

func copyDir(t *testing.T, from, to string) {
	t.Helper()
	es, err := os.ReadDir(from)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range es {
		b, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err == nil {
			err = os.WriteFile(filepath.Join(to, e.Name()), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}
