package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/web"
)

// setDate is the forecast due date of a published set, from its file name
// (2025-10-26-llm.json).
func setDate(t testing.TB, file string) string {
	t.Helper()
	d := filepath.Base(file)[:len(time.DateOnly)]
	if _, err := time.Parse(time.DateOnly, d); err != nil {
		t.Fatalf("%s: no date in the name", file)
	}
	return d
}

// scriptedForecaster answers like a model: first it asks for the details
// and the price history of market 0, then it submits the freeze price it
// was shown for market 0 and a value derived from the question for the
// others.
func scriptedForecaster(req llmtest.ChatRequest) llmtest.Reply {
	k := strings.Count(req.Messages[1].Text(), "\n") - 1
	for _, m := range req.Messages {
		if m.Role == "tool" {
			preds := make([]string, k)
			for i := range preds {
				preds[i] = strconv.Itoa((len(req.Messages[1].Text())*(i+7) + i*1237) % 10001)
			}
			return llmtest.Reply{PromptTokens: 900, OutputTokens: 60, ToolCalls: []llmtest.ToolCall{{Name: agent.ToolSubmit,
				Arguments: `{"predictions":[` + strings.Join(preds, ",") + `],"reasoning":[]}`}}}
		}
	}
	return llmtest.Reply{PromptTokens: 700, OutputTokens: 40, ToolCalls: []llmtest.ToolCall{
		{Name: agent.ToolDetails, Arguments: `{"index":0}`}, {Name: agent.ToolHistory, Arguments: `{"index":0}`}}}
}

type independentSets struct {
	// outcome and freeze value by source id "<due>:<source>:<id>"
	outcome map[string]int
	freeze  map[string]float64
	// resolved-to-0/1 market questions per due date
	perDue map[string]int
}

// readIndependently counts from the raw files with encoding/json, sharing
// no code with the importer.
func readIndependently(t testing.TB, qs, rs []string) independentSets {
	t.Helper()
	market := map[string]bool{"polymarket": true, "manifold": true, "metaculus": true, "infer": true}
	out := independentSets{outcome: map[string]int{}, freeze: map[string]float64{}, perDue: map[string]int{}}
	for _, f := range rs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var set struct {
			Due  string `json:"forecast_due_date"`
			Rows []struct {
				ID         any     `json:"id"`
				Source     string  `json:"source"`
				ResolvedTo float64 `json:"resolved_to"`
				Resolved   bool    `json:"resolved"`
			} `json:"resolutions"`
		}
		if err := json.Unmarshal(b, &set); err != nil {
			t.Fatal(err)
		}
		for _, r := range set.Rows {
			id, ok := r.ID.(string)
			if !ok || !market[r.Source] || !r.Resolved || (r.ResolvedTo != 0 && r.ResolvedTo != 1) {
				continue
			}
			key := set.Due + ":" + r.Source + ":" + id
			if _, dup := out.outcome[key]; !dup {
				out.perDue[set.Due]++
			}
			out.outcome[key] = int(r.ResolvedTo)
		}
	}
	for _, f := range qs {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var set struct {
			Due       string `json:"forecast_due_date"`
			Questions []struct {
				ID     string `json:"id"`
				Source string `json:"source"`
				Value  any    `json:"freeze_datetime_value"`
			} `json:"questions"`
		}
		if err := json.Unmarshal(b, &set); err != nil {
			t.Fatal(err)
		}
		for _, q := range set.Questions {
			if s, ok := q.Value.(string); ok && market[q.Source] {
				if v, err := strconv.ParseFloat(s, 64); err == nil {
					out.freeze[set.Due+":"+q.Source+":"+q.ID] = v
				}
			}
		}
	}
	return out
}

