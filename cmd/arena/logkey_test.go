package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

// Two PostgreSQL arenas, one user: the README's recipe for the second
// gives neither --log-key nor ARENA_DATA_DIR, so its serve finds the key
// the first arena signs with in the user configuration directory. That
// start is refused, pointing to the docs section on giving each database
// its own key, and changes nothing: the new database is not bound to the
// key (it once was, so that the advised fix was refused too), the key's
// record and directory are as they were. Then the advice works: with a
// data directory of its own the second arena serves, and the first still
// opens.
func TestTwoPostgresArenasOneKeyDirectory(t *testing.T) {
	first, second := storetest.URL(t, "postgres"), storetest.URL(t, "postgres")
	home := t.TempDir()
	keyFile := filepath.Join(home, "forecast-arena", "log.key")
	// The first arena has served and published: its log key is the
	// default one of a PostgreSQL arena without a data directory.
	a, err := forkArena(t, first, keyFile, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	if size := appendPublish(t, a, "first", 3); size != 3 {
		t.Fatalf("published size %d", size)
	}
	a.Close()
	keyDir := filepath.Dir(keyFile)
	before := dirState(t, keyDir)

	env := []string{"ARENA_TEST_EXEC=1", "XDG_CONFIG_HOME=" + home, "ARENA_DB=" + second, "ARENA_DATA_DIR=", "ARENA_LOG_KEY="}
	cmd := exec.Command(os.Args[0], "serve", "--addr", "127.0.0.1:0", "--no-sync")
	cmd.Env = append(os.Environ(), env...)
	done := make(chan struct{})
	var out []byte
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("serve of the second arena did not stop")
	}
	for _, want := range []string{"log key " + keyFile + " signs another arena's log", "ARENA_DATA_DIR", `See "The log key belongs to its database" in docs/operations.md`, "Nothing was changed"} {
		if err == nil || !strings.Contains(string(out), want) {
			t.Errorf("serve of a second arena with the first one's key: %v\n%s\nwant %q", err, out, want)
		}
	}
	db, err := store.Open(context.Background(), second)
	if err != nil {
		t.Fatal(err)
	}
	bound, _, err := db.Setting(context.Background(), tlog.KeySetting)
	db.Close()
	if err != nil || bound != "" {
		t.Errorf("the refused start bound the second database to key %q (%v)", bound, err)
	}
	if after := dirState(t, keyDir); after != before {
		t.Errorf("the refused start changed the key's directory:\n%s\nwas\n%s", after, before)
	}

	// The advised fix: a data directory of its own.
	own := t.TempDir()
	p := startServeEnv(t, []string{"XDG_CONFIG_HOME=" + home, "ARENA_DB=" + second, "ARENA_DATA_DIR=" + own}, "serve", "--addr", "127.0.0.1:0", "--no-sync")
	p.cmd.Process.Kill()
	p.cmd.Wait()
	if _, err := os.Stat(filepath.Join(own, "log.key")); err != nil {
		t.Errorf("the second arena's own key: %v", err)
	}
	if a, err = forkArena(t, first, keyFile, "", nil); err != nil {
		t.Fatalf("the first arena after: %v", err)
	}
	a.Close()
}

// dirState lists dir's files with their contents.
func dirState(t *testing.T, dir string) string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, e := range es {
		body, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		b.WriteString(e.Name() + ": " + string(body) + "\n")
	}
	return b.String()
}
