package participant_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/strategy"
	"github.com/forecast-arena/arena/participant"
)

const llmRegistry = `{"agents":[
 {"id":"m1","provider":"local","model":"m1","base_url":"BASE","input_usd_per_mtok":1,"output_usd_per_mtok":2},
 {"id":"m2","provider":"local","model":"m2","base_url":"BASE","input_usd_per_mtok":1,"output_usd_per_mtok":2},
 {"id":"m3","provider":"local","model":"m3","base_url":"BASE","input_usd_per_mtok":1,"output_usd_per_mtok":2,"no_tools":true},
 {"id":"never","provider":"local","model":"never","base_url":"BASE","input_usd_per_mtok":1,"output_usd_per_mtok":2},
 {"id":"denied","provider":"local","model":"denied","base_url":"BASE","input_usd_per_mtok":1,"output_usd_per_mtok":2},
 {"id":"poor","provider":"local","model":"poor","base_url":"BASE","input_usd_per_mtok":1,"output_usd_per_mtok":2,"max_tokens":1000,"max_usd":0.004},
 {"id":"ens-mean","kind":"ensemble","members":["m1","m2"],"combine":"mean"},
 {"id":"ens-median","kind":"ensemble","members":["m1","m2","m3"],"combine":"median"}
]}`

func toolReply(calls ...llmtest.ToolCall) llmtest.Reply {
	return llmtest.Reply{ToolCalls: calls, PromptTokens: 1000, OutputTokens: 100}
}

