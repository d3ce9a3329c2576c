package store

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	msqlite "modernc.org/sqlite"

	"github.com/forecast-arena/arena"
)

// faultPragmas holds, per SQLite file, the pragmas every new connection to
// it runs: how the fault tests put one database (and no other test's) on a
// full disk or make it read-only.
var faultPragmas = struct {
	sync.Mutex
	once   sync.Once
	byPath map[string][]string
}{byPath: map[string][]string{}}

// injectFault makes every new connection of d (at path) run pragmas, or
// none when pragmas is empty, and drops the idle connections so that the
// next statements run on new ones.
func injectFault(t *testing.T, d *DB, path string, pragmas ...string) {
	t.Helper()
	faultPragmas.once.Do(func() {
		msqlite.RegisterConnectionHook(func(conn msqlite.ExecQuerierContext, dsn string) error {
			faultPragmas.Lock()
			defer faultPragmas.Unlock()
			for p, ps := range faultPragmas.byPath {
				if !strings.HasPrefix(dsn, "file:"+p+"?") {
					continue
				}
				for _, q := range ps {
					if _, err := conn.ExecContext(context.Background(), q, nil); err != nil {
						return err
					}
				}
			}
			return nil
		})
	})
	faultPragmas.Lock()
	faultPragmas.byPath[path] = pragmas
	faultPragmas.Unlock()
	t.Cleanup(func() { faultPragmas.Lock(); delete(faultPragmas.byPath, path); faultPragmas.Unlock() })
	d.db.SetMaxIdleConns(0)
	d.db.SetMaxIdleConns(2)
}

func faultMarkets(from, n, questionLen int) []*arena.Market {
	var ms []*arena.Market
	for i := from; i < from+n; i++ {
		ms = append(ms, &arena.Market{Source: "test", SourceID: fmt.Sprint(i), Kind: arena.KindMarket,
			Question: fmt.Sprintf("Will %d happen? %s", i, strings.Repeat("x", questionLen)), EventID: fmt.Sprint(i), Type: arena.Binary,
			Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.4, arena.No: 0.6},
			CloseTime: time.Now().Add(24 * time.Hour), Status: arena.StatusOpen})
	}
	return ms
}

// faultDB opens a new SQLite database holding n acknowledged markets.
func faultDB(t *testing.T, name string, n, questionLen int) (*DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	d, err := Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	if _, err := d.SaveMarkets(context.Background(), faultMarkets(0, n, questionLen)); err != nil {
		t.Fatal(err)
	}
	return d, path
}

func countMarkets(t *testing.T, d *DB) int {
	t.Helper()
	ms, err := d.Markets(context.Background(), arena.MarketFilter{})
	if err != nil {
		t.Fatalf("reading markets: %v", err)
	}
	return len(ms)
}

func integrityOK(t *testing.T, path string) {
	t.Helper()
	d, err := Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	var res string
	if err := d.db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err != nil || res != "ok" {
		t.Fatalf("integrity_check: %q %v", res, err)
	}
}

// A full disk (SQLite's max_page_count pinned to the file's size): the
// write that needs room fails with a clear, wrapped error and changes
// nothing; everything acknowledged before is still there and readable;
// once room is back, writes go through again and the file is sound.
func TestFaultDiskFull(t *testing.T) {
	ctx := context.Background()
	d, path := faultDB(t, "full.db", 10, 10)
	var pages int
	if err := d.db.QueryRow(`PRAGMA page_count`).Scan(&pages); err != nil {
		t.Fatal(err)
	}
	injectFault(t, d, path, fmt.Sprintf("PRAGMA max_page_count = %d", pages))

	_, err := d.SaveMarkets(ctx, faultMarkets(10, 300, 2000))
	if err == nil {
		t.Fatal("a write that needs room succeeded on a full disk")
	}
	if !strings.HasPrefix(err.Error(), "store: ") || !strings.Contains(err.Error(), "full") {
		t.Fatalf("unclear error on a full disk: %v", err)
	}
	t.Logf("full disk: %v", err)
	if n := countMarkets(t, d); n != 10 {
		t.Fatalf("%d markets readable on a full disk, want the 10 acknowledged", n)
	}
	if err := d.Ping(ctx); err != nil {
		t.Fatalf("ping on a full disk: %v", err)
	}

	injectFault(t, d, path) // room again
	if _, err := d.SaveMarkets(ctx, faultMarkets(10, 300, 2000)); err != nil {
		t.Fatalf("write after the disk has room again: %v", err)
	}
	d.Close()
	integrityOK(t, path)
	d2, _ := Open(ctx, "sqlite:"+path)
	defer d2.Close()
	if n := countMarkets(t, d2); n != 310 {
		t.Fatalf("%d markets after reopening, want 310", n)
	}
}

