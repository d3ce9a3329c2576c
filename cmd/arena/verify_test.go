package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The demo prints its log root and a verify command that passes; an export
// made with 'arena export' verifies too; a wrong log key is refused.
func TestDemoExportVerify(t *testing.T) {
	t.Parallel()
	dir, out := playedDemo(t)
	m := regexp.MustCompile(`Tamper-evident log: (\d+) entries, root ([0-9a-f]{64})`).FindStringSubmatch(out)
	if m == nil || m[1] == "0" {
		t.Fatalf("no log root in the demo output:\n%s", out)
	}
	cmd := regexp.MustCompile(`arena verify --export (\S+) --vkey (\S+)`).FindStringSubmatch(out)
	if cmd == nil {
		t.Fatalf("no verify command in the demo output:\n%s", out)
	}
	got, _, err := cli(t, nil, "verify", "--export", cmd[1], "--vkey", cmd[2])
	if err != nil || !strings.Contains(got, "OK:") || !strings.Contains(got, "root "+m[2]) {
		t.Fatalf("verify of the demo export: %v\n%s", err, got)
	}
	csvDir := filepath.Join(dir, "csv")
	if _, _, err := cli(t, nil, "export", "--db", "sqlite:"+filepath.Join(dir, "arena.db"), "--out", csvDir, "--format", "csv"); err != nil {
		t.Fatal(err)
	}
	if got, _, err := cli(t, nil, "verify", "--export", csvDir, "--vkey", cmd[2]); err != nil || !strings.Contains(got, "OK:") {
		t.Fatalf("verify of the CSV export: %v\n%s", err, got)
	}
	wrong := strings.Repeat("ab", 32)
	// A failed verification prints no counts, only the error: the first
	// difference by table and column, and how many there are.
	out, _, err = cli(t, nil, "verify", "--export", csvDir, "--log-key", wrong)
	if err == nil || !strings.Contains(err.Error(), "(its meta.json), but --log-key names the key "+wrong+": --log-key is another arena's, or the export is") ||
		!strings.Contains(err.Error(), "differences in all") || out != "" {
		t.Fatalf("verify with another log key: %v\n%s", err, out)
	}
}
