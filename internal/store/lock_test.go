package store_test

import (
	"context"
	"os"
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

// A symbolic link is another name of the same file: a server through the
// link and one through the file exclude each other, and restore through
// the link is refused while the file is served (and, once free, replaces
// the file, not the link).
func TestLocksFollowSymlinks(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	real := filepath.Join(dir, "arena.db")
	link := filepath.Join(t.TempDir(), "link.db")
	a := openURL(t, "sqlite:"+real)
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	if err := a.ClaimServer(); err != nil {
		t.Fatal(err)
	}
	b := openURL(t, "sqlite:"+link)
	if err := b.ClaimServer(); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("a second server through a symbolic link: %v", err)
	}
	bk := filepath.Join(t.TempDir(), "backup.db")
	if err := store.Backup(ctx, "sqlite:"+real, bk); err != nil {
		t.Fatal(err)
	}
	if _, err := store.Restore(ctx, bk, "sqlite:"+link, true); arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), "in use by a running server") {
		t.Fatalf("restore through a symbolic link to a served file: %v", err)
	}
	a.Close()
	b.Close()
	if _, err := store.Restore(ctx, bk, "sqlite:"+link, true); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Lstat(link); err != nil || st.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("restore replaced the link itself: %v %v", st, err)
	}
}
