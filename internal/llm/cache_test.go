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
	cache := NewCache(c, &MemStore{}, SpecNamespace(c.Spec()))
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
	if h, m := cache.Stats(); h != 1 || m != 2 {
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
	store := &MemStore{}
	cache := NewCache(c, store, "ns")
	ctx := context.Background()
	if _, err := cache.Complete(ctx, Request{User: "q"}); err == nil {
		t.Fatal("401 not returned")
	}
	if r, err := cache.Complete(ctx, Request{User: "q"}); err != nil || r.Cached {
		t.Fatalf("after an error the call must reach the model: %+v %v", r, err)
	}
	only := NewCache(c, store, "ns").CacheOnly(true)
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

func TestDirStorePersists(t *testing.T) {
	dir := t.TempDir()
	srv := llmtest.New(t)
	srv.Script("m", llmtest.OK("persisted", 5, 5))
	c, _ := newTestClient(t, srv, testSpec("m"), "k")
	ctx := context.Background()
	if _, err := NewCache(c, DirStore{Dir: dir}, "ns").Complete(ctx, Request{User: "q"}); err != nil {
		t.Fatal(err)
	}
	// A new process (new Cache, same directory) replays without the model.
	r, err := NewCache(c, DirStore{Dir: dir}, "ns").CacheOnly(true).Complete(ctx, Request{User: "q"})
	if err != nil || r.Content != "persisted" || !r.Cached {
		t.Fatalf("%+v %v", r, err)
	}
	key, _ := CacheKey("ns", Request{User: "q"})
	if _, err := os.Stat(filepath.Join(dir, key[:2], key+".json")); err != nil {
		t.Error(err)
	}
	// A corrupt entry is a miss, then repaired.
	if err := os.WriteFile(filepath.Join(dir, key[:2], key+".json"), []byte("{torn"), 0o644); err != nil {
		t.Fatal(err)
	}
	srv.Script("m", llmtest.OK("fresh", 5, 5))
	r, err = NewCache(c, DirStore{Dir: dir}, "ns").Complete(ctx, Request{User: "q"})
	if err != nil || r.Content != "fresh" || r.Cached {
		t.Fatalf("corrupt entry: %+v %v", r, err)
	}
	if _, _, err := (DirStore{Dir: dir}).Get(ctx, "../../etc/passwd"); err == nil {
		t.Error("non-hex key accepted")
	}
}
