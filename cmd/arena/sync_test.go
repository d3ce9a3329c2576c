package main

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/polymarket"
	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
	"github.com/forecast-arena/arena/internal/store"
)

// storeState is everything a sync may write: markets and their prices.
type storeState struct {
	Markets []*arena.Market
	Prices  map[int64][]arena.PricePoint
}

func readState(t *testing.T, dbURL string) storeState {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms, err := db.Markets(ctx, arena.MarketFilter{})
	if err != nil {
		t.Fatal(err)
	}
	st := storeState{Markets: ms, Prices: map[int64][]arena.PricePoint{}}
	for _, m := range ms {
		for _, o := range m.Outcomes {
			ps, err := db.PriceHistory(ctx, m.ID, o, time.Time{}, time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC))
			if err != nil {
				t.Fatal(err)
			}
			st.Prices[m.ID] = append(st.Prices[m.ID], ps...)
		}
	}
	return st
}

func fastRetries(t *testing.T) {
	prev := tuneSyncClient
	tuneSyncClient = func(c *polymarket.Client) {
		c.MaxRetries, c.Backoff, c.MaxBackoff, c.MaxRetryAfter = 2, time.Millisecond, 2*time.Millisecond, 2*time.Millisecond
	}
	t.Cleanup(func() { tuneSyncClient = prev })
}

func TestSyncPolymarketEndToEnd(t *testing.T) {
	t.Parallel()
	fake := polymarkettest.New(t)
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	args := []string{"sync", "--source", "polymarket", "--limit", "5", "--gamma-url", fake.GammaURL, "--clob-url", fake.CLOBURL, "--db", dbURL}

	out, _, err := cli(t, []string{"ARENA_LOG_LEVEL=error"}, args...)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Count(out, "\n") != 1 || !strings.Contains(out, "kept 5 of") || !strings.Contains(out, "saved 5 new") {
		t.Fatalf("summary %q", out)
	}
	t.Log(strings.TrimSpace(out))
	st := readState(t, dbURL)
	var ids []string
	for _, m := range st.Markets {
		ids = append(ids, m.SourceID)
	}
	if want := []string{"501001", "501002", "601001", "501004", "601005"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("stored %v, want %v", ids, want)
	}
	tok := polymarkettest.Tokens(t)
	for _, m := range st.Markets {
		if m.Source != arena.SourcePolymarket || m.Status != arena.StatusOpen || !reflect.DeepEqual(m.TokenIDs, tok[m.SourceID]) {
			t.Errorf("%s: source %s status %s tokens %v", m.SourceID, m.Source, m.Status, m.TokenIDs)
		}
		if len(st.Prices[m.ID]) == 0 {
			t.Errorf("%s: no price history", m.SourceID)
		}
	}
	if m := st.Markets[1]; m.Type != arena.Multi || m.Prices["Lakers"] != 0.46 {
		t.Errorf("two-team market: type %s prices %v", m.Type, m.Prices)
	}
	if m := st.Markets[0]; m.Type != arena.Binary || m.Prices["Yes"] != 0.615 || m.Category != "Economy" || m.EventSlug != "fed-june-2026" {
		t.Errorf("binary market: %+v", m)
	}
	var flagged int
	for _, p := range st.Prices[st.Markets[3].ID] {
		if p.Flagged {
			flagged++
		}
	}
	if flagged != 4 { // gamma and clob points of Yes and No
		t.Errorf("501004: %d flagged points, want 4", flagged)
	}

	// Config by environment works too, and a re-sync inserts nothing.
	out, _, err = cli(t, []string{"ARENA_GAMMA_URL=" + fake.GammaURL, "ARENA_CLOB_URL=" + fake.CLOBURL, "ARENA_DB=" + dbURL, "ARENA_SYNC_LIMIT=5", "ARENA_LOG_LEVEL=error"}, "sync")
	if err != nil || !strings.Contains(out, "saved 0 new") {
		t.Fatalf("re-sync: %v %q", err, out)
	}
}

