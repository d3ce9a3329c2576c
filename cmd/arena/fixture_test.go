package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/testscale"
)

// A dirFixture is a directory built once per test binary (a played demo,
// an imported dataset); each test gets its own copy.
type dirFixture struct {
	what             string // what build makes, for its error
	once             sync.Once
	dir, out, errOut string // the built directory, build's stdout and stderr
	err              error
}

var (
	// fixtures are removed by TestMain.
	fixtures = []*dirFixture{&smallDemo, &seed1Fixture, &forecastBenchDB, &humanRoundWithHumans}
	// smallDemo is a short demo for tests that need a database with
	// rounds, a log and an export.
	smallDemo = dirFixture{what: "demo --seed 2 --rounds 3"}
	// seed1Fixture is the demo of seed 1 in JSON: 10 rounds, or 50 at full
	// size (ARENA_TEST_FULL=1).
	seed1Fixture = dirFixture{what: "demo --seed 1 --format json"}
	// forecastBenchDB holds the published ForecastBench sets
	// (shareddata.ForecastBenchSets) imported into arena.db as of
	// 2026-08-21.
	forecastBenchDB = dirFixture{what: "ForecastBench import"}
	// humanRoundWithHumans holds ForecastBench's human round of
	// 2024-07-21 with its superforecasters' forecasts, imported into
	// arena.db (humanRoundDB).
	humanRoundWithHumans = dirFixture{what: "import of the human round with its human forecasts"}
)

func seed1Rounds() int { return testscale.Size(10, 50) }

// copy builds the fixture the first time and gives the test its own copy:
// the copy's directory and build's output with its paths pointing into
// the copy.
func (f *dirFixture) copy(t *testing.T, build func(dir string) (stdout, stderr string, err error)) (dir, out string) {
	t.Helper()
	f.once.Do(func() {
		root, err := os.MkdirTemp("", "arena-fixture-")
		if err != nil {
			f.err = err
			return
		}
		f.dir = filepath.Join(root, "fixture")
		f.out, f.errOut, f.err = build(f.dir)
	})
	if f.err != nil {
		t.Fatalf("the fixture %s: %v", f.what, f.err)
	}
	dir = filepath.Join(t.TempDir(), "fixture")
	if err := os.CopyFS(dir, os.DirFS(f.dir)); err != nil {
		t.Fatalf("copy the fixture %s: %v", f.what, err)
	}
	return dir, strings.ReplaceAll(f.out, f.dir, dir)
}

// demoCopy is a copy of the demo played with args once per test binary.
func demoCopy(t *testing.T, f *dirFixture, args ...string) (dir, out string) {
	t.Helper()
	if testing.Short() {
		t.Skip("plays a demo")
	}
	return f.copy(t, func(dir string) (string, string, error) {
		var stdout, stderr bytes.Buffer
		err := Main(context.Background(), &Env{Stdout: &stdout, Stderr: &stderr, Getwd: os.Getwd},
			append(append([]string{"demo", "--no-serve"}, args...), "--dir", dir))
		return stdout.String(), stderr.String(), err
	})
}

// playedDemo is a copy of the short demo.
func playedDemo(t *testing.T) (dir, out string) {
	t.Helper()
	return demoCopy(t, &smallDemo, "--seed", "2", "--rounds", "3")
}

// seed1Demo is a copy of the seed-1 demo, with its number of rounds.
func seed1Demo(t *testing.T) (rounds int, dir, out string) {
	t.Helper()
	dir, out = demoCopy(t, &seed1Fixture, "--seed", "1", "--rounds", strconv.Itoa(seed1Rounds()), "--format", "json")
	return seed1Rounds(), dir, out
}

// forecastBenchStore is the URL of a copy of forecastBenchDB, and the
// question and resolution sets it holds.
func forecastBenchStore(t *testing.T) (url string, questions, resolutions []string) {
	t.Helper()
	qs, rs := shareddata.ForecastBenchSets(t)
	dir, _ := forecastBenchDB.copy(t, func(dir string) (string, string, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return "", "", err
		}
		db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(dir, "arena.db"))
		if err != nil {
			return "", "", err
		}
		_, err = forecastbench.Import(context.Background(), db, forecastbench.Files{Questions: qs, Resolutions: rs},
			time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC))
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		return "", "", err
	})
	return "sqlite:" + filepath.Join(dir, "arena.db"), qs, rs
}
