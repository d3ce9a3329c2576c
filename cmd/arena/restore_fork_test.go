package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// forkArena opens the arena of the SQLite database at db with its log
// signed by keyFile, optionally on a clock of its own and with a witness
// policy, as serve does before it serves: the store, then the log.
func forkArena(t *testing.T, db, keyFile, policy string, now func() time.Time, opts ...func(*config.Options)) (*app.App, error) {
	t.Helper()
	ctx := context.Background()
	o := config.Defaults()
	o.DB, o.LogKey, o.WitnessPolicy, o.LogOrigin = db, keyFile, policy, "arena.test/log"
	for _, f := range opts {
		f(&o)
	}
	s, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	a, err := app.New(ctx, o, app.Deps{DB: s, Now: now, Log: app.LogWrite})
	if err != nil {
		s.Close()
		return nil, err
	}
	return a, nil
}

// appendPublish appends n entries tagged with tag to the arena's log and
// publishes a checkpoint of it, returning the checkpoint's size.
func appendPublish(t *testing.T, a *app.App, tag string, n int) uint64 {
	t.Helper()
	ctx := context.Background()
	for i := range n {
		if err := a.TLog.Append(ctx, tlog.KindScore, map[string]any{"tag": tag, "i": i}); err != nil {
			t.Fatal(err)
		}
	}
	pub, _ := a.Publisher()
	c, err := pub.Publish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return c.Size
}

// publishPastBackup is the first half of the restore-fork sequence: 3
// entries published, a backup taken (returned), 2 more published.
func publishPastBackup(t *testing.T, dir, db, keyFile, policy string) string {
	t.Helper()
	a, err := forkArena(t, db, keyFile, policy, nil)
	if err != nil {
		t.Fatal(err)
	}
	appendPublish(t, a, "before", 3)
	a.Close()
	bk := filepath.Join(dir, "backup.db")
	if _, _, err := cli(t, nil, "backup", "--db", db, "--out", bk); err != nil {
		t.Fatal(err)
	}
	if a, err = forkArena(t, db, keyFile, policy, nil); err != nil {
		t.Fatal(err)
	}
	if size := appendPublish(t, a, "published", 2); size != 5 {
		t.Fatalf("published size %d, want 5", size)
	}
	a.Close()
	return bk
}

