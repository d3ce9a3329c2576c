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

	"github.com/forecast-arena/arena/internal/testscale"
)

// A demoFixture is one demo played once per test binary; each test gets
// its own copy of the demo's directory (database, log key, export).
type demoFixture struct {
	once             sync.Once
	args             []string // the demo command's arguments but --dir
	dir, out, errOut string   // the played demo's directory, stdout and stderr
	err              error
}

var (
	// fixtures are removed by TestMain.
	fixtures = []*demoFixture{&smallDemo, &seed1Fixture}
	// smallDemo is a short demo for tests that need a database with
	// rounds, a log and an export.
	smallDemo = demoFixture{args: []string{"demo", "--no-serve", "--seed", "2", "--rounds", "3"}}
	// seed1Fixture is the demo of seed 1 in JSON: 10 rounds, or 50 at full
	// size (ARENA_TEST_FULL=1).
	seed1Fixture = demoFixture{args: []string{"demo", "--no-serve", "--seed", "1", "--rounds", strconv.Itoa(seed1Rounds()), "--format", "json"}}
)

func seed1Rounds() int { return testscale.Size(10, 50) }

// copy plays the demo the first time and gives the test its own copy:
// the copy's directory and the demo's output with its paths pointing
// into the copy.
func (f *demoFixture) copy(t *testing.T) (dir, out string) {
	t.Helper()
	if testing.Short() {
		t.Skip("plays a demo")
	}
	f.once.Do(func() {
		root, err := os.MkdirTemp("", "arena-demo-fixture-")
		if err != nil {
			f.err = err
			return
		}
		var stdout, stderr bytes.Buffer
		f.dir = filepath.Join(root, "demo")
		f.err = Main(context.Background(), &Env{Stdout: &stdout, Stderr: &stderr, Getwd: os.Getwd},
			append(f.args, "--dir", f.dir))
		f.out, f.errOut = stdout.String(), stderr.String()
	})
	if f.err != nil {
		t.Fatalf("the demo fixture %v: %v", f.args, f.err)
	}
	dir = filepath.Join(t.TempDir(), "demo")
	if err := os.CopyFS(dir, os.DirFS(f.dir)); err != nil {
		t.Fatalf("copy the demo fixture: %v", err)
	}
	return dir, strings.ReplaceAll(f.out, f.dir, dir)
}

// playedDemo is a copy of the short demo.
func playedDemo(t *testing.T) (dir, out string) {
	t.Helper()
	return smallDemo.copy(t)
}

// seed1Demo is a copy of the seed-1 demo, with its number of rounds.
func seed1Demo(t *testing.T) (rounds int, dir, out string) {
	t.Helper()
	dir, out = seed1Fixture.copy(t)
	return seed1Rounds(), dir, out
}
