package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/clock"
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

// Several replicas sharing one database run each period once: every
// virtual minute, the three race for it at once.
func TestReplicasRunEachPeriodOnce(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			url := storetest.URL(t, engine)
			var mu sync.Mutex
			runs := map[time.Time]int{}
			clk := clock.New(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
			ctx := context.Background()
			var replicas []*jobs.Scheduler
			for i := 0; i < 3; i++ {
				db, err := store.Open(ctx, url)
				if err != nil {
					t.Fatal(err)
				}
				defer db.Close()
				replicas = append(replicas, &jobs.Scheduler{Store: db, Owner: string(rune('a' + i)), Now: clk.Now,
					Jobs: []jobs.Job{{Name: "sync", Schedule: jobs.Every(time.Minute), Run: func(ctx context.Context, p time.Time) error {
						mu.Lock()
						runs[p]++
						mu.Unlock()
						return nil
					}}}})
			}
			for k := 0; k <= 5; k++ {
				clk.Set(clk.Now().Add(time.Minute))
				var g errgroup.Group
				for _, s := range replicas {
					g.Go(func() error { return s.RunDue(ctx) })
				}
				if err := g.Wait(); err != nil {
					t.Fatal(err)
				}
				// A second pass in the same minute runs nothing again.
				for _, s := range replicas {
					if err := s.RunDue(ctx); err != nil {
						t.Fatal(err)
					}
				}
			}
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
// the claim's lease has expired, and not before.
func TestSchedulerTakesOverDeadClaim(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		week := arena.WeekStart(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC))
		clk := clock.New(week.Add(time.Hour))
		db.Now = clk.Now
		ctx := context.Background()
		if ok, _ := db.ClaimJob(ctx, "cohort-start", week, "dead"); !ok {
			t.Fatal("pre-claim failed")
		}
		runs := 0
		m := metrics.New()
		s := &jobs.Scheduler{Store: db, Now: clk.Now, Metrics: m, Jobs: []jobs.Job{{Name: "cohort-start", Schedule: jobs.Weekly(0),
			Run: func(context.Context, time.Time) error { runs++; return nil }}}}
		for _, at := range []time.Duration{0, jobs.RetryClaim / 2, store.JobLease} {
			clk.Set(week.Add(time.Hour + at))
			if err := s.RunDue(ctx); err != nil || runs != 0 {
				t.Fatalf("at +%s: ran a period another replica holds (%d runs, err %v)", at, runs, err)
			}
		}
		clk.Set(week.Add(time.Hour + store.JobLease + jobs.RetryClaim + time.Second))
		for range 2 {
			if err := s.RunDue(ctx); err != nil {
				t.Fatal(err)
			}
		}
		if runs != 1 {
			t.Fatalf("dead claim run %d times, want 1", runs)
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
	clk := clock.New(start)
	db.Now = clk.Now
	ctx := context.Background()
	if ok, _ := db.ClaimJob(ctx, "relay", start, "dead"); !ok {
		t.Fatal("pre-claim failed")
	}
	runs := 0
	s := &jobs.Scheduler{Store: db, Now: clk.Now, Jobs: []jobs.Job{{Name: "relay", Schedule: jobs.Every(15 * time.Second),
		Run: func(context.Context, time.Time) error { runs++; return nil }}}}
	if err := s.RunDue(ctx); err != nil || runs != 0 {
		t.Fatalf("ran a period another replica holds (%d runs, err %v)", runs, err)
	}
	clk.Set(start.Add(15 * time.Second)) // well within RetryClaim
	if err := s.RunDue(ctx); err != nil || runs != 1 {
		t.Fatalf("the next period ran %d times (err %v), want 1", runs, err)
	}
}

// Run, on the wall clock's ticks, runs jobs side by side: a slow job
// delays no other and never overlaps itself, and Run returns once the
// running jobs have seen the cancellation.
func TestRunRunsJobsSideBySide(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	start := time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)
	clk := clock.New(start)
	slowStarted := make(chan struct{})
	var slowRuns atomic.Int32
	fastRan := make(chan time.Time, 2)
	s := &jobs.Scheduler{Store: db, Tick: time.Millisecond, Now: clk.Now, Logger: slog.New(slog.DiscardHandler), Jobs: []jobs.Job{
		{Name: "slow", Schedule: jobs.Every(time.Second), Run: func(ctx context.Context, _ time.Time) error {
			if slowRuns.Add(1) == 1 {
				close(slowStarted)
			}
			<-ctx.Done() // holds its job until shutdown
			return ctx.Err()
		}},
		{Name: "fast", Schedule: jobs.Every(time.Second), Run: func(_ context.Context, p time.Time) error { fastRan <- p; return nil }},
	}}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	<-slowStarted
	if p := <-fastRan; !p.Equal(start) {
		t.Fatalf("fast ran for %s", p)
	}
	// The next period: fast runs again while slow, still running, waits.
	clk.Set(start.Add(time.Second))
	if p := <-fastRan; !p.Equal(start.Add(time.Second)) {
		t.Fatalf("fast ran for %s", p)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := slowRuns.Load(); n != 1 {
		t.Fatalf("the slow job overlapped itself: %d runs", n)
	}
	runs, err := db.JobRuns(context.Background(), "slow")
	if err != nil || len(runs) != 1 || !runs[0].Finished {
		t.Fatalf("the slow job's run is not recorded as finished at shutdown: %+v, %v", runs, err)
	}
}

// failingClaims is a job store whose claims fail.
type failingClaims struct{ arena.JobStore }

func (failingClaims) ClaimJob(context.Context, string, time.Time, string) (bool, error) {
	return false, errors.New("database unreachable")
}

// A claim that fails is RunDue's error, runs nothing, and is asked again
// at the next call.
func TestRunDueReportsClaimErrors(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	runs := 0
	s := &jobs.Scheduler{Store: failingClaims{db}, Logger: slog.New(slog.DiscardHandler), Now: clock.New(time.Date(2026, 11, 25, 0, 0, 0, 0, time.UTC)).Now,
		Jobs: []jobs.Job{{Name: "sync", Schedule: jobs.Every(time.Minute), Run: func(context.Context, time.Time) error { runs++; return nil }}}}
	for range 2 {
		if err := s.RunDue(context.Background()); err == nil || !strings.Contains(err.Error(), "database unreachable") || runs != 0 {
			t.Fatalf("RunDue: %v, %d runs; want the claim's error and none", err, runs)
		}
	}
}
