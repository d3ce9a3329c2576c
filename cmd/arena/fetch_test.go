package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A human round in ForecastBench's formats, small: a market question and
// a dataset question on one date, each forecast by two superforecasters.
const (
	fetchQuestions = `{"forecast_due_date": "2024-07-21", "question_set": "2024-07-21-human.json", "questions": [
 {"id": "mq", "source": "manifold", "question": "Will the market question resolve Yes?", "resolution_criteria": "r", "background": "b",
  "market_info_open_datetime": "2024-01-01T00:00:00+00:00", "market_info_close_datetime": "2025-01-01T00:00:00+00:00", "url": "https://example.org/m",
  "freeze_datetime": "2024-07-12T00:00:00+00:00", "freeze_datetime_value": "0.7", "source_intro": "", "combination_of": "N/A", "resolution_dates": "N/A"},
 {"id": "dq", "source": "acled", "question": "Will fatalities rise by {resolution_date}?", "resolution_criteria": "r", "background": "b",
  "market_info_open_datetime": "N/A", "market_info_close_datetime": "N/A", "url": "https://acleddata.com/",
  "freeze_datetime": "2024-07-12T00:00:00+00:00", "freeze_datetime_value": "1.0", "source_intro": "", "combination_of": "N/A", "resolution_dates": ["2024-08-20"]}]}`
	fetchResolutions = `{"forecast_due_date": "2024-07-21", "question_set": "2024-07-21-llm.json", "resolutions": [
 {"id": "mq", "source": "manifold", "direction": null, "resolution_date": "2024-12-31", "resolved_to": 1.0, "resolved": true},
 {"id": "dq", "source": "acled", "direction": null, "resolution_date": "2024-08-20", "resolved_to": 0.0, "resolved": true}]}`
	fetchHumans = `{"organization": "ForecastBench", "model": "Superforecaster forecasts", "question-set": "2024-07-21-human.json", "forecast_due_date": "2024-07-21", "forecasts": [
 {"id": "mq", "source": "manifold", "forecast": 0.9, "resolution_date": null, "reasoning": "r", "user_id": "u1", "searches": "", "consulted_urls": ""},
 {"id": "mq", "source": "manifold", "forecast": 0.6, "resolution_date": null, "reasoning": "", "user_id": "u2", "searches": null, "consulted_urls": null},
 {"id": "dq", "source": "acled", "forecast": 0.1, "resolution_date": "2024-08-20", "reasoning": "q", "user_id": "u1", "searches": null, "consulted_urls": null},
 {"id": "dq", "source": "acled", "forecast": 0.2, "resolution_date": "2024-08-20", "reasoning": null, "user_id": "u2", "searches": null, "consulted_urls": null}]}`
)

// datasetsServer serves files laid out as ForecastBench's datasets folder
// from a local directory, as a file server would, and counts requests.
func datasetsServer(t *testing.T, files map[string]string) (url string, requests func() int) {
	t.Helper()
	root := t.TempDir()
	for name, body := range files {
		p := filepath.Join(root, "datasets", filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	n := 0
	fs := http.FileServer(http.Dir(root))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { n++; fs.ServeHTTP(w, r) }))
	t.Cleanup(srv.Close)
	return srv.URL + "/datasets", func() int { return n }
}

var humanRoundFiles = map[string]string{
	"question_sets/2024-07-21-human.json":                                           fetchQuestions,
	"resolution_sets/2024-07-21_resolution_set.json":                                fetchResolutions,
	"forecast_sets/2024-07-21/2024-07-21.ForecastBench.human_super_individual.json": fetchHumans,
}

