package rounds

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/forecast-arena/arena/forecast/scoring"
)

// A service's cache keeps at most MaxCachedAnalyses views: filling it past
// the cap drops the views read least recently, keeps the ones read since,
// and a dropped view is computed again when read (package cache tests the
// rest: one computation per version, the previous analysis while a slow
// one is computed).
func TestAnalysisCacheBounded(t *testing.T) {
	ctx := context.Background()
	s := &Service{}
	c := s.cache()
	var runs atomic.Int32
	compute := func(context.Context) (*view, error) {
		runs.Add(1)
		return &view{Analysis: &scoring.Analysis{}}, nil
	}
	get := func(name string) {
		t.Helper()
		if _, err := c.Get(ctx, name, "v1", compute); err != nil {
			t.Fatal(err)
		}
	}
	get("all")
	for i := range 10 * MaxCachedAnalyses {
		get(fmt.Sprint("view ", i))
		get("all") // read with every request, as AnalysisOf does
	}
	if n := s.CachedAnalyses(); n != MaxCachedAnalyses {
		t.Fatalf("%d views cached after %d, want the cap %d", n, 10*MaxCachedAnalyses+1, MaxCachedAnalyses)
	}
	before := runs.Load()
	get("all")
	get(fmt.Sprint("view ", 10*MaxCachedAnalyses-1))
	if got := runs.Load() - before; got != 0 {
		t.Errorf("%d computations for views read recently, want 0", got)
	}
	get("view 0")
	if got := runs.Load() - before; got != 1 {
		t.Errorf("%d computations for a view read long ago, want 1", got)
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
	go c.Get(reqCtx, "all", "1", func(ctx context.Context) (*view, error) {
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
	_, err := c.Get(context.Background(), "all", "2", func(context.Context) (*view, error) {
		t.Error("an analysis was computed after Stop")
		return &view{Analysis: &scoring.Analysis{}}, nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("read after Stop: %v, want context.Canceled", err)
	}
}
