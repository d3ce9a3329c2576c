package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// One handle at a time serves a SQLite file: a second claim is refused
// until the first handle closes, and restore refuses the file while any
// handle has it open, naming a server when one serves it. PostgreSQL
// replicas share a database: every claim succeeds.
func TestServerClaimAndRestoreLocks(t *testing.T) {
	ctx := context.Background()
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			url := storetest.URL(t, engine)
			a, b := openURL(t, url), openURL(t, url)
			if err := a.ClaimServer(); err != nil {
				t.Fatal(err)
			}
			err := b.ClaimServer()
			if engine == "postgres" {
				if err != nil {
					t.Fatalf("a second replica on PostgreSQL: %v", err)
				}
				return
			}
			if arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), "already served by another process") {
				t.Fatalf("second server: %v", err)
			}
			path := strings.TrimPrefix(url, "sqlite:")
			bk := filepath.Join(t.TempDir(), "backup.db")
			if err := store.Backup(ctx, url, bk); err != nil {
				t.Fatal(err)
			}
			restore := func(want string) {
				t.Helper()
				_, err := store.Restore(ctx, bk, url, true)
				if want == "" && err != nil || want != "" && (arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), want)) {
					t.Fatalf("restore: %v, want %q", err, want)
				}
			}
			restore(path + " is in use by a running server")
			a.Close()
			restore(path + " is open in another arena process")
			if err := b.ClaimServer(); err != nil {
				t.Fatalf("claim after the first server closed: %v", err)
			}
			b.Close()
			restore("")
		})
	}
}

func openURL(t *testing.T, url string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
