package llm

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/forecast-arena/arena/internal/llm/llmtest"
)

func TestCacheHitsMissesAndCost(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("answer one", 100, 10), llmtest.OK("answer two", 100, 10))
	c, _ := newTestClient(t, srv, testSpec("m"), "k")
	cache := NewChain(c, ChainConfig{Cache: &llmtest.MemStore{}})
	ctx := context.Background()

	r1, err := cache.Complete(ctx, Request{System: "s", User: "q1"})
	if err != nil || r1.Cached || r1.Content != "answer one" || r1.CostMicros != 350 {
		t.Fatalf("first call %+v %v", r1, err)
	}
	r2, err := cache.Complete(ctx, Request{System: "s", User: "q1"})
	if err != nil || !r2.Cached || r2.Content != "answer one" || r2.CostMicros != 350 || r2.InputTokens != 100 {
		t.Fatalf("repeat %+v %v", r2, err)
	}
	r3, err := cache.Complete(ctx, Request{System: "s", User: "q2"})
	if err != nil || r3.Cached || r3.Content != "answer two" {
		t.Fatalf("new question %+v %v", r3, err)
	}
	if h, m := cache.Cache().Stats(); h != 1 || m != 2 {
		t.Errorf("stats %d hits %d misses", h, m)
	}
	if n := len(srv.Requests("m")); n != 2 {
		t.Errorf("model called %d times, want 2", n)
	}
}

func TestCacheErrorsNotStoredAndCacheOnly(t *testing.T) {
	srv := llmtest.New(t)
	srv.Script("m", llmtest.Fail(401, "bad key"), llmtest.OK("ok", 1, 1))
	c, _ := newTestClient(t, srv, testSpec("m"), "k")
	store := &llmtest.MemStore{}
	cache := NewChain(c, ChainConfig{Cache: store})
	ctx := context.Background()
	if _, err := cache.Complete(ctx, Request{User: "q"}); err == nil {
		t.Fatal("401 not returned")
	}
	if r, err := cache.Complete(ctx, Request{User: "q"}); err != nil || r.Cached {
		t.Fatalf("after an error the call must reach the model: %+v %v", r, err)
	}
	only := NewChain(c, ChainConfig{Cache: store, CacheOnly: true})
	if r, err := only.Complete(ctx, Request{User: "q"}); err != nil || !r.Cached {
		t.Errorf("cache-only hit: %+v %v", r, err)
	}
	if _, err := only.Complete(ctx, Request{User: "never asked"}); !errors.Is(err, ErrCacheMiss) {
		t.Errorf("cache-only miss: %v", err)
	}
	if n := len(srv.Requests("m")); n != 2 {
		t.Errorf("model called %d times, want 2", n)
	}
}

func TestCacheKey(t *testing.T) {
	base := Request{System: "s", User: "u", Tools: []Tool{{Name: "f", Parameters: json.RawMessage(`{ "type" : "object" }`)}}}
	k1, _ := CacheKey("ns", base)
	same := base
	same.Tools = []Tool{{Name: "f", Parameters: json.RawMessage(`{"type":"object"}`)}}
	k2, _ := CacheKey("ns", same)
	if k1 != k2 {
		t.Error("tool schema whitespace changed the key")
	}
	zero := 0.0
	for name, r := range map[string]Request{
		"user":        {System: "s", User: "u2", Tools: base.Tools},
		"temperature": {System: "s", User: "u", Tools: base.Tools, Temperature: &zero},
		"messages":    {System: "s", User: "u", Tools: base.Tools, Messages: []Message{{Role: RoleUser, Content: "x"}}},
	} {
		if k, _ := CacheKey("ns", r); k == k1 {
			t.Errorf("%s change kept the key", name)
		}
	}
	if k, _ := CacheKey("other", base); k == k1 {
		t.Error("namespace change kept the key")
	}
	a, b := testSpec("m"), testSpec("m")
	b.Name, b.InputUSDPerMtok = "Renamed", 1
	if SpecNamespace(a) != SpecNamespace(b) {
		t.Error("display name or price changed the namespace")
	}
	b.Temperature = 0.5
	if SpecNamespace(a) == SpecNamespace(b) {
		t.Error("temperature did not change the namespace")
	}
}

// The key of an answer never changes for the same spec and request, so
// caches written by earlier versions stay valid: these keys were written
// by the code before the chain existed.
func TestCacheKeyStable(t *testing.T) {
	spec := ModelSpec{ID: "gpt", Name: "GPT", Provider: ProviderOpenRouter, Model: "openai/gpt-4o-mini", BaseURL: OpenRouterBaseURL,
		Temperature: 0.2, MaxTokens: 800, InputUSDPerMtok: 150_000}
	zero := 0.0
	full := Request{System: "sys", User: "user", ToolChoice: "auto", Temperature: &zero,
		Messages:       []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "f", Arguments: `{"i":0}`}}}, {Role: RoleTool, ToolCallID: "c1", Content: "r"}},
		Tools:          []Tool{{Name: "f", Description: "d", Parameters: json.RawMessage(`{ "type": "object" }`)}},
		ResponseFormat: &ResponseFormat{Type: FormatJSONSchema, Name: "n", Schema: json.RawMessage(`{"type":"object"}`), Strict: true}}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{full, "1ec0b4d10b45c9c9a1c6bc20f9f82aeea7b2f6b727354c2c73b4a88d5c928247"},
		{Request{User: "q"}, "7f481c670778ceb6085307e18e21a1ebde5f29ad716b2d735167198907b1927f"},
	} {
		if got, err := CacheKey(SpecNamespace(spec), tc.req); err != nil || got != tc.want {
			t.Errorf("key %s (%v), want %s", got, err, tc.want)
		}
	}
}

func TestDirStorePersists(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("persisted", 5, 5))
	c, _ := newTestClient(t, srv, testSpec("m"), "k")
	ctx := context.Background()
	if _, err := NewChain(c, ChainConfig{Cache: DirStore{Dir: dir}}).Complete(ctx, Request{User: "q"}); err != nil {
		t.Fatal(err)
	}
	// A new process (new Chain, same directory) replays without the model.
	r, err := NewChain(c, ChainConfig{Cache: DirStore{Dir: dir}, CacheOnly: true}).Complete(ctx, Request{User: "q"})
	if err != nil || r.Content != "persisted" || !r.Cached {
		t.Fatalf("%+v %v", r, err)
	}
	key, _ := CacheKey(SpecNamespace(c.Spec()), Request{User: "q"})
	if _, err := os.Stat(filepath.Join(dir, key[:2], key+".json")); err != nil {
		t.Error(err)
	}
	// A corrupt entry is a miss, then repaired.
	if err := os.WriteFile(filepath.Join(dir, key[:2], key+".json"), []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Script("m", llmtest.OK("fresh", 5, 5))
	r, err = NewChain(c, ChainConfig{Cache: DirStore{Dir: dir}}).Complete(ctx, Request{User: "q"})
	if err != nil || r.Content != "fresh" || r.Cached {
		t.Fatalf("corrupt entry: %+v %v", r, err)
	}
	if _, _, err := (DirStore{Dir: dir}).Get(ctx, "../../etc/passwd"); err == nil {
		t.Error("non-hex key accepted")
	}
}
