package cache

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// counted returns a computation giving v after d, and the count of its runs.
func counted(v int, d time.Duration) (func(context.Context) (int, error), *atomic.Int32) {
	var runs atomic.Int32
	return func(ctx context.Context) (int, error) {
		runs.Add(1)
		select {
		case <-time.After(d):
			return v, nil
		case <-ctx.Done():
			return 0, ctx.Err()
		}
	}, &runs
}

// Reads in sequence: what each gets and whether it computed.
func TestGet(t *testing.T) {
	boom := errors.New("boom")
	type read struct {
		key, version string
		value        int   // computed, or want when err is nil
		fail         error // the computation's error
		want         int
		computes     bool
	}
	cases := []struct {
		name  string
		max   int
		reads []read
	}{
		{"a version is computed once", 0, []read{
			{"k", "v1", 1, nil, 1, true},
			{"k", "v1", 2, nil, 1, false},
		}},
		{"a new version is computed again", 0, []read{
			{"k", "v1", 1, nil, 1, true},
			{"k", "v2", 2, nil, 2, true},
			{"k", "v1", 3, nil, 1, false}, // the last two versions are kept
			{"k", "v3", 4, nil, 4, true},
			{"k", "v1", 5, nil, 5, true}, // now gone
		}},
		{"a failure is not kept", 0, []read{
			{"k", "v1", 0, boom, 0, true},
			{"k", "v1", 9, nil, 9, true},
			{"k", "v1", 8, nil, 9, false},
		}},
		{"a failure keeps the previous version's value for its own version", 0, []read{
			{"k", "v1", 1, nil, 1, true},
			{"k", "v2", 0, boom, 0, true},
			{"k", "v1", 5, nil, 1, false},
		}},
		{"keys are apart", 2, []read{
			{"a", "v1", 1, nil, 1, true},
			{"b", "v1", 2, nil, 2, true},
			{"a", "v1", 3, nil, 1, false},
			{"b", "v1", 4, nil, 2, false},
		}},
		{"the zero cache keeps one key", 0, []read{
			{"a", "v1", 1, nil, 1, true},
			{"b", "v1", 2, nil, 2, true},
			{"a", "v1", 3, nil, 3, true},
		}},
		{"the key read least recently is dropped", 2, []read{
			{"a", "v1", 1, nil, 1, true},
			{"b", "v1", 2, nil, 2, true},
			{"a", "v1", 0, nil, 1, false}, // a is now the most recent
			{"c", "v1", 3, nil, 3, true},  // drops b
			{"a", "v1", 0, nil, 1, false},
			{"b", "v1", 4, nil, 4, true},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cc := &Cache[string, int]{Max: c.max}
			defer cc.Close()
			for i, r := range c.reads {
				computed := false
				got, err := cc.Get(context.Background(), r.key, r.version, func(context.Context) (int, error) {
					computed = true
					return r.value, r.fail
				})
				if !errors.Is(err, r.fail) || (r.fail == nil && got != r.want) || computed != r.computes {
					t.Errorf("read %d (%s %s): %d, %v, computed %v; want %d, %v, computed %v", i, r.key, r.version, got, err, computed, r.want, r.fail, r.computes)
				}
			}
			if n, want := cc.Len(), max(c.max, 1); n > want {
				t.Errorf("%d keys kept, want at most %d", n, want)
			}
		})
	}
}

// Readers of one version share one computation; one that gives up stops
// waiting without stopping it for the others.
func TestGetConcurrent(t *testing.T) {
	var c Cache[string, int]
	defer c.Close()
	release, started := make(chan struct{}), make(chan struct{}, 1)
	var runs atomic.Int32
	compute := func(context.Context) (int, error) {
		runs.Add(1)
		started <- struct{}{}
		<-release
		return 7, nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { _, err := c.Get(ctx, "k", "v1", compute); gaveUp <- err }()
	<-started
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("a reader that gave up: %v", err)
	}
	var wg sync.WaitGroup
	got := make([]int, 8)
	for i := range got {
		wg.Go(func() { got[i], _ = c.Get(context.Background(), "k", "v1", compute) })
	}
	time.Sleep(10 * time.Millisecond) // let them join the computation under way
	close(release)
	wg.Wait()
	for i, v := range got {
		if v != 7 {
			t.Fatalf("reader %d got %d", i, v)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("%d computations for one version, want 1", runs.Load())
	}
}

// With Slow set, a quick recomputation is waited for (a read after new
// data is fresh); once one was slow, a reader of a new version gets the
// previous value at once while the new one is computed.
// Timings on the bubble's clock (testing/synctest): exact, whatever the
// machine's load.
func TestSlow(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Cache[string, int]{Slow: 50 * time.Millisecond}
		defer c.Close()
		ctx := context.Background()
		get := func(version string, v int, d time.Duration) int {
			t.Helper()
			compute, _ := counted(v, d)
			got, err := c.Get(ctx, "k", version, compute)
			if err != nil {
				t.Fatal(err)
			}
			return got
		}
		if get("v1", 1, 0) != 1 || get("v2", 2, 0) != 2 {
			t.Fatal("a quick computation was not waited for")
		}
		start := time.Now()
		if get("v3", 3, 100*time.Millisecond) != 3 || time.Since(start) != 100*time.Millisecond {
			t.Fatal("a slow computation after a quick one was not waited for")
		}
		start = time.Now()
		if n := get("v4", 4, 300*time.Millisecond); n != 3 || time.Since(start) != 0 {
			t.Fatalf("after a slow computation: %d after %s, want the previous value at once", n, time.Since(start))
		}
		time.Sleep(300 * time.Millisecond)
		synctest.Wait()
		if n := get("v4", 99, 0); n != 4 {
			t.Fatalf("after the computation in the background: %d, want 4", n)
		}
	})
}

