package agent

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/trading"
)

func registry(t *testing.T, js string) *llm.Registry {
	t.Helper()
	reg, err := llm.ParseRegistry(strings.NewReader(js))
	if err != nil {
		t.Fatal(err)
	}
	return reg
}

func env(kv ...string) func(string) (string, bool) { return llm.EnvLookup(kv) }

func TestLLMLineupFreezesAndSkips(t *testing.T) {
	reg := registry(t, `{"agents":[
		{"id":"gpt-5.1","name":"GPT-5.2","provider":"openrouter","model":"openai/gpt-5.2","api_key_env":"OR_KEY","input_usd_per_mtok":1.25,"output_usd_per_mtok":10,"timeout":"90s"},
		{"id":"local","provider":"local","model":"qwen","base_url":"http://127.0.0.1:1/v1","input_usd_per_mtok":0,"output_usd_per_mtok":0},
		{"id":"claude","provider":"openrouter","model":"anthropic/claude","api_key_env":"NO_SUCH_KEY","input_usd_per_mtok":15,"output_usd_per_mtok":75}]}`)
	lu, skipped, err := LLMLineup(reg, env("OR_KEY=sk"))
	if err != nil {
		t.Fatal(err)
	}
	if len(lu) != 2 || len(skipped) != 1 || skipped[0].ID != "claude" || skipped[0].Reason != "environment variable NO_SUCH_KEY is not set" {
		t.Fatalf("lineup %+v skipped %+v", lu, skipped)
	}
	g := lu[0]
	// T9: the stable id joins, the display name only shows.
	if g.AgentID != "gpt-5.1" || g.Name != "GPT-5.2" || g.Kind != KindLLM || g.Provider != "openrouter" || g.Model != "openai/gpt-5.2" ||
		g.InputMicrosPerMtok != 1_250_000 || g.OutputMicrosPerMtok != 10_000_000 || strings.Contains(string(g.Spec), `"sk"`) || !strings.Contains(string(g.Spec), `"api_key_env":"OR_KEY"`) {
		t.Fatalf("entry %+v %s", g, g.Spec)
	}
	f := &Factory{Getenv: env("OR_KEY=sk")}
	if d := f.ModelTimeout(lu); d != 120*time.Second { // local's default timeout beats 90s
		t.Fatalf("model timeout %v", d)
	}
	ds, sk := f.Deciders(lu)
	if len(ds) != 2 || len(sk) != 0 {
		t.Fatalf("deciders %d skipped %v", len(ds), sk)
	}
	// The key is gone at decision time: that agent is skipped, not failed.
	ds, sk = (&Factory{Getenv: env()}).Deciders(lu)
	if len(ds) != 1 || len(sk) != 1 || sk[0].ID != "gpt-5.1" || !strings.Contains(sk[0].String(), "OR_KEY is not set") {
		t.Fatalf("deciders %d skipped %v", len(ds), sk)
	}
	// Unknown kinds and broken specs are skipped with the reason.
	_, sk = f.Deciders([]arena.LineupEntry{{AgentID: "ext", Kind: "external"}, {AgentID: "x", Kind: KindLLM, Spec: json.RawMessage(`{`)}})
	if len(sk) != 2 || !strings.Contains(sk[0].Reason, `kind "external"`) || !strings.Contains(sk[1].Reason, "frozen spec unreadable") {
		t.Fatalf("skipped %v", sk)
	}
}

