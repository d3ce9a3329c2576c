package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A command builds only what it uses. With a broken model registry
// (ARENA_AGENTS) or broken selection rules (ARENA_ROUND_RULES), the
// commands that use neither (a round of named markets, listing and
// showing rounds, flagging a market) work, and make no log key as they
// sign nothing; the commands that trade, or create a round by the rules
// (round create without markets, serve), say what is wrong with the file.
func TestBrokenSettingFailsOnlyItsUsers(t *testing.T) {
	for _, c := range []struct {
		key, file, body string
		users           func(dbURL string) [][]string
	}{
		{"ARENA_AGENTS", "agents.json", `{"agents": [`, func(dbURL string) [][]string {
			return [][]string{{"cohort", "start", "--db", dbURL}}
		}},
		{"ARENA_ROUND_RULES", "rules.json", `{"min_price": `, func(dbURL string) [][]string {
			return [][]string{{"round", "create", "--db", dbURL}, {"serve", "--db", dbURL, "--no-sync", "--addr", "127.0.0.1:0"}}
		}},
	} {
		t.Run(c.key, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			dbURL := "sqlite:" + filepath.Join(dir, "a.db")
			ids := fcMarkets(t, dbURL, 2)
			file := filepath.Join(t.TempDir(), c.file)
			if err := os.WriteFile(file, []byte(c.body), 0o600); err != nil {
				t.Fatal(err)
			}
			environ := []string{c.key + "=" + file}
			for _, args := range [][]string{
				{"round", "create", "--db", dbURL, "--markets", fmt.Sprint(ids[0])},
				{"round", "list", "--db", dbURL},
				{"round", "show", "1", "--db", dbURL},
				{"oracle", "flag", "--db", dbURL, "--market", fmt.Sprint(ids[1]), "--reason", "ambiguous"},
			} {
				if out, _, err := cli(t, environ, args...); err != nil {
					t.Errorf("%s with a broken %s: %v\n%s", strings.Join(args[:2], " "), c.key, err, out)
				}
			}
			keys, err := filepath.Glob(filepath.Join(dir, "*.key"))
			if err != nil || len(keys) != 0 {
				t.Errorf("log keys made by commands that sign nothing: %v %v", keys, err)
			}
			for _, args := range c.users(dbURL) {
				if _, _, err := cli(t, environ, args...); err == nil || !strings.Contains(err.Error(), c.file) {
					t.Errorf("%s with a broken %s: %v", strings.Join(args[:2], " "), c.key, err)
				}
			}
		})
	}
}