// A reader of another version, arriving while a version is computed,
// neither throws that computation's result away nor makes its readers
// compute again.
func TestOtherVersionKeepsRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := &Cache[string, int]{}
		defer c.Close()
		ctx := context.Background()
		v2, runs2 := counted(2, 100*time.Millisecond)
		v1, runs1 := counted(1, 10*time.Millisecond)
		var wg sync.WaitGroup
		wg.Go(func() { c.Get(ctx, "k", "v2", v2) })
		synctest.Wait()
		if n, err := c.Get(ctx, "k", "v1", v1); n != 1 || err != nil {
			t.Fatalf("v1: %d, %v", n, err)
		}
		if n, err := c.Get(ctx, "k", "v2", v2); n != 2 || err != nil {
			t.Fatalf("v2 while its computation runs: %d, %v", n, err)
		}
		wg.Wait()
		if runs1.Load() != 1 || runs2.Load() != 1 {
			t.Fatalf("computations: v1 %d, v2 %d; want one each", runs1.Load(), runs2.Load())
		}
		if n, err := c.Get(ctx, "k", "v2", v2); n != 2 || err != nil || runs2.Load() != 1 {
			t.Fatalf("v2 once computed: %d, %v, %d computations", n, err, runs2.Load())
		}
	})
}

// A failed computation whose reader got the previous value (it was slow)
// is told to OnError; one Close cancelled is not.
func TestOnError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var errs []error
		c := &Cache[string, int]{Slow: time.Millisecond, OnError: func(_ string, err error) { errs = append(errs, err) }}
		ctx := context.Background()
		slow, _ := counted(1, 10*time.Millisecond)
		if n, err := c.Get(ctx, "k", "v1", slow); n != 1 || err != nil {
			t.Fatal(n, err)
		}
		boom := errors.New("boom")
		if n, err := c.Get(ctx, "k", "v2", func(context.Context) (int, error) { return 0, boom }); n != 1 || err != nil {
			t.Fatalf("the previous value at once: %d, %v", n, err)
		}
		synctest.Wait()
		if len(errs) != 1 || !errors.Is(errs[0], boom) {
			t.Fatalf("errors told: %v", errs)
		}
		hang, _ := counted(3, time.Hour)
		c.Get(ctx, "k", "v3", hang)
		c.Close()
		if len(errs) != 1 {
			t.Fatalf("a cancelled computation was told as an error: %v", errs)
		}
	})
}

func TestClose(t *testing.T) {
	var c Cache[string, int]
	if v, err := c.Get(context.Background(), "kept", "v1", func(context.Context) (int, error) { return 5, nil }); v != 5 || err != nil {
		t.Fatal(v, err)
	}
	reqCtx, cancelReq := context.WithCancel(context.Background())
	started := make(chan struct{})
	var ended atomic.Bool
	go c.Get(reqCtx, "kept", "v2", func(ctx context.Context) (int, error) {
		close(started)
		<-ctx.Done()
		ended.Store(true)
		return 0, ctx.Err()
	})
	<-started
	cancelReq() // the request goes away; the computation goes on
	c.Close()
	if !ended.Load() {
		t.Fatal("Close returned while a computation was still running")
	}
	_, err := c.Get(context.Background(), "kept", "v3", func(context.Context) (int, error) {
		t.Error("a value was computed after Close")
		return 0, nil
	})
	if !errors.Is(err, ErrClosed) || !errors.Is(err, context.Canceled) {
		t.Fatalf("read after Close: %v, want ErrClosed", err)
	}
	c.Close() // twice is fine
}

// Filling the cache far past Max keeps Max keys, the ones read last.
func TestBounded(t *testing.T) {
	c := &Cache[string, int]{Max: 4}
	defer c.Close()
	ctx := context.Background()
	compute, runs := counted(1, 0)
	for i := range 100 {
		if _, err := c.Get(ctx, fmt.Sprint(i), "v", compute); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Get(ctx, "hot", "v", compute); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != 4 {
		t.Fatalf("%d keys kept, want 4", c.Len())
	}
	before := runs.Load()
	c.Get(ctx, "hot", "v", compute)
	c.Get(ctx, "99", "v", compute)
	c.Get(ctx, "0", "v", compute)
	if got := runs.Load() - before; got != 1 {
		t.Errorf("%d computations for two kept keys and a dropped one, want 1", got)
	}
}
