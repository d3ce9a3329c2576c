package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/kalshi/kalshitest"
	"github.com/forecast-arena/arena/internal/manifold/manifoldtest"
	"github.com/forecast-arena/arena/internal/metaculus/metaculustest"
)

func jsonObj(t *testing.T, v any) json.RawMessage {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// `arena sync --source kalshi|manifold|metaculus` lists each venue's open
// binary markets from its local server, with their prices and close
// times, and a later sync records how they resolved.
func TestSyncVenues(t *testing.T) {
	t.Parallel()
	kalshiMarket := func(status, result string) map[string]any {
		return map[string]any{"ticker": "KXCLI-26DEC31-Y", "event_ticker": "KXCLI-26DEC31", "market_type": "binary", "title": "Will the CLI sync Kalshi?",
			"status": status, "result": result, "close_time": "2099-01-01T00:00:00Z", "settlement_ts": "2099-01-02T00:00:00Z",
			"yes_bid_dollars": "0.6100", "yes_ask_dollars": "0.6300", "volume_fp": "1200.00", "rules_primary": "Yes if it does."}
	}
	manifoldMarket := func(resolved bool) map[string]any {
		m := map[string]any{"id": "CliManifold", "question": "Will the CLI sync Manifold?", "outcomeType": "BINARY", "probability": 0.27,
			"createdTime": 1700000000000, "closeTime": 4070908800000, "isResolved": resolved, "volume": 55, "textDescription": "Resolves YES if it does."}
		if resolved {
			m["resolution"], m["resolutionTime"] = "MKT", 4070908800000
			m["resolutionProbability"] = 0.4
		}
		return m
	}
	metaculusPost := func(status, resolution string) map[string]any {
		q := map[string]any{"id": 502, "post_id": 501, "type": "binary", "status": status, "title": "Will the CLI sync Metaculus?",
			"scheduled_close_time": "2099-01-01T00:00:00Z", "actual_resolve_time": "2099-01-02T00:00:00Z",
			"aggregations": map[string]any{"recency_weighted": map[string]any{"latest": map[string]any{"centers": []float64{0.8}}}}}
		if resolution != "" {
			q["resolution"] = resolution
		}
		return map[string]any{"id": 501, "title": "Will the CLI sync Metaculus?", "status": status, "question": q}
	}

	k := kalshitest.New(t)
	k.Markets = []json.RawMessage{jsonObj(t, kalshiMarket("active", ""))}
	m := manifoldtest.New(t)
	m.Markets = []json.RawMessage{jsonObj(t, manifoldMarket(false))}
	m.Single["CliManifold"] = m.Markets[0]
	mc := metaculustest.New(t)
	mc.Posts = []json.RawMessage{jsonObj(t, metaculusPost("open", ""))}
	token := "ARENA_METACULUS_TOKEN=" + metaculustest.Token

	for _, c := range []struct {
		venue, urlFlag, url, id string
		yes                     float64
		resolve                 func()
		resolution              string
	}{
		{arena.SourceKalshi, "--kalshi-url", k.URL, "KXCLI-26DEC31-Y", 0.62, func() {
			k.Update(func() { k.Markets, k.Single["KXCLI-26DEC31-Y"] = nil, jsonObj(t, kalshiMarket("finalized", "yes")) })
		}, arena.Yes},
		{arena.SourceManifold, "--manifold-url", m.URL, "CliManifold", 0.27, func() {
			m.Update(func() { m.Markets, m.Single["CliManifold"] = nil, jsonObj(t, manifoldMarket(true)) })
		}, arena.Void},
		{arena.SourceMetaculus, "--metaculus-url", mc.URL, "501", 0.8, func() {
			mc.Update(func() { mc.Posts, mc.Single["501"] = nil, jsonObj(t, metaculusPost("resolved", "no")) })
		}, arena.No},
	} {
		t.Run(c.venue, func(t *testing.T) {
			dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
			args := []string{"sync", "--source", c.venue, c.urlFlag, c.url, "--limit", "10", "--db", dbURL}
			out, _, err := cli(t, []string{"ARENA_LOG_LEVEL=error", token}, args...)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(out, c.venue+": kept 1 of 1 listed") || !strings.Contains(out, "saved 1 new") {
				t.Errorf("summary %q", out)
			}
			st := readState(t, dbURL)
			if len(st.Markets) != 1 || st.Markets[0].SourceID != c.id || st.Markets[0].Source != c.venue || st.Markets[0].Prices[arena.Yes] != c.yes ||
				st.Markets[0].CloseTime.Year() != 2099 || len(st.Prices[st.Markets[0].ID]) == 0 {
				t.Fatalf("stored %+v", st.Markets)
			}
			c.resolve()
			out, _, err = cli(t, []string{"ARENA_LOG_LEVEL=error", token}, args...)
			if err != nil || !strings.Contains(out, "refreshed 1 (0 closed, 1 resolved") {
				t.Fatalf("second sync: %v %q", err, out)
			}
			if st = readState(t, dbURL); st.Markets[0].Status != arena.StatusResolved || st.Markets[0].Resolution != c.resolution {
				t.Errorf("after resolution: %s %q", st.Markets[0].Status, st.Markets[0].Resolution)
			}
		})
	}

	// A flag of another source, or Metaculus without its token, is refused
	// before anything is written.
	dir := t.TempDir()
	for _, tc := range []struct {
		args    []string
		environ []string
		want    string
	}{
		{[]string{"--source", "kalshi", "--gamma-url", k.URL}, nil, "--gamma-url does not apply to --source kalshi"},
		{[]string{"--source", "manifold", "--kalshi-url", k.URL}, nil, "--kalshi-url does not apply to --source manifold"},
		{[]string{"--source", "kalshi", "--venues", "kalshi"}, nil, "--venues does not apply to --source kalshi"},
		{[]string{"--source", "metaculus", "--metaculus-url", mc.URL}, nil, "ARENA_METACULUS_TOKEN"},
		{[]string{"--source", "metaculus", "--metaculus-url", mc.URL}, []string{"ARENA_METACULUS_TOKEN=wrong"}, "HTTP 401"},
		{[]string{"--source", "sim", "--venues", "kalshi,nope"}, nil, `venue "nope"`},
	} {
		db := "sqlite:" + filepath.Join(dir, "refused.db")
		out, _, err := cli(t, tc.environ, append([]string{"sync", "--db", db}, tc.args...)...)
		if err == nil || !strings.Contains(oneLine(err), tc.want) || out != "" {
			t.Errorf("%v: %v (%q), want %q", tc.args, err, out, tc.want)
		}
	}
}

// `arena sync --source sim --venues` names the world's markets after
// venues, and the database remembers them.
func TestSyncSimVenues(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	args := []string{"sync", "--source", "sim", "--seed", "7", "--markets", "12", "--venues", "kalshi,Manifold", "--start", "2026-01-05T00:00:00Z",
		"--now", "2026-01-19T00:00:00Z", "--db", dbURL}
	out, _, err := cli(t, nil, args...)
	if err != nil || !strings.Contains(out, "named after kalshi,manifold") {
		t.Fatalf("%v %q", err, out)
	}
	venues := map[string]int{}
	for _, m := range readState(t, dbURL).Markets {
		venues[m.Venue()]++
	}
	if len(venues) != 2 || venues[arena.SourceKalshi] == 0 || venues[arena.SourceManifold] == 0 {
		t.Errorf("venues %v", venues)
	}
	// The world is recorded with its venues: naming others is refused,
	// repeating the sync without --venues keeps them.
	if _, _, err := cli(t, nil, append(args[:len(args):len(args)], "--venues", "polymarket")...); err == nil || !strings.Contains(oneLine(err), "named after kalshi,manifold") {
		t.Errorf("other venues: %v", err)
	}
	noVenues := []string{"sync", "--source", "sim", "--now", "2026-01-19T00:00:00Z", "--db", dbURL}
	if out, _, err := cli(t, nil, noVenues...); err != nil || !strings.Contains(out, "named after kalshi,manifold") {
		t.Errorf("repeat: %v %q", err, out)
	}
}