func TestBacktestForecastBench(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("slow (end-to-end backtest on the shared data): run without -short")
	}
	dbURL, qs, rs := forecastBenchStore(t)
	ind := readIndependently(t, qs, rs)
	srv := llmtest.New(t)
	srv.Handle("early", scriptedForecaster)
	// The late model's provider reports what each call cost, as OpenRouter
	// does: 100 µ$ for a first call, 300 µ$ for a submission.
	srv.Handle("late", func(req llmtest.ChatRequest) llmtest.Reply {
		r := scriptedForecaster(req)
		r.BilledUSD = 0.0001
		if r.PromptTokens == 900 {
			r.BilledUSD = 0.0003
		}
		return r
	})
	// Training cutoffs on the due dates of the oldest set and of the one
	// before the newest split the sets three ways.
	early, late := setDate(t, qs[0]), setDate(t, qs[len(qs)-2])
	reg := filepath.Join(t.TempDir(), "agents.json")
	os.WriteFile(reg, []byte(strings.NewReplacer("BASE", srv.BaseURL, "EARLY", early, "LATE", late).Replace(`{"agents":[
	 {"id":"early","provider":"local","model":"early","base_url":"BASE","input_usd_per_mtok":0.15,"output_usd_per_mtok":0.6,"training_cutoff":"EARLY"},
	 {"id":"late","provider":"local","model":"late","base_url":"BASE","input_usd_per_mtok":2.5,"output_usd_per_mtok":10,"training_cutoff":"LATE"},
	 {"id":"nocut","provider":"local","model":"nocut","base_url":"BASE","input_usd_per_mtok":1,"output_usd_per_mtok":1},
	 {"id":"ens","kind":"ensemble","members":["early","late"],"combine":"median"}]}`)), 0o600)
	cache := filepath.Join(t.TempDir(), "cache")
	outDir := t.TempDir()
	args := []string{"backtest", "--source", "forecastbench", "--agents", reg, "--db", dbURL, "--cache-dir", cache, "--out", outDir, "--format", "json", "--workers", "4"}
	start := time.Now()
	out, stderr, err := cli(t, nil, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr)
	}
	t.Logf("backtest: %d requests in %v", len(srv.Requests("")), time.Since(start))
	var rep backtest.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, key := range []string{`"rounds"`, `"questions"`, `"left_over"`, `"agents"`, `"forecasts"`, `"excluded_by_cutoff"`, `"failures"`,
		`"brier"`, `"alpha"`, `"cost_usd"`, `"billed_usd"`, `"billed_calls"`, `"calls"`, `"cached_calls"`, `"cost"`, `"usd"`} {
		if !strings.Contains(out, key) {
			t.Errorf("JSON lacks %s", key)
		}
	}

	// Rounds and the guard, against the independent count.
	inRounds := map[string]int{}
	total, left := 0, 0
	for due, n := range ind.perDue {
		inRounds[due] = n / 7 * 7
		total += n / 7 * 7
		left += n % 7
	}
	if rep.Questions != total || rep.LeftOver != left || rep.Rounds != total/7 {
		t.Errorf("rounds %d questions %d left over %d; independent %d, %d, %d", rep.Rounds, rep.Questions, rep.LeftOver, total/7, total, left)
	}
	excluded := func(cutoff string) int {
		n := 0
		for due, q := range inRounds {
			if cutoff == "" || due <= cutoff {
				n += q
			}
		}
		return n
	}
	want := map[string]int{"early": excluded(early), "late": excluded(late), "nocut": excluded(""), "ens": excluded(late)}
	byAgent := map[string]backtest.AgentResult{}
	for _, a := range rep.Agents {
		byAgent[a.Agent] = a
		if a.ExcludedByCutoff != want[a.Agent] || a.Forecasts != total-want[a.Agent] || a.Failures != 0 {
			t.Errorf("%s: excluded %d (independent %d), forecasts %d, failures %d", a.Agent, a.ExcludedByCutoff, want[a.Agent], a.Forecasts, a.Failures)
		}
	}
	if want["early"] == 0 || want["late"] <= want["early"] || want["nocut"] != total {
		t.Fatalf("the cutoffs do not split the sets: %v", want)
	}
	if a := byAgent["nocut"]; a.Calls != 0 || a.Brier != nil {
		t.Errorf("agent without cutoff ran: %+v", a)
	}
	// Every model round made two calls (a repeat of an identical request,
	// when two sets hold the same questions, is answered by the cache);
	// the ensemble made none of its own. Cost is tokens × prices per call,
	// to the micro-dollar.
	rounds := map[string]int{"early": (total - want["early"]) / 7, "late": (total - want["late"]) / 7}
	prices := map[string][2]int64{"early": {150_000, 600_000}, "late": {2_500_000, 10_000_000}}
	for id, n := range rounds {
		a := byAgent[id]
		reqs := srv.Requests(id)
		if a.Calls+a.CachedCalls != int64(2*n) || a.Calls != int64(len(reqs)) {
			t.Errorf("%s: %d calls + %d cached, %d requests, want %d in all", id, a.Calls, a.CachedCalls, len(reqs), 2*n)
		}
		var cost int64
		for _, r := range reqs {
			in, out := int64(700), int64(40)
			if len(r.Body.Messages) > 2 {
				in, out = 900, 60
			}
			cost += (in*prices[id][0] + out*prices[id][1] + 500_000) / 1_000_000
		}
		if got := int64(a.CostUSD*1e6 + 0.5); got != cost {
			t.Errorf("%s: cost %d µ$, want %d", id, got, cost)
		}
		// The billed figure is the provider's own, beside the estimate.
		var billed, billedCalls int64
		if id == "late" {
			for _, r := range reqs {
				billed, billedCalls = billed+100, billedCalls+1
				if len(r.Body.Messages) > 2 {
					billed += 200
				}
			}
		}
		if got := int64(a.BilledUSD*1e6 + 0.5); got != billed || a.BilledCalls != billedCalls {
			t.Errorf("%s: billed %d µ$ over %d calls, want %d over %d", id, got, a.BilledCalls, billed, billedCalls)
		}
	}
	if rep.Cost.BilledCalls != byAgent["late"].BilledCalls || rep.Cost.BilledUSD != byAgent["late"].BilledUSD {
		t.Errorf("run billed %+v, late agent %+v", rep.Cost, byAgent["late"])
	}
	if a := byAgent["ens"]; a.Calls != 0 || a.CachedCalls != 0 {
		t.Errorf("ensemble made calls: %+v", a)
	}

	// forecasts.csv: benchmark = freeze value, outcome = resolution, in the
	// shared files.
	f, err := os.Open(filepath.Join(outDir, "forecasts.csv"))
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(recs[0], ",") != "agent,round,market,category,forecast,benchmark,outcome,event" {
		t.Fatalf("header %v", recs[0])
	}
	n := 0
	for _, r := range recs[1:] {
		fv, ok := ind.freeze[r[2]]
		b, err := strconv.ParseFloat(r[5], 64)
		if !ok || err != nil || b != fv {
			t.Fatalf("%s: benchmark %q, freeze value %v (%v)", r[2], r[5], fv, ok)
		}
		if o, ok := ind.outcome[r[2]]; !ok || r[6] != strconv.Itoa(o) {
			t.Fatalf("%s: outcome %q, resolution %v", r[2], r[6], o)
		}
		n++
	}
	if n != byAgent["early"].Forecasts+byAgent["late"].Forecasts+byAgent["ens"].Forecasts {
		t.Errorf("%d CSV rows", n)
	}

	// `arena score` on the export prints the same figures.
	sout, _, err := cli(t, nil, "score", "--in", filepath.Join(outDir, "forecasts.csv"), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var scored []struct {
		Agent string
		Brier float64
		Alpha *float64
	}
	if err := json.Unmarshal([]byte(sout), &scored); err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, s := range scored {
		a, ok := byAgent[s.Agent]
		if !ok {
			continue // the score command's own market baseline
		}
		checked++
		if a.Brier == nil || *a.Brier != s.Brier || a.Alpha == nil || s.Alpha == nil || *a.Alpha != *s.Alpha {
			t.Errorf("%s: backtest brier %v alpha %v, score brier %v alpha %v", s.Agent, a.Brier, a.Alpha, s.Brier, s.Alpha)
		}
	}

	if checked != 3 {
		t.Errorf("score compared %d agents, want 3", checked)
	}
	// A rerun with the warm cache makes no request and reports the same.
	before := len(srv.Requests(""))
	out2, _, err := cli(t, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.Requests("")) - before; n != 0 {
		t.Errorf("rerun made %d requests", n)
	}
	var rep2 backtest.Report
	json.Unmarshal([]byte(out2), &rep2)
	// --cache-only answers everything from the cache too.
	if out3, _, err := cli(t, nil, append(args, "--cache-only")...); err != nil || out3 != out2 || len(srv.Requests("")) != before {
		t.Errorf("--cache-only run: %v, same output %v", err, out3 == out2)
	}
	if rep2.Cost.Calls != 0 || rep2.Cost.CachedCalls != rep.Cost.Calls+rep.Cost.CachedCalls || rep2.Cost.USD != 0 {
		t.Errorf("rerun cost %+v, first %+v", rep2.Cost, rep.Cost)
	}
	for i := range rep2.Agents {
		if fmt.Sprint(rep2.Agents[i].Brier) != fmt.Sprint(rep.Agents[i].Brier) && (rep2.Agents[i].Brier == nil || *rep2.Agents[i].Brier != *rep.Agents[i].Brier) {
			t.Errorf("rerun changed %s", rep2.Agents[i].Agent)
		}
	}
	// The backtest track is served apart from live rounds.
	db := openStore(t, dbURL)
	rows, err := db.BacktestForecasts(context.Background())
	if err != nil || len(rows) != n {
		t.Errorf("stored %d backtest rows, want %d: %v", len(rows), n, err)
	}
	if live, _ := db.ScoredForecasts(context.Background()); len(live) != 0 {
		t.Errorf("backtest leaked %d rows into the live track", len(live))
	}
	boards := backtest.NewBoards(db, scoring.Method{}, nil)
	defer boards.Close() // before the store closes
	hs := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, Forecasters: db, Boards: boards}).Handler())
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/api/v1/leaderboard?track=backtest")
	if err != nil {
		t.Fatal(err)
	}
	var board struct {
		Rows []struct {
			Agent string
			Brier float64
			Alpha *float64
		}
	}
	err = json.NewDecoder(resp.Body).Decode(&board)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("leaderboard: %d %v", resp.StatusCode, err)
	}
	onBoard := 0
	for _, row := range board.Rows {
		if a, ok := byAgent[row.Agent]; ok {
			onBoard++
			if math.Abs(row.Brier-*a.Brier) > 1e-12 {
				t.Errorf("leaderboard %s Brier %v, backtest %v", row.Agent, row.Brier, *a.Brier)
			}
		}
	}
	if onBoard != 3 {
		t.Errorf("backtest leaderboard lists %d of the 3 agents: %+v", onBoard, board)
	}
}

