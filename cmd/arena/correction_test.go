package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// followBound is how soon after a correction, made by any process, the
// served pages must show it (docs/operations.md states it).
const followBound = 10 * time.Second

// tryJSON decodes the JSON of a 200 answer to GET url into v, and
// returns the status.
func tryJSON(t *testing.T, url string, v any) int {
	t.Helper()
	code, b := get(t, url)
	if code == 200 && v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v\n%s", url, err, b)
		}
	}
	return code
}

// servedVKey is the log's verifier key as the arena at base serves it.
func servedVKey(t *testing.T, base string) string {
	t.Helper()
	return strings.TrimSpace(string(getOK(t, base+"/log/vkey")))
}

// scoredMarket finds, through the API at base, a market of a scored round
// that its source resolved YES or NO and the oracle never saw: the round,
// the market, and the decision that reverses its outcome.
func scoredMarket(t *testing.T, base string) (round uint64, market int64, reverse string) {
	t.Helper()
	for id := uint64(1); ; id++ {
		var r forecast.RoundJSON
		if tryJSON(t, fmt.Sprintf("%s/api/v1/rounds/%d", base, id), &r) != 200 {
			t.Fatalf("no scored round has a market its source resolved (looked at %d rounds)", id-1)
		}
		for i, o := range r.Outcomes {
			if o == nil || (*o != "YES" && *o != "NO") {
				continue
			}
			m := r.Markets[i].MarketID
			if tryJSON(t, fmt.Sprintf("%s/api/v1/oracle/resolutions/%d", base, m), nil) != 404 {
				continue
			}
			return id, m, map[string]string{"YES": "NO", "NO": "YES"}[*o]
		}
	}
}

