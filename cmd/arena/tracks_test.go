package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command builds only what it uses: with a broken model registry
// (ARENA_AGENTS), the commands that never trade (round create, list and
// show, oracle flag) work, and make no log key as they sign nothing,
// while a command that trades says what is wrong with the registry.
func TestBrokenRegistryFailsOnlyTrading(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "a.db")
	ids := fcMarkets(t, dbURL, 2)
	reg := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(reg, []byte(`{"agents": [`), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"ARENA_AGENTS=" + reg}
	for _, args := range [][]string{
		{"round", "create", "--db", dbURL, "--markets", fmt.Sprint(ids[0])},
		{"round", "list", "--db", dbURL},
		{"round", "show", "1", "--db", dbURL},
		{"oracle", "flag", "--db", dbURL, "--market", fmt.Sprint(ids[1]), "--reason", "ambiguous"},
	} {
		if out, _, err := cli(t, environ, args...); err != nil {
			t.Errorf("%s with a broken ARENA_AGENTS: %v\n%s", strings.Join(args[:2], " "), err, out)
		}
	}
	keys, err := filepath.Glob(filepath.Join(dir, "*.key"))
	if err != nil || len(keys) != 0 {
		t.Errorf("log keys made by commands that sign nothing: %v %v", keys, err)
	}
	if _, _, err := cli(t, environ, "cohort", "start", "--db", dbURL); err == nil || !strings.Contains(err.Error(), "agents.json") {
		t.Errorf("cohort start with a broken ARENA_AGENTS: %v", err)
	}
}

// Broken selection rules (ARENA_ROUND_RULES) fail only what creates
// rounds by them: listing and showing rounds, flagging a market and a
// round of named markets work; a round selected by the rules, and serve,
// say what is wrong with the file.
func TestBrokenRulesFailOnlyRuleRounds(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "a.db")
	ids := fcMarkets(t, dbURL, 2)
	rules := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(rules, []byte(`{"min_price": `), 0o600); err != nil {
		t.Fatal(err)
	}
	environ := []string{"ARENA_ROUND_RULES=" + rules}
	for _, args := range [][]string{
		{"round", "create", "--db", dbURL, "--markets", fmt.Sprint(ids[0])},
		{"round", "list", "--db", dbURL},
		{"round", "show", "1", "--db", dbURL},
		{"oracle", "flag", "--db", dbURL, "--market", fmt.Sprint(ids[1]), "--reason", "ambiguous"},
	} {
		if out, _, err := cli(t, environ, args...); err != nil {
			t.Errorf("%s with a broken ARENA_ROUND_RULES: %v\n%s", strings.Join(args[:2], " "), err, out)
		}
	}
	if _, _, err := cli(t, environ, "round", "create", "--db", dbURL); err == nil || !strings.Contains(err.Error(), "rules.json") {
		t.Errorf("round create by the rules with a broken ARENA_ROUND_RULES: %v", err)
	}
	if _, _, err := cli(t, environ, "serve", "--db", dbURL, "--no-sync", "--addr", "127.0.0.1:0"); err == nil || !strings.Contains(err.Error(), "rules.json") {
		t.Errorf("serve with a broken ARENA_ROUND_RULES: %v", err)
	}
}
