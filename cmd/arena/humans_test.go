package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/llm/scripted"
	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/stats"
)

// humanRoundDB is a fresh SQLite database holding the human round of
// 2024-07-21, with its human forecasts when humans: those, which three
// tests use, are a copy of one import per test binary.
func humanRoundDB(t *testing.T, humans bool) string {
	t.Helper()
	h := func(name string) string { return shareddata.Path(t, "forecastbench-human", name) }
	args := []string{"import", "forecastbench", "--now", "2026-08-21T00:00:00Z",
		"--questions", h("2024-07-21-human.json"), "--resolutions", h("2024-07-21_resolution_set.json")}
	if !humans {
		db := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
		if _, stderr, err := cli(t, nil, append(args, "--db", db)...); err != nil {
			t.Fatalf("import: %v\n%s", err, stderr)
		}
		return db
	}
	args = append(args, "--humans", h("2024-07-21.ForecastBench.human_super_individual.json"))
	dir, _ := humanRoundWithHumans.copy(t, func(dir string) (string, string, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", err
		}
		out, stderr, err := cli(t, nil, append(args, "--db", "sqlite:"+filepath.Join(dir, "arena.db"))...)
		if err != nil {
			err = fmt.Errorf("import: %w\n%s", err, stderr)
		}
		return out, stderr, err
	})
	return "sqlite:" + filepath.Join(dir, "arena.db")
}

// recordingScripted serves the scripted stand-ins and keeps every request
// body, to check what the models were shown.
func recordingScripted(t *testing.T) (baseURL string, bodies func() string) {
	var mu sync.Mutex
	var all strings.Builder
	h := scripted.Handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		all.Write(b)
		mu.Unlock()
		r.Body = io.NopCloser(strings.NewReader(string(b)))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/v1", func() string { mu.Lock(); defer mu.Unlock(); return all.String() }
}

