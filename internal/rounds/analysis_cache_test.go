package rounds

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena/forecast/scoring"
)

// A view's analysis is computed once per version however many readers
// ask; a quick one is always waited for (a read after a trigger is
// fresh); once a computation was slow, readers of a new version get the
// previous analysis at once while the new one is computed.
func TestAnalysisCache(t *testing.T) {
	ctx := context.Background()
	c := newAnalysisCache()
	var runs atomic.Int32
	compute := func(d time.Duration, n int) func(context.Context) (*view, error) {
		return func(context.Context) (*view, error) {
			runs.Add(1)
			time.Sleep(d)
			return &view{Analysis: &scoring.Analysis{ScoredRounds: n}}, nil
		}
	}
	get := func(version string, d time.Duration, n int) int {
		t.Helper()
		a, err := c.get(ctx, "all", version, compute(d, n))
		if err != nil {
			t.Fatal(err)
		}
		return a.ScoredRounds
	}
	done := make(chan int, 4)
	for range 4 {
		go func() { done <- get("v1", 20*time.Millisecond, 1) }()
	}
	for range 4 {
		if n := <-done; n != 1 {
			t.Fatalf("concurrent readers got %d", n)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("%d computations for one version, want 1", runs.Load())
	}
	if get("v2", 0, 2) != 2 { // quick: waited for
		t.Fatal("a quick recomputation was not waited for")
	}
	e, _ := c.entries.Peek("all")
	e.took = 2 * SlowAnalysis // the last one was slow
	start := time.Now()
	if n := get("v3", 300*time.Millisecond, 3); n != 2 || time.Since(start) > 200*time.Millisecond {
		t.Fatalf("slow recomputation: got %d after %s, want the previous analysis at once", n, time.Since(start))
	}
	time.Sleep(400 * time.Millisecond)
	if n := get("v3", 0, 99); n != 3 || runs.Load() != 3 {
		t.Fatalf("after the background computation: %d (%d runs)", n, runs.Load())
	}
}

// The cache keeps at most MaxCachedAnalyses views: filling it past the cap
// drops the views read least recently, keeps the ones read since, and a
// dropped view is computed again when read.
func TestAnalysisCacheBounded(t *testing.T) {
	ctx := context.Background()
	c := newAnalysisCache()
	var runs atomic.Int32
	compute := func(context.Context) (*view, error) {
		runs.Add(1)
		return &view{Analysis: &scoring.Analysis{}}, nil
	}
	get := func(name string) {
		t.Helper()
		if _, err := c.get(ctx, name, "v1", compute); err != nil {
			t.Fatal(err)
		}
	}
	get("all")
	for i := range 10 * MaxCachedAnalyses {
		get(fmt.Sprint("view ", i))
		get("all") // read with every request, as AnalysisOf does
	}
	if n := c.entries.Len(); n != MaxCachedAnalyses {
		t.Fatalf("%d views cached after %d, want the cap %d", n, 10*MaxCachedAnalyses+1, MaxCachedAnalyses)
	}
	if !c.entries.Contains("all") || c.entries.Contains("view 0") || !c.entries.Contains(fmt.Sprint("view ", 10*MaxCachedAnalyses-1)) {
		t.Error("the cache dropped a view read recently or kept one read long ago")
	}
	before := runs.Load()
	get("all")
	get("view 0")
	if got := runs.Load() - before; got != 1 {
		t.Errorf("%d computations for a cached view and a dropped one, want 1", got)
	}
}

// Stop cancels an analysis computed in the background (which outlives
// the request that started it) and returns only once it has ended, so the
// store can close after it; nothing is computed after Stop.
func TestAnalysisStop(t *testing.T) {
	s := &Service{}
	c := s.cache()
	reqCtx, cancelReq := context.WithCancel(context.Background())
	started := make(chan struct{})
	var ended atomic.Bool
	go c.get(reqCtx, "all", "1", func(ctx context.Context) (*view, error) {
		close(started)
		<-ctx.Done()
		ended.Store(true)
		return nil, ctx.Err()
	})
	<-started
	cancelReq() // the request goes away; the computation goes on
	s.Stop()
	if !ended.Load() {
		t.Fatal("Stop returned while an analysis was still being computed")
	}
	_, err := c.get(context.Background(), "all", "2", func(context.Context) (*view, error) {
		t.Error("an analysis was computed after Stop")
		return &view{Analysis: &scoring.Analysis{}}, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read after Stop: %v, want context.Canceled", err)
	}
}
