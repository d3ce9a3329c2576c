package llm

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/llm/llmtest"
)

// Cost is tokens × registry prices to the micro-dollar, and the meter's
// totals are the sum of those per-call costs, with cached calls at zero.
func TestMeteredCostAndCachedCalls(t *testing.T) {
	srv := llmtest.New(t)
	// Prices 0.15 and 0.6 USD/Mtok (examples/agents.json's gpt-4o-mini).
	spec := testSpec("m")
	spec.InputUSDPerMtok, spec.OutputUSDPerMtok = 150_000, 600_000
	srv.Script("m", llmtest.OK("a", 123_457, 9_876), llmtest.OK("b", 1_000_000, 1_000_000))
	c, _ := newTestClient(t, srv, spec, "k")
	dir := t.TempDir()
	meter := NewMeter(0)
	m := NewChain(c, ChainConfig{Cache: DirStore{Dir: dir}, Meter: meter})
	ctx := WithRound(context.Background(), "1")
	r1, err := m.Complete(ctx, Request{User: "q1"})
	if err != nil {
		t.Fatal(err)
	}
	// 123457 × 0.15 + 9876 × 0.6 = 18518.55 + 5925.6 = 24444.15 µ$ → 24444.
	if r1.CostMicros != 24444 {
		t.Errorf("cost %d µ$, want 24444", r1.CostMicros)
	}
	r2, err := m.Complete(ctx, Request{User: "q2"})
	if err != nil || r2.CostMicros != 750_000 {
		t.Fatalf("second call %d µ$ %v, want 750000", r2.CostMicros, err)
	}
	// Repeats come from the cache (even through a fresh Chain on the same
	// directory, as after a restart) and cost nothing.
	m = NewChain(c, ChainConfig{Cache: DirStore{Dir: dir}, Meter: meter})
	for _, q := range []string{"q1", "q2", "q1"} {
		r, err := m.Complete(ctx, Request{User: q})
		if err != nil || !r.Cached {
			t.Fatalf("repeat %s: cached=%v %v", q, r.Cached, err)
		}
	}
	got := meter.Run()
	want := Usage{Calls: 2, CachedCalls: 3, InputTokens: 1_123_457, OutputTokens: 1_009_876,
		CachedInputTokens: 2*123_457 + 1_000_000, CachedOutputTokens: 2*9_876 + 1_000_000, CostMicros: 774_444}
	if got != want {
		t.Errorf("run usage\n got %+v\nwant %+v", got, want)
	}
	if a, r := meter.Agent("agent-m"), meter.Round("agent-m", "1"); a != want || r != want {
		t.Errorf("agent %+v round %+v", a, r)
	}
	if n := len(srv.Requests("m")); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}
	// Cache-only mode refuses a miss without calling.
	m = NewChain(c, ChainConfig{Cache: DirStore{Dir: dir}, CacheOnly: true, Meter: meter})
	if _, err := m.Complete(ctx, Request{User: "q3"}); !errors.Is(err, ErrCacheMiss) {
		t.Errorf("cache-only miss: %v", err)
	}
}

// A cap stops the call that could exceed it, before it is made, and
// records where; cached answers still flow.
func TestMeterBudgetStopsBeforeCall(t *testing.T) {
	srv := llmtest.New(t)
	spec := testSpec("m")
	spec.InputUSDPerMtok, spec.OutputUSDPerMtok, spec.MaxTokens = 1_000_000, 1_000_000, 100 // 1 µ$ per token
	srv.Handle("m", func(llmtest.ChatRequest) llmtest.Reply { return llmtest.OK("ok", 50, 50) })
	c, _ := newTestClient(t, srv, spec, "k")
	ctx := WithRound(context.Background(), "7")
	req := Request{User: "question"}
	bound := Bound(spec, req)
	if bound <= 100 {
		t.Fatalf("bound %d must cover the 100 answer tokens and the prompt", bound)
	}
	for _, tc := range []struct {
		name             string
		agentCap, runCap int64
		scope            string
	}{
		{"agent", 2*100 + bound - 1, 0, "agent"},
		{"run", 0, 2*100 + bound - 1, "run"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			meter := NewMeter(tc.runCap)
			meter.SetAgentCap("agent-m", tc.agentCap)
			m := NewChain(c, ChainConfig{Cache: &llmtest.MemStore{}, Meter: meter})
			before := len(srv.Requests("m"))
			for i, q := range []string{"a", "b"} {
				if _, err := m.Complete(ctx, Request{User: q + strings.Repeat(" ", len(req.User)-1)}); err != nil {
					t.Fatalf("call %d: %v", i+1, err)
				}
			}
			_, err := m.Complete(ctx, Request{User: "c" + strings.Repeat(" ", len(req.User)-1)})
			var be *BudgetError
			if !errors.As(err, &be) || !errors.Is(err, ErrBudget) {
				t.Fatalf("third call: %v, want a budget error", err)
			}
			if be.Scope != tc.scope || be.Agent != "agent-m" || be.Round != "7" || be.Call != 3 || be.SpentMicros != 200 || be.EstimateMicro != bound {
				t.Errorf("stop record %+v", be)
			}
			if n := len(srv.Requests("m")) - before; n != 2 {
				t.Errorf("%d requests made, want 2 (the third must not be sent)", n)
			}
			if s := meter.Stops(); len(s) != 1 || s[0] != *be {
				t.Errorf("stops %+v", s)
			}
			if !strings.Contains(be.Error(), "budget") || !strings.Contains(be.Error(), "round 7") {
				t.Errorf("message %q", be.Error())
			}
			// A cached answer costs nothing and passes the cap.
			if r, err := m.Complete(ctx, Request{User: "a" + strings.Repeat(" ", len(req.User)-1)}); err != nil || !r.Cached {
				t.Errorf("cached repeat: %v", err)
			}
		})
	}
}
