package main

import (
	"encoding/json"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

func seedMarkets(t *testing.T, dbURL string) {
	t.Helper()
	close := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ms := []*arena.Market{
		{Source: "polymarket", SourceID: "1", Kind: arena.KindMarket, Question: "Will it rain?", Category: "weather",
			Type: arena.Binary, Outcomes: []string{"Yes", "No"}, Prices: map[string]float64{"Yes": 0.25, "No": 0.75},
			Volume: 100, CloseTime: close, Status: arena.StatusOpen},
		{Source: "polymarket", SourceID: "2", Kind: arena.KindMarket, Question: "Lakers vs Celtics", Category: "sports",
			Type: arena.Multi, Outcomes: []string{"Lakers", "Celtics"}, Volume: 300, Status: arena.StatusResolved, Resolution: "Celtics"},
		{Source: "sim", SourceID: "s1", Kind: arena.KindMarket, Question: "Sim?", Type: arena.Binary,
			Outcomes: []string{"Yes", "No"}, Volume: 100, Status: arena.StatusResolved, Resolution: arena.Void},
	}
	saveMarkets(t, dbURL, ms)
}

func TestMarketsJSON(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	seedMarkets(t, dbURL)
	out, _, err := cli(t, nil, "markets", "--db", dbURL, "--format", "json", "--limit", "0")
	if err != nil {
		t.Fatal(err)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d markets", len(got))
	}
	wantKeys := []string{"category", "close_time", "id", "outcomes", "prices", "question", "resolution", "source", "source_id", "status", "type", "venue", "volume"}
	for _, m := range got {
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		if !reflect.DeepEqual(keys, wantKeys) {
			t.Fatalf("keys %v", keys)
		}
	}
	// Volume descending, then id.
	if got[0]["source_id"] != "2" || got[1]["source_id"] != "1" || got[2]["source_id"] != "s1" {
		t.Fatalf("order: %v %v %v", got[0]["source_id"], got[1]["source_id"], got[2]["source_id"])
	}
	if got[0]["type"] != "multi" || got[0]["prices"] != nil || got[0]["resolution"] != "Celtics" || got[0]["close_time"] != nil {
		t.Fatalf("multi market: %v", got[0])
	}
	if got[1]["close_time"] != "2026-12-01T00:00:00Z" || got[1]["resolution"] != nil || got[1]["prices"].(map[string]any)["Yes"] != 0.25 {
		t.Fatalf("binary market: %v", got[1])
	}
	if got[2]["resolution"] != "VOID" {
		t.Fatalf("void: %v", got[2])
	}
	out, _, err = cli(t, nil, "markets", "--db", dbURL, "--format", "json", "--status", "open")
	if err != nil || strings.Count(out, `"id"`) != 1 {
		t.Fatalf("status filter: %v %s", err, out)
	}
	out, _, err = cli(t, nil, "markets", "--db", dbURL, "--source", "sim")
	if err != nil || !strings.Contains(out, "resolved:VOID") || strings.Contains(out, "Lakers") {
		t.Fatalf("table: %v %s", err, out)
	}
}

func TestMarketsBadInput(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, args := range [][]string{
		{"markets", "--status", "done"},
		{"markets", "--limit", "-1"},
		{"markets", "--format", "xml"},
		{"markets", "--nope"},
		{"markets", "extra"},
		{"markets", "--db", "mysql://x"},
		{"markets", "--db", "sqlite:"},
		{"bogus"},
	} {
		_, _, err := cli(t, []string{"ARENA_DB=sqlite:" + filepath.Join(dir, "x.db")}, args...)
		if err == nil {
			t.Errorf("%v: no error", args)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: multi-line error %q", args, err)
		}
	}
}

// Issue 2: the same simulator seed gives byte-identical `arena markets --format json`.
func TestSimMarketsJSONDeterministic(t *testing.T) {
	t.Parallel()
	dump := func(seed string) string {
		dbURL := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
		if _, _, err := cli(t, nil, "sync", "--source", "sim", "--seed", seed, "--markets", "40",
			"--start", "2026-01-05T00:00:00Z", "--now", "2026-02-01T00:00:00Z", "--db", dbURL); err != nil {
			t.Fatal(err)
		}
		out, _, err := cli(t, nil, "markets", "--db", dbURL, "--format", "json", "--limit", "0")
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	a, b, c := dump("3"), dump("3"), dump("4")
	if a != b {
		t.Fatal("same seed gave different markets JSON")
	}
	if a == c {
		t.Fatal("different seeds gave the same markets JSON")
	}
	if n := strings.Count(a, `"source_id"`); n < 20 {
		t.Fatalf("only %d markets", n)
	}
	for _, want := range []string{`"status": "open"`, `"status": "resolved"`} {
		if !strings.Contains(a, want) {
			t.Errorf("no market with %s at the chosen instant", want)
		}
	}
}
