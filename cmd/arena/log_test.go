package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// A one-shot command prints its results; its stderr holds only warnings
// and errors unless asked for more: -v, --log-level or ARENA_LOG_LEVEL.
// (arena serve logs at info by default: see the serve tests, which read
// its "serving" line.)
func TestOneShotCommandsQuiet(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "a.db")
	fcMarkets(t, dbURL, 2)
	const info = `level=INFO msg="tamper-evident log"`
	for i, c := range []struct {
		env      []string
		args     []string
		wantInfo bool
	}{
		{nil, nil, false},
		{nil, []string{"-v"}, true},
		{nil, []string{"--log-level", "info"}, true},
		{[]string{"ARENA_LOG_LEVEL=info"}, nil, true},
		{[]string{"ARENA_LOG_LEVEL=error"}, []string{"-v"}, true},
		{[]string{"ARENA_LOG_LEVEL=debug"}, nil, true},
		{[]string{"ARENA_LOG_LEVEL=warn"}, nil, false},
	} {
		args := append([]string{"export", "--db", dbURL, "--out", filepath.Join(dir, "export")}, c.args...)
		out, errOut, err := cli(t, c.env, args...)
		if err != nil || !strings.Contains(out, "exported to") {
			t.Fatalf("%d: %v\n%s", i, err, out)
		}
		if strings.Contains(errOut, info) != c.wantInfo {
			t.Errorf("%d: env %v, flags %v: stderr %q, want the info line: %v", i, c.env, c.args, errOut, c.wantInfo)
		}
		if !c.wantInfo && errOut != "" {
			t.Errorf("%d: stderr %q, want nothing", i, errOut)
		}
	}
	// Off a terminal, verify draws no progress bar either.
	if out, errOut, err := cli(t, nil, "verify", "--export", filepath.Join(dir, "export")); err != nil || errOut != "" || !strings.Contains(out, "OK:") {
		t.Errorf("verify: %v, stderr %q\n%s", err, errOut, out)
	}
	if _, _, err := cli(t, nil, "export", "--db", dbURL, "--out", filepath.Join(dir, "x"), "--log-level", "loud"); err == nil || !strings.Contains(err.Error(), "want debug|info|warn|error") {
		t.Errorf("--log-level loud: %v", err)
	}
}
