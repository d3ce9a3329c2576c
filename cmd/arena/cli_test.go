package main

import (
	"bytes"
	"context"
	"os"
	"testing"
)

// TestMain lets tests run the real binary: when ARENA_TEST_EXEC=1 the test
// executable behaves as the arena command (used for multi-process tests).
func TestMain(m *testing.M) {
	if os.Getenv("ARENA_TEST_EXEC") == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// cli runs the arena CLI in-process with the given environment additions
// and returns stdout, stderr and the error. Shared by every command's tests.
func cli(t testing.TB, environ []string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Environ: environ, Getwd: os.Getwd}
	err := Main(context.Background(), env, args)
	return out.String(), errb.String(), err
}