// A live round with LLM agents over HTTP: tool calls, wrong submissions,
// failures, budgets and ensembles, commit, reveal, trigger, scores and
// published traces.
func TestLLMAgentsLiveRound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := newServer(t, db)
		r := s.round(t, 0)
		cd := r.CommitDeadline
		// Hourly prices up to the forecast time, and the benchmark point.
		for i, m := range s.ms {
			for h := 1; h <= 200; h++ {
				m.History = append(m.History, arena.PricePoint{Outcome: arena.Yes, Time: cd.Add(-time.Duration(h) * time.Hour),
					Price: 0.2 + 0.2*float64(i), Source: arena.PriceCLOBHistory})
			}
			m.History = append(m.History, arena.PricePoint{Outcome: arena.Yes, Time: cd, Price: 0.25 + 0.25*float64(i), Source: arena.PriceCLOBMid})
		}
		if _, err := db.SaveMarkets(ctx, s.ms); err != nil {
			t.Fatal(err)
		}

		srv := llmtest.New(t)
		srv.Script("m1",
			toolReply(llmtest.ToolCall{Name: agent.ToolDetails, Arguments: `{"index":0}`}, llmtest.ToolCall{Name: agent.ToolHistory, Arguments: `{"index":0}`}),
			toolReply(llmtest.ToolCall{Name: agent.ToolSubmit, Arguments: `{"predictions":[6000,5000],"reasoning":["a","b"]}`}),
			toolReply(llmtest.ToolCall{Name: agent.ToolSubmit, Arguments: `{"predictions":[6000,5000,7001],"reasoning":["a","b","c"]}`}))
		srv.Script("m2", toolReply(llmtest.ToolCall{Name: agent.ToolSubmit, Arguments: `{"predictions":[2000,3000,9000],"reasoning":["x","y","z"]}`}))
		srv.Script("m3", llmtest.OK("```json\n{\"predictions\":[1000,9000,5000],\"reasoning\":[\"p\",\"q\",\"r\"]}\n```", 500, 50))
		srv.Handle("never", func(llmtest.ChatRequest) llmtest.Reply {
			return toolReply(llmtest.ToolCall{Name: agent.ToolDetails, Arguments: `{"index":1}`})
		})
		srv.Handle("denied", func(llmtest.ChatRequest) llmtest.Reply {
			return llmtest.Fail(http.StatusUnauthorized, "invalid api key")
		})
		srv.Handle("poor", func(llmtest.ChatRequest) llmtest.Reply {
			return toolReply(llmtest.ToolCall{Name: agent.ToolHistory, Arguments: `{"index":2}`})
		})
		reg, err := llm.ParseRegistry(strings.NewReader(strings.ReplaceAll(llmRegistry, "BASE", srv.BaseURL)))
		if err != nil {
			t.Fatal(err)
		}
		fc, skipped := agent.NewForecasters(reg, llm.EnvLookup(nil), 0, llm.WithLogger(quiet),
			llm.WithRetryPolicy(llm.RetryPolicy{BaseDelay: time.Millisecond, MaxDelay: time.Millisecond}))
		if len(skipped) != 0 {
			t.Fatalf("skipped %v", skipped)
		}
		fc.Cache = llm.DirStore{Dir: t.TempDir()}
		sink := &strategy.StoreTraces{Store: db, Addresses: map[string]string{}, Now: s.clk.Now}
		fc.Sink = sink
		// Ensembles first: they make their members forecast, and the
		// members then reuse those forecasts.
		order := []string{"ens-mean", "ens-median", "m1", "m2", "m3", "never", "denied", "poor"}
		clients := map[string]*participant.Client{}
		for _, id := range order {
			c := s.client(t, "llm "+id, "random")
			c.LeadTime = 10 * time.Minute
			c.Strategy = &strategy.LLMStrategy{Agents: fc, AgentID: id, Client: c}
			sink.Addresses[id] = c.Key.Address().Hex()
			clients[id] = c
		}
		s.clk.Set(cd.Add(-5 * time.Minute))
		for _, id := range order {
			want := participant.Report{Committed: 1}
			if id == "never" || id == "denied" || id == "poor" {
				want = participant.Report{}
			}
			run(t, clients[id], want)
		}
		for _, id := range order { // a second run asks no model again
			run(t, clients[id], participant.Report{})
		}
		reqs := map[string]int{"m1": 3, "m2": 1, "m3": 1, "never": agent.DefaultMaxSteps, "denied": 2}
		for m, n := range reqs {
			if got := len(srv.Requests(m)); got != n {
				t.Errorf("model %s: %d requests, want %d", m, got, n)
			}
		}
		// Budget: 4000 µ$ cap; each call is bounded by its prompt bytes plus
		// 1000 answer tokens × 2 µ$, and costs 1000 + 200 = 1200 µ$.
		if n := len(srv.Requests("poor")); n < 1 || int64(n)*1200 > 4000 {
			t.Errorf("poor: %d requests under a 4000 µ$ cap", n)
		}
		for _, id := range []string{"never", "denied", "poor"} {
			if sub := s.submission(t, r.ID, clients[id].Key.Address()); sub != nil {
				t.Errorf("%s committed", id)
			}
		}
		for id, want := range map[string]string{"never": "within 8 model calls", "poor": "budget"} {
			tr, err := db.Trace(ctx, r.ID, sink.Addresses[id])
			if err != nil || tr.Submitted || !strings.Contains(tr.Failure, want) {
				t.Errorf("%s: recorded failure %+v %v, want %q", id, tr, err, want)
			}
		}
		if _, err := db.Trace(ctx, r.ID, sink.Addresses["denied"]); arena.ErrorKind(err) != arena.ENOTFOUND {
			t.Errorf("a failed model call stores no trace: %v", err)
		}

		// Traces are not published before the trigger.
		get := func(id string) (int, []byte) {
			resp, err := http.Get(fmt.Sprintf("%s/api/v1/rounds/%d/traces/%s", s.url, r.ID, sink.Addresses[id]))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp.StatusCode, b
		}
		if code, body := get("m1"); code != http.StatusConflict || !strings.Contains(string(body), "trace_unpublished") {
			t.Fatalf("trace before trigger: %d %s", code, body)
		}

		s.clk.Set(cd.Add(forecast.BenchmarkTolerance))
		if _, err := s.svc.CaptureBenchmarks(ctx); err != nil {
			t.Fatal(err)
		}
		s.clk.Set(r.RevealStart.Add(time.Minute))
		for _, id := range order[:5] {
			run(t, clients[id], participant.Report{Revealed: 1, ReasoningSent: 1})
		}
		for i, res := range []string{arena.Yes, arena.No, arena.Yes} {
			if _, err := db.ResolveMarket(ctx, s.ms[i].ID, res, s.clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
		s.clk.Set(r.RevealDeadline.Add(time.Second))
		if n, err := s.svc.TriggerDue(ctx); err != nil || n != 1 {
			t.Fatalf("trigger: %d %v", n, err)
		}

		stored := map[string][]uint16{}
		for _, id := range order[:5] {
			sub := s.submission(t, r.ID, clients[id].Key.Address())
			if sub == nil || !sub.Revealed() {
				t.Fatalf("%s: no reveal", id)
			}
			stored[id] = sub.Predictions
		}
		if !slices.Equal(stored["m1"], []uint16{6000, 5000, 7001}) {
			t.Errorf("m1 stored %v", stored["m1"])
		}
		// The ensembles' stored forecasts are the mean and median of their
		// members' stored forecasts, market by market.
		for i := 0; i < 3; i++ {
			a, b, c := float64(stored["m1"][i]), float64(stored["m2"][i]), float64(stored["m3"][i])
			mean := uint16((a+b)/2 + 0.5)
			med := []float64{a, b, c}
			slices.Sort(med)
			if stored["ens-mean"][i] != mean || stored["ens-median"][i] != uint16(med[1]) {
				t.Errorf("market %d: mean %d (want %d), median %d (want %v)", i, stored["ens-mean"][i], mean, stored["ens-median"][i], med[1])
			}
		}
		scores, err := s.svc.Scores(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]forecast.ScoreJSON{}
		for _, sc := range scores {
			got[sc.Agent] = sc
		}
		// m1: ((0.6−1)² + (0.5−0)² + (0.7001−1)²)/3.
		wantBrier := (0.16 + 0.25 + 0.2999*0.2999) / 3
		if sc, ok := got[sink.Addresses["m1"]]; !ok || sc.Forfeit || sc.ScoredMarkets != 3 || abs(sc.Brier-wantBrier) > 1e-12 {
			t.Errorf("m1 score %+v, want Brier %v", sc, wantBrier)
		}
		code, body := get("m1")
		var tj struct {
			Submitted bool
			Calls     int64
			Trace     agent.Trace
		}
		if code != http.StatusOK || json.Unmarshal(body, &tj) != nil || !tj.Submitted || tj.Calls != 3 {
			t.Fatalf("trace after trigger: %d %s", code, body)
		}
		if st := tj.Trace.Steps; len(st) != 3 || st[0].ToolCalls[0].Name != agent.ToolDetails || st[0].ToolCalls[1].Name != agent.ToolHistory ||
			!st[1].ToolCalls[0].Error || fmt.Sprint(tj.Trace.PriceShown) != "[true false false]" {
			t.Errorf("trace %+v", tj.Trace)
		}
		if code, _ := get("ens-mean"); code != http.StatusOK {
			t.Errorf("ensemble trace: %d", code)
		}
	})
}

