// Package cache keeps values computed from the store's data, each under
// a key and the version of the data it was computed from (the last two
// versions of a key): a reader of such a version gets the value at once; readers of a new version share
// one computation (no lock is held while it runs), and a reader whose
// request ends stops waiting while the computation goes on for the
// others. The cache owns its computations: Close cancels them and
// returns once none is left, so the store can be closed after it.
package cache

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
	// OnError, when set, is told of every computation that failed (but not
	// of one Close cancelled): a reader served the previous value while it
	// ran never sees its error.
	OnError func(key K, err error)

	mu      sync.Mutex
	entries *simplelru.LRU[K, *entry[V]]
	base    context.Context // cancelled by Close
	stop    context.CancelFunc
	running sync.WaitGroup // the computations under way
}

type entry[V any] struct {
	// kept are the values of the last two versions computed, the latest
	// last: a reader that read the data's version just before it changed
	// finds its value beside the new one, instead of replacing it.
	kept []kept[V]
	// runs are the computations under way, by version: a reader of a
	// version being computed waits for that computation, whatever other
	// versions are asked for meanwhile.
	runs map[string]*run[V]
}

type kept[V any] struct {
	version string
	value   V
	took    time.Duration // its computation
}

// keptVersions is how many versions of a key are kept.
const keptVersions = 2

// run is one computation: its version, and its result once done is
// closed.
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
	for _, k := range e.kept {
		if k.version == version {
			c.mu.Unlock()
			return k.value, nil
		}
	}
	if err := c.base.Err(); err != nil {
		c.mu.Unlock()
		return zero, fmt.Errorf("%w: %w", ErrClosed, err)
	}
	r := e.runs[version]
	if r == nil {
		r = &run[V]{version: version, done: make(chan struct{})}
		if e.runs == nil {
			e.runs = map[string]*run[V]{}
		}
		e.runs[version] = r
		c.running.Add(1)
		go c.compute(ctx, key, e, r, compute)
	}
	if n := len(e.kept); n > 0 && c.Slow > 0 && e.kept[n-1].took > c.Slow {
		prev := e.kept[n-1].value
		c.mu.Unlock()
		return prev, nil
	}
	c.mu.Unlock()
	select {
	case <-r.done:
		return r.value, r.err
	case <-ctx.Done():
		return zero, ctx.Err()
	}
}

// compute runs r for e and keeps its value, the latest of e's, unless it
// failed.
func (c *Cache[K, V]) compute(ctx context.Context, key K, e *entry[V], r *run[V], compute func(context.Context) (V, error)) {
	defer c.running.Done()
	cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer context.AfterFunc(c.base, cancel)()
	defer cancel()
	start := time.Now()
	r.value, r.err = compute(cctx)
	c.mu.Lock()
	if r.err == nil {
		e.kept = append(slices.DeleteFunc(e.kept, func(k kept[V]) bool { return k.version == r.version }), kept[V]{r.version, r.value, time.Since(start)})
		if len(e.kept) > keptVersions {
			e.kept = slices.Delete(e.kept, 0, len(e.kept)-keptVersions)
		}
	}
	delete(e.runs, r.version)
	closed := c.base.Err() != nil
	c.mu.Unlock()
	close(r.done)
	if r.err != nil && c.OnError != nil && !closed {
		c.OnError(key, r.err)
	}
}

// Peek returns key's value kept at version, if there is one, and computes
// nothing: for a reader that must have exactly that version's value.
func (c *Cache[K, V]) Peek(key K, version string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var zero V
	if c.entries == nil {
		return zero, false
	}
	e, ok := c.entries.Peek(key)
	if !ok {
		return zero, false
	}
	for _, k := range e.kept {
		if k.version == version {
			return k.value, true
		}
	}
	return zero, false
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