// import forecastbench --fetch downloads a human round's three files from
// the datasets URL (here a local file server) into --dir and imports
// them, as if named with --questions, --resolutions and --humans.
func TestImportFetch(t *testing.T) {
	t.Parallel()
	from, requests := datasetsServer(t, humanRoundFiles)
	dir := t.TempDir()
	files := filepath.Join(dir, "fb")
	db := "sqlite:" + filepath.Join(dir, "arena.db")
	out, stderr, err := cli(t, nil, "import", "forecastbench", "--fetch", "2024-07-21", "--from", from, "--dir", files, "--db", db, "--now", "2026-08-21T00:00:00Z")
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	for _, want := range []string{
		"downloaded " + from + "/question_sets/2024-07-21-human.json (",
		"downloaded " + from + "/resolution_sets/2024-07-21_resolution_set.json (",
		"downloaded " + from + "/forecast_sets/2024-07-21/2024-07-21.ForecastBench.human_super_individual.json (",
		"humans: 4 super forecasts by 2 forecasters on 2 questions, due 2024-07-21",
		"store: 2 inserted",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if requests() != 3 {
		t.Errorf("%d requests, want 3", requests())
	}
	// The files are kept, whole, and nothing else is left in --dir.
	es, _ := os.ReadDir(files)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	if strings.Join(names, " ") != "2024-07-21-human.json 2024-07-21.ForecastBench.human_super_individual.json 2024-07-21_resolution_set.json" {
		t.Errorf("--dir holds %q", names)
	}
	if b, _ := os.ReadFile(filepath.Join(files, "2024-07-21_resolution_set.json")); string(b) != fetchResolutions {
		t.Errorf("the resolution set was saved as %q", b)
	}
	// The kept files import again without the network.
	out, _, err = cli(t, nil, "import", "forecastbench", "--db", db, "--now", "2026-08-21T00:00:00Z",
		"--questions", filepath.Join(files, "2024-07-21-human.json"), "--resolutions", filepath.Join(files, "2024-07-21_resolution_set.json"))
	if err != nil || !strings.Contains(out, "store: 0 inserted, 0 updated, 2 unchanged") {
		t.Errorf("re-import of the kept files: %v\n%s", err, out)
	}
}

// What --fetch refuses, each with a message that says what to do, and
// without creating a database.
func TestImportFetchFailures(t *testing.T) {
	t.Parallel()
	partial := map[string]string{}
	for k, v := range humanRoundFiles {
		partial[k] = v
	}
	delete(partial, "forecast_sets/2024-07-21/2024-07-21.ForecastBench.human_super_individual.json")
	from, _ := datasetsServer(t, partial)
	broken, _ := datasetsServer(t, map[string]string{
		"question_sets/2024-07-21-human.json":                                           fetchQuestions,
		"resolution_sets/2024-07-21_resolution_set.json":                                fetchResolutions[:100],
		"forecast_sets/2024-07-21/2024-07-21.ForecastBench.human_super_individual.json": fetchHumans,
	})
	// A server that stops sending halfway through the question set.
	cut := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(len(fetchQuestions)))
		io.WriteString(w, fetchQuestions[:200])
	}))
	t.Cleanup(cut.Close)
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close() // nothing listens there any more
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"a round without human forecasts", []string{"--fetch", "2024-07-21", "--from", from},
			"/forecast_sets/2024-07-21/2024-07-21.ForecastBench.human_super_individual.json: 404 Not Found: ForecastBench published human forecasts for some rounds only (2024-07-21 is one)"},
		{"no server", []string{"--fetch", "2024-07-21", "--from", down.URL}, "connection refused (no network? download the files by hand and import them with --questions, --resolutions and --humans)"},
		{"a file cut short", []string{"--fetch", "2024-07-21", "--from", broken}, "2024-07-21_resolution_set.json:"},
		{"a download cut short", []string{"--fetch", "2024-07-21", "--from", cut.URL}, "question_sets/2024-07-21-human.json: unexpected EOF"},
		{"not a date", []string{"--fetch", "21/07/2024"}, `--fetch "21/07/2024": want the round's due date, YYYY-MM-DD (such as 2024-07-21)`},
		{"not a URL", []string{"--fetch", "2024-07-21", "--from", "file:///tmp/x"}, `datasets URL "file:///tmp/x": want an http or https URL`},
		{"files too", []string{"--fetch", "2024-07-21", "--questions", "q.json"}, "give --fetch DATE or the files (--questions, --resolutions, --humans), not both"},
		{"--from alone", []string{"--from", from, "--questions", "q.json"}, "--from and --dir go with --fetch DATE"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			db := filepath.Join(dir, "arena.db")
			_, _, err := cli(t, nil, append([]string{"import", "forecastbench", "--db", "sqlite:" + db, "--dir", filepath.Join(dir, "fb")}, c.args...)...)
			if c.name == "--from alone" {
				_, _, err = cli(t, nil, append([]string{"import", "forecastbench", "--db", "sqlite:" + db}, c.args...)...)
			}
			if err == nil || !strings.Contains(oneLine(err), c.want) {
				t.Fatalf("error %v, want %q", err, c.want)
			}
			if _, err := os.Stat(db); !os.IsNotExist(err) {
				t.Errorf("database created by a failed import: %v", err)
			}
			// A download leaves no partial file behind.
			es, _ := os.ReadDir(filepath.Join(dir, "fb"))
			for _, e := range es {
				if strings.HasPrefix(e.Name(), ".") {
					t.Errorf("left behind %s", e.Name())
				}
			}
		})
	}
}
