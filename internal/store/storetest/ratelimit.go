package storetest

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// A bucket lets Burst requests through at once, then one per 1/PerSecond;
// buckets are independent; concurrent takes never grant more than the
// bucket holds; idle buckets are pruned.
func testRateBuckets(t *testing.T, db *store.DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l := arena.RateLimit{Burst: 3, PerSecond: 0.5}
	take := func(key string, at time.Time) arena.RateDecision {
		t.Helper()
		d, err := db.TakeToken(ctx, key, l, at)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i, want := range []bool{true, true, true, false, false} {
		if d := take("ip:a", t0); d.Allowed != want {
			t.Fatalf("take %d at t0: %+v, want allowed=%v", i, d, want)
		}
	}
	if d := take("ip:b", t0); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("another key: %+v", d)
	}
	if d := take("ip:a", t0.Add(time.Second)); d.Allowed {
		t.Fatalf("half a token after 1 s: %+v", d)
	}
	if d := take("ip:a", t0.Add(2*time.Second)); !d.Allowed || d.Remaining > 1e-9 {
		t.Fatalf("one token after 2 s: %+v", d)
	}
	if d := take("ip:a", t0.Add(time.Hour)); !d.Allowed || d.Remaining != 2 {
		t.Fatalf("refilled to the burst only: %+v", d)
	}
	// A request stamped earlier than the last one (concurrent requests
	// reach the database out of order) refills nothing, takes nothing
	// away, and leaves the bucket's clock where it was.
	if d := take("ip:a", t0.Add(time.Hour-10*time.Second)); !d.Allowed || d.Remaining != 1 {
		t.Fatalf("out-of-order stamp: %+v", d)
	}
	if d := take("ip:a", t0.Add(time.Hour)); !d.Allowed || d.Remaining > 1e-9 {
		t.Fatalf("after an out-of-order stamp: %+v", d)
	}
	// 40 concurrent takes on a fresh bucket of 3: exactly 3 pass.
	var mu sync.Mutex
	granted := 0
	var wg sync.WaitGroup
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := db.TakeToken(ctx, "ip:c", l, t0)
			if err != nil {
				t.Error(err)
				return
			}
			if d.Allowed {
				mu.Lock()
				granted++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if granted != 3 {
		t.Fatalf("concurrent takes granted %d, want 3", granted)
	}
	n, err := db.PruneRateBuckets(ctx, t0.Add(time.Minute))
	if err != nil || n != 2 { // ip:b and ip:c; ip:a was used an hour later
		t.Fatalf("pruned %d (%v), want 2", n, err)
	}
}
