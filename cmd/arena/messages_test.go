package main

import (
	"crypto/ed25519"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/tlog"
)

// The messages of a new user's first mistakes, each saying what went
// wrong and what to do, and each changing nothing: a mistyped or forgotten
// --db, a missing ForecastBench file, an --export that does not exist,
// another arena's --vkey, an agent pointed at an address where no arena
// runs. Their texts are testdata/first_mistakes.golden (-update rewrites
// it), with the test's temporary paths and random keys replaced.
func TestFirstMistakes(t *testing.T) {
	t.Parallel()
	dir, out := playedDemo(t)
	vkey := regexp.MustCompile(`arena verify --export \S+ --vkey (\S+)`).FindStringSubmatch(out)
	if vkey == nil {
		t.Fatalf("no verify command in the demo output:\n%s", out)
	}
	origin, _, err := tlog.ParseVerifierKey(vkey[1])
	if err != nil {
		t.Fatal(err)
	}
	pub, _, _ := ed25519.GenerateKey(nil)
	other, err := tlog.VerifierKey(origin, pub) // another arena's key under the same name
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	sim := "sqlite:" + filepath.Join(tmp, "sim.db")
	// The user's simulated world: no mistake below reads its markets, so
	// a few do.
	if _, _, err := cli(t, nil, "sync", "--source", "sim", "--markets", "3", "--db", sim); err != nil {
		t.Fatal(err)
	}
	key := filepath.Join(tmp, "me.key")
	if _, _, err := cli(t, nil, "agent", "keygen", "--out", key); err != nil {
		t.Fatal(err)
	}
	// A command without --db reads the default database: here the demo's
	// (ARENA_DB), where the user's round is not.
	demoDB := []string{"ARENA_DB=sqlite:" + filepath.Join(dir, "arena.db")}

	var b strings.Builder
	for _, args := range [][]string{
		{"serve", "--db", "sqlite:" + filepath.Join(tmp, "sim.bd"), "--no-sync"},
		{"round", "resolve", "9", "--from-sim"},
		{"round", "show", "9"},
		{"import", "forecastbench", "--db", sim, "--questions", filepath.Join(tmp, "2024-07-21-human.json")},
		{"verify", "--export", filepath.Join(tmp, "export")},
		{"verify", "--export", filepath.Join(dir, "export"), "--vkey", other},
		{"agent", "run", "--server", "http://127.0.0.1:1", "--key", key},
	} {
		before := files(t, tmp)
		out, _, err := cli(t, demoDB, args...)
		if err == nil {
			t.Errorf("%s: no error\n%s", args, out)
			continue
		}
		if after := files(t, tmp); after != before {
			t.Errorf("%s changed the files: %s, then %s", args, before, after)
		}
		b.WriteString("$ arena " + strings.Join(args, " ") + "\narena: " + oneLine(err) + "\n\n")
	}
	got := strings.NewReplacer(tmp, "$TMP", dir, "$DEMO", vkey[1], "$VKEY", other, "$OTHER_VKEY").Replace(b.String())
	got = regexp.MustCompile(`[0-9a-f]{64}`).ReplaceAllString(got, "$$KEY")
	checkGolden(t, "first_mistakes", got)
}

// files lists the files under dir but an agent's state (its salt queue,
// which it keeps however the server answers).
func files(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, ".state"+string(filepath.Separator)) {
			b.WriteString(strings.TrimPrefix(p, dir) + " ")
		}
		return nil
	})
	return b.String()
}

// The help of the commands a new user starts with, as they print it:
// testdata/help.golden (-update rewrites it).
func TestHelpTexts(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for _, args := range [][]string{{"import", "forecastbench", "-h"}, {"agent", "run", "-h"}} {
		_, stderr, err := cli(t, nil, args...)
		if err != nil {
			t.Fatalf("%s: %v", args, err)
		}
		b.WriteString("$ arena " + strings.Join(args, " ") + "\n" + stderr + "\n")
	}
	checkGolden(t, "help", b.String())
}

// verify --url of an arena whose log is empty (one holding only imported
// questions, as the humans walkthrough serves) says there is nothing to
// verify, rather than that verification failed.
func TestVerifyURLEmptyLog(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "arena.db")
	q := impWrite(t, dir, "q.json", impQuestions)
	if _, _, err := cli(t, nil, "import", "forecastbench", "--db", db, "--questions", q); err != nil {
		t.Fatal(err)
	}
	srv := startServeEnv(t, []string{"ARENA_CHECKPOINT_INTERVAL=1s"}, "serve", "--addr", "127.0.0.1:0", "--no-sync", "--no-rounds", "--db", db)
	// The arena publishes its first checkpoint, of the empty log, soon
	// after it starts.
	out, _, err := cli(t, nil, "verify", "--url", "http://"+srv.addr)
	for deadline := time.Now().Add(20 * time.Second); err != nil && strings.Contains(err.Error(), "no checkpoint published yet") && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		out, _, err = cli(t, nil, "verify", "--url", "http://"+srv.addr)
	}
	if err == nil || !errors.Is(err, errNothingToVerify) || strings.Contains(err.Error(), "FAILED") || out != "" {
		t.Fatalf("verify --url of an empty log: %v\n%s", err, out)
	}
}
