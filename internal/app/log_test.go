package app

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

// A log's key belongs to its database: the first key that opens the log
// is recorded in it, and after that another key, or none, is refused with
// the keys named, even before the log has signed anything; a refusal
// makes no key file. A database whose log has signed heads and records no
// key yet records the key that signed them. On every engine.
func TestLogKeyBoundToDatabase(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dir := t.TempDir()
			o := config.Options{DB: storetest.URL(t, engine)}
			db := openStore(t, o.DB)
			a, b, missing := filepath.Join(dir, "a.key"), filepath.Join(dir, "b.key"), filepath.Join(dir, "missing.key")
			lg, err := openLog(ctx, withKey(o, a), db, quiet)
			if err != nil {
				t.Fatal(err)
			}
			keyB, err := tlog.LoadOrCreateKey(b)
			if err != nil {
				t.Fatal(err)
			}
			other := (&tlog.Log{Key: keyB}).PublicKeyHex()
			for _, c := range []struct{ key, want string }{
				{b, "log key " + b + ": tlog: this database's log belongs to the key with public half " + lg.PublicKeyHex() + " (recorded in the database), not to this key (public half " + other + ")"},
				{missing, "log key " + missing + " does not exist, but this database's log belongs to the key with public half " + lg.PublicKeyHex()},
			} {
				if _, err := openLog(ctx, withKey(o, c.key), db, quiet); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("open with %s: %v, want %q", filepath.Base(c.key), err, c.want)
				}
			}
			if _, err := os.Stat(missing); !os.IsNotExist(err) {
				t.Errorf("a refused key made its file: %v", err)
			}
			if _, err := openLog(ctx, withKey(o, a), db, quiet); err != nil {
				t.Errorf("the bound key again: %v", err)
			}

			// A log published before keys were recorded: its signer is recorded.
			o = config.Options{DB: storetest.URL(t, engine)}
			old := openStore(t, o.DB)
			signed := &tlog.Log{Store: old, Key: keyB, Logger: quiet}
			if err := signed.Append(ctx, "note", map[string]int{"n": 1}); err != nil {
				t.Fatal(err)
			}
			publish(t, signed, old)
			// Such a log has no record beside its key either: refused,
			// binding nothing, until the operator says to make one.
			if _, err := openLog(ctx, withKey(o, b), old, quiet); err == nil || !strings.Contains(err.Error(), "start once with --new-log-record") {
				t.Fatalf("a published log without a record: %v", err)
			}
			if v, _, _ := old.Setting(ctx, tlog.KeySetting); v != "" {
				t.Fatalf("the refused start bound the key %s", v)
			}
			o.NewLogRecord = true
			if _, err := openLog(ctx, withKey(o, b), old, quiet); err != nil {
				t.Fatal(err)
			}
			if v, _, err := old.Setting(ctx, tlog.KeySetting); err != nil || v != other {
				t.Errorf("recorded key %q, %v; want the signer's %s", v, err, other)
			}
			if st, err := (tlog.StateFile{Path: tlog.StatePath(b)}).LastSigned(); err != nil || st.Size != 1 {
				t.Errorf("the record made: %+v, %v; want the checkpoint's size 1", st, err)
			}
			if _, err := openLog(ctx, withKey(o, b), old, quiet); err == nil || !strings.Contains(err.Error(), "--new-log-record (ARENA_NEW_LOG_RECORD): the log key's record "+tlog.StatePath(b)+" exists") {
				t.Errorf("--new-log-record with a record: %v", err)
			}
			o.NewLogRecord = false
			if _, err := openLog(ctx, withKey(o, b), old, quiet); err != nil {
				t.Errorf("the next start: %v", err)
			}
		})
	}
}

// Two SQLite databases in one directory get a key each, named after the
// database. A log.key beside them (the former shared default) stays the
// key of the database whose log it signed, and is not taken by another.
func TestLogKeyPerDatabase(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	old := config.Options{DB: "sqlite:" + filepath.Join(dir, "arena.db")}
	db := openStore(t, old.DB)
	legacy, err := tlog.LoadOrCreateKey(filepath.Join(dir, "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	// It kept its record beside it, as every version since the record.
	signed := &tlog.Log{Store: db, Key: legacy, Logger: quiet, Signed: newRecord(t, filepath.Join(dir, "log.key"))}
	if err := signed.Append(ctx, "note", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	publish(t, signed, db)
	lg, err := openLog(ctx, old, db, quiet)
	if err != nil {
		t.Fatal(err)
	}
	if lg.PublicKeyHex() != signed.PublicKeyHex() {
		t.Errorf("the database signed by log.key opened with key %s, want log.key's %s", lg.PublicKeyHex(), signed.PublicKeyHex())
	}
	if _, err := os.Stat(filepath.Join(dir, "arena.db.log.key")); !os.IsNotExist(err) {
		t.Errorf("a key file was made for a database whose key is log.key: %v", err)
	}

	fresh := config.Options{DB: "sqlite:" + filepath.Join(dir, "b.db")}
	lgB, err := openLog(ctx, fresh, openStore(t, fresh.DB), quiet)
	if err != nil {
		t.Fatal(err)
	}
	if lgB.PublicKeyHex() == signed.PublicKeyHex() {
		t.Fatal("a second database in the directory took the other database's log.key")
	}
	if _, err := os.Stat(filepath.Join(dir, "b.db.log.key")); err != nil {
		t.Errorf("b.db's own key file: %v", err)
	}
	// A log.key that did not sign this database's log is not taken for it.
	third := config.Options{DB: "sqlite:" + filepath.Join(dir, "c.db")}
	c := openStore(t, third.DB)
	other := &tlog.Log{Store: c, Key: lgB.Key, Logger: quiet, Signed: lgB.Signed}
	if err := other.Append(ctx, "note", map[string]int{"n": 1}); err != nil {
		t.Fatal(err)
	}
	publish(t, other, c)
	if _, err := openLog(ctx, third, c, quiet); arena.ErrorKind(err) != arena.EINVALID || !strings.Contains(err.Error(), "c.db.log.key does not exist, but this database's log has a published checkpoint") {
		t.Fatalf("c.db, signed by another key than log.key: %v", err)
	}
}

// publish signs a checkpoint of lg into db, as serve's publisher does.
func publish(t *testing.T, lg *tlog.Log, db arena.CheckpointStore) {
	t.Helper()
	pub, err := tlog.NewPublisher(lg, "arena.test/log", db)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pub.Publish(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// newRecord makes the empty record of the key file at keyPath.
func newRecord(t *testing.T, keyPath string) tlog.StateFile {
	t.Helper()
	r := tlog.StateFile{Path: tlog.StatePath(keyPath)}
	if err := r.Create(tlog.SignedTree{}); err != nil {
		t.Fatal(err)
	}
	return r
}

// withKey is o with the log key file path.
func withKey(o config.Options, path string) config.Options {
	o.LogKey = path
	return o
}

// openStore opens the database at dbURL for a test; it is closed when the
// test ends.
func openStore(t testing.TB, dbURL string) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