func TestBacktestHumanRound(t *testing.T) {
	t.Parallel()
	db := humanRoundDB(t, true)
	base, bodies := recordingScripted(t)
	// "after" learned up to a date after the round: the guard withholds
	// every question from it.
	reg := filepath.Join(t.TempDir(), "agents.json")
	os.WriteFile(reg, []byte(strings.ReplaceAll(`{"agents":[
	 {"id":"pricer","provider":"local","model":"scripted-market","base_url":"BASE","input_usd_per_mtok":0,"output_usd_per_mtok":0,"training_cutoff":"2024-01-01"},
	 {"id":"half","provider":"local","model":"scripted-half","base_url":"BASE","input_usd_per_mtok":0,"output_usd_per_mtok":0,"training_cutoff":"2024-07-20"},
	 {"id":"after","provider":"local","model":"scripted-half","base_url":"BASE","input_usd_per_mtok":0,"output_usd_per_mtok":0,"training_cutoff":"2024-07-21"}]}`, "BASE", base)), 0o600)
	cache := filepath.Join(t.TempDir(), "cache")
	out, stderr, err := cli(t, nil, "backtest", "--source", "forecastbench", "--agents", reg, "--db", db, "--cache-dir", cache, "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rep backtest.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	// The humans forecast 578 resolved items (521 dataset, 57 market);
	// rounds of 7 leave 4 over.
	if rep.Questions != 574 || rep.LeftOver != 4 {
		t.Fatalf("questions %d, left over %d; want 574 and 4", rep.Questions, rep.LeftOver)
	}
	rows := map[string]stats.BoardRow{}
	for _, r := range rep.Board {
		rows[r.Forecaster] = r
	}
	sup, ok := rows[forecastbench.SuperMedian]
	if !ok || !sup.Human || sup.Rank != 1 || sup.Overall.N != 574 {
		t.Fatalf("superforecaster row %+v (board %+v)", sup, rep.Board)
	}
	for _, id := range []string{"pricer", "half"} {
		r, ok := rows[id]
		if !ok || r.Human || r.Overall.N != 574 || !r.PVsFirst.OK || r.PVsFirst.V > 0.05 || !r.BetterThanFirst.OK {
			t.Errorf("%s: %+v", id, r)
		}
	}
	// Always 0.5 scores 0.25 on every item, whatever happens.
	if h := rows["half"]; h.Overall.Brier.V != 0.25 || h.Dataset.Brier.V != 0.25 {
		t.Errorf("half: %+v", h)
	}
	if _, on := rows["after"]; on || len(rep.Board) != 3 {
		t.Errorf("the guard's excluded agent is on the board: %+v", rep.Board)
	}
	for _, a := range rep.Agents {
		if a.Agent == "after" && (a.Forecasts != 0 || a.ExcludedByCutoff != 574) {
			t.Errorf("after: %+v", a)
		}
	}
	// Nothing the humans wrote or forecast reached a model: no user id and
	// no reasoning text appears in any request.
	sent := bodies()
	set, err := os.Open(shareddata.Path(t, "forecastbench-human", "2024-07-21.ForecastBench.human_super_individual.json"))
	if err != nil {
		t.Fatal(err)
	}
	hs, err := forecastbench.ReadHumanSet(set)
	set.Close()
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range hs.Forecasts {
		if len(f.Reasoning) > 40 && strings.Contains(sent, mustJSON(f.Reasoning)) {
			t.Fatalf("a request holds %s's reasoning %q", f.UserID, f.Reasoning)
		}
		if strings.Contains(sent, f.UserID) {
			t.Fatalf("a request holds the user id %s", f.UserID)
		}
		checked++
	}
	if checked != 7693 || len(sent) == 0 {
		t.Fatalf("checked %d forecasts against %d bytes of requests", checked, len(sent))
	}
	// The table marks the humans.
	table, _, err := cli(t, nil, "backtest", "--source", "forecastbench", "--agents", reg, "--db", db, "--cache-dir", cache, "--cache-only")
	if err != nil || !strings.Contains(table, forecastbench.SuperMedian+" (human)") {
		t.Fatalf("table: %v\n%s", err, table)
	}
	// arena report humans renders the same board from the store.
	for _, format := range []string{"json", "csv", "svg", "table"} {
		got, stderr, err := cli(t, nil, "report", "humans", "--db", db, "--format", format)
		if err != nil {
			t.Fatalf("report humans --format %s: %v\n%s", format, err, stderr)
		}
		if !strings.Contains(got, forecastbench.SuperMedian) || !strings.Contains(got, "pricer") {
			t.Errorf("report humans --format %s lacks the rows:\n%s", format, got)
		}
		if format == "json" {
			var again []stats.BoardRow
			if err := json.Unmarshal([]byte(got), &again); err != nil || len(again) != 3 {
				t.Fatalf("report JSON: %v, %d rows", err, len(again))
			}
			for _, r := range again {
				if want := rows[r.Forecaster]; r.Overall != want.Overall || r.Dataset != want.Dataset || r.Human != want.Human {
					t.Errorf("report %s: %+v, backtest %+v", r.Forecaster, r, want)
				}
			}
		}
	}
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return strings.Trim(string(b), `"`)
}

// A round without human forecasts: the same backtest shows no human rows
// and no board at all, rather than empty ones.
func TestBacktestWithoutHumans(t *testing.T) {
	t.Parallel()
	db := humanRoundDB(t, false)
	out, stderr, err := cli(t, nil, "backtest", "--source", "forecastbench", "--scripted", "--db", db, "--cache-dir", filepath.Join(t.TempDir(), "c"), "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	if strings.Contains(out, `"board"`) {
		t.Fatalf("a board without human forecasts:\n%s", out)
	}
	var rep backtest.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || len(rep.Agents) != 2 || rep.Agents[0].Forecasts == 0 {
		t.Fatalf("%v: %+v", err, rep)
	}
	got, _, err := cli(t, nil, "report", "humans", "--db", db)
	if err != nil || !strings.Contains(got, "no human forecasts stored") {
		t.Fatalf("report humans without humans: %v\n%s", err, got)
	}
}

// Without a backtest, report humans --unresolved gives the superforecaster
// median's figures as ForecastBench computes them, unresolved market
// questions included (the values docs/methodology.md states).
func TestReportHumansUnresolved(t *testing.T) {
	t.Parallel()
	db := humanRoundDB(t, true)
	out, stderr, err := cli(t, nil, "report", "humans", "--db", db, "--unresolved", "--format", "json")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	var rows []stats.BoardRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil || len(rows) != 1 {
		t.Fatalf("%v: %s", err, out)
	}
	r := rows[0]
	for _, c := range []struct {
		what string
		got  stats.Mean
		n    int
		want float64
	}{
		{"dataset", r.Dataset, 521, 0.12226520142994239},
		{"market resolved", r.MarketResolved, 57, 0.08302036951754385},
		{"market unresolved", r.MarketUnresolved, 18, 0.05395243109777952},
		{"overall resolved", r.OverallResolved, 578, 0.10264278547374311},
		{"overall", r.Overall, 596, 0.0991546328633714},
	} {
		if c.got.N != c.n || !c.got.Brier.OK || c.got.Brier.V-c.want > 1e-12 || c.want-c.got.Brier.V > 1e-12 {
			t.Errorf("%s: %+v, want %d items, %.15g", c.what, c.got, c.n, c.want)
		}
	}
}

// Importing the published superforecaster file into an arena that holds
// it says what it replaces before replacing it; a hostile file beside it
// (an empty forecasts array, which would have replaced the 7,693 stored
// forecasts with none) is refused, nothing changed, until --replace-empty
// says so; then the line before the write says what goes.
func TestImportHumansReplacement(t *testing.T) {
	t.Parallel()
	db := humanRoundDB(t, true)
	h := shareddata.Path(t, "forecastbench-human", "2024-07-21.ForecastBench.human_super_individual.json")
	stored := func() int {
		t.Helper()
		s := openStore(t, db)
		sets, err := s.HumanSets(t.Context())
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for _, x := range sets {
			n += x.Forecasts
		}
		return n
	}
	if n := stored(); n != 7693 {
		t.Fatalf("stored %d human forecasts, want 7693", n)
	}
	out, stderr, err := cli(t, nil, "import", "forecastbench", "--db", db, "--humans", h)
	if err != nil || !strings.Contains(out, "humans: replacing the 7693 stored super forecasts due 2024-07-21 (by 40 forecasters) with the file's 7693 (by 40)") {
		t.Fatalf("the same file again: %v\n%s%s", err, out, stderr)
	}
	empty := filepath.Join(t.TempDir(), "empty.json")
	os.WriteFile(empty, []byte(`{"organization": "ForecastBench", "model": "Superforecaster forecasts", "question_set": "2024-07-21-human.json", "forecast_due_date": "2024-07-21", "forecasts": []}`), 0o600)
	out, _, err = cli(t, nil, "import", "forecastbench", "--db", db, "--humans", empty)
	if err == nil || !strings.Contains(err.Error(), "holds no super forecast the arena imports for the round due 2024-07-21") || !strings.Contains(err.Error(), "--replace-empty") || strings.Contains(out, "humans:") {
		t.Fatalf("an empty set: %v\n%s", err, out)
	}
	if n := stored(); n != 7693 {
		t.Fatalf("the refused import left %d stored", n)
	}
	out, stderr, err = cli(t, nil, "import", "forecastbench", "--db", db, "--humans", empty, "--replace-empty")
	if err != nil || !strings.Contains(out, "humans: replacing the 7693 stored super forecasts due 2024-07-21 (by 40 forecasters) with the file's 0 (by 0)") {
		t.Fatalf("--replace-empty: %v\n%s%s", err, out, stderr)
	}
	if n := stored(); n != 0 {
		t.Fatalf("after --replace-empty %d stored", n)
	}
}
