package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
)

var (
	cohortWeek  = time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC) // a Sunday
	cohortRunAt = cohortWeek.Add(5 * time.Minute).Format(time.RFC3339)
)

// cohortMarkets stores three open markets and returns their ids.
func cohortMarkets(t *testing.T, dbURL string) []int64 {
	t.Helper()
	var ms []*arena.Market
	for i, yes := range []float64{0.40, 0.70, 0.25} {
		ms = append(ms, &arena.Market{Source: arena.SourceSim, SourceID: fmt.Sprintf("cm%d", i), Kind: arena.KindMarket,
			Question: fmt.Sprintf("Will event %d happen?", i), Category: "economics", Type: arena.Binary,
			Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: yes, arena.No: 1 - yes},
			Volume: float64(1000 - i), CloseTime: cohortWeek.AddDate(0, 1, 0), Status: arena.StatusOpen})
	}
	return saveMarkets(t, dbURL, ms)
}

// writeRegistry writes a model registry file for models on the test server.
func writeRegistry(t *testing.T, baseURL, timeout string, ids ...string) string {
	t.Helper()
	var items []string
	for _, id := range ids {
		items = append(items, fmt.Sprintf(`{"id":%q,"name":"Model %s","provider":"local","model":%q,"base_url":%q,"api_key_env":"ARENA_TEST_LLM_KEY",
			"temperature":0,"max_tokens":1000,"timeout":%q,"input_usd_per_mtok":2.5,"output_usd_per_mtok":10,"training_cutoff":"2025-01-01"}`,
			id, id, id, baseURL, timeout))
	}
	items = append(items, fmt.Sprintf(`{"id":"keyless","name":"Keyless","provider":"local","model":"keyless","base_url":%q,
		"api_key_env":"KEYLESS_API_KEY","input_usd_per_mtok":0,"output_usd_per_mtok":0}`, baseURL))
	path := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(path, []byte(`{"agents":[`+strings.Join(items, ",\n")+`]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func betJSON(market int64, side string, amount int) string {
	return fmt.Sprintf(`{"action":"BET","bets":[{"market_id":%d,"side":%q,"amount":%d}],"reasoning":"edge"}`, market, side, amount)
}

// TestCohortRunLLM runs a week from the command line against the local
// OpenAI-compatible server: an agent whose key is missing is skipped with a
// clear message, a 401 agent fails retryably (exit status 1), and `show
// --format json` reports exact dollar amounts.
func TestCohortRunLLM(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	ids := cohortMarkets(t, dbURL)
	srv := llmtest.New(t)
	srv.Script("alpha", llmtest.OK(betJSON(ids[0], "YES", 500), 1200, 80))
	srv.Script("beta", llmtest.OK("```json\n"+betJSON(ids[1], "no", 300)+"\n```", 1200, 80))
	srv.Script("gamma", llmtest.OK(`{"action":"HOLD","reasoning":"wait"}`, 1200, 20))
	srv.Script("delta", llmtest.Fail(401, "bad key"))
	reg := writeRegistry(t, srv.BaseURL, "5s", "alpha", "beta", "gamma", "delta")
	env := []string{"ARENA_TEST_LLM_KEY=sk-test"}

	out, errOut, err := cli(t, env, "cohort", "run", "--now", cohortRunAt, "--agents", reg, "--db", dbURL)
	if err == nil || !strings.Contains(err.Error(), "1 agent(s) failed retryably; run again to retry them") {
		t.Fatalf("run: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(errOut, `warning: agent "keyless" (Keyless) skipped: environment variable KEYLESS_API_KEY is not set`) {
		t.Fatalf("no skip message in:\n%s", errOut)
	}
	for _, want := range []string{
		"cohort 1 started for the week of 2026-03-01 with 4 agents (--agents " + reg + ")",
		"cohort 1, week of 2026-03-01: 3 markets offered; done 3, skipped 0, retryable 1, no decider 0",
	} {
		if !strings.Contains(out, want) {
			t.Fatalf("output lacks %q:\n%s", want, out)
		}
	}
	if !regexp.MustCompile(`delta +retryable +failed_retryable +\d+ +- +0 +0 +decider: agent delta: model call 1: llm delta \(delta\): HTTP 401 Unauthorized: bad key`).MatchString(out) {
		t.Fatalf("delta line:\n%s", out)
	}

	out, _, err = cli(t, nil, "cohort", "show", "1", "--format", "json", "--db", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		ID        int64  `json:"id"`
		WeekStart string `json:"week_start"`
		Status    string `json:"status"`
		Agents    []map[string]any
	}
	if err := json.Unmarshal([]byte(out), &shown); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if shown.ID != 1 || shown.WeekStart != "2026-03-01T00:00:00Z" || shown.Status != "active" || len(shown.Agents) != 4 {
		t.Fatalf("show: %s", out)
	}
	byAgent := map[string]map[string]any{}
	for _, a := range shown.Agents {
		byAgent[a["agent"].(string)] = a
		for _, k := range []string{"agent", "cash", "positions_value", "total_value", "pnl", "pnl_pct", "brier", "resolved_bets", "bankrupt"} {
			if _, ok := a[k]; !ok {
				t.Fatalf("agent lacks %q: %v", k, a)
			}
		}
	}
	// alpha: $500 at 0.40 = 1250 shares, still marked at 0.40.
	// beta: $300 of NO at 0.30 = 1000 shares, marked at 0.30.
	want := map[string][3]float64{"alpha": {9500, 500, 10000}, "beta": {9700, 300, 10000}, "gamma": {10000, 0, 10000}, "delta": {10000, 0, 10000}}
	for id, w := range want {
		a := byAgent[id]
		if a["cash"] != w[0] || a["positions_value"] != w[1] || a["total_value"] != w[2] || a["pnl"] != 0.0 || a["brier"] != nil ||
			a["resolved_bets"] != 0.0 || a["bankrupt"] != false {
			t.Errorf("%s: %v", id, a)
		}
	}

	// A rerun retries only delta (still unauthorized): no second trade.
	srv.Script("delta", llmtest.Fail(401, "bad key"))
	out, _, err = cli(t, env, "cohort", "run", "--now", cohortRunAt, "--agents", reg, "--db", dbURL)
	if err == nil || !strings.Contains(out, "done 0, skipped 3, retryable 1") || len(srv.Requests("")) != 5 {
		t.Fatalf("rerun: %v %d requests\n%s", err, len(srv.Requests("")), out)
	}

	out, _, err = cli(t, nil, "cohort", "list", "--db", dbURL)
	if err != nil || !regexp.MustCompile(`(?m)^1 +2026-03-01 +active +4 `).MatchString(out) {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, _, err = cli(t, nil, "cohort", "show", "1", "--db", dbURL)
	if err != nil || !regexp.MustCompile(`alpha +\$9,500.00 +\$500.00 +\$10,000.00 +\$0.00 +\+0.00% +- +0 +1 +false`).MatchString(out) {
		t.Fatalf("show table: %v\n%s", err, out)
	}
}

// TestCohortSimOffline runs the simulated traders offline: sync the sim
// world, run the week, snapshot, let markets resolve, settle.
func TestCohortSimOffline(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	start := "2026-01-05T00:00:00Z"
	if _, _, err := cli(t, nil, "sync", "--source", "sim", "--seed", "11", "--markets", "60", "--start", start, "--now", "2026-01-11T00:00:00Z", "--db", dbURL); err != nil {
		t.Fatal(err)
	}
	sim := []string{"--sim-seed", "11", "--sim-markets", "60", "--sim-start", start, "--db", dbURL}
	out, _, err := cli(t, nil, append([]string{"cohort", "run", "--now", "2026-01-11T00:05:00Z"}, sim...)...)
	if err != nil || !strings.Contains(out, "done 7, skipped 0, retryable 0, no decider 0") {
		t.Fatalf("run: %v\n%s", err, out)
	}
	if !regexp.MustCompile(`sim-informed-0.02 +done +done +\d+ +BET +[1-5] +0`).MatchString(out) {
		t.Fatalf("informed trader did not bet:\n%s", out)
	}
	out, _, err = cli(t, nil, append([]string{"cohort", "run", "--now", "2026-01-11T00:15:00Z"}, sim...)...)
	if err != nil || !strings.Contains(out, "nothing to decide for the week of 2026-01-11") {
		t.Fatalf("rerun: %v\n%s", err, out)
	}
	if out, _, err = cli(t, nil, "cohort", "snapshot", "--now", "2026-01-11T00:17:00Z", "--db", dbURL); err != nil || out != "7 new snapshots at 2026-01-11T00:10:00Z\n" {
		t.Fatalf("snapshot: %v %q", err, out)
	}
	// Three weeks later many markets have resolved.
	if _, _, err := cli(t, nil, "sync", "--source", "sim", "--seed", "11", "--markets", "60", "--start", start, "--now", "2026-02-01T00:00:00Z", "--db", dbURL); err != nil {
		t.Fatal(err)
	}
	out, _, err = cli(t, nil, "cohort", "settle", "--now", "2026-02-01T01:00:00Z", "--db", dbURL)
	m := regexp.MustCompile(`^(\d+) markets settled: (\d+) positions paid out, (\d+) refunded`).FindStringSubmatch(out)
	if err != nil || m == nil || m[1] == "0" {
		t.Fatalf("settle: %v %q", err, out)
	}
	out, _, err = cli(t, nil, "cohort", "show", "1", "--format", "json", "--db", dbURL)
	if err != nil {
		t.Fatal(err)
	}
	var shown struct {
		Agents []struct {
			ResolvedBets int `json:"resolved_bets"`
		}
	}
	json.Unmarshal([]byte(out), &shown)
	resolved := 0
	for _, a := range shown.Agents {
		resolved += a.ResolvedBets
	}
	if len(shown.Agents) != 7 || resolved == 0 {
		t.Fatalf("after settlement: %s", out)
	}
}

func TestCohortUsageErrors(t *testing.T) {
	t.Parallel()
	dbURL := emptyDB(t)
	reg := writeRegistry(t, "http://127.0.0.1:1/v1", "5s", "alpha")
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"agents":[{"id":"x","model":"m","provider":"openrouter"}]}`), 0o600)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"cohort"}, "usage"},
		{[]string{"cohort", "bogus"}, `unknown subcommand "bogus"`},
		{[]string{"cohort", "start", "--db", dbURL}, "no lineup: give --agents FILE"},
		{[]string{"cohort", "start", "--agents", reg, "--sim-seed", "3", "--db", dbURL}, "either --agents or --sim-seed"},
		{[]string{"cohort", "start", "--agents", reg, "--db", dbURL}, "no agent can run: every agent's API key is missing"},
		{[]string{"cohort", "start", "--agents", bad, "--db", dbURL}, `field "api_key_env": required`},
		{[]string{"cohort", "run", "--now", "yesterday", "--db", dbURL}, `--now "yesterday": want an RFC 3339 time`},
		{[]string{"cohort", "run", "--db", dbURL}, "no active cohort"},
		{[]string{"cohort", "run", "--concurrency", "0", "--db", dbURL}, "concurrency at least 1"},
		{[]string{"cohort", "show", "--db", dbURL}, "want one cohort ID"},
		{[]string{"cohort", "show", "abc", "--db", dbURL}, `cohort ID "abc": want a positive integer`},
		{[]string{"cohort", "show", "7", "--db", dbURL}, "cohort 7 not found"},
		{[]string{"cohort", "show", "1", "--format", "xml", "--db", dbURL}, `format "xml"`},
		{[]string{"cohort", "list", "--status", "open", "--db", dbURL}, `status "open": want active or completed`},
		{[]string{"cohort", "settle", "--policy", "coin", "--db", dbURL}, `unknown settlement policy "coin"`},
	} {
		_, _, err := cli(t, nil, c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	// A lineup with a key set starts the cohort; starting it again changes nothing.
	env := []string{"ARENA_TEST_LLM_KEY=k"}
	out, _, err := cli(t, env, "cohort", "start", "--now", "2026-03-04T12:00:00Z", "--agents", reg, "--db", dbURL)
	if err != nil || !strings.Contains(out, "cohort 1 started for the week of 2026-03-01 with 1 agent ") {
		t.Fatalf("start: %v %s", err, out)
	}
	out, _, err = cli(t, env, "cohort", "start", "--now", "2026-03-01T00:00:00Z", "--agents", reg, "--db", dbURL)
	if err != nil || !strings.Contains(out, "cohort 1 already exists for the week of 2026-03-01 (1 agent); nothing changed") {
		t.Fatalf("second start: %v %s", err, out)
	}
}

// TestCohortRunKill9 kills an `arena cohort run` process with SIGKILL in
// the middle of the run (two decisions recorded, two model calls in
// flight, three agents not started) and reruns it: the first rerun decides
// the three untouched agents and leaves the two live-looking claims alone;
// once the claims are older than twice the model timeout, the next rerun
// takes them over. Every agent ends with exactly one decision and one
// trade.
func TestCohortRunKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dbURL := storetest.URL(t, engine)
			mids := cohortMarkets(t, dbURL)
			agents := []string{"a1", "a2", "a3", "a4", "a5", "a6", "a7"}
			srv := llmtest.New(t)
			var calls atomic.Int32
			var killed atomic.Bool
			fourth := make(chan struct{})
			for _, id := range agents {
				srv.Handle(id, func(llmtest.ChatRequest) llmtest.Reply {
					n := calls.Add(1)
					if n == 4 {
						close(fourth)
					}
					delay := 50 * time.Millisecond
					if n >= 3 && !killed.Load() {
						// Calls in flight when the process dies never answer
						// (the server stops waiting when the connection drops).
						delay = time.Minute
					}
					return llmtest.Reply{Delay: delay, Content: betJSON(mids[0], "YES", 100), PromptTokens: 900, OutputTokens: 40}
				})
			}
			// The claims of the killed run may be taken over once they are
			// twice the model timeout old: long enough that the first rerun,
			// slow to start on a loaded machine, still finds them live.
			const timeout = 4 * time.Second
			reg := writeRegistry(t, srv.BaseURL, timeout.String(), agents...)
			args := []string{"cohort", "run", "--now", cohortRunAt, "--agents", reg, "--db", dbURL, "--concurrency", "2"}
			cmd := exec.Command(os.Args[0], args...)
			cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1", "ARENA_TEST_LLM_KEY=sk-test")
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-fourth:
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatal("the run never reached its fourth model call")
			}
			// With two decisions at a time, the third call starts only after
			// the first decision is committed, the fourth after the second.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			killedAt := time.Now()
			killed.Store(true)
			if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("child exit: %v", err)
			}
			db, err := store.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			states := func() map[arena.DecisionStatus]int {
				ds, err := db.Decisions(context.Background(), 1)
				if err != nil {
					t.Fatal(err)
				}
				n := map[arena.DecisionStatus]int{}
				for _, d := range ds {
					n[d.Status]++
				}
				return n
			}
			if s := states(); s[arena.DecisionDone] != 2 || s[arena.DecisionClaimed] != 2 || len(s) != 2 {
				t.Fatalf("after kill -9: %v", s)
			}

			env := []string{"ARENA_TEST_LLM_KEY=sk-test"}
			out, errOut, err := cli(t, env, args...)
			if time.Since(killedAt) > 2*timeout {
				t.Fatalf("the first rerun ended %s after the kill, past the takeover age %s: the test cannot tell a takeover from a fresh claim", time.Since(killedAt), 2*timeout)
			}
			if err != nil || !strings.Contains(out, "done 3, skipped 4, retryable 0") {
				t.Fatalf("first rerun: %v\n%s\n%s", err, out, errOut)
			}
			if s := states(); s[arena.DecisionDone] != 5 || s[arena.DecisionClaimed] != 2 {
				t.Fatalf("after the first rerun: %v", s)
			}
			time.Sleep(time.Until(killedAt.Add(2*timeout + 200*time.Millisecond)))
			out, errOut, err = cli(t, env, args...)
			if err != nil || !strings.Contains(out, "done 2, skipped 5, retryable 0") {
				t.Fatalf("second rerun: %v\n%s\n%s", err, out, errOut)
			}
			out, _, err = cli(t, env, args...)
			if err != nil || !strings.Contains(out, "nothing to decide") {
				t.Fatalf("third rerun: %v\n%s", err, out)
			}

			ds, _ := db.Decisions(context.Background(), 1)
			var attempts []int
			for _, d := range ds {
				if d.Status != arena.DecisionDone {
					t.Fatalf("decision %+v", d)
				}
				attempts = append(attempts, d.Attempts)
			}
			sort.Ints(attempts)
			if fmt.Sprint(attempts) != "[1 1 1 1 1 2 2]" {
				t.Fatalf("attempts %v", attempts)
			}
			ports, _ := db.Portfolios(context.Background(), 1)
			for _, p := range ports {
				trades, _ := db.Trades(context.Background(), p.ID)
				if len(trades) != 1 || p.Cash != 9_900*arena.Dollar || len(p.Positions) != 1 || p.Positions[0].Shares != 250*arena.OneShare {
					t.Fatalf("%s: %d trades, cash %s, positions %d", p.AgentID, len(trades), p.Cash, len(p.Positions))
				}
			}
			// 4 calls before the kill (2 abandoned in flight), 3 + 2 after.
			if n := calls.Load(); n != 9 {
				t.Fatalf("%d model calls", n)
			}
			t.Logf("%s: killed with 2 decided and 2 in flight; reruns decided 3, then took over 2 stale claims", engine)
		})
	}
}

// TestTradingJobsForServe drives the trading jobs `arena serve` gets from
// the app by hand: the Sunday start freezes the agents file's lineup
// (the keyless agent is left out), the 00:05 run decides through the test
// server, and a broken agents file fails serve's jobs.
func TestTradingJobsForServe(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	ids := cohortMarkets(t, dbURL)
	srv := llmtest.New(t)
	srv.Script("alpha", llmtest.OK(betJSON(ids[2], "YES", 1000), 500, 50))
	o := config.Defaults()
	o.AgentsFile = writeRegistry(t, srv.BaseURL, "5s", "alpha")
	o.TradingPolicy = "defer"
	db := openStore(t, dbURL)
	var logs strings.Builder
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	ctx := context.Background()
	// tradingJobs builds serve's app on db and returns its trading jobs.
	tradingJobs := func(o config.Options, environ []string) (*trading.Engine, []jobs.Job, error) {
		o.NoSync = true
		a, err := app.New(ctx, o, app.Deps{DB: db, Environ: environ, Logger: logger, Log: app.LogWrite})
		if err != nil {
			return nil, nil, err
		}
		all, err := a.Jobs(ctx, "")
		var js []jobs.Job
		for _, j := range all {
			if strings.HasPrefix(j.Name, "trading-") {
				js = append(js, j)
			}
		}
		if err != nil {
			return nil, nil, err
		}
		tr, err := a.Trading(ctx)
		if err != nil {
			return nil, nil, err
		}
		return tr.Engine, js, nil
	}
	eng, js, err := tradingJobs(o, []string{"ARENA_TEST_LLM_KEY=k"})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range js {
		names = append(names, j.Name)
	}
	if fmt.Sprint(names) != "[trading-cohort-start trading-decision-run trading-snapshot trading-settle]" || len(eng.Lineup) != 1 ||
		eng.ModelTimeout != 5*time.Second || !strings.Contains(logs.String(), `msg="trading agent skipped" agent=keyless`) {
		t.Fatalf("jobs %v, lineup %+v, timeout %v, logs:\n%s", names, eng.Lineup, eng.ModelTimeout, logs.String())
	}
	if err := js[0].Run(ctx, cohortWeek); err != nil {
		t.Fatal(err)
	}
	if err := js[1].Run(ctx, cohortWeek.Add(5*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := js[2].Run(ctx, cohortWeek.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	ports, _ := db.Portfolios(ctx, 1)
	snaps, _ := db.Snapshots(ctx, ports[0].ID)
	// $1000 at 0.25 = 4000 shares.
	if len(ports) != 1 || ports[0].AgentID != "alpha" || ports[0].Cash != 9_000*arena.Dollar || ports[0].Positions[0].Shares != 4_000*arena.OneShare || len(snaps) != 1 {
		t.Fatalf("portfolios %+v, snapshots %d", ports, len(snaps))
	}
	// The next period finds nothing pending and calls no model.
	if err := js[1].Run(ctx, cohortWeek.Add(15*time.Minute)); err != nil || len(srv.Requests("")) != 1 {
		t.Fatalf("second period: %v, %d requests", err, len(srv.Requests("")))
	}

	// ARENA_TRADING_POLICY reaches the settlement job: an ambiguous market
	// stays open under defer, and is refunded under refund.
	m, err := db.Market(ctx, ids[2])
	if err != nil {
		t.Fatal(err)
	}
	m.Status, m.Ambiguous, m.Prices = arena.StatusResolved, true, nil
	if _, err := db.SaveMarkets(ctx, []*arena.Market{m}); err != nil {
		t.Fatal(err)
	}
	if err := js[3].Run(ctx, cohortWeek.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p, _ := db.Portfolio(ctx, ports[0].ID); len(p.Positions) != 1 {
		t.Fatalf("defer policy settled the ambiguous market: %+v", p)
	}
	o.TradingPolicy = "refund"
	_, js, err = tradingJobs(o, []string{"ARENA_TEST_LLM_KEY=k"})
	if err != nil {
		t.Fatal(err)
	}
	if err := js[3].Run(ctx, cohortWeek.Add(2*time.Hour)); err != nil {
		t.Fatal(err)
	}
	if p, _ := db.Portfolio(ctx, ports[0].ID); len(p.Positions) != 0 || p.Cash != 10_000*arena.Dollar {
		t.Fatalf("refund policy: %+v", p)
	}
	o.TradingPolicy = "coinflip"
	if _, _, err := tradingJobs(o, nil); err == nil || !strings.Contains(err.Error(), "coinflip") {
		t.Fatalf("bad policy: %v", err)
	}
	o.TradingPolicy = "refund"

	bad := filepath.Join(t.TempDir(), "agents.json")
	os.WriteFile(bad, []byte(`{"agents":[]}`), 0o600)
	o.AgentsFile = bad
	if _, _, err := tradingJobs(o, nil); err == nil || !strings.Contains(err.Error(), "no agents") {
		t.Fatalf("broken agents file: %v", err)
	}
}

// emptyDB returns the URL of a new, migrated, empty SQLite database.
func emptyDB(t *testing.T) string {
	t.Helper()
	url := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	db, err := store.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
	return url
}
