package demo_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
)

// A directory that already holds a demo database is refused up front, and
// the database is left as it was.
func TestDemoRefusesAUsedDir(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "dir")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "arena.db")
	if err := os.WriteFile(db, []byte("earlier run"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := demo.Run(context.Background(), demo.Config{Seed: 1, Rounds: 1, Dir: dir})
	if arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), "already holds an arena database") {
		t.Fatalf("reused dir: %v", err)
	}
	if b, _ := os.ReadFile(db); string(b) != "earlier run" {
		t.Fatalf("the earlier database changed: %q", b)
	}
}

// A start later than 00:00 UTC is refused before anything is made: a
// round is created each UTC day, at the day's first step.
func TestDemoRefusesAStartWithinTheDay(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "d")
	_, err := demo.Run(context.Background(), demo.Config{Seed: 1, Rounds: 2, Dir: dir, Start: time.Date(2026, 1, 5, 22, 0, 0, 0, time.UTC)})
	if arena.ErrorKind(err) != arena.EINVALID || !strings.Contains(err.Error(), "00:00 UTC") {
		t.Fatalf("a start at 22:00: %v", err)
	}
	if _, serr := os.Stat(dir); !os.IsNotExist(serr) {
		t.Fatal("the refused demo made its directory")
	}
}

// A demo in a directory that holds another arena's database signs its
// log with a key of its own, named after its database and recorded in it,
// not with the other database's log.key; and while the demo runs, its
// database has a server: a second one is refused.
func TestDemoKeyIsItsOwn(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	other, err := store.Open(ctx, "sqlite:"+filepath.Join(dir, "prod.db"))
	if err != nil {
		t.Fatal(err)
	}
	key, err := tlog.LoadOrCreateKey(filepath.Join(dir, "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	prod := &tlog.Log{Store: other, Key: key}
	if err := prod.Append(ctx, "note", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	pub, err := tlog.NewPublisher(prod, "prod.test/log", other)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Publish(ctx); err != nil {
		t.Fatal(err)
	}
	other.Close()
	res, err := demo.Run(ctx, demo.Config{Seed: 1, Rounds: 1, Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	if res.App.TLog.PublicKeyHex() == prod.PublicKeyHex() {
		t.Fatal("the demo signed its log with the other database's log.key")
	}
	own, err := tlog.LoadOrCreateKey(filepath.Join(dir, "arena.db.log.key"))
	if err != nil || !own.Equal(res.App.TLog.Key) {
		t.Errorf("the demo's key is not arena.db.log.key (%v)", err)
	}
	if v, _, err := res.DB.Setting(ctx, tlog.KeySetting); err != nil || v != res.App.TLog.PublicKeyHex() {
		t.Errorf("recorded key %q, %v; want the demo's %s", v, err, res.App.TLog.PublicKeyHex())
	}
	second, err := store.Open(ctx, res.DBURL)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	if err := second.ClaimServer(); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("a second server on the demo's database: %v", err)
	}
}
