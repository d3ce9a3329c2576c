package jobs_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

func TestSchedules(t *testing.T) {
	now := time.Date(2026, 11, 25, 13, 7, 31, 0, time.UTC) // a Wednesday
	if p, due := jobs.Every(5 * time.Minute).Period(now); !due || !p.Equal(time.Date(2026, 11, 25, 13, 5, 0, 0, time.UTC)) {
		t.Fatalf("every: %v %v", p, due)
	}
	sun := time.Date(2026, 11, 22, 0, 0, 0, 0, time.UTC)
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
			// Each virtual minute lasts until some replica has run its
			// period (so a loaded machine cannot skip one), plus a moment
			// in which the others would run it again if claims were broken.
			ran := func(p time.Time) bool {
				mu.Lock()
				defer mu.Unlock()
				return runs[p] > 0
			}
			for k := 0; k <= 5; k++ {
				p := base.Add(time.Duration(k) * time.Minute)
				clock.Store(p.UnixNano())
				for deadline := time.Now().Add(10 * time.Second); !ran(p) && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				time.Sleep(20 * time.Millisecond)
			}
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

// A weekly period claimed by a replica that died is run by another once
// the claim's lease has expired.
func TestSchedulerTakesOverDeadClaim(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		week := arena.WeekStart(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
		var clock atomic.Int64
		clock.Store(week.Add(time.Hour).UnixNano())
		now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
		db.Now = now
		if ok, _ := db.ClaimJob(context.Background(), "cohort-start", week, "dead"); !ok {
			t.Fatal("pre-claim failed")
		}
		var runs atomic.Int32
		m := metrics.New()
		s := &jobs.Scheduler{Store: db, Tick: time.Millisecond, Now: now, Metrics: m, Jobs: []jobs.Job{{Name: "cohort-start", Schedule: jobs.Weekly(0),
			Run: func(context.Context, time.Time) error { runs.Add(1); return nil }}}}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { s.Run(ctx); close(done) }()
		time.Sleep(30 * time.Millisecond)
		if runs.Load() != 0 {
			t.Fatal("ran a period another replica holds")
		}
		clock.Store(week.Add(time.Hour + store.JobLease + jobs.RetryClaim + time.Second).UnixNano())
		for i := 0; i < 200 && runs.Load() == 0; i++ {
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		cancel()
		<-done
		if runs.Load() != 1 {
			t.Fatalf("dead claim run %d times, want 1", runs.Load())
		}
		job := map[string]string{"job": "cohort-start"}
		if tk, ok := m.Value("arena_job_takeovers_total", job), m.Value("arena_job_runs_total", map[string]string{"job": "cohort-start", "result": "ok"}); tk != 1 || ok != 1 {
			t.Errorf("metrics: %v takeovers, %v successful runs; want 1 and 1", tk, ok)
		}
	})
}

// A period another replica holds is asked for again only after
// RetryClaim, but the next period is claimed as soon as it starts (a
// replica restarted after a crash must not sit out a minute of a job that
// runs every few seconds).
func TestNextPeriodClaimedAtOnce(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	start := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	var clock atomic.Int64
	clock.Store(start.UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()).UTC() }
	db.Now = now
	if ok, _ := db.ClaimJob(context.Background(), "relay", start, "dead"); !ok {
		t.Fatal("pre-claim failed")
	}
	var runs atomic.Int32
	s := &jobs.Scheduler{Store: db, Tick: time.Millisecond, Now: now, Jobs: []jobs.Job{{Name: "relay", Schedule: jobs.Every(15 * time.Second),
		Run: func(context.Context, time.Time) error { runs.Add(1); return nil }}}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { s.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	time.Sleep(30 * time.Millisecond)
	if runs.Load() != 0 {
		t.Fatal("ran a period another replica holds")
	}
	clock.Store(start.Add(15 * time.Second).UnixNano()) // well within RetryClaim
	for i := 0; i < 200 && runs.Load() == 0; i++ {
		time.Sleep(5 * time.Millisecond)
	}
	if runs.Load() != 1 {
		t.Fatalf("the next period ran %d times, want 1", runs.Load())
	}
}
