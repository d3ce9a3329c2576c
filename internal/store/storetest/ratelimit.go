package storetest

import (
	"context"
	"math"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// A bucket lets Burst requests through at once, then one per 1/PerSecond;
// buckets are independent; concurrent takes never grant more than the
// bucket holds; idle buckets are pruned; tokens a process spent on its
// own are subtracted before the take, into a debt of at most the burst.
func testRateBuckets(t *testing.T, db *store.DB) {
	ctx := context.Background()
	t0 := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	l := arena.RateLimit{Burst: 3, PerSecond: 0.5}
	take := func(key string, at time.Time) arena.RateDecision {
		t.Helper()
		d, err := settleOne(ctx, db, key, l, 0, true, at)
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
			d, err := settleOne(ctx, db, "ip:c", l, 0, true, t0)
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

	t1 := t0.Add(2 * time.Hour)
	settle := func(key string, spent int, take bool, at time.Time) arena.RateDecision {
		t.Helper()
		d, err := settleOne(ctx, db, key, l, spent, take, at)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	for i, c := range []struct {
		key    string
		spent  int
		take   bool
		at     time.Time
		wantOK bool
		left   float64
	}{
		{"ip:d", 0, true, t1, true, 2},                        // a new bucket starts full
		{"ip:d", 2, true, t1, false, 0},                       // 2 spent elsewhere: none left to take
		{"ip:e", 5, true, t1, false, -2},                      // a new bucket overspent: in debt
		{"ip:e", 10, true, t1, false, -3},                     // the debt stops at minus the burst
		{"ip:e", 0, true, t1.Add(8 * time.Second), true, 0},   // 4 tokens refilled pay it and grant one
		{"ip:e", 1, true, t1.Add(10 * time.Second), false, 0}, // one refilled, one spent
		{"ip:f", 1, false, t1, false, 2},                      // settling only: nothing taken
		{"ip:f", 1, false, t1, false, 1},
	} {
		if d := settle(c.key, c.spent, c.take, c.at); d.Allowed != c.wantOK || math.Abs(d.Remaining-c.left) > 1e-9 {
			t.Fatalf("settle %d (%s, spent %d): %+v, want allowed=%v left %g", i, c.key, c.spent, d, c.wantOK, c.left)
		}
	}
	// A batch settles each bucket and answers in the order asked.
	ds, err := db.SettleTokens(ctx, []arena.RateSettlement{
		{Key: "ip:h", Limit: l, Spent: 1, At: t1},
		{Key: "ip:g", Limit: l, Take: true, At: t1},
		{Key: "ip:f", Limit: l, Take: true, At: t1},
	})
	if err != nil || len(ds) != 3 || ds[0] != (arena.RateDecision{Remaining: 2}) || ds[1] != (arena.RateDecision{Allowed: true, Remaining: 2}) ||
		ds[2] != (arena.RateDecision{Allowed: true, Remaining: 0}) {
		t.Fatalf("batch: %+v %v", ds, err)
	}
}

func settleOne(ctx context.Context, db *store.DB, key string, l arena.RateLimit, spent int, take bool, at time.Time) (arena.RateDecision, error) {
	ds, err := db.SettleTokens(ctx, []arena.RateSettlement{{Key: key, Limit: l, Spent: spent, Take: take, At: at}})
	if err != nil {
		return arena.RateDecision{}, err
	}
	return ds[0], nil
}
