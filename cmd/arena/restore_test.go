package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
)

// Restore refuses, with --force or without, a SQLite database that a
// running `arena serve` process has open, and changes nothing: the server
// keeps its -wal and -shm files and every round it acknowledges reaches
// the disk. Once the server is gone, stopped or killed with SIGKILL (the
// kernel releases its lock), restore goes ahead.
func TestRestoreRefusedWhileServed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "arena.db")
	dbURL := "sqlite:" + path
	ids := fcMarkets(t, dbURL, 2)
	bk := filepath.Join(dir, "backup.db")
	if _, _, err := cli(t, nil, "backup", "--db", dbURL, "--out", bk); err != nil {
		t.Fatal(err)
	}
	serve := func() *serveProc {
		return startServe(t, "--db", dbURL, "--admin-token", fcToken, "--no-rounds", "--log-key", filepath.Join(dir, "log.key"))
	}
	createRound := func(p *serveProc, in time.Duration) uint64 {
		t.Helper()
		cd := time.Now().Add(in).Truncate(time.Second)
		var r forecast.RoundJSON
		if st := p.api(t, "POST", "/api/v1/admin/rounds", map[string]any{"market_ids": ids, "commit_deadline": cd,
			"reveal_start": cd.Add(time.Hour), "reveal_deadline": cd.Add(2 * time.Hour)}, fcToken, &r); st != 201 {
			t.Fatalf("create round: %d", st)
		}
		return r.ID
	}
	p := serve()
	rounds := []uint64{createRound(p, time.Hour)}
	for _, args := range [][]string{{"--force"}, {}} {
		_, _, err := cli(t, nil, append([]string{"restore", "--in", bk, "--db", dbURL}, args...)...)
		if err == nil || !strings.Contains(err.Error(), path+" is in use by a running server (arena serve or arena demo): stop it first") {
			t.Fatalf("restore %v onto a served database: %v", args, err)
		}
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(path + suffix); err != nil {
			t.Errorf("the server's %s file: %v", suffix, err)
		}
	}
	rounds = append(rounds, createRound(p, 2*time.Hour))
	p.cmd.Process.Signal(syscall.SIGTERM)
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("serve did not stop cleanly: %v\n%s", err, p.logs)
	}
	db := openStore(t, dbURL)
	for _, id := range rounds {
		if _, err := db.Round(ctx, id); err != nil {
			t.Errorf("round %d, acknowledged while restore was refused: %v", id, err)
		}
	}
	db.Close()

	// A server killed with SIGKILL leaves no lock behind.
	p = serve()
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	if out, _, err := cli(t, nil, "restore", "--in", bk, "--db", dbURL, "--force"); err != nil || !strings.Contains(out, "Restored") {
		t.Fatalf("restore after the server was killed: %v %s", err, out)
	}
	db = openStore(t, dbURL)
	if _, err := db.Round(ctx, rounds[0]); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("round %d after restoring a backup taken before it: %v", rounds[0], err)
	}
}

// Restore names what is wrong with a target that is not a database file
// it can write: a directory (empty or not), or a file in a directory that
// does not exist; it leaves nothing behind.
func TestRestoreTargetNotAFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	src := "sqlite:" + filepath.Join(dir, "src.db")
	fcMarkets(t, src, 1)
	bk := filepath.Join(dir, "backup.db")
	if _, _, err := cli(t, nil, "backup", "--db", src, "--out", bk); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(dir, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ db, want string }{
		{empty, "restore: " + empty + " is a directory; name the database file to restore into, such as --db sqlite:" + filepath.Join(empty, "arena.db")},
		{filepath.Join(dir, "none", "arena.db"), "restore: directory " + filepath.Join(dir, "none") + " does not exist; create it first"},
	} {
		if _, _, err := cli(t, nil, "restore", "--in", bk, "--db", "sqlite:"+c.db, "--force"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("restore into %s: %v, want %q", c.db, err, c.want)
		}
	}
	if left, _ := os.ReadDir(empty); len(left) > 0 {
		t.Errorf("a refused restore left %s in the directory", left[0].Name())
	}
}
