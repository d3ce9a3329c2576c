// Package cache keeps values computed from the store's data, each under
// a key and the version of the data it was computed from: a reader of
// that version gets the value at once; readers of a new version share
// one computation (no lock is held while it runs), and a reader whose
// request ends stops waiting while the computation goes on for the
// others. The cache owns its computations: Close cancels them and
// returns once none is left, so the store can be closed after it.
package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// ErrClosed is the error of a read that needs a computation after Close.
var ErrClosed = errors.New("cache: closed")

// Cache maps keys to values computed at a version. The zero Cache keeps
// one key and always waits for a computation; set Max and Slow before the
// first Get to change that.
type Cache[K comparable, V any] struct {
	// Max bounds the keys kept: the least recently read is dropped beyond
	// it, so however many keys readers ask for, the cache holds at most
	// Max values. Zero keeps one.
	Max int
	// Slow, when positive, is how long a computation may take and still
	// be waited for: once the last computation of a key took longer, a
	// reader of a new version gets the key's previous value at once while
	// the new one is computed. Zero always waits.
	Slow time.Duration

	mu      sync.Mutex
	entries *simplelru.LRU[K, *entry[V]]
	base    context.Context // cancelled by Close
	stop    context.CancelFunc
	running sync.WaitGroup // the computations under way
}

type entry[V any] struct {
	version string // of value
	value   V
	ok      bool
	took    time.Duration // the last computation
	run     *run[V]
}

// run is one computation: its version, and its result once done is closed.
type run[V any] struct {
	version string
	done    chan struct{}
	value   V
	err     error
}

// init sets up the zero Cache; c.mu is held.
func (c *Cache[K, V]) init() {
	if c.entries != nil {
		return
	}
	l, err := simplelru.NewLRU[K, *entry[V]](max(c.Max, 1), nil)
	if err != nil {
		panic(err) // only for a size below 1
	}
	c.entries = l
	c.base, c.stop = context.WithCancel(context.Background())
}

// Get returns key's value at version, computing it when the one kept is
// of another version (or none is). One computation runs per key and
// version however many readers ask; it runs on a context that keeps ctx's
// values but not its cancellation, and that Close cancels. A failed
// computation is not kept: the next reader computes again. When ctx ends
// first, Get returns ctx's error and the computation goes on.
func (c *Cache[K, V]) Get(ctx context.Context, key K, version string, compute func(context.Context) (V, error)) (V, error) {
	var zero V
	c.mu.Lock()
	c.init()
	e, ok := c.entries.Get(key)
	if !ok {
		e = &entry[V]{}
		c.entries.Add(key, e)
	}
	if e.ok && e.version == version {
		defer c.mu.Unlock()
		return e.value, nil
	}
	if err := c.base.Err(); err != nil {
		c.mu.Unlock()
		return zero, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	r := e.run
	if r == nil || r.version != version {
		r = &run[V]{version: version, done: make(chan struct{})}
		e.run = r
		c.running.Add(1)
		go c.compute(ctx, e, r, compute)
	}
	stale, prev := e.ok && c.Slow > 0 && e.took > c.Slow, e.value
	c.mu.Unlock()
	if stale {
		return prev, nil
	}
	select {
	case <-r.done:
		return r.value, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// compute runs r for e and keeps its value unless a computation of
// another version was started for e meanwhile (or it failed).
func (c *Cache[K, V]) compute(ctx context.Context, e *entry[V], r *run[V], compute func(context.Context) (V, error)) {
	defer c.running.Done()
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer context.AfterFunc(c.base, cancel)()
	defer cancel()
	start := time.Now()
	r.value, r.err = compute(cctx)
	c.mu.Lock()
	if e.run == r {
		if r.err == nil {
			e.value, e.version, e.ok, e.took = r.value, r.version, true, time.Since(start)
		}
		e.run = nil
	}
	c.mu.Unlock()
	close(r.done)
}

// Len is how many keys the cache holds (at most Max).
func (c *Cache[K, V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.entries == nil {
		return 0
	}
	return c.entries.Len()
}

// Close cancels the computations under way and returns once none is
// running. Values kept are still read; a read that needs a computation
// fails with ErrClosed.
func (c *Cache[K, V]) Close() {
	c.mu.Lock() // Get checks base and counts a new computation under mu
	c.init()
	c.stop()
	c.mu.Unlock()
	c.running.Wait()
}
