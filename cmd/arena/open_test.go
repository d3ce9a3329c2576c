package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Read-only commands refuse a database that does not exist instead of
// creating an empty one and answering with nothing.
func TestReadCommandsNeedAnExistingDatabase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "missing.db")
	for _, args := range [][]string{
		{"markets"},
		{"round", "list"},
		{"report", "leaderboard"},
		{"cohort", "list"},
		{"oracle", "queue"},
		{"oracle", "flag", "--market", "1", "--reason", "disputed"},
		{"oracle", "decide", "--market", "1", "--decision", "YES", "--arbiter", "ana", "--reason", "read the source"},
		{"oracle", "resolve", "--market", "1", "--agents", "agents.json"},
		{"oracle", "eval", "--source", "forecastbench", "--agents", "../../examples/agents.json"},
		{"backtest", "--source", "forecastbench", "--agents", "../../examples/agents.json", "--cache-dir", t.TempDir()},
	} {
		_, _, err := cli(t, nil, append(args, "--db", "sqlite:"+path)...)
		if err == nil || !strings.Contains(err.Error(), "does not exist") {
			t.Errorf("%v: %v, want 'does not exist'", args, err)
		}
		if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
			t.Fatalf("%v created %s", args, path)
		}
	}
}
