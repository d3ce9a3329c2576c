package llm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/forecast-arena/arena/internal/atomicfile"
)

// CacheStore keeps cached answers by key. Implementations must be safe for
// concurrent use; a missing key is (nil, false, nil).
type CacheStore interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Put(ctx context.Context, key string, value []byte) error
}

// ErrCacheMiss is returned in cache-only mode when an answer is not stored.
var ErrCacheMiss = errors.New("llm: not in cache (cache-only mode)")

// Cache is a content-addressed cache in front of a Completer:
// the key is the SHA-256 of the model namespace and the canonical request,
// so a rerun or a backtest asks each distinct question once. Only
// successful answers are stored. A cached answer comes back with Cached
// set and its original tokens and cost, which callers count separately
// (nothing is spent again).
type Cache struct {
	next      Completer
	store     CacheStore
	namespace string
	cacheOnly bool
	log       *slog.Logger
	metrics   CacheMetrics // nil: not counted beyond Stats
	agent     string

	hits, misses atomic.Int64
}

// NewCache wraps next. namespace identifies everything outside the request
// that changes the answer (see SpecNamespace).
func NewCache(next Completer, store CacheStore, namespace string) *Cache {
	c := &Cache{next: next, store: store, namespace: namespace, log: slog.Default()}
	if cl, ok := next.(*Client); ok {
		c.metrics, _ = cl.metrics.(CacheMetrics)
		c.agent = cl.spec.ID
	}
	return c
}

// CacheOnly makes misses fail with ErrCacheMiss instead of calling the
// model, so a replay is guaranteed to cost nothing.
func (c *Cache) CacheOnly(on bool) *Cache { c.cacheOnly = on; return c }

// Stats returns the hits and misses so far.
func (c *Cache) Stats() (hits, misses int64) { return c.hits.Load(), c.misses.Load() }

// SpecNamespace names the model configuration a cached answer depends on:
// provider, endpoint, model, temperature and token limit. Display name,
// timeout and prices do not change answers and are left out, so renaming
// an agent or updating its price keeps its cache.
func SpecNamespace(s ModelSpec) string {
	return fmt.Sprintf("%s|%s|%s|t=%s|max=%d", s.Provider, s.BaseURL, s.Model,
		strconv.FormatFloat(s.Temperature, 'g', -1, 64), s.MaxTokens)
}

// CacheKey is the hex SHA-256 of the namespace and the request's JSON
// (fields in declaration order, tool schemas compacted).
func CacheKey(namespace string, req Request) (string, error) {
	b, err := json.Marshal(struct {
		V         int     `json:"v"`
		Namespace string  `json:"ns"`
		Request   Request `json:"req"`
	}{1, namespace, req})
	if err != nil {
		return "", fmt.Errorf("llm: cache key: %w", err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}

// Complete answers from the store when it can, else from the model.
func (c *Cache) Complete(ctx context.Context, req Request) (Response, error) {
	r, ok, err := c.Lookup(ctx, req)
	if err != nil || ok {
		return r, err
	}
	if c.cacheOnly {
		key, _ := CacheKey(c.namespace, req)
		return Response{}, fmt.Errorf("%w: key %s", ErrCacheMiss, key[:12])
	}
	r, err = c.next.Complete(ctx, req)
	if err != nil {
		return r, err
	}
	r.Cached = false
	c.Save(ctx, req, r)
	return r, nil
}

// Lookup returns the stored answer to req, with Cached set, counting a
// hit or a miss.
func (c *Cache) Lookup(ctx context.Context, req Request) (Response, bool, error) {
	key, err := CacheKey(c.namespace, req)
	if err != nil {
		return Response{}, false, err
	}
	b, ok, err := c.store.Get(ctx, key)
	if err != nil {
		return Response{}, false, fmt.Errorf("llm: cache get %s: %w", key[:12], err)
	}
	if ok {
		var r Response
		if err := json.Unmarshal(b, &r); err == nil {
			c.hits.Add(1)
			if c.metrics != nil {
				c.metrics.ModelCacheLookup(c.agent, true)
			}
			r.Cached = true
			return r, true, nil
		}
		// A corrupt entry is treated as a miss and overwritten.
		c.log.Warn("llm cache: corrupt entry ignored", "key", key)
	}
	c.misses.Add(1)
	if c.metrics != nil {
		c.metrics.ModelCacheLookup(c.agent, false)
	}
	return Response{}, false, nil
}

// Save stores the answer to req. A failed write is logged, not returned:
// the answer is good, and losing its cache entry only costs a rerun.
func (c *Cache) Save(ctx context.Context, req Request, r Response) {
	key, err := CacheKey(c.namespace, req)
	if err != nil {
		return
	}
	r.Cached = false
	if b, err := json.Marshal(r); err == nil {
		if err := c.store.Put(ctx, key, b); err != nil {
			c.log.Warn("llm cache: put failed", "key", key, "error", err)
		}
	}
}

// MemStore is an in-memory CacheStore.
type MemStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *MemStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[key]
	return v, ok, nil
}

func (s *MemStore) Put(_ context.Context, key string, value []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.m == nil {
		s.m = map[string][]byte{}
	}
	s.m[key] = append([]byte(nil), value...)
	return nil
}

// DirStore keeps one JSON file per key under Dir (Dir/ab/abcdef….json),
// written atomically (temp file + rename) so a crash never leaves a torn
// entry.
type DirStore struct{ Dir string }

func (s DirStore) path(key string) (string, error) {
	if len(key) < 3 {
		return "", fmt.Errorf("llm: cache key %q too short", key)
	}
	for _, r := range key {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'f') {
			return "", fmt.Errorf("llm: cache key %q is not hex", key)
		}
	}
	return filepath.Join(s.Dir, key[:2], key+".json"), nil
}

func (s DirStore) Get(_ context.Context, key string) ([]byte, bool, error) {
	p, err := s.path(key)
	if err != nil {
		return nil, false, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return b, true, nil
}

func (s DirStore) Put(_ context.Context, key string, value []byte) error {
	p, err := s.path(key)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteBytes(p, value)
}
