// Package shareddata locates the published reference data that sits beside
// the checkout in ../shared/data. Tests skip cleanly when it is absent; the
// data is never copied into the repository.
package shareddata

import (
	"encoding/csv"
	"os"
	"path/filepath"
	"testing"

	"github.com/forecast-arena/arena/internal/testscale"
)

// Dir returns the absolute path of ../shared/data relative to the module
// root, or skips the test when it does not exist.
func Dir(t testing.TB) string {
	t.Helper()
	d, ok := Find()
	if !ok {
		missing(t, "../shared/data not found beside the checkout")
	}
	return d
}

// Path joins elements under Dir and skips when that file is missing.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Dir(t)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		missing(t, p+" not found")
	}
	return p
}

// CSV reads the comma-separated file at Path(t, elem...): its header and
// its rows as maps from column name to value, in file order.
func CSV(t testing.TB, elem ...string) (header []string, rows []map[string]string) {
	t.Helper()
	f, err := os.Open(Path(t, elem...))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) == 0 {
		t.Fatalf("%s: empty CSV", filepath.Join(elem...))
	}
	for _, r := range recs[1:] {
		row := make(map[string]string, len(r))
		for i, h := range recs[0] {
			row[h] = r[i]
		}
		rows = append(rows, row)
	}
	return recs[0], rows
}

// ForecastBenchLeaderboard is ForecastBench's published baseline
// leaderboard of 2025-10-06 (leaderboard_baseline.csv), rows keyed by model
// name.
func ForecastBenchLeaderboard(t testing.TB) map[string]map[string]string {
	t.Helper()
	_, rows := CSV(t, "forecastbench", "leaderboard-2025-10-06", "leaderboard_baseline.csv")
	out := make(map[string]map[string]string, len(rows))
	for _, r := range rows {
		out[r["Model"]] = r
	}
	return out
}

// ForecastBenchSets lists the published question sets and resolution
// sets, oldest first (Glob lists names in order, and names start with
// the date): all 14 of each at full size (see testscale), the oldest three
// of each otherwise. The sets pair by date.
func ForecastBenchSets(t testing.TB) (questions, resolutions []string) {
	t.Helper()
	questions, _ = filepath.Glob(filepath.Join(Path(t, "forecastbench", "question_sets"), "*.json"))
	resolutions, _ = filepath.Glob(filepath.Join(Path(t, "forecastbench", "resolution_sets"), "*.json"))
	if len(questions) == 0 || len(resolutions) == 0 {
		t.Fatal("no ForecastBench question or resolution sets")
	}
	if !testscale.Full() {
		questions, resolutions = questions[:min(3, len(questions))], resolutions[:min(3, len(resolutions))]
	}
	return questions, resolutions
}

// missing skips the test, or fails it when ARENA_REQUIRE_SHARED_DATA=1
// (set by CI, so the reference checks cannot pass by being skipped).
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("ARENA_REQUIRE_SHARED_DATA") == "1" {
		t.Fatalf("%s, and ARENA_REQUIRE_SHARED_DATA=1", why)
	}
	t.Skipf("%s; skipping test on published data", why)
}

// Find walks up from the working directory to the module root (go.mod)
// and reports ../shared/data from there.
func Find() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "data")
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				return filepath.Clean(d), true
			}
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