func abs(x float64) float64 { return max(x, -x) }

// Server-hosted agents: keys created once in the keystore (0600), reused
// on restart, and forecasts committed through the server's own API, their
// model calls counted in the server's metrics.
func TestHostedAgents(t *testing.T) {
	db := sqliteDB(t)
	ctx := context.Background()
	s := newServer(t, db)
	r := s.round(t, 0)
	srv := llmtest.New(t)
	srv.Handle("m1", func(llmtest.ChatRequest) llmtest.Reply {
		return toolReply(llmtest.ToolCall{Name: agent.ToolSubmit, Arguments: `{"predictions":[1,2,3],"reasoning":["a","b","c"]}`})
	})
	reg, err := llm.ParseRegistry(strings.NewReader(strings.ReplaceAll(`{"agents":[
	 {"id":"m1","provider":"local","model":"m1","base_url":"BASE","input_usd_per_mtok":1,"output_usd_per_mtok":2},
	 {"id":"keyless","provider":"openai","model":"x","api_key_env":"NO_SUCH_KEY","input_usd_per_mtok":1,"output_usd_per_mtok":2}]}`, "BASE", srv.BaseURL)))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	cfg := strategy.HostedConfig{Registry: reg, Getenv: llm.EnvLookup(nil), Server: s.url, DataDir: dir, LeadTime: 10 * time.Minute,
		Store: db, Now: s.clk.Now, Logger: quiet, Metrics: metrics.New()}
	h, skipped, err := strategy.NewHosted(ctx, cfg)
	if err != nil || len(h.Clients) != 1 || len(skipped) != 1 || !strings.Contains(skipped[0].Reason, "NO_SUCH_KEY") {
		t.Fatalf("hosted %+v skipped %v %v", h, skipped, err)
	}
	st, err := os.Stat(filepath.Join(dir, "forecast-keys", "m1.key"))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("key file %v %v", st, err)
	}
	addr := h.Clients[0].Key.Address()
	h2, _, err := strategy.NewHosted(ctx, cfg)
	if err != nil || h2.Clients[0].Key.Address() != addr {
		t.Fatalf("key not reused: %v", err)
	}
	if err := h.RunOnce(ctx); err != nil || s.submission(t, r.ID, addr) != nil {
		t.Fatalf("before the lead time: %v", err)
	}
	s.clk.Set(r.CommitDeadline.Add(-5 * time.Minute))
	if err := h.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	if sub := s.submission(t, r.ID, addr); sub == nil || sub.ReasoningHash == "" {
		t.Fatalf("no commit from the hosted agent: %+v", sub)
	}
	if tr, err := db.Trace(ctx, r.ID, addr.Hex()); err != nil || !tr.Submitted || tr.AgentID != "m1" {
		t.Fatalf("trace %+v %v", tr, err)
	}
	m := cfg.Metrics.(*metrics.Metrics)
	if calls, misses := m.Value("arena_model_calls_total", map[string]string{"agent": "m1", "result": "ok"}),
		m.Value("arena_model_cache_lookups_total", map[string]string{"agent": "m1", "result": "miss"}); calls != 1 || misses != 1 {
		t.Errorf("metrics: %v model calls, %v cache misses; want 1 and 1", calls, misses)
	}
	agents, _ := db.Agents(ctx)
	found := false
	for _, a := range agents {
		found = found || (a.Address == addr.Hex() && a.Kind == "llm" && a.Name == "m1")
	}
	if !found {
		t.Errorf("hosted agent not registered: %+v", agents)
	}
}
