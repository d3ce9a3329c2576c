// Package clock provides a settable clock: the demo's accelerated time and
// the tests' controlled time, read through the Now func every service
// takes instead of time.Now.
package clock

import (
	"sync"
	"time"
)

// Manual is a clock that moves only when set; safe for concurrent use.
// Its zero value reads the zero time.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock set at t.
func New(t time.Time) *Manual {
	c := &Manual{}
	c.Set(t)
	return c
}

// Now returns the clock's time.
func (c *Manual) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Set moves the clock to t (in UTC), forward or back.
func (c *Manual) Set(t time.Time) {
	c.mu.Lock()
	c.now = t.UTC()
	c.mu.Unlock()
}
