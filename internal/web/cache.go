package web

import (
	"context"
	"sync"

	"golang.org/x/sync/singleflight"
)

// versioned keeps a value computed from the store's data at one version:
// a reader of that version gets it at once; readers of a new version wait
// for one computation between them (none holds a lock while it runs), and
// a reader whose request ends stops waiting while the computation goes on
// for the others.
type versioned[T any] struct {
	mu      sync.Mutex
	version string
	value   T
	ok      bool
	flight  singleflight.Group
}

func (c *versioned[T]) get(ctx context.Context, version string, compute func(context.Context) (T, error)) (T, error) {
	c.mu.Lock()
	if c.ok && c.version == version {
		defer c.mu.Unlock()
		return c.value, nil
	}
	c.mu.Unlock()
	ch := c.flight.DoChan(version, func() (any, error) {
		v, err := compute(context.WithoutCancel(ctx))
		if err != nil {
			return nil, err
		}
		c.mu.Lock()
		c.version, c.value, c.ok = version, v, true
		c.mu.Unlock()
		return v, nil
	})
	var zero T
	select {
	case <-ctx.Done():
		return zero, ctx.Err()
	case r := <-ch:
		if r.Err != nil {
			return zero, r.Err
		}
		return r.Val.(T), nil
	}
}
