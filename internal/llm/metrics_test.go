package llm

import (
	"context"
	"testing"

	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/metrics"
)

// Every call that reached the provider is counted by agent, once after
// its retries, with its tokens and cost; a failed call is counted as an
// error without tokens, a request that never left not at all.
func TestClientMetrics(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Fail(500, "busy"), llmtest.OK("x", 123_456, 7_890), llmtest.Fail(400, "bad"))
	m := metrics.New()
	cl, _ := newTestClient(t, srv, testSpec("m"), "k")
	c := NewChain(cl, ChainConfig{Metrics: m})
	if _, err := c.Complete(context.Background(), Request{User: "u"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), Request{User: "u"}); err == nil {
		t.Fatal("want the 400")
	}
	if _, err := c.Complete(context.Background(), Request{}); err == nil {
		t.Fatal("an empty request was sent")
	}
	agent := map[string]string{"agent": "agent-m"}
	for _, c := range []struct {
		name   string
		metric string
		labels map[string]string
		want   float64
	}{
		{"ok calls", "arena_model_calls_total", map[string]string{"agent": "agent-m", "result": "ok"}, 1},
		{"failed calls", "arena_model_calls_total", map[string]string{"agent": "agent-m", "result": "error"}, 1},
		{"input tokens", "arena_model_tokens_total", map[string]string{"agent": "agent-m", "direction": "input"}, 123_456},
		{"output tokens", "arena_model_tokens_total", map[string]string{"agent": "agent-m", "direction": "output"}, 7_890},
		{"cost", "arena_model_cost_usd_total", agent, 0.38754},
	} {
		if got := m.Value(c.metric, c.labels); got < c.want-1e-9 || got > c.want+1e-9 {
			t.Errorf("%s = %v, want %v", c.name, got, c.want)
		}
	}
}

// A chain's cache counts its hits and misses in the chain's metrics, by
// agent; a hit reaches no provider and is no model call.
func TestCacheMetrics(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("x", 10, 2))
	m := metrics.New()
	c, _ := newTestClient(t, srv, testSpec("m"), "k")
	ca := NewChain(c, ChainConfig{Cache: DirStore{Dir: t.TempDir()}, Metrics: m})
	for range 3 {
		if _, err := ca.Complete(context.Background(), Request{User: "same question"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"arena_model_cache_lookups_total", map[string]string{"agent": "agent-m", "result": "miss"}, 1},
		{"arena_model_cache_lookups_total", map[string]string{"agent": "agent-m", "result": "hit"}, 2},
		{"arena_model_calls_total", map[string]string{"agent": "agent-m", "result": "ok"}, 1},
	} {
		if got := m.Value(c.metric, c.labels); got != c.want {
			t.Errorf("%s %v = %v, want %v", c.metric, c.labels, got, c.want)
		}
	}
}