// A read-only database: writes fail with a clear error, reads keep
// answering, and nothing acknowledged is lost. Permission bits do not stop
// root (this machine's test user), so the file is made read-only for
// SQLite itself (query_only on every connection); a non-root run also
// tries a 0444 file.
func TestFaultReadOnlyDatabase(t *testing.T) {
	ctx := context.Background()
	d, path := faultDB(t, "ro.db", 10, 10)
	injectFault(t, d, path, "PRAGMA query_only = 1")
	_, err := d.SaveMarkets(ctx, faultMarkets(10, 5, 10))
	if err == nil || !strings.HasPrefix(err.Error(), "store: ") || !strings.Contains(err.Error(), "readonly") {
		t.Fatalf("write to a read-only database: %v", err)
	}
	t.Logf("read-only: %v", err)
	if n := countMarkets(t, d); n != 10 {
		t.Fatalf("%d markets readable, want the 10 acknowledged", n)
	}
	injectFault(t, d, path)
	d.Close()
	integrityOK(t, path)

	if os.Geteuid() == 0 {
		t.Log("running as root: a 0444 file does not stop writes, so only the read-only connection case ran")
		return
	}
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	d2, err := Open(ctx, "sqlite:"+path)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "store: ") {
			t.Fatalf("opening a 0444 database: unclear error %v", err)
		}
		return
	}
	defer d2.Close()
	if _, err := d2.SaveMarkets(ctx, faultMarkets(10, 5, 10)); err == nil || !strings.HasPrefix(err.Error(), "store: ") {
		t.Fatalf("write to a 0444 database: %v", err)
	}
	if n := countMarkets(t, d2); n != 10 {
		t.Fatalf("%d markets readable from a 0444 file, want 10", n)
	}
}

// A database file with garbage in the middle: opening it or reading the
// damaged table fails with SQLite's "malformed" error, wrapped by the
// store, never a panic; integrity_check names the damage.
func TestFaultCorruptDatabase(t *testing.T) {
	ctx := context.Background()
	d, path := faultDB(t, "corrupt.db", 400, 500)
	// The garbage goes over the markets table's root page and the pages
	// after it, wherever the schema's other tables put them.
	var root int64
	if err := d.db.QueryRow(`SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'markets'`).Scan(&root); err != nil {
		t.Fatal(err)
	}
	d.Close() // the last connection checkpoints the WAL into the file
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	const page = 4096
	garbage := []byte(strings.Repeat("\xa5\x5a", 4*page/2))
	if _, err := f.WriteAt(garbage, (root-1)*page); err != nil {
		t.Fatal(err)
	}
	f.Close()

	d, err = Open(ctx, "sqlite:"+path)
	if err != nil {
		if !strings.HasPrefix(err.Error(), "store: ") || !strings.Contains(err.Error(), "malformed") {
			t.Fatalf("opening a corrupt database: unclear error %v", err)
		}
		t.Logf("corrupt file, open: %v", err)
		return
	}
	defer d.Close()
	_, err = d.Markets(ctx, arena.MarketFilter{})
	if err == nil || !strings.HasPrefix(err.Error(), "store: ") || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("reading a corrupt table: %v", err)
	}
	t.Logf("corrupt file, read: %v", err)
	var res string
	if err := d.db.QueryRow(`PRAGMA integrity_check`).Scan(&res); err == nil && res == "ok" {
		t.Fatal("integrity_check found no damage")
	}
}