func TestSyncCLIErrorsChangeNothing(t *testing.T) {
	t.Parallel()
	fastRetries(t)
	fake := polymarkettest.New(t)
	dir := t.TempDir()
	dbURL := "sqlite:" + filepath.Join(dir, "arena.db")
	if _, _, err := cli(t, []string{"ARENA_LOG_LEVEL=error"}, "sync", "--limit", "3", "--gamma-url", fake.GammaURL, "--clob-url", fake.CLOBURL, "--db", dbURL); err != nil {
		t.Fatal(err)
	}
	before := readState(t, dbURL)
	if len(before.Markets) != 3 {
		t.Fatalf("seeded %d markets", len(before.Markets))
	}
	bad500 := polymarkettest.New(t)
	bad500.GammaStatus = 500
	badJSON := polymarkettest.New(t)
	badJSON.GammaBadJSON = true
	clobDown := polymarkettest.New(t)
	clobDown.CLOBStatus = 503

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown source", []string{"--source", "predictit"}, `unknown source "predictit"`},
		{"bad flag", []string{"--limt", "5"}, "flag provided but not defined"},
		{"bad limit", []string{"--limit", "0"}, "must be positive"},
		{"stray argument", []string{"now"}, "unexpected argument"},
		{"sim flag on polymarket", []string{"--seed", "3"}, "--seed does not apply"},
		{"bad db scheme", []string{"--db", "mysql://x"}, "want sqlite:PATH or postgres"},
		{"gamma unreachable", []string{"--gamma-url", "http://127.0.0.1:1"}, "polymarket unavailable"},
		{"gamma 500s", []string{"--gamma-url", bad500.GammaURL, "--clob-url", bad500.CLOBURL}, "HTTP 500"},
		{"gamma invalid JSON", []string{"--gamma-url", badJSON.GammaURL, "--clob-url", badJSON.CLOBURL}, "invalid JSON"},
		{"clob 503s", []string{"--gamma-url", clobDown.GammaURL, "--clob-url", clobDown.CLOBURL}, "HTTP 503"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"sync", "--db", dbURL, "--limit", "3", "--gamma-url", fake.GammaURL, "--clob-url", fake.CLOBURL}, tc.args...)
			out, _, err := cli(t, []string{"ARENA_LOG_LEVEL=error"}, args...)
			if err == nil {
				t.Fatalf("succeeded: %q", out)
			}
			t.Log(oneLine(err))
			if msg := oneLine(err); !strings.Contains(msg, tc.want) || !strings.HasPrefix(msg, "sync: ") {
				t.Errorf("error %q, want it to mention %q", msg, tc.want)
			}
			if exitCode(err) == 0 || out != "" {
				t.Errorf("exit %d, stdout %q", exitCode(err), out)
			}
			if after := readState(t, dbURL); !reflect.DeepEqual(before, after) {
				t.Errorf("store changed")
			}
		})
	}

	// A bad invocation never creates a database.
	fresh := filepath.Join(dir, "fresh.db")
	for _, args := range [][]string{{"--source", "nope"}, {"--source", "sim", "--now", "yesterday"}, {"--source", "sim", "--limit", "3"}} {
		if _, _, err := cli(t, nil, append([]string{"sync", "--db", "sqlite:" + fresh}, args...)...); err == nil {
			t.Errorf("%v succeeded", args)
		}
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("bad invocations created %s", fresh)
	}
	if _, _, err := cli(t, nil, "sync", "--source", "sim", "--db", "sqlite:"+filepath.Join(dir, "no", "such", "dir", "x.db")); err == nil {
		t.Error("sync into a missing directory succeeded")
	}
}

func TestSyncSim(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	args := []string{"sync", "--source", "sim", "--seed", "7", "--markets", "12", "--start", "2026-01-05T00:00:00Z", "--now", "2026-01-19T00:00:00Z", "--db", dbURL}
	out, _, err := cli(t, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(strings.TrimSpace(out))
	st := readState(t, dbURL)
	if len(st.Markets) == 0 || len(st.Markets) > 12 {
		t.Fatalf("%d sim markets", len(st.Markets))
	}
	if !strings.HasPrefix(out, "sim: seed 7, ") || !strings.Contains(out, "saved "+strconv.Itoa(len(st.Markets))+" new") {
		t.Errorf("summary %q", out)
	}
	for _, m := range st.Markets {
		if m.Source != arena.SourceSim {
			t.Fatalf("market %s from source %s", m, m.Source)
		}
	}
	// Same seed, same instant: the same world, nothing changes.
	out, _, err = cli(t, nil, args...)
	if err != nil || !strings.Contains(out, "saved 0 new, 0 updated, "+strconv.Itoa(len(st.Markets))+" unchanged, 0 price points") {
		t.Fatalf("re-sync: %v %q", err, out)
	}
	if after := readState(t, dbURL); !reflect.DeepEqual(st, after) {
		t.Error("re-sync of the same world changed the store")
	}
	// Later, the world has moved on: prices update.
	later := append([]string(nil), args...)
	later[len(later)-3] = "2026-01-26T00:00:00Z"
	if out, _, err = cli(t, nil, later...); err != nil || !strings.Contains(out, "updated") || strings.Contains(out, " 0 price points") {
		t.Fatalf("later sync: %v %q", err, out)
	}
}

// A sync that fails against an unreachable source leaves no database file
// behind when there was none.
func TestSyncFailureLeavesNoNewDatabase(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow (waits out the sync's retries): run without -short")
	}
	path := filepath.Join(t.TempDir(), "fresh.db")
	_, _, err := cli(t, []string{"ARENA_SYNC_LIMIT=5"}, "sync", "--source", "polymarket", "--db", "sqlite:"+path,
		"--gamma-url", "http://127.0.0.1:1", "--clob-url", "http://127.0.0.1:1")
	if err == nil {
		t.Fatal("sync against an unreachable source succeeded")
	}
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if _, statErr := os.Stat(path + suffix); statErr == nil {
			t.Errorf("failed sync left %s behind", path+suffix)
		}
	}
}