// servedMatchesReport waits until the leaderboard served at base equals a
// fresh `arena report leaderboard` of dbURL and differs from before,
// failing after followBound; it returns the board.
func servedMatchesReport(t *testing.T, base, dbURL string, before []scoring.Row) []scoring.Row {
	t.Helper()
	out, _, err := cli(t, nil, "report", "leaderboard", "--db", dbURL, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var fresh scoring.Board
	if err := json.Unmarshal([]byte(out), &fresh); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want, _ := json.Marshal(fresh.Rows)
	if was, _ := json.Marshal(before); string(was) == string(want) {
		t.Fatal("the correction did not change the leaderboard")
	}
	deadline := time.Now().Add(followBound)
	for {
		var served scoring.Board
		tryJSON(t, base+"/api/v1/leaderboard", &served)
		got, _ := json.Marshal(served.Rows)
		if string(got) == string(want) {
			return served.Rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s after the correction the served leaderboard is\n%s\nnot the database's\n%s", followBound, briers(served.Rows), briers(fresh.Rows))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// briers lists a board's agents with their Brier scores, in order.
func briers(rows []scoring.Row) string {
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "%s %.6f\n", r.Agent, r.Brier)
	}
	return b.String()
}

// A correction made with the CLI while `arena serve` runs on the demo's
// database (an admin disputes a market a scored round froze, an arbiter
// reverses it, which re-scores the round): within followBound the served
// leaderboard equals a fresh `arena report leaderboard`, the round's
// scores are the new ones, and `arena verify --url` passes against the
// honest arena: its published export carries the corrected board.
func TestCorrectionReachesServeAndExport(t *testing.T) {
	t.Parallel()
	_, dir, _ := seed1Demo(t)
	dbURL := "sqlite:" + filepath.Join(dir, "arena.db")
	srv := startServeEnv(t, []string{"ARENA_CHECKPOINT_INTERVAL=1s"}, "serve", "--addr", "127.0.0.1:0", "--no-sync", "--no-rounds", "--db", dbURL)
	base := "http://" + srv.addr
	var before scoring.Board
	getJSON(t, base+"/api/v1/leaderboard", &before)
	round, market, reverse := scoredMarket(t, base)
	var scoresBefore []forecast.ScoreJSON
	getJSON(t, fmt.Sprintf("%s/api/v1/rounds/%d/scores", base, round), &scoresBefore)

	m := fmt.Sprint(market)
	if out, errOut, err := cli(t, nil, "oracle", "dispute", "--market", m, "--admin", "ann", "--reason", "the source misread its rules", "--db", dbURL); err != nil {
		t.Fatalf("dispute: %v\n%s%s", err, out, errOut)
	}
	if out, errOut, err := cli(t, nil, "oracle", "decide", "--market", m, "--decision", reverse, "--arbiter", "bob", "--reason", "the rules say so", "--db", dbURL); err != nil ||
		!strings.Contains(out, "re-scored round") {
		t.Fatalf("decide: %v\n%s%s", err, out, errOut)
	}
	servedMatchesReport(t, base, dbURL, before.Rows)
	var scoresAfter []forecast.ScoreJSON
	getJSON(t, fmt.Sprintf("%s/api/v1/rounds/%d/scores", base, round), &scoresAfter)
	if a, b := fmt.Sprint(scoresBefore), fmt.Sprint(scoresAfter); a == b {
		t.Fatalf("round %d's served scores did not change: %s", round, a)
	}
	out, errOut, err := cli(t, nil, "verify", "--url", base, "--vkey", servedVKey(t, base))
	if err != nil || !strings.Contains(out, "OK") || strings.Contains(out, "no export published for the current checkpoint") {
		t.Fatalf("verify --url after the correction: %v\n%s%s\nserve:\n%s", err, out, errOut, srv.logs)
	}
}

// Two replicas of one arena on PostgreSQL: a correction made through one
// (an admin's dispute and an arbiter's decision over its API) reaches the
// other within followBound (its leaderboard equals a fresh report), and
// `arena verify --url` against the other passes.
func TestCorrectionReachesAnotherReplica(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("plays a demo on PostgreSQL")
	}
	dbURL := storetest.URL(t, "postgres") // skips without ARENA_TEST_POSTGRES_URL
	dir := t.TempDir()
	res, err := demo.Run(context.Background(), demo.Config{Seed: 3, Rounds: 4, Dir: dir, DB: dbURL})
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	env := []string{"ARENA_DATA_DIR=" + dir, "ARENA_CHECKPOINT_INTERVAL=1s"}
	args := []string{"serve", "--addr", "127.0.0.1:0", "--no-sync", "--no-rounds", "--db", dbURL, "--admin-token", fcToken}
	a, b := startServeEnv(t, env, args...), startServeEnv(t, env, args...)
	baseA, baseB := "http://"+a.addr, "http://"+b.addr
	var before scoring.Board
	getJSON(t, baseB+"/api/v1/leaderboard", &before)
	_, market, reverse := scoredMarket(t, baseA)
	if code := a.api(t, "POST", fmt.Sprintf("/api/v1/admin/oracle/markets/%d/dispute", market), map[string]string{"admin": "ann", "reason": "misread"}, fcToken, nil); code != 200 {
		t.Fatalf("dispute through replica A: %d", code)
	}
	if code := a.api(t, "POST", fmt.Sprintf("/api/v1/admin/oracle/queue/%d", market), map[string]string{"decision": reverse, "arbiter": "bob", "reason": "rules"}, fcToken, nil); code != 200 {
		t.Fatalf("decision through replica A: %d", code)
	}
	servedMatchesReport(t, baseB, dbURL, before.Rows)
	out, errOut, err := cli(t, nil, "verify", "--url", baseB, "--vkey", servedVKey(t, baseB))
	if err != nil || !strings.Contains(out, "OK") || strings.Contains(out, "no export published for the current checkpoint") {
		t.Fatalf("verify --url against replica B: %v\n%s%s\nB:\n%s", err, out, errOut, b.logs)
	}
}

// Exports pruned by the retention, past the grace period: the latest
// export stays and verifies, a pruned size answers 404, and `arena verify
// --url --since` with a checkpoint kept from a pruned export still proves
// the current checkpoint extends it (the log's tiles do, not the exports).
func TestVerifySinceAfterPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir, _ := playedDemo(t)
	o := config.Defaults()
	o.DB, o.RateIPPerMin, o.RateAgentPerMin = "sqlite:"+filepath.Join(dir, "arena.db"), 0, 0
	a, err := app.New(ctx, o, app.Deps{Log: app.LogWrite})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	h, err := a.Handler()
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	vkey := servedVKey(t, srv.URL)
	if err := a.PublishExport(ctx); err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(t.TempDir(), "kept.checkpoint")
	if out, errOut, err := cli(t, nil, "verify", "--url", srv.URL, "--vkey", vkey, "--save-checkpoint", kept); err != nil {
		t.Fatalf("verify --url: %v\n%s%s", err, out, errOut)
	}
	key := filepath.Join(t.TempDir(), "agent.key")
	if _, _, err := cli(t, nil, "agent", "keygen", "--out", key); err != nil {
		t.Fatal(err)
	}
	if out, errOut, err := cli(t, nil, "agent", "profile", "--server", srv.URL, "--key", key, "--name", "After The Prune"); err != nil {
		t.Fatalf("agent profile: %v\n%s%s", err, out, errOut)
	}
	if err := a.PublishExport(ctx); err != nil {
		t.Fatal(err)
	}
	before, err := a.DB.ExportManifests(ctx)
	if err != nil || len(before) < 2 {
		t.Fatalf("exports before the prune: %+v %v", before, err)
	}
	st, err := export.Prune(ctx, a.DB, export.Retention{Latest: 1}, time.Now().Add(2*export.Grace))
	if err != nil || st.ExportsDeleted != len(before)-1 || st.PartsDeleted == 0 {
		t.Fatalf("prune: %+v %v", st, err)
	}
	if code := tryJSON(t, fmt.Sprintf("%s/exports/%d/index.json", srv.URL, before[0].Size), nil); code != http.StatusNotFound {
		t.Fatalf("a pruned export: %d, want 404", code)
	}
	out, errOut, err := cli(t, nil, "verify", "--url", srv.URL, "--vkey", vkey, "--since", kept)
	if err != nil || !strings.Contains(out, "OK") {
		t.Fatalf("verify --url --since a pruned export's checkpoint: %v\n%s%s", err, out, errOut)
	}
}
