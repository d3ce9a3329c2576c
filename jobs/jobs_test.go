package jobs_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena/jobs"
	"github.com/forecast-arena/arena/store"
	"github.com/forecast-arena/arena/store/storetest"
)

func TestSchedules(t *testing.T) {
	now := time.Date(2026, 11, 25, 13, 7, 31, 0, time.UTC) // a Wednesday
	if p, due := jobs.Every(5 * time.Minute).Period(now); !due || !p.Equal(time.Date(2026, 11, 25, 13, 5, 0, 0, time.UTC)) {
		t.Fatalf("every: %v %v", p, due)
	}
	sun := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
	if ws := jobs.WeekStart(now); !ws.Equal(sun) {
		t.Fatalf("week start %v", ws)
	}
	if ws := jobs.WeekStart(sun); !ws.Equal(sun) {
		t.Fatalf("week start of a Sunday midnight %v", ws)
	}
	if p, due := jobs.Weekly(5 * time.Minute).Period(sun.Add(4 * time.Minute)); due || !p.Equal(sun.Add(5*time.Minute)) {
		t.Fatalf("weekly before offset: %v %v", p, due)
	}
	if _, due := jobs.Weekly(5 * time.Minute).Period(sun.Add(5 * time.Minute)); !due {
		t.Fatal("weekly at offset not due")
	}
}

// Several replicas sharing one database run each period once.
func TestReplicasRunEachPeriodOnce(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			url := storetest.URL(t, engine)
			var mu sync.Mutex
			runs := map[time.Time]int{}
			var clock atomic.Int64
			base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			clock.Store(base.UnixNano())
			now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for i := 0; i < 3; i++ {
				db, err := store.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				s := &jobs.Scheduler{Store: db, Tick: time.Millisecond, Owner: string(rune('a' + i)), Now: now,
					Jobs: []jobs.Job{{Name: "sync", Schedule: jobs.Every(time.Minute), Run: func(ctx context.Context, p time.Time) error {
						mu.Lock()
						runs[p]++
						mu.Unlock()
						return nil
					}}}}
				wg.Add(1)
				go func() { defer wg.Done(); s.Run(ctx) }()
			}
			for k := 1; k <= 5; k++ {
				time.Sleep(30 * time.Millisecond)
				clock.Store(base.Add(time.Duration(k) * time.Minute).UnixNano())
			}
			time.Sleep(30 * time.Millisecond)
			cancel()
			wg.Wait()
			if len(runs) != 6 {
				t.Fatalf("want 6 periods run, got %d: %v", len(runs), runs)
			}
			for p, n := range runs {
				if n != 1 {
					t.Errorf("period %v ran %d times", p, n)
				}
			}
		})
	}
}