// No look-ahead: a price point after a question's freeze time and its
// resolution never reach the model; an interrupted run resumes without
// repeating a completed call after kill -9.
func TestBacktestNoLookAheadAndResume(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	dbURL, qs, _ := forecastBenchStore(t)
	due, _ := time.Parse(time.DateOnly, setDate(t, qs[0]))
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := db.Markets(context.Background(), arena.MarketFilter{Source: arena.SourceForecastBench, Kind: arena.KindMarket})
	if err != nil {
		t.Fatal(err)
	}
	plan, err := backtest.Cut(ms, 7, due, due)
	if err != nil || len(plan.Rounds) < 3 {
		t.Fatalf("plan %v %v", plan, err)
	}
	q := plan.Rounds[0].Questions[0].Market
	q.History = []arena.PricePoint{{Outcome: arena.Yes, Time: q.FreezeTime.Add(time.Hour), Price: 0.123456, Source: arena.PriceCLOBHistory}}
	if _, err := db.SaveMarkets(context.Background(), []*arena.Market{q}); err != nil {
		t.Fatal(err)
	}
	db.Close()

	srv := llmtest.New(t)
	var mu sync.Mutex
	completed := map[string]bool{}
	calls := 0
	fourth := make(chan struct{})
	srv.Handle("m", func(req llmtest.ChatRequest) llmtest.Reply {
		b, _ := json.Marshal(req.Messages)
		mu.Lock()
		defer mu.Unlock()
		calls++
		if calls == 4 { // in flight when the process is killed: never answered
			close(fourth)
			return llmtest.Reply{Delay: time.Minute}
		}
		if calls > 4 {
			return llmtest.Reply{Delay: time.Minute}
		}
		completed[string(b)] = true
		return scriptedForecaster(req)
	})
	reg := filepath.Join(t.TempDir(), "agents.json")
	os.WriteFile(reg, []byte(strings.ReplaceAll(`{"agents":[{"id":"m","provider":"local","model":"m","base_url":"BASE",
	 "input_usd_per_mtok":1,"output_usd_per_mtok":1,"training_cutoff":"2025-01-01"}]}`, "BASE", srv.BaseURL)), 0o600)
	cache := filepath.Join(t.TempDir(), "cache")
	args := []string{"backtest", "--source", "forecastbench", "--agents", reg, "--db", dbURL, "--cache-dir", cache,
		"--from", due.Format(time.DateOnly), "--to", due.Format(time.DateOnly), "--workers", "1", "--format", "json"}
	// kill -9 while the fourth call is in flight: with one worker the
	// three answered calls were cached before it was sent.
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-fourth:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the backtest never reached its fourth model call")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("child exit: %v", err)
	}
	first := len(completed)
	srv.Handle("m", func(req llmtest.ChatRequest) llmtest.Reply {
		b, _ := json.Marshal(req.Messages)
		mu.Lock()
		defer mu.Unlock()
		if completed[string(b)] {
			t.Errorf("completed call repeated: %.200s", b)
		}
		return scriptedForecaster(req)
	})
	out, _, err := cli(t, nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	var rep backtest.Report
	json.Unmarshal([]byte(out), &rep)
	if rep.Agents[0].Forecasts != len(plan.Rounds)*7 || rep.Agents[0].CachedCalls != int64(first) {
		t.Errorf("resumed run: %+v after %d completed calls", rep.Agents[0], first)
	}
	var bodies []string
	for _, r := range srv.Requests("m") {
		bodies = append(bodies, string(r.Raw))
	}
	sort.Strings(bodies)
	all := strings.Join(bodies, "\n")
	for _, leak := range []string{"0.123456", `\"status\"`, `\"resolution\"`, `\"resolved_at\"`, `\"outcome\"`} {
		if i := strings.Index(all, leak); i >= 0 {
			t.Errorf("%q reached the model: …%s…", leak, all[max(i-300, 0):min(i+100, len(all))])
		}
	}
	if !strings.Contains(all, strconv.FormatFloat(*q.FreezeValue, 'g', -1, 64)) {
		t.Error("the freeze value was never shown as the price")
	}
}

// A backtest that would run nothing fails and says why, instead of
// reporting "0 rounds" with exit status 0.
func TestBacktestNothingToRun(t *testing.T) {
	t.Parallel()
	empty := "sqlite:" + filepath.Join(t.TempDir(), "empty.db")
	openStore(t, empty).Close()
	agents := writeOracleRegistry(t, "http://127.0.0.1:1/v1", "m")
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"inverted date range", []string{"--from", "2026-01-01", "--to", "2025-01-01"}, "--from 2026-01-01 is after --to 2025-01-01"},
		{"nothing imported", nil, "holds no resolved ForecastBench market question (import question and resolution sets with 'arena import forecastbench')"},
	} {
		args := append([]string{"backtest", "--source", "forecastbench", "--agents", agents, "--db", empty, "--cache-dir", t.TempDir()}, c.args...)
		out, _, err := cli(t, nil, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) || out != "" {
			t.Errorf("%s: %v (stdout %q); want %q", c.name, err, out, c.want)
		}
	}
}
