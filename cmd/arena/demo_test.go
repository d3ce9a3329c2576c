package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/forecast/scoring"
)

// The README's main command, 50 rounds (10 below full size) through the
// real protocol path.
func TestDemoSeed1(t *testing.T) {
	t.Parallel()
	// At full size the 50 rounds of the golden figures kept since the demo
	// was made faster; otherwise 10, with their own.
	rounds, dir, out := seed1Demo(t)
	var run demoJSON
	if err := json.Unmarshal([]byte(out), &run); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lb := run.Forecast.Rows
	if run.Database != "sqlite:"+filepath.Join(dir, "arena.db") || run.Export != filepath.Join(dir, "export") || run.Log.TreeSize == 0 ||
		run.Scored != rounds || run.Cohorts == 0 || len(run.Trading) == 0 || run.Oracle.Disputed == 0 {
		t.Errorf("demo JSON: database %q, export %q, log %d entries, %d scored, %d cohorts, %d trading rows, oracle %+v",
			run.Database, run.Export, run.Log.TreeSize, run.Scored, run.Cohorts, len(run.Trading), run.Oracle)
	}
	byName := map[string]scoring.Row{}
	for _, e := range lb {
		byName[e.Name] = e
		if e.Rounds != rounds || e.N < 6*rounds {
			t.Errorf("%s: %d rounds, n = %d", e.Name, e.Rounds, e.N)
		}
	}
	m, ok := byName["Market (benchmark)"]
	if !ok || m.Alpha == nil || *m.Alpha != 0 {
		t.Fatalf("market alpha must be exactly 0: %+v", m)
	}
	// Over 50 rounds, the story the demo tells: random near 1/3, every
	// informed agent ahead of the market (10 rounds are too few to show it).
	if rounds == 50 {
		r := byName["Random (uniform)"]
		if math.Abs(r.Brier-1.0/3) > 0.03 {
			t.Errorf("random Brier %.4f not within 0.03 of 1/3", r.Brier)
		}
		for _, name := range []string{"Sim informed-0.02", "Sim informed-0.05", "Sim informed-0.10"} {
			if a := byName[name].Alpha; a == nil || *a <= 0 {
				t.Errorf("%s: alpha %s, want positive", name, fmtAlpha(a))
			}
		}
	}
	if len(lb) != 7 {
		t.Errorf("%d leaderboard rows, want 5 agents + random + market", len(lb))
	}
	// The stored forecasts feed the reports.
	rep, _, err := cli(t, nil, "report", "murphy", "--db", "sqlite:"+filepath.Join(dir, "arena.db"), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range lb {
		if !strings.Contains(rep, e.Agent) {
			t.Errorf("report murphy misses agent %s", e.Agent)
		}
	}
	// Same seed, same figures as they were (the directory and the log's key
	// differ): the demo is deterministic by seed, and a faster demo plays the
	// same game.
	golden := "demo_seed1_figures"
	if rounds != 50 {
		golden = fmt.Sprintf("demo_seed1_%d_rounds_figures", rounds)
	}
	checkGolden(t, golden, demoFigures(run))
}

func fmtAlpha(a *float64) string {
	if a == nil {
		return "none"
	}
	return strconv.FormatFloat(*a, 'f', 4, 64)
}

// demoFigures are what a demo run must reproduce from its seed: both
// leaderboards, the oracle's counts and the log's size.
func demoFigures(r demoJSON) string {
	b, _ := json.MarshalIndent([]any{r.Rounds, r.Scored, r.Forecast, r.Cohorts, r.Trading, r.Oracle, r.Log.TreeSize}, "", " ")
	return string(b) + "\n"
}

func TestDemoBadInput(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{
		{"demo", "--rounds", "0", "--no-serve"},
		{"demo", "--rounds", "500", "--no-serve"},
		{"demo", "--format", "xml"},
		{"demo", "--seed", "x"},
	} {
		if _, _, err := cli(t, nil, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// The demo's output ends with the three next steps: the dashboard (served
// now, or how to serve it), an agent of one's own, the verification of
// its export. Off a terminal it draws no progress bar: stderr stays empty.
func TestDemoNextSteps(t *testing.T) {
	t.Parallel()
	dir, out := playedDemo(t)
	errOut := smallDemo.errOut
	db := "sqlite:" + filepath.Join(dir, "arena.db")
	want := regexp.MustCompile(`(?s)\nNext steps:\n` +
		`  1\. Open the dashboard: arena serve --db ` + regexp.QuoteMeta(db) + ` --no-sync --no-rounds, then http://127\.0\.0\.1:8080/\n` +
		`  2\. Run an agent of your own in a simulated world, scored within minutes: the README's step 3\n` +
		`     \(docs/operations\.md, "Serving offline"\)\n` +
		`  3\. Verify the exported rounds, scores and log: arena verify --export ` + regexp.QuoteMeta(filepath.Join(dir, "export")) + ` --vkey \S+\n$`)
	if !want.MatchString(out) || errOut != "" {
		t.Fatalf("demo output does not end with the next steps (or stderr %q):\n%s", errOut, out)
	}
	// The verify step works as printed.
	cmd := strings.Fields(strings.TrimPrefix(regexp.MustCompile(`arena verify [^\n]*`).FindString(out), "arena "))
	if vout, _, err := cli(t, nil, cmd...); err != nil || !strings.Contains(vout, "OK:") {
		t.Fatalf("%v: %v\n%s", cmd, err, vout)
	}

	// Serving, the dashboard is the first step, at the address it listens on.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var sout, serr lockedBuffer
	done := make(chan error, 1)
	go func() {
		done <- Main(ctx, &Env{Stdout: &sout, Stderr: &serr, Getwd: os.Getwd}, []string{"demo", "--rounds", "1", "--addr", "127.0.0.1:0", "--dir", t.TempDir()})
	}()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		select {
		case err := <-done:
			t.Fatalf("demo stopped: %v\n%s", err, serr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the demo does not serve")
		}
		addr := regexp.MustCompile(`Open the dashboard: http://([^/]+)/`).FindStringSubmatch(sout.String())
		if addr == nil {
			continue
		}
		if resp, err := http.Get("http://" + addr[1] + "/healthz"); err == nil {
			resp.Body.Close()
			break
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := sout.String(); !regexp.MustCompile(`\n  1\. Open the dashboard: http://127\.0\.0\.1:\d+/ \(served now; Ctrl-C stops it\)\n`).MatchString(s) {
		t.Fatalf("serving demo's next steps:\n%s", s)
	}
}

// Ctrl-C while the demo plays says in one line that it stopped and that
// its temporary directory is gone, exits 130, and leaves nothing behind;
// with --dir the files stay, and the line says where.
func TestDemoInterrupted(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the binary")
	}
	t.Parallel()
	for _, own := range []bool{false, true} {
		tmp := t.TempDir()
		args := []string{"demo", "--rounds", "50", "--no-serve"}
		dir := filepath.Join(tmp, "mine")
		if own {
			args = append(args, "--dir", dir)
		}
		cmd := exec.Command(os.Args[0], args...)
		cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1", "TMPDIR="+tmp)
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Interrupt once the database exists: the demo is playing.
		pattern := filepath.Join(tmp, "arena-demo-*", "arena.db")
		if own {
			pattern = filepath.Join(dir, "arena.db")
		}
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(20 * time.Millisecond) {
			if m, _ := filepath.Glob(pattern); len(m) > 0 {
				break
			}
			if time.Now().After(deadline) {
				cmd.Process.Kill()
				t.Fatalf("no database at %s within a minute", pattern)
			}
		}
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		err := cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != exitInterrupted {
			t.Fatalf("exit: %v (stderr %q)", err, stderr.String())
		}
		want := `^arena: demo: interrupted; its temporary directory ` + regexp.QuoteMeta(filepath.Join(tmp, "arena-demo-")) + `\d+ is removed\n$`
		if own {
			want = `^arena: demo: interrupted; its files are kept in ` + regexp.QuoteMeta(dir) + `\n$`
		}
		// Progress lines may come first (stderr is a pipe); the last line says it.
		last := stderr.String()[strings.LastIndex(strings.TrimSuffix(stderr.String(), "\n"), "\n")+1:]
		if !regexp.MustCompile(want).MatchString(last) {
			t.Errorf("stderr %q, want its last line %s", stderr.String(), want)
		}
		left, _ := filepath.Glob(filepath.Join(tmp, "arena-demo-*"))
		if _, err := os.Stat(filepath.Join(dir, "arena.db")); len(left) > 0 || own != (err == nil) {
			t.Errorf("left behind: %v; --dir database: %v", left, err)
		}
	}
}
