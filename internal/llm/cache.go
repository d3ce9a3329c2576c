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
	"sync/atomic"

	"github.com/forecast-arena/arena/safefile"
)

// CacheStore keeps cached answers by key. Implementations must be safe for
// concurrent use; a missing key is (nil, false, nil).
type CacheStore interface {
	Get(ctx context.Context, key string) ([]byte, bool, error)
	Put(ctx context.Context, key string, value []byte) error
}

// ErrCacheMiss is matched (errors.Is) by the error of a cache-only lookup
// that found nothing stored: the model-call cache and the evidence cache
// (package retrieve) alike. Nothing was asked of a model or a provider.
var ErrCacheMiss = errors.New("not in the cache (cache-only mode)")

// Cache is the content-addressed layer of a Chain: the key is the SHA-256
// of the model namespace (SpecNamespace of the spec below it) and the
// canonical request, so a rerun or a backtest asks each distinct question
// once. Only successful answers are stored. A stored answer comes back
// with Cached set and its original tokens and cost, which the meter counts
// apart (nothing is spent again).
type Cache struct {
	next      Model
	store     CacheStore
	namespace string
	agent     string
	cacheOnly bool
	metrics   Metrics // nil: counted only in Stats
	log       *slog.Logger

	hits, misses atomic.Int64
}

// newCache wraps next, keyed by next's spec; NewChain builds it.
func newCache(next Model, store CacheStore, metrics Metrics) *Cache {
	spec := next.Spec()
	return &Cache{next: next, store: store, namespace: SpecNamespace(spec), agent: spec.ID, metrics: metrics, log: slog.Default()}
}

// Spec implements Model.
func (c *Cache) Spec() ModelSpec { return c.next.Spec() }

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

// Complete answers from the store when it can; else, unless in cache-only
// mode, from the layer below, and stores the answer.
func (c *Cache) Complete(ctx context.Context, req Request) (Response, error) {
	key, err := CacheKey(c.namespace, req)
	if err != nil {
		return Response{}, err
	}
	r, ok, err := c.lookup(ctx, key)
	if err != nil || ok {
		return r, err
	}
	if c.cacheOnly {
		return Response{}, fmt.Errorf("llm %s: request %s: %w", c.agent, key[:12], ErrCacheMiss)
	}
	r, err = c.next.Complete(ctx, req)
	if err != nil {
		return r, err
	}
	r.Cached = false
	c.save(ctx, key, r)
	return r, nil
}

// lookup returns the stored answer under key, with Cached set, counting a
// hit or a miss.
func (c *Cache) lookup(ctx context.Context, key string) (Response, bool, error) {
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

// save stores an answer. A failed write is logged, not returned: the
// answer is good, and losing its cache entry only costs a rerun.
func (c *Cache) save(ctx context.Context, key string, r Response) {
	if b, err := json.Marshal(r); err == nil {
		if err := c.store.Put(ctx, key, b); err != nil {
			c.log.Warn("llm cache: put failed", "key", key, "error", err)
		}
	}
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
	// Replaced whole, so that a reader never sees half an entry (see
	// package safefile for what that means on each system).
	return safefile.WriteFile(p, value, 0o600)
}
