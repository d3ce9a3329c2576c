package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// Two `arena serve` processes on one PostgreSQL database run one sync per
// period (a second server on one SQLite file is refused:
// TestOneServerPerSQLiteFile).
func TestServeReplicasSyncOncePerPeriod(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	for _, engine := range storetest.Engines() {
		if engine == "sqlite" {
			continue
		}
		t.Run(engine, func(t *testing.T) {
			var hits atomic.Int32
			gamma := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/markets" {
					hits.Add(1)
				}
				io.WriteString(w, "[]")
			}))
			defer gamma.Close()
			dbURL := storetest.URL(t, engine)
			// Migrate once up front so both replicas start on a ready schema.
			db, err := store.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()

			var procs []*exec.Cmd
			addrs := make(chan string, 2)
			for i := 0; i < 2; i++ {
				cmd := exec.Command(os.Args[0], "serve", "--db", dbURL, "--addr", "127.0.0.1:0",
					"--gamma-url", gamma.URL, "--clob-url", gamma.URL, "--sync-every", "1s")
				cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1")
				stderr, _ := cmd.StderrPipe()
				if err := cmd.Start(); err != nil {
					t.Fatal(err)
				}
				procs = append(procs, cmd)
				go func() {
					sc := bufio.NewScanner(stderr)
					re := regexp.MustCompile(`msg=serving addr=(\S+)`)
					for sc.Scan() {
						if m := re.FindStringSubmatch(sc.Text()); m != nil {
							addrs <- m[1]
						}
					}
				}()
			}
			for i := 0; i < 2; i++ {
				select {
				case addr := <-addrs:
					resp, err := http.Get("http://" + addr + "/healthz")
					if err != nil {
						t.Fatal(err)
					}
					var h map[string]string
					json.NewDecoder(resp.Body).Decode(&h)
					resp.Body.Close()
					if resp.StatusCode != 200 || h["status"] != "ok" {
						t.Fatalf("healthz: %d %v", resp.StatusCode, h)
					}
				case <-time.After(20 * time.Second):
					t.Fatal("serve did not start")
				}
			}
			time.Sleep(3500 * time.Millisecond)
			for _, p := range procs {
				p.Process.Signal(syscall.SIGTERM)
			}
			for _, p := range procs {
				if err := p.Wait(); err != nil {
					t.Errorf("serve did not shut down cleanly: %v", err)
				}
			}
			runs, err := db.JobRuns(context.Background(), "polymarket-sync")
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) < 3 {
				t.Fatalf("only %d sync periods in 3.5 s", len(runs))
			}
			owners := map[string]bool{}
			for i, r := range runs {
				if i > 0 && !r.Period.After(runs[i-1].Period) {
					t.Fatalf("duplicate period %v", r.Period)
				}
				// SIGTERM cancels a sync under way (on a loaded machine a
				// period's sync can still run then): the newest periods may
				// end canceled, recorded as such; any other error is a fault.
				interrupted := i >= len(runs)-2 && strings.HasSuffix(r.Error, context.Canceled.Error())
				if !r.Finished || r.Error != "" && !interrupted {
					t.Errorf("run %+v did not finish cleanly", r)
				}
				owners[r.Owner] = true
			}
			if int(hits.Load()) != len(runs) {
				t.Fatalf("%d Gamma /markets fetches for %d periods: a period ran twice", hits.Load(), len(runs))
			}
			t.Logf("%s: %d periods, %d fetches, owners %v", engine, len(runs), hits.Load(), strings.Join(keys(owners), ","))
		})
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// A second `arena serve` process on the SQLite file that one serves is
// refused at once with a clear error, and the first goes on serving; the
// commands that read or copy the database keep working beside it. On
// PostgreSQL a second replica starts.
func TestOneServerPerSQLiteFile(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dbURL := storetest.URL(t, engine)
			fcMarkets(t, dbURL, 2)
			args := []string{"--db", dbURL, "--log-key", filepath.Join(t.TempDir(), "log.key")}
			first := startServe(t, args...)
			if engine == "postgres" {
				second := startServe(t, args...)
				if st := second.api(t, "GET", "/healthz", nil, "", nil); st != 200 {
					t.Fatalf("second replica /healthz: %d", st)
				}
				return
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, os.Args[0], append([]string{"serve", "--addr", "127.0.0.1:0", "--no-sync"}, args...)...)
			cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1")
			out, err := cmd.CombinedOutput()
			want := "arena: serve: store: " + strings.TrimPrefix(dbURL, "sqlite:") + " is already served by another process (arena serve or arena demo): stop that one first"
			if ctx.Err() != nil || err == nil || !strings.Contains(string(out), want) {
				t.Fatalf("second serve: %v (timed out: %v)\n%s", err, ctx.Err() != nil, out)
			}
			if st := first.api(t, "GET", "/healthz", nil, "", nil); st != 200 {
				t.Fatalf("first server /healthz after the second was refused: %d", st)
			}
			if out, _, err := cli(t, nil, "markets", "--db", dbURL); err != nil || !strings.Contains(out, "Will 1 happen?") {
				t.Errorf("markets beside serve: %v\n%s", err, out)
			}
			if _, _, err := cli(t, nil, "backup", "--db", dbURL, "--out", filepath.Join(t.TempDir(), "b.db")); err != nil {
				t.Errorf("backup beside serve: %v", err)
			}
		})
	}
}