// TestFactoryRunsFrozenModel: a cohort keeps running the model, provider
// and prices it froze; the agents file may move its endpoint. The calls
// are counted in the factory's metrics.
func TestFactoryRunsFrozenModel(t *testing.T) {
	old := llmtest.New(t)
	moved := llmtest.New(t)
	moved.Script("frozen-model", llmtest.OK(`{"action":"HOLD","reasoning":"ok"}`, 1000, 10))
	frozen := registry(t, `{"agents":[{"id":"a","provider":"local","model":"frozen-model","base_url":"`+old.BaseURL+`","input_usd_per_mtok":2,"output_usd_per_mtok":8}]}`)
	lu, _, _ := LLMLineup(frozen, env())
	now := registry(t, `{"agents":[{"id":"a","provider":"local","model":"new-model","base_url":"`+moved.BaseURL+`","timeout":"3s","input_usd_per_mtok":9,"output_usd_per_mtok":9}]}`)
	m := metrics.New()
	f := &Factory{Registry: now, Getenv: env(), Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Metrics: m}
	if d := f.ModelTimeout(lu); d != 3*time.Second {
		t.Fatalf("timeout %v", d)
	}
	ds, _ := f.Deciders(lu)
	d, err := ds["a"].Decide(context.Background(), *testSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	// Frozen prices: 1000 × $2 + 10 × $8 per Mtok = 2080 µ$.
	if len(moved.Requests("frozen-model")) != 1 || len(old.Requests("")) != 0 || d.Cost != 2080 || d.Action.Kind != trading.ActionHold {
		t.Fatalf("decision %+v; requests old %d moved %d", d, len(old.Requests("")), len(moved.Requests("")))
	}
	if n := m.Value("arena_model_calls_total", map[string]string{"agent": "a", "result": "ok"}); n != 1 {
		t.Errorf("%v model calls counted, want 1", n)
	}
}

// TestLLMDeciderRecord checks the conversion into the engine's record:
// raw answers of real answers only, notes of rejected ones, the totals.
func TestLLMDeciderRecord(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("no idea", 100, 10), llmtest.OK(`{"action":"HOLD","reasoning":"fine"}`, 200, 20))
	tr := NewTrader("a", newLLM(t, srv, "m"))
	d, err := LLMDecider{Trader: tr}.Decide(context.Background(), *testSnapshot())
	if err != nil {
		t.Fatal(err)
	}
	if d.Action.Kind != trading.ActionHold || d.Retries != 1 || d.SystemDefault || len(d.RawResponses) != 2 || d.RawResponses[0] != "no idea" ||
		d.TokensIn != 300 || d.TokensOut != 30 || d.Cost != 300*5/2+30*10 || d.SystemPrompt != SystemPrompt() ||
		d.UserPrompt != UserPrompt(testSnapshot()) || !strings.HasPrefix(d.Note, "answer 1 rejected: ") || d.Latency <= 0 {
		t.Fatalf("decision %+v", d)
	}
	srv.Script("m", llmtest.Fail(403, "forbidden"))
	d, err = LLMDecider{Trader: tr}.Decide(context.Background(), *testSnapshot())
	if err == nil || !strings.Contains(err.Error(), "HTTP 403") || len(d.RawResponses) != 0 || d.Note != "" || d.UserPrompt == "" {
		t.Fatalf("failed call: %v %+v", err, d)
	}
}

func TestSimLineup(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	lu, err := SimLineup(SimSpec{Seed: 4, Markets: 30, Start: start}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(lu) != len(sim.Agents()) || lu[0].AgentID != "sim-random" || lu[0].Kind != KindSim {
		t.Fatalf("lineup %+v", lu)
	}
	f := &Factory{}
	ds, sk := f.Deciders(lu)
	if len(ds) != len(lu) || len(sk) != 0 {
		t.Fatalf("deciders %d skipped %v", len(ds), sk)
	}
	st := ds["sim-informed-0.02"].(*trading.SimTrader)
	if st.Agent != "informed-0.02" || st.World.(*sim.World).Config().Markets != 30 || ds["sim-market"].(*trading.SimTrader).World != st.World {
		t.Fatalf("sim trader %+v (worlds are built once per spec)", st)
	}
	if _, err := SimLineup(SimSpec{Seed: 1}, []string{"psychic"}); err == nil {
		t.Fatal("unknown sim agent accepted")
	}
	if _, err := SimLineup(SimSpec{Seed: 1, Markets: -3}, nil); err == nil {
		t.Fatal("bad world accepted")
	}
}
