package main

import (
	"context"
	"fmt"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// apiAnswers serves db as arena serve would and returns the answers of
// paths, keyed by path.
func apiAnswers(t *testing.T, url string, paths ...string) map[string]string {
	t.Helper()
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	o := config.Defaults()
	o.DB = url
	// Both tracks served, the trading track without a lineup of its own.
	a, err := app.New(context.Background(), o, app.Deps{DB: db, Lineup: []arena.LineupEntry{}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := a.Handler()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, p := range paths {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", p, nil))
		b, _ := io.ReadAll(rec.Body)
		if rec.Code != 200 {
			t.Fatalf("%s: %d %s", p, rec.Code, b)
		}
		out[p] = string(b)
	}
	return out
}

// A backup taken while another connection keeps writing restores into a
// database that answers the API as the original did at some moment;
// restore refuses to overwrite a non-empty database without --force, and
// refuses files that are not arena databases; PostgreSQL is pointed at
// pg_dump.
func TestBackupRestore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	src := "sqlite:" + filepath.Join(dir, "arena.db")
	db, err := store.Open(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for i := 0; i < 20; i++ {
		storetest.SaveMarket(t, db, fmt.Sprint("m", i))
	}
	// A writer keeps adding markets during the backup, as serve would.
	var stop atomic.Bool
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; !stop.Load(); i++ {
			if _, err := db.SaveMarkets(ctx, []*arena.Market{storetest.Binary(fmt.Sprint("live", i), 1)}); err != nil {
				t.Errorf("write during backup: %v", err)
				return
			}
		}
	}()
	time.Sleep(20 * time.Millisecond)
	bk := filepath.Join(dir, "backup.db")
	out, _, err := cli(t, nil, "backup", "--db", src, "--out", bk)
	stop.Store(true)
	wg.Wait()
	if err != nil || !strings.Contains(out, "Backed up to") {
		t.Fatalf("backup: %v %s", err, out)
	}
	for _, c := range []struct{ db, out, want string }{
		{src, bk, "already exists"},
		{src, filepath.Join(dir, "nodir", "x.db"), "directory " + filepath.Join(dir, "nodir") + " does not exist"},
		{"sqlite:" + filepath.Join(dir, "none.db"), filepath.Join(dir, "x.db"), "backup: " + filepath.Join(dir, "none.db") + " does not exist"},
	} {
		if _, _, err := cli(t, nil, "backup", "--db", c.db, "--out", c.out); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("backup --db %s --out %s: %v, want %q", c.db, c.out, err, c.want)
		}
	}
	dst := "sqlite:" + filepath.Join(dir, "restored.db")
	if out, _, err := cli(t, nil, "restore", "--in", bk, "--db", dst); err != nil || !strings.Contains(out, "Restored") {
		t.Fatalf("restore: %v %s", err, out)
	}
	// The backup is one consistent snapshot: its market list is the
	// original's as of some moment, so a prefix of today's by id.
	restored := apiAnswers(t, dst, "/api/v1/markets?limit=1000", "/api/v1/leaderboard", "/api/v1/rounds", "/api/v1/cohorts")
	if !strings.Contains(restored["/api/v1/markets?limit=1000"], `"m19"`) {
		t.Errorf("restored markets lack the seeded ones: %.300s", restored["/api/v1/markets?limit=1000"])
	}
	again := filepath.Join(dir, "again.db")
	if _, _, err := cli(t, nil, "backup", "--db", dst, "--out", again); err != nil {
		t.Fatal(err)
	}
	if a := apiAnswers(t, "sqlite:"+again, "/api/v1/markets?limit=1000", "/api/v1/leaderboard", "/api/v1/rounds", "/api/v1/cohorts"); fmt.Sprint(a) != fmt.Sprint(restored) {
		t.Errorf("a backup of the restored database answers differently")
	}

	if _, _, err := cli(t, nil, "restore", "--in", bk, "--db", dst); err == nil || !strings.Contains(err.Error(), "--force") {
		t.Errorf("restore over a non-empty database: %v", err)
	}
	if _, _, err := cli(t, nil, "restore", "--in", bk, "--db", dst, "--force"); err != nil {
		t.Errorf("restore --force: %v", err)
	}
	junk := filepath.Join(dir, "junk")
	os.WriteFile(junk, []byte("not a database"), 0o600)
	other := filepath.Join(dir, "other.db")
	for _, bad := range []string{junk, filepath.Join(dir, "missing.db")} {
		if _, _, err := cli(t, nil, "restore", "--in", bad, "--db", "sqlite:"+other); err == nil {
			t.Errorf("restore of %s succeeded", bad)
		}
		if _, err := os.Stat(other); err == nil {
			t.Errorf("a refused restore of %s left %s behind", bad, other)
		}
	}
	if _, _, err := cli(t, nil, "restore", "--in", bk, "--db", "postgres://u:pw@127.0.0.1:1/x"); err == nil || !strings.Contains(err.Error(), "pg_restore") {
		t.Errorf("restore into PostgreSQL: %v", err)
	}
	if pg := os.Getenv("ARENA_TEST_POSTGRES_URL"); pg != "" {
		if _, _, err := cli(t, nil, "backup", "--db", pg, "--out", filepath.Join(dir, "pg.db")); err == nil || !strings.Contains(err.Error(), "pg_dump") {
			t.Errorf("backup of PostgreSQL: %v", err)
		}
	}
}

// A restored demo database answers the API exactly as the original, and
// its export verifies against the demo's log key.
func TestBackupRestoreDemoVerifies(t *testing.T) {
	t.Parallel()
	demoDir, out := playedDemo(t)
	dir := filepath.Dir(demoDir)
	key := regexp.MustCompile(`--vkey (\S+)`).FindStringSubmatch(out)
	if key == nil {
		t.Fatalf("no log key in the demo output:\n%s", out)
	}
	src := "sqlite:" + filepath.Join(demoDir, "arena.db")
	bk := filepath.Join(dir, "backup.db")
	if _, _, err := cli(t, nil, "backup", "--db", src, "--out", bk); err != nil {
		t.Fatal(err)
	}
	dst := "sqlite:" + filepath.Join(dir, "restored", "arena.db")
	os.MkdirAll(filepath.Join(dir, "restored"), 0o755)
	if _, _, err := cli(t, nil, "restore", "--in", bk, "--db", dst); err != nil {
		t.Fatal(err)
	}
	paths := []string{"/api/v1/markets", "/api/v1/leaderboard", "/api/v1/rounds", "/api/v1/rounds/1", "/api/v1/rounds/1/scores", "/api/v1/cohorts", "/api/v1/domain"}
	a, b := apiAnswers(t, src, paths...), apiAnswers(t, dst, paths...)
	for _, p := range paths {
		if a[p] != b[p] {
			t.Errorf("%s differs after restore:\n%.400s\n%.400s", p, a[p], b[p])
		}
	}
	exp := filepath.Join(dir, "export")
	// The log key stays where the demo keeps it; the restored database
	// holds the same log, so its export verifies under the same key.
	if _, _, err := cli(t, nil, "export", "--db", dst, "--out", exp, "--log-key", filepath.Join(demoDir, "arena.db.log.key")); err != nil {
		t.Fatal(err)
	}
	if got, _, err := cli(t, nil, "verify", "--export", exp, "--vkey", key[1]); err != nil || !strings.Contains(got, "OK:") {
		t.Fatalf("verify of the restored database's export: %v\n%s", err, got)
	}
}
