package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/testscale"
)

// Small question and resolution sets in the published shape.
const impQuestions = `{
    "forecast_due_date": "2025-10-26",
    "question_set": "2025-10-26-llm.json",
    "questions": [
        {
            "id": "K8qazyZJ3tXyuLlzkkyk",
            "source": "manifold",
            "question": "Will San Diego FC make the playoffs in 2025?",
            "resolution_criteria": "Resolves to the outcome of the question found at https://manifold.markets/x.",
            "background": "",
            "market_info_open_datetime": "2023-11-16T18:37:14+00:00",
            "market_info_close_datetime": "2026-01-01T04:59:00+00:00",
            "market_info_resolution_criteria": "N/A",
            "url": "https://manifold.markets/UniversalFC/will-san-diego-fc-make-the-playoffs",
            "freeze_datetime": "2025-10-16T00:00:00+00:00",
            "freeze_datetime_value": "0.979920031255855",
            "freeze_datetime_value_explanation": "The market value.",
            "source_intro": "We would like you to predict the outcome of a prediction market.",
            "resolution_dates": "N/A"
        },
        {
            "id": "DAAA",
            "source": "fred",
            "question": "Will Moody's Seasoned Aaa Corporate Bond Yield have increased by {resolution_date} as compared to its value on {forecast_due_date}?",
            "resolution_criteria": "Resolves to the value found at https://fred.stlouisfed.org/series/DAAA once the data is published.",
            "background": "",
            "market_info_open_datetime": "N/A",
            "market_info_close_datetime": "N/A",
            "market_info_resolution_criteria": "N/A",
            "url": "https://fred.stlouisfed.org/series/DAAA",
            "freeze_datetime": "2025-10-16T00:00:00+00:00",
            "freeze_datetime_value": "5.13",
            "freeze_datetime_value_explanation": "The latest value released.",
            "source_intro": "FRED is a database.",
            "resolution_dates": ["2025-11-02", "2025-11-25", "2026-01-24"]
        }
    ]
}`

const impResolutions = `{
    "forecast_due_date": "2025-10-26",
    "question_set": "2025-10-26-llm.json",
    "resolutions": [
        {"id": "K8qazyZJ3tXyuLlzkkyk", "source": "manifold", "direction": null, "resolution_date": "2025-12-30", "resolved_to": 1.0, "resolved": true},
        {"id": "DAAA", "source": "fred", "direction": null, "resolution_date": "2025-11-02", "resolved_to": 0.0, "resolved": true},
        {"id": ["DAAA", "K8qazyZJ3tXyuLlzkkyk"], "source": "fred", "direction": [1, -1], "resolution_date": "2025-11-02", "resolved_to": 1.0, "resolved": true}
    ]
}`

func impWrite(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func impMarkets(t *testing.T, dbURL string) []*arena.Market {
	t.Helper()
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms, err := db.Markets(context.Background(), arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

func TestImportForecastBench(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	q := impWrite(t, dir, "2025-10-26-llm.json", impQuestions)
	r := impWrite(t, dir, "2025-10-26_resolution_set.json", impResolutions)
	dbURL := "sqlite:" + filepath.Join(dir, "arena.db")
	args := []string{"import", "forecastbench", "--questions", q, "--resolutions", r, "--db", dbURL, "--now", "2026-08-21T00:00:00Z"}

	out, errOut, err := cli(t, nil, args...)
	if err != nil || errOut != "" { // off a terminal, no progress bar
		t.Fatalf("%v, stderr %q", err, errOut)
	}
	for _, want := range []string{
		"read 1 question sets (2 questions) and 1 resolution sets (3 rows)",
		"skipped: 1 combination rows (market 0, dataset 1), 0 repeated",
		"market      1         1     0           0        0",
		"dataset      3         1     0           2        0",
		"store: 4 inserted, 0 updated, 0 unchanged, 1 new price points",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	ms := impMarkets(t, dbURL)
	if len(ms) != 4 {
		t.Fatalf("%d markets stored", len(ms))
	}

	out, _, err = cli(t, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "store: 0 inserted, 0 updated, 4 unchanged, 0 new price points") {
		t.Errorf("re-import changed the store:\n%s", out)
	}
	if again := impMarkets(t, dbURL); !reflect.DeepEqual(again, ms) {
		t.Errorf("re-import changed stored markets")
	}
}

func TestImportForecastBenchBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	q := impWrite(t, dir, "q.json", impQuestions)
	bad := impWrite(t, dir, "bad.json", strings.Replace(impResolutions, `"resolved_to": 0.0`, `"resolved_to": "0"`, 1))
	broken := impWrite(t, dir, "broken.json", impResolutions[:400])
	dbURL := "sqlite:" + filepath.Join(dir, "arena.db")
	if _, _, err := cli(t, nil, "import", "forecastbench", "--questions", q, "--db", dbURL); err != nil {
		t.Fatal(err)
	}
	before := impMarkets(t, dbURL)

	cases := []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"--questions", q, filepath.Join(dir, "nope.json")}, "nope.json does not exist: ForecastBench publishes its files at"},
		{"wrong type", []string{"--resolutions", bad}, "bad.json:6:112: resolutions[1] (id DAAA).resolved_to: want number, got string"},
		{"invalid JSON", []string{"--questions", q, "--resolutions", broken}, "broken.json:"},
		{"no files", nil, "give --questions FILE…, --resolutions FILE… and/or --humans FILE…, or --fetch DATE"},
		{"empty list", []string{"--questions", "--db", dbURL}, "--questions needs at least one file"},
		{"stray argument", []string{"--db", dbURL, "x.json"}, `unexpected argument "x.json"`},
		{"bad now", []string{"--questions", q, "--now", "today"}, "--now"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := append([]string{"import", "forecastbench", "--db", dbURL}, c.args...)
			out, _, err := cli(t, nil, args...)
			if err == nil {
				t.Fatalf("no error; output:\n%s", out)
			}
			if msg := oneLine(err); !strings.Contains(msg, c.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q does not contain %q", msg, c.want)
			}
			if exitCode(err) == 0 {
				t.Error("exit code 0")
			}
			if out != "" {
				t.Errorf("printed on failure: %q", out)
			}
			if after := impMarkets(t, dbURL); !reflect.DeepEqual(after, before) {
				t.Error("store changed")
			}
		})
	}

	// A bad file never creates a database.
	fresh := filepath.Join(dir, "fresh.db")
	if _, _, err := cli(t, nil, "import", "forecastbench", "--db", "sqlite:"+fresh, "--resolutions", bad); err == nil {
		t.Fatal("no error")
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("database created by a failed import: %v", err)
	}

	if _, _, err := cli(t, nil, "import", "kalshi"); err == nil || !strings.Contains(err.Error(), `unknown source "kalshi"`) {
		t.Errorf("unknown importer: %v", err)
	}
}

