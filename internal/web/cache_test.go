package web

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// A versioned value is computed once per version however many readers
// ask at once; a reader that gives up stops waiting without stopping the
// computation; a failed computation is not kept.
func TestVersioned(t *testing.T) {
	var c versioned[int]
	var runs atomic.Int32
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	compute := func(ctx context.Context) (int, error) {
		runs.Add(1)
		started <- struct{}{}
		<-release
		return 7, nil
	}
	// A reader that gives up while the computation runs.
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { _, err := c.get(ctx, "v1", compute); gaveUp <- err }()
	<-started
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a reader that gave up: %v", err)
	}
	// Readers of the same version join the computation under way.
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Add(1)
		go func() { defer wg.Done(); got[i], _ = c.get(context.Background(), "v1", compute) }()
	}
	close(release)
	wg.Wait()
	for i, v := range got {
		if v != 7 {
			t.Fatalf("reader %d got %d", i, v)
		}
	}
	if v, err := c.get(context.Background(), "v1", compute); v != 7 || err != nil || runs.Load() != 1 {
		t.Fatalf("cached read: %d %v after %d computations, want one", v, err, runs.Load())
	}
	boom := errors.New("boom")
	if _, err := c.get(context.Background(), "v2", func(context.Context) (int, error) { return 0, boom }); !errors.Is(err, boom) {
		t.Fatalf("failed computation: %v", err)
	}
	if v, err := c.get(context.Background(), "v2", func(context.Context) (int, error) { return 9, nil }); v != 9 || err != nil {
		t.Fatalf("after a failure the next read computes again: %d %v", v, err)
	}
}
