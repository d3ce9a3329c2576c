package ratelimit_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/ratelimit"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// counting counts the settlements that reach the database, and can fail
// them.
type counting struct {
	arena.RateStore
	calls atomic.Int64
	fail  atomic.Bool
}

func (c *counting) SettleTokens(ctx context.Context, ss []arena.RateSettlement) ([]arena.RateDecision, error) {
	c.calls.Add(1)
	if c.fail.Load() {
		return nil, errors.New("database gone")
	}
	return c.RateStore.SettleTokens(ctx, ss)
}

var t0 = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

// One process is exact: a bucket of 400 passes 400 requests and refuses
// the 401st, refills at its rate, and the database sees about one
// settlement per half slack (10 requests) instead of one per request;
// the database holds the bucket as settled, at most a slack behind.
func TestOneProcessExact(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		st := &counting{RateStore: db}
		lim := &ratelimit.Limiter{Store: st}
		l := arena.RateLimit{Burst: 400, PerSecond: 2} // slack 20
		for i := 0; i < 400; i++ {
			d, err := lim.Take(ctx, "ip:a", l, t0)
			if err != nil || !d.Allowed {
				t.Fatalf("take %d: %+v %v", i, d, err)
			}
		}
		if d, _ := lim.Take(ctx, "ip:a", l, t0); d.Allowed {
			t.Fatalf("401st take passed: %+v", d)
		}
		lim.Wait()
		if n := st.calls.Load(); n > 80 {
			t.Fatalf("%d settlements for 401 takes, want at most one per 5", n)
		}
		// One second refills two tokens: two pass, the third is refused.
		for i, want := range []bool{true, true, false} {
			if d, err := lim.Take(ctx, "ip:a", l, t0.Add(time.Second)); err != nil || d.Allowed != want {
				t.Fatalf("after 1 s, take %d: %+v %v", i, d, err)
			}
		}
		lim.Wait()
		// The database holds the bucket as the process settled it: less
		// than the slack is unsettled.
		ds, err := db.SettleTokens(ctx, []arena.RateSettlement{{Key: "ip:a", Limit: l, At: t0.Add(time.Second)}})
		if err != nil {
			t.Fatal(err)
		}
		if left := ds[0].Remaining; left < 0 || left >= float64(ratelimit.Slack(l)) {
			t.Fatalf("the database holds %g tokens of the spent bucket, want 0 to the slack", left)
		}
	})
}

// Two processes on one database (replicas; on SQLite two connections to
// one file) hammering one bucket concurrently pass at least its burst and
// at most the burst plus each process's slack.
func TestReplicasBoundedBySlack(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			url := storetest.URL(t, engine)
			var lims []*ratelimit.Limiter
			for i := 0; i < 2; i++ {
				db, err := store.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { db.Close() })
				lims = append(lims, &ratelimit.Limiter{Store: db})
			}
			l := arena.RateLimit{Burst: 100, PerSecond: 0.001} // slack 5
			var passed atomic.Int64
			var wg sync.WaitGroup
			for g := 0; g < 8; g++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; i < 40; i++ {
						d, err := lims[(g+i)%2].Take(ctx, "ip:shared", l, t0)
						if err != nil {
							t.Error(err)
							return
						}
						if d.Allowed {
							passed.Add(1)
						}
					}
				}()
			}
			wg.Wait()
			for _, lim := range lims {
				lim.Wait()
			}
			bound := int64(l.Burst) + 2*int64(ratelimit.Slack(l))
			if n := passed.Load(); n < int64(l.Burst) || n > bound {
				t.Fatalf("two replicas passed %d of 320, want %g to %d", n, l.Burst, bound)
			}
		})
	}
}

// A store that fails returns the error and forgets nothing: what the copy
// granted is settled once the store answers again.
func TestStoreFailureKeepsDebt(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := context.Background()
	st := &counting{RateStore: db}
	lim := &ratelimit.Limiter{Store: st}
	l := arena.RateLimit{Burst: 40, PerSecond: 0.001} // slack 2
	st.fail.Store(true)
	// Two grants from the copy (a new copy presumes its bucket full); the
	// background settlement of each fails.
	for i := 0; i < 2; i++ {
		if d, err := lim.Take(ctx, "k", l, t0); err != nil || !d.Allowed {
			t.Fatalf("take %d: %+v %v", i, d, err)
		}
		lim.Wait()
	}
	if _, err := lim.Take(ctx, "k", l, t0); err == nil { // slack used up: settles in the request
		t.Fatal("a failing store was not reported")
	}
	st.fail.Store(false)
	// Settles the two spent and takes one: 40 − 2 − 1 = 37 left.
	if d, err := lim.Take(ctx, "k", l, t0); err != nil || !d.Allowed || d.Remaining != 37 {
		t.Fatalf("after the failure: %+v %v", d, err)
	}
}

// Copies idle for twice their refill time are dropped; busy ones stay.
func TestIdleCopiesPruned(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	ctx := context.Background()
	lim := &ratelimit.Limiter{Store: db}
	l := arena.RateLimit{Burst: 10, PerSecond: 1} // full again after 10 s
	for _, k := range []string{"a", "b", "c"} {
		if _, err := lim.Take(ctx, k, l, t0); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := lim.Take(ctx, "b", l, t0.Add(50*time.Second)); err != nil {
		t.Fatal(err)
	}
	if _, err := lim.Take(ctx, "d", l, t0.Add(61*time.Second)); err != nil { // sweeps a and c
		t.Fatal(err)
	}
	if n := lim.Len(); n != 2 {
		t.Fatalf("%d copies after the sweep, want 2 (b and d)", n)
	}
}

// The copies are bounded: past MaxCopies, buckets without a copy are
// answered by the store itself, each token a settlement, and stay exact;
// once idle copies are swept, new ones are made again.
func TestCopiesBounded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		st := &counting{RateStore: db}
		lim := &ratelimit.Limiter{Store: st, MaxCopies: 10}
		l := arena.RateLimit{Burst: 2, PerSecond: 1}
		for i := range 100 {
			for j, want := range []bool{true, true, false} {
				d, err := lim.Take(ctx, fmt.Sprint("ip:", i), l, t0)
				if err != nil || d.Allowed != want {
					t.Fatalf("address %d, take %d: %+v %v, want allowed %v", i, j, d, err, want)
				}
			}
		}
		if n := lim.Len(); n != 10 {
			t.Fatalf("%d copies after 100 addresses, want the bound 10", n)
		}
		before := st.calls.Load()
		if d, err := lim.Take(ctx, "ip:new", l, t0); err != nil || !d.Allowed || st.calls.Load() != before+1 {
			t.Fatalf("a new address past the bound: %+v %v, %d settlements", d, err, st.calls.Load()-before)
		}
		// Past the sweep (a minute; the copies idle for more than twice
		// their refill time), there is room again.
		if _, err := lim.Take(ctx, "ip:later", l, t0.Add(2*time.Minute)); err != nil || lim.Len() != 1 {
			t.Fatalf("after the sweep: %d copies, %v", lim.Len(), err)
		}
	})
}