func TestImportForecastBenchDryRun(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	q := impWrite(t, dir, "q.json", impQuestions)
	db := filepath.Join(dir, "arena.db")
	out, _, err := cli(t, nil, "import", "forecastbench", "--dry-run", "--questions", q, "--db", "sqlite:"+db)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "dry run: nothing written") {
		t.Errorf("output:\n%s", out)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("dry run created the database: %v", err)
	}
}

// The 12 resolution sets behind the published 2025-10-06 leaderboard,
// imported alone, yield its N: 623 market and 11330 dataset items.
func TestImportForecastBenchLeaderboardSets(t *testing.T) {
	t.Parallel()
	if !testscale.Full() {
		t.Skip("imports the 12 leaderboard resolution sets twice: at full size only (ARENA_TEST_FULL=1, set by CI)")
	}
	files, err := filepath.Glob(filepath.Join(shareddata.Path(t, "forecastbench", "leaderboard-2025-10-06", "resolution_sets"), "*.json"))
	if err != nil || len(files) != 12 {
		t.Fatalf("resolution sets: %v %v", files, err)
	}
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	args := append([]string{"import", "forecastbench", "--db", dbURL, "--resolutions"}, files...)
	out, _, err := cli(t, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"12 resolution sets (66180 rows)",
		"52512 combination rows (market 9028, dataset 43484)",
		"market 2338 623 0 1715 2338",
		"dataset 11330 11330 0 0 11330",
		"store: 13668 inserted, 0 updated, 0 unchanged, 1715 new price points",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = cli(t, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "store: 0 inserted, 0 updated, 13668 unchanged, 0 new price points") {
		t.Errorf("re-import:\n%s", out)
	}
}

func TestFileLists(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args  []string
		lists map[string][]string
		rest  []string
		err   string
	}{
		{[]string{"--questions", "a", "b", "--db", "x", "--resolutions", "c"},
			map[string][]string{"questions": {"a", "b"}, "resolutions": {"c"}}, []string{"--db", "x"}, ""},
		{[]string{"-questions=a", "--questions=b", "--dry-run"},
			map[string][]string{"questions": {"a", "b"}}, []string{"--dry-run"}, ""},
		{[]string{"--db=x", "stray"}, map[string][]string{}, []string{"--db=x", "stray"}, ""},
		{[]string{"--resolutions"}, nil, nil, "--resolutions needs at least one file"},
		{[]string{"--questions", "--resolutions", "a"}, nil, nil, "--questions needs at least one file"},
		{[]string{"--questions="}, nil, nil, "--questions= needs a file"},
	}
	for _, c := range cases {
		lists, rest, err := fileLists(c.args, "questions", "resolutions")
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(lists, c.lists) || !reflect.DeepEqual(rest, c.rest) {
			t.Errorf("%v: %v %v %v", c.args, lists, rest, err)
		}
	}
}
