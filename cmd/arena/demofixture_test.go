package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// demoFixture is one demo played once per test binary (seed 2, 3 rounds,
// no serve): its directory (database, log key, export) and its output.
var demoFixture struct {
	once     sync.Once
	dir, out string
	err      error
}

// playedDemo gives the test its own copy of the demo fixture: the copy's
// directory and the demo's output with its paths pointing into the copy.
// Tests that need a database with rounds, a log and an export use it
// rather than playing a demo each.
func playedDemo(t *testing.T) (dir, out string) {
	t.Helper()
	if testing.Short() {
		t.Skip("plays a demo")
	}
	demoFixture.once.Do(func() {
		root, err := os.MkdirTemp("", "arena-demo-fixture-")
		if err != nil {
			demoFixture.err = err
			return
		}
		var stdout, stderr bytes.Buffer
		demoFixture.dir = filepath.Join(root, "demo")
		demoFixture.err = Main(context.Background(), &Env{Stdout: &stdout, Stderr: &stderr, Getwd: os.Getwd},
			[]string{"demo", "--no-serve", "--seed", "2", "--rounds", "3", "--dir", demoFixture.dir})
		demoFixture.out = stdout.String()
	})
	if demoFixture.err != nil {
		t.Fatalf("the demo fixture: %v", demoFixture.err)
	}
	dir = filepath.Join(t.TempDir(), "demo")
	if err := os.CopyFS(dir, os.DirFS(demoFixture.dir)); err != nil {
		t.Fatalf("copy the demo fixture: %v", err)
	}
	return dir, strings.ReplaceAll(demoFixture.out, demoFixture.dir, dir)
}
