package store

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// SQLite fsyncs the WAL at every commit (synchronous = FULL, 2), so an
// acknowledged commit survives power loss, not only a killed process;
// only a database opened Unsynced (the demo's throwaway) syncs less
// (NORMAL, 1).
func TestSQLiteSynchronousFull(t *testing.T) {
	for _, c := range []struct {
		opts []Option
		want int
	}{{nil, 2}, {[]Option{Unsynced()}, 1}} {
		db, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "a.db"), c.opts...)
		if err != nil {
			t.Fatal(err)
		}
		var mode int
		if err := db.db.QueryRow(`PRAGMA synchronous`).Scan(&mode); err != nil {
			t.Fatal(err)
		}
		db.Close()
		if mode != c.want {
			t.Fatalf("%d options: synchronous = %d, want %d", len(c.opts), mode, c.want)
		}
	}
}

// Unsynced is for the demo's throwaway database alone: no other part of
// the program opens a database with it.
func TestUnsyncedOnlyInTheDemo(t *testing.T) {
	root := filepath.Join("..", "..")
	var users []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), "store.Unsynced(") {
			rel, _ := filepath.Rel(root, path)
			users = append(users, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 1 || users[0] != "internal/demo/demo.go" {
		t.Fatalf("store.Unsynced is used by %v, want internal/demo/demo.go alone", users)
	}
}