// The restore-fork sequence: back up, append and publish, restore the
// backup, append different entries. The database's own checkpoint goes
// back with the backup, so before the record kept beside the key the
// arena signed a second root for a published size under the same key.
// Now opening the log refuses, naming the record, whether the restored
// log was appended to or not, on a clock set back, and for a second
// database given the same key. The untouched arena still opens, on a
// clock set back too (the record is by size, not by time).
func TestRestoreForkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "arena.db")
	keyFile := filepath.Join(dir, "log.key")
	bk := publishPastBackup(t, dir, db, keyFile, "")
	state, err := tlog.StateFile{Path: tlog.StatePath(keyFile)}.LastSigned()
	if err != nil || state.Size != 5 {
		t.Fatalf("recorded %+v, %v; want size 5", state, err)
	}
	// The published arena opens again, on a clock a day behind too.
	yesterday := func() time.Time { return time.Now().Add(-24 * time.Hour) }
	a, err := forkArena(t, db, keyFile, "", yesterday)
	if err != nil {
		t.Fatalf("the published arena, clock set back: %v", err)
	}
	a.Close()

	if _, _, err := cli(t, nil, "restore", "--in", bk, "--db", db, "--force"); err != nil {
		t.Fatal(err)
	}
	refused := func(what string, err error, want string) {
		t.Helper()
		if err == nil || !errors.Is(err, tlog.ErrFork) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tlog.StatePath(keyFile)) {
			t.Errorf("%s: %v, want a refusal naming the record and %q", what, err, want)
		}
	}
	_, err = forkArena(t, db, keyFile, "", nil)
	refused("the restored backup", err, "a tree of 5 entries")

	// Different entries appended to the restored log (by a process that
	// signs nothing): still refused, by the root, on either clock.
	s, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	unsigned := &tlog.Log{Store: s}
	for i := range 3 {
		if err := unsigned.Append(context.Background(), tlog.KindScore, map[string]any{"tag": "fork", "i": i}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	for name, now := range map[string]func() time.Time{"wall clock": nil, "clock set back": yesterday} {
		_, err = forkArena(t, db, keyFile, "", now)
		refused(name, err, "but this database's first 5 entries hash to")
	}
	// serve itself stops there, before it listens for long.
	if _, _, err := cli(t, []string{"ARENA_LOG_KEY=" + keyFile, "ARENA_LOG_ORIGIN=arena.test/log"}, "serve", "--addr", "127.0.0.1:0", "--no-sync", "--no-rounds", "--db", db); err == nil || !errors.Is(err, tlog.ErrFork) || !strings.Contains(err.Error(), "docs/operations.md") {
		t.Errorf("serve on the forked log: %v", err)
	}

	// A second, new database given the same key.
	_, err = forkArena(t, "sqlite:"+filepath.Join(dir, "second.db"), keyFile, "", nil)
	refused("a second database with the key", err, "signs another arena's log: its record "+tlog.StatePath(keyFile)+" holds a tree of 5 entries, which this database never signed")
	if st, _ := (tlog.StateFile{Path: tlog.StatePath(keyFile)}).LastSigned(); st.Size != 5 || !tlog.Equal(st.Root, state.Root) {
		t.Errorf("the refusals changed the record: %+v", st)
	}
}

// With the record beside the key lost (the key copied to a new host
// without it), a witness that cosigned the published checkpoint still
// refuses the restored log at start; a witness that cannot be reached
// is logged and skipped.
func TestRestoreForkWitnessed(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "arena.db")
	keyFile := filepath.Join(dir, "log.key")
	key, err := tlog.LoadOrCreateKey(keyFile)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := tlog.VerifierKey("arena.test/log", key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	logV, err := note.NewVerifier(vkey)
	if err != nil {
		t.Fatal(err)
	}
	_, wkey, _ := ed25519.GenerateKey(nil)
	w, err := witness.New("witness.test/w1", wkey, []witness.Log{{Origin: "arena.test/log", Verifier: logV, VKey: vkey}}, filepath.Join(dir, "witness"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(w.Handler())
	defer srv.Close()
	policy := filepath.Join(dir, "policy")
	down := httptest.NewServer(nil)
	down.Close()
	writePolicy := func(urls ...string) {
		text := "log " + vkey + "\n"
		for i, u := range urls {
			text += "witness w" + string(rune('1'+i)) + " " + w.VerifierKey() + " " + u + "\n"
		}
		if err := os.WriteFile(policy, []byte(text+"quorum none\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	writePolicy(srv.URL)

	bk := publishPastBackup(t, dir, db, keyFile, policy)
	if c, err := tlog.OpenCheckpoint(w.Latest("arena.test/log"), vkey); err != nil || c.Size != 5 {
		t.Fatalf("the witness cosigned %+v, %v; want size 5", c, err)
	}
	if _, _, err := cli(t, nil, "restore", "--in", bk, "--db", db, "--force"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(tlog.StatePath(keyFile)); err != nil {
		t.Fatal(err)
	}
	// Without its record the key is refused at start, whatever the
	// witnesses say, until the operator says to make the record anew.
	if _, err = forkArena(t, db, keyFile, policy, nil); err == nil || !strings.Contains(err.Error(), "has no record of the trees it signed") {
		t.Fatalf("restored log without the record: %v", err)
	}
	newRecord := func(o *config.Options) { o.NewLogRecord = true }
	_, err = forkArena(t, db, keyFile, policy, nil, newRecord)
	if err == nil || !errors.Is(err, tlog.ErrFork) || !strings.Contains(err.Error(), "witness w1 ("+srv.URL+") holds a checkpoint signed by the log key of a tree of 5 entries") {
		t.Fatalf("restored log with a witness that cosigned more: %v", err)
	}
	// The witness's view is recorded beside the key: the refusal holds
	// without the witness too.
	writePolicy(down.URL)
	if _, err := forkArena(t, db, keyFile, policy, nil); err == nil || !errors.Is(err, tlog.ErrFork) {
		t.Fatalf("witness unreachable, its view recorded: %v", err)
	}
	os.Remove(tlog.StatePath(keyFile))
	// Neither record nor a reachable witness: the operator's word that
	// the key signed nothing beyond the restored database is all there
	// is, and it has to be given.
	if _, err := forkArena(t, db, keyFile, policy, nil); err == nil || !strings.Contains(err.Error(), "--new-log-record") {
		t.Fatalf("witness unreachable, no record: %v", err)
	}
	a, err := forkArena(t, db, keyFile, policy, nil, newRecord)
	if err != nil {
		t.Fatalf("witness unreachable, no record, --new-log-record: %v", err)
	}
	a.Close()
}
