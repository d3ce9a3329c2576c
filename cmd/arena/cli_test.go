package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/store"
)

// TestMain lets tests run the real binary: when ARENA_TEST_EXEC=1 the test
// executable behaves as the arena command (used for multi-process tests).
func TestMain(m *testing.M) {
	if os.Getenv("ARENA_TEST_EXEC") == "1" {
		main()
		os.Exit(0)
	}
	// Many of these tests wait on real time (a killed process, a sync's
	// retries, a claim's takeover age) rather than compute, so more of them
	// run at once than there are cores; -test.parallel still overrides.
	flag.Parse()
	// Commands run in-process keep a PostgreSQL arena's log key in the
	// user configuration directory: a temporary one, not the user's.
	home, err := os.MkdirTemp("", "arena-test-config")
	if err != nil {
		panic(err)
	}
	os.Setenv("XDG_CONFIG_HOME", home)
	if !flagSet("test.parallel") {
		flag.Set("test.parallel", strconv.Itoa(4*runtime.GOMAXPROCS(0)))
	}
	code := m.Run()
	os.RemoveAll(home)
	for _, f := range fixtures {
		if f.dir != "" {
			os.RemoveAll(filepath.Dir(f.dir))
		}
	}
	os.Exit(code)
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

// cli runs the arena CLI in-process with the given environment additions
// and returns stdout, stderr and the error. Shared by every command's tests.
func cli(t testing.TB, environ []string, args ...string) (string, string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	env := &Env{Stdout: &out, Stderr: &errb, Environ: environ, Getwd: os.Getwd}
	err := Main(context.Background(), env, args)
	return out.String(), errb.String(), err
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

// saveMarkets stores ms in the database at dbURL, open only meanwhile, and
// returns their ids.
func saveMarkets(t testing.TB, dbURL string, ms []*arena.Market) []int64 {
	t.Helper()
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.SaveMarkets(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	ids := make([]int64, len(ms))
	for i, m := range ms {
		ids[i] = m.ID
	}
	return ids
}

// Every command answers -h with its usage on stderr and exit status 0.
func TestEveryCommandHelp(t *testing.T) {
	t.Parallel()
	for name := range commands {
		_, errOut, err := cli(t, nil, name, "-h")
		if err != nil || !strings.HasPrefix(errOut, "Usage: arena "+name+" ") {
			t.Errorf("arena %s -h: %v, stderr %q", name, err, firstLine(errOut))
		}
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

// 'arena version' names the build, the newest migration it applies and
// the scoring method.
func TestVersion(t *testing.T) {
	t.Parallel()
	out, _, err := cli(t, nil, "version")
	if err != nil || !strings.HasPrefix(out, "arena ") || !strings.Contains(out, "\ncommit ") ||
		!strings.Contains(out, "\nschema "+store.SchemaVersion()+"\n") || !strings.Contains(out, "\nscoring method "+scoring.MethodVersion+"\n") {
		t.Fatalf("version: %v\n%s", err, out)
	}
	if store.SchemaVersion() == "" {
		t.Fatal("no schema version: the migrations are not embedded")
	}
}
