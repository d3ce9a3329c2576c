package oracle

import (
	"context"
	"strings"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/metrics"
)

// A resolver calls its model through the chain: answers are cached under
// CacheDir (a replay in cache-only mode needs no key and sends nothing),
// and calls and lookups are counted in the panel's metrics.
func TestPanelConfigResolvers(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("a", llmtest.OK(`{"decision":"YES","confidence":0.9,"reasoning":"r"}`, 10, 5))
	reg, err := llm.ParseRegistry(strings.NewReader(`{"agents":[{"id":"a","provider":"local","model":"a","base_url":"` + srv.BaseURL +
		`","api_key_env":"A_KEY","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`))
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	pc := PanelConfig{Registry: reg, Getenv: llm.EnvLookup([]string{"A_KEY=k"}), CacheDir: t.TempDir(), Metrics: m,
		LLMOptions: []llm.Option{llm.WithLogger(quiet)}}
	q := Question{ID: "q", Text: "Will it happen?", Criteria: "Resolves YES if it happens.", Cutoff: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	ctx := context.Background()
	var votes []arena.OracleVote
	for _, only := range []bool{false, false, true} {
		pc.CacheOnly = only
		if only {
			pc.Getenv = llm.EnvLookup(nil)
		}
		rs, caches, err := pc.Resolvers()
		if err != nil || len(rs) != 1 || len(caches) != 1 {
			t.Fatalf("%d resolvers, %d caches: %v", len(rs), len(caches), err)
		}
		votes = append(votes, rs[0].Resolve(ctx, q, arena.EvidencePacket{}, 1, nil))
	}
	for i, v := range votes {
		if !v.Answered() || v.Decision != arena.OracleYes || v.Cached != (i > 0) {
			t.Errorf("vote %d: %+v", i, v)
		}
	}
	if n := len(srv.Requests("a")); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	for _, c := range []struct {
		metric string
		labels map[string]string
		want   float64
	}{
		{"arena_model_calls_total", map[string]string{"agent": "a", "result": "ok"}, 1},
		{"arena_model_cache_lookups_total", map[string]string{"agent": "a", "result": "miss"}, 1},
		{"arena_model_cache_lookups_total", map[string]string{"agent": "a", "result": "hit"}, 2},
	} {
		if got := m.Value(c.metric, c.labels); got != c.want {
			t.Errorf("%s %v = %v, want %v", c.metric, c.labels, got, c.want)
		}
	}
}
