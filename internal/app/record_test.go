//go:build unix

package app

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

// The log key's record of the trees it signed, at start: a log that has
// signed makes a start without a readable record fail, saying what to
// do, and the refused start changes nothing (the record's path, the key
// bound in the database, the database's log); opening never blocks. A
// FIFO there once blocked serve at start, deaf to SIGINT and SIGTERM; a
// dangling link let it sign a second root for a published size.
func TestLogRecordAtStart(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name  string
		spoil func(t *testing.T, record string)
		want  []string
	}{
		{"missing", func(t *testing.T, r string) { mustDo(t, os.Remove(r)) },
			[]string{"has no record of the trees it signed", "is missing", "has a published checkpoint (3 entries in the log)", "start once with --new-log-record", `"Restoring a backup"`}},
		{"a dangling symbolic link", func(t *testing.T, r string) {
			mustDo(t, os.Remove(r))
			mustDo(t, os.Symlink(r+".gone", r))
		}, []string{"is a symbolic link, not the record", "move it away", `"Restoring a backup"`}},
		{"a FIFO", func(t *testing.T, r string) {
			mustDo(t, os.Remove(r))
			mustDo(t, syscall.Mkfifo(r, 0o600))
		}, []string{"is a named pipe, not the record"}},
		{"a directory", func(t *testing.T, r string) {
			mustDo(t, os.Remove(r))
			mustDo(t, os.Mkdir(r, 0o700))
		}, []string{"is a directory, not the record"}},
		{"a device", func(t *testing.T, r string) {
			mustDo(t, os.Remove(r))
			if err := syscall.Mknod(r, syscall.S_IFCHR|0o600, 1<<8|3); err != nil {
				t.Skipf("cannot make a device here: %v", err)
			}
		}, []string{"is a device, not the record"}},
		{"not a record", func(t *testing.T, r string) { mustDo(t, os.WriteFile(r, []byte("size=3\n"), 0o600)) },
			[]string{"is not a signed-tree state file", "the arena must read and replace this record"}},
		{"a smaller tree (an older copy put back)", func(t *testing.T, r string) {
			mustDo(t, os.Remove(r))
			mustDo(t, (tlog.StateFile{Path: r}).Create(tlog.SignedTree{})) // the record of size 0
			mustDo(t, (tlog.StateFile{Path: r}).RecordSigned(tlog.SignedTree{Size: 9, Root: make([]byte, 32)}))
		}, []string{"the log key signed a tree of 9 entries", "but this database's log has only 3", `"Restoring a backup"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			o, db, lg := publishedArena(t, dir)
			record := tlog.StatePath(o.LogKey)
			c.spoil(t, record)
			before := snapshot(t, dir)
			err := openLogWithin(t, o, db)
			for _, w := range c.want {
				if err == nil || !strings.Contains(err.Error(), w) {
					t.Errorf("%v\nwant a refusal with %q", err, w)
				}
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the refused start changed the directory:\n%s\nwas\n%s", after, before)
			}
			if size, err := lg.Size(ctx); err != nil || size != 3 {
				t.Errorf("log size %d, %v", size, err)
			}
		})
	}
}

// The first start of a new log makes the record (of the empty tree); any
// start of a log that has signed, or belongs to the key, needs it.
func TestLogRecordMadeOnce(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	o := config.Options{DB: "sqlite:" + filepath.Join(dir, "arena.db"), LogKey: filepath.Join(dir, "k")}
	db := openStore(t, o.DB)
	if _, err := openLog(ctx, o, db, quiet); err != nil {
		t.Fatal(err)
	}
	st, err := (tlog.StateFile{Path: tlog.StatePath(o.LogKey)}).LastSigned()
	if err != nil || st.Size != 0 {
		t.Fatalf("the first start's record: %+v, %v", st, err)
	}
	// Bound to the key but never published: still the key's, so a lost
	// record is refused (an older backup of a log that did publish looks
	// just like this).
	mustDo(t, os.Remove(tlog.StatePath(o.LogKey)))
	if _, err := openLog(ctx, o, db, quiet); err == nil || !strings.Contains(err.Error(), "belongs to this key (0 entries in the log)") {
		t.Fatalf("a bound log without its record: %v", err)
	}
	if _, err := os.Lstat(tlog.StatePath(o.LogKey)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the refused start made a record: %v", err)
	}
}

// publishedArena opens a new SQLite arena in dir, with its log key there,
// and publishes a checkpoint of 3 entries.
func publishedArena(t *testing.T, dir string) (config.Options, *store.DB, *tlog.Log) {
	t.Helper()
	ctx := context.Background()
	o := config.Options{DB: "sqlite:" + filepath.Join(dir, "arena.db"), LogKey: filepath.Join(dir, "arena.db.log.key")}
	db := openStore(t, o.DB)
	lg, err := openLog(ctx, o, db, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		mustDo(t, lg.Append(ctx, "note", map[string]int{"n": i}))
	}
	publish(t, lg, db)
	return o, db, lg
}

// openLogWithin opens the log as a start does, failing the test if that
// blocks (a FIFO opened for reading waits for a writer).
func openLogWithin(t *testing.T, o config.Options, db *store.DB) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { _, err := openLog(context.Background(), o, db, slog.New(slog.DiscardHandler)); done <- err }()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatal("opening the log blocked")
		return nil
	}
}

// snapshot lists what dir holds: each entry's name, type, size and
// contents (a link's target), for telling that a refused start wrote
// nothing there.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range es {
		p := filepath.Join(dir, e.Name())
		fi, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + " " + fi.Mode().String())
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			b.WriteString(" -> " + target)
		case fi.Mode().IsRegular() && !strings.HasPrefix(e.Name(), "arena.db"):
			body, _ := os.ReadFile(p)
			b.WriteString(" " + string(body))
		}
		b.WriteString("\n")
	}
	return b.String()
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// The log key's own path holding what is not a key file: refused at once
// (a FIFO there would have blocked the start), writing nothing: no key
// written through a dangling link, no record, no key bound.
func TestLogKeyNotAFile(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		make func(t *testing.T, key string)
		want string
	}{
		{"a FIFO", func(t *testing.T, k string) { mustDo(t, syscall.Mkfifo(k, 0o600)) }, "is a named pipe, not a regular file"},
		{"a directory", func(t *testing.T, k string) { mustDo(t, os.Mkdir(k, 0o700)) }, "is a directory, not a regular file"},
		{"a dangling symbolic link", func(t *testing.T, k string) { mustDo(t, os.Symlink(k+".elsewhere", k)) }, "is a symbolic link to " + "%s.elsewhere, which does not exist"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			o := config.Options{DB: "sqlite:" + filepath.Join(dir, "arena.db"), LogKey: filepath.Join(dir, "k")}
			db := openStore(t, o.DB)
			c.make(t, o.LogKey)
			before := snapshot(t, dir)
			err := openLogWithin(t, o, db)
			want := strings.ReplaceAll(c.want, "%s", o.LogKey)
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%v, want %q", err, want)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the refused start changed the directory:\n%s\nwas\n%s", after, before)
			}
			if v, _, _ := db.Setting(ctx, tlog.KeySetting); v != "" {
				t.Errorf("the refused start bound key %s", v)
			}
		})
	}
}

// --new-log-record takes the database's word for what was signed only
// when its log holds its own latest checkpoint: a database whose latest
// checkpoint is of another tree gets no record.
func TestNewLogRecordChecksTheDatabase(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	dir := t.TempDir()
	o, db, lg := publishedArena(t, dir)
	mustDo(t, os.Remove(tlog.StatePath(o.LogKey)))
	// A checkpoint of another tree, signed by the key, saved as this
	// database's latest: its word no longer matches its log.
	other := openStore(t, "sqlite:"+filepath.Join(dir, "other.db"))
	forged := &tlog.Log{Store: other, Key: lg.Key, Logger: quiet}
	for i := range 4 {
		mustDo(t, forged.Append(ctx, "note", map[string]int{"other": i}))
	}
	publish(t, forged, other)
	note, err := other.LatestCheckpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(note)))
	if err != nil {
		t.Fatal(err)
	}
	mustDo(t, db.SaveCheckpoint(ctx, arena.SignedCheckpoint{Size: c.Size, Note: note}))
	o.NewLogRecord = true
	if _, err := openLog(ctx, o, db, quiet); err == nil || !strings.Contains(err.Error(), "--new-log-record: this database's log does not hold its own latest checkpoint") {
		t.Fatalf("--new-log-record on a database whose log contradicts its checkpoint: %v", err)
	}
	if _, err := os.Lstat(tlog.StatePath(o.LogKey)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a record was made: %v", err)
	}
}

// Replicas of one new database started at once on one host, sharing the
// key directory: every start opens the log with the one key made, and
// its one record, whichever made them (both engines).
func TestLogFirstStartsAtOnce(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			o := config.Options{DB: storetest.URL(t, engine), LogKey: filepath.Join(t.TempDir(), "log.key")}
			db := openStore(t, o.DB)
			const n = 8
			keys := make(chan string, n)
			errs := make(chan error, n)
			for range n {
				go func() {
					lg, err := openLog(ctx, o, db, quiet)
					if err != nil {
						errs <- err
						return
					}
					keys <- lg.PublicKeyHex()
				}()
			}
			seen := map[string]bool{}
			for range n {
				select {
				case k := <-keys:
					seen[k] = true
				case err := <-errs:
					t.Errorf("a start: %v", err)
				}
			}
			if len(seen) > 1 {
				t.Errorf("%d keys for one log", len(seen))
			}
			if st, err := (tlog.StateFile{Path: tlog.StatePath(o.LogKey)}).LastSigned(); err != nil || st.Size != 0 {
				t.Errorf("the record: %+v, %v", st, err)
			}
		})
	}
}
