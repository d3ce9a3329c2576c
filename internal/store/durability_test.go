package store

import (
	"context"
	"path/filepath"
	"testing"
)

// SQLite fsyncs the WAL at every commit (synchronous = FULL, 2), so an
// acknowledged commit survives power loss, not only a killed process.
func TestSQLiteSynchronousFull(t *testing.T) {
	db, err := Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode int
	if err := db.db.QueryRow(`PRAGMA synchronous`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != 2 {
		t.Fatalf("synchronous = %d, want 2 (FULL)", mode)
	}
}
