package demo_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/demo"
)

// A directory that already holds a demo database is refused up front, and
// the database is left as it was.
func TestDemoRefusesAUsedDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "new", "dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "arena.db")
	if err := os.WriteFile(db, []byte("earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := demo.Run(context.Background(), demo.Config{Seed: 1, Rounds: 1, Dir: dir, Server: server})
	if arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), "already holds a demo database") {
		t.Fatalf("reused dir: %v", err)
	}
	if b, _ := os.ReadFile(db); string(b) != "earlier run" {
		t.Fatalf("the earlier database changed: %q", b)
	}
}
