package tlog_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

// The state file records the largest tree only, and refuses a file that
// is not one rather than take it for "nothing signed". A missing file is
// no record (not "nothing signed"): only Create makes one, once.
func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	s := tlog.StateFile{Path: filepath.Join(dir, "log.key.signed")}
	if got, err := s.LastSigned(); !errors.Is(err, tlog.ErrNoRecord) || !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no file: %+v, %v; want ErrNoRecord", got, err)
	}
	if err := s.RecordSigned(tlog.SignedTree{Size: 3, Root: make([]byte, 32)}); !errors.Is(err, tlog.ErrNoRecord) {
		t.Fatalf("recording without a record: %v", err)
	}
	if _, err := os.Lstat(s.Path + ".lock"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("reading no record made a lock file: %v", err)
	}
	if err := s.Create(tlog.SignedTree{}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.LastSigned(); err != nil || got.Size != 0 {
		t.Fatalf("a new record: %+v, %v", got, err)
	}
	if err := s.Create(tlog.SignedTree{}); !errors.Is(err, fs.ErrExist) {
		t.Fatalf("a second Create: %v", err)
	}
	root := func(b byte) []byte { r := make([]byte, 32); r[0] = b; return r }
	for _, c := range []struct {
		rec  tlog.SignedTree
		want uint64
	}{
		{tlog.SignedTree{Size: 0, Root: root(0)}, 0},
		{tlog.SignedTree{Size: 5, Root: root(5)}, 5},
		{tlog.SignedTree{Size: 3, Root: root(3)}, 5},
		{tlog.SignedTree{Size: 5, Root: root(6)}, 5},
		{tlog.SignedTree{Size: 9, Root: root(9)}, 9},
	} {
		if err := s.RecordSigned(c.rec); err != nil {
			t.Fatal(err)
		}
		got, err := s.LastSigned()
		if err != nil || got.Size != c.want || (c.want > 0 && !tlog.Equal(got.Root, root(byte(c.want)))) {
			t.Errorf("after recording %d: %+v, %v; want size %d", c.rec.Size, got, err, c.want)
		}
	}
	for name, text := range map[string]string{
		"empty":            "",
		"no header":        "5\n" + strings.Repeat("00", 32) + "\n",
		"size zero":        "forecast-arena signed tree v1\n0\n" + strings.Repeat("00", 32) + "\n",
		"short root":       "forecast-arena signed tree v1\n5\n00\n",
		"extra line":       "forecast-arena signed tree v1\n5\n" + strings.Repeat("00", 32) + "\nx\n",
		"huge":             strings.Repeat("x", 5000),
		"sign in size":     "forecast-arena signed tree v1\n+5\n" + strings.Repeat("00", 32) + "\n",
		"zero-padded size": "forecast-arena signed tree v1\n05\n" + strings.Repeat("00", 32) + "\n",
		"size zero with a root other than the empty tree's": "forecast-arena signed tree v1\n0\n" + strings.Repeat("ab", 32) + "\n",
	} {
		os.WriteFile(s.Path, []byte(text), 0o600)
		if _, err := s.LastSigned(); arena.ErrorKind(err) != arena.EINVALID || !strings.Contains(err.Error(), "docs/operations.md") {
			t.Errorf("%s: %v", name, err)
		}
		if err := s.RecordSigned(tlog.SignedTree{Size: 20, Root: root(20)}); err == nil {
			t.Errorf("%s: recorded over a file that is not a record", name)
		}
	}
}

// A log with a record signs checkpoints that extend it, and
// nothing once its store lost or changed the recorded tree.
func TestSignedGuard(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p, _ := newPublisher(t, db)
		record := tlog.StateFile{Path: filepath.Join(t.TempDir(), "signed")}
		if err := record.Create(tlog.SignedTree{}); err != nil {
			t.Fatal(err)
		}
		p.Log.Signed = record
		appendN(t, p.Log, 4)
		if c, err := p.Publish(ctx); err != nil || c.Size != 4 {
			t.Fatalf("publish: %+v, %v", c, err)
		}
		appendN(t, p.Log, 2)
		if c, err := p.Publish(ctx); err != nil || c.Size != 6 {
			t.Fatalf("publish: %+v, %v", c, err)
		}
		if got, _ := p.Log.Signed.LastSigned(); got.Size != 6 {
			t.Fatalf("recorded size %d, want 6", got.Size)
		}
		if err := p.Log.CheckSigned(ctx); err != nil {
			t.Fatal(err)
		}
		// The same key on another store, as after a restore: a log of
		// its own, shorter and then longer than the record.
		other := &tlog.Log{Store: storetest.Open(t, db.Engine()), Key: p.Log.Key, Signed: p.Log.Signed}
		if err := other.CheckSigned(ctx); !errors.Is(err, tlog.ErrFork) || arena.ErrorKind(err) != arena.ECONFLICT {
			t.Errorf("a shorter log: %v", err)
		}
		appendN(t, other, 8)
		otherPub, err := tlog.NewPublisher(other, origin, &tlog.MemCheckpoints{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := otherPub.Publish(ctx); !errors.Is(err, tlog.ErrFork) {
			t.Errorf("publishing a forked log: %v", err)
		}
		if got, _ := p.Log.Signed.LastSigned(); got.Size != 6 {
			t.Errorf("the refusals recorded size %d", got.Size)
		}
	})
}
