// Package jobs runs the scheduled work of `arena serve`. Each run
// of a job is claimed through a unique (job, period) row in the store, so any
// number of replicas sharing one database run every period exactly once.
package jobs

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/redact"
)

// Schedule maps an instant to the period it falls in and says whether the
// period's run is due yet.
type Schedule interface {
	Period(now time.Time) (start time.Time, due bool)
}

// Every runs once per interval, periods aligned to the Unix epoch.
type Every time.Duration

// Period implements Schedule.
func (e Every) Period(now time.Time) (time.Time, bool) {
	return now.UTC().Truncate(time.Duration(e)), true
}

// Weekly runs once a week at offset after Sunday 00:00 UTC.
type Weekly time.Duration

// Period implements Schedule.
func (w Weekly) Period(now time.Time) (time.Time, bool) {
	start := arena.WeekStart(now).Add(time.Duration(w))
	return start, !now.Before(start)
}

// Job is one named piece of scheduled work.
type Job struct {
	Name     string
	Schedule Schedule
	Run      func(ctx context.Context, period time.Time) error
}

// Periodic is a job run once per period of length every (see Every).
func Periodic(name string, every time.Duration, run func(ctx context.Context, period time.Time) error) Job {
	return Job{Name: name, Schedule: Every(every), Run: run}
}

// Scheduler polls its jobs and runs the ones whose period it claims.
type Scheduler struct {
	Store arena.JobStore
	Jobs  []Job
	// Tick is how often due periods are checked (default 1 s).
	Tick time.Duration
	// Owner identifies this replica in job_runs.
	Owner  string
	Now    func() time.Time
	Logger *slog.Logger
	// Metrics counts runs, durations, failures and takeovers (may be nil).
	Metrics *metrics.Metrics

	initOnce sync.Once
	mu       sync.Mutex
	done     map[string]time.Time // last period handled locally, per job
	nextTry  map[string]time.Time // when to ask again for a period held elsewhere
	held     map[string]time.Time // that period: a new period is asked for at once
}

// RetryClaim is how often a replica asks again for a period another
// replica holds, so a period whose claimant died is taken over once its
// lease (store.JobLease) expires.
const RetryClaim = time.Minute

// Run blocks until ctx is cancelled, then waits for running jobs to finish
// (not to be called beside RunDue on the same scheduler).
// Every tick it claims the due periods (see RunDue) and runs each claimed
// job in its own goroutine, so a slow job delays none of the others.
func (s *Scheduler) Run(ctx context.Context) error {
	s.init()
	var wg sync.WaitGroup
	t := time.NewTicker(s.Tick)
	defer t.Stop()
	running := map[string]bool{}
	for {
		for _, j := range s.Jobs {
			s.mu.Lock()
			busy := running[j.Name]
			s.mu.Unlock()
			if busy {
				continue // a slow run keeps its job busy; it never overlaps itself
			}
			period, ok, err := s.claimDue(ctx, j)
			if err != nil {
				s.Logger.Error("claim job", "job", j.Name, "period", period, "err", err)
			}
			if !ok {
				continue
			}
			s.mu.Lock()
			running[j.Name] = true
			s.mu.Unlock()
			wg.Add(1)
			go func(j Job, period time.Time) {
				defer wg.Done()
				s.execute(ctx, j, period)
				s.mu.Lock()
				running[j.Name] = false
				s.mu.Unlock()
			}(j, period)
		}
		select {
		case <-ctx.Done():
			wg.Wait()
			return nil
		case <-t.C:
		}
	}
}

// RunDue runs, one after another in the order of Jobs, every job whose
// period at Now is due and not yet handled by this scheduler, claimed as
// Run claims it, and returns when they have finished: the claims' and
// runs' errors joined (each run's is also recorded and logged as Run
// does). A program that moves its own clock (the demo, tests) calls it
// after each move instead of running Run on the wall clock's ticks. A
// scheduler runs either Run or RunDue, one call at a time.
func (s *Scheduler) RunDue(ctx context.Context) error {
	s.init()
	var errs []error
	for _, j := range s.Jobs {
		period, ok, err := s.claimDue(ctx, j)
		if err != nil {
			errs = append(errs, fmt.Errorf("claim job %s, period %s: %w", j.Name, period.Format(time.RFC3339), err))
		}
		if ok {
			if err := s.execute(ctx, j, period); err != nil {
				errs = append(errs, fmt.Errorf("job %s, period %s: %w", j.Name, period.Format(time.RFC3339), err))
			}
		}
		if err := ctx.Err(); err != nil {
			return errors.Join(append(errs, err)...)
		}
	}
	return errors.Join(errs...)
}

func (s *Scheduler) init() {
	s.initOnce.Do(func() {
		if s.Tick <= 0 {
			s.Tick = time.Second
		}
		if s.Now == nil {
			s.Now = time.Now
		}
		if s.Logger == nil {
			s.Logger = slog.Default()
		}
		if s.Owner == "" {
			host, _ := os.Hostname()
			s.Owner = fmt.Sprintf("%s/%d", host, os.Getpid())
		}
		s.done, s.nextTry, s.held = map[string]time.Time{}, map[string]time.Time{}, map[string]time.Time{}
	})
}

// claimDue reports the period of j due now that this replica has claimed;
// false when none is due, this replica handled it already, another
// replica holds it (asked again after RetryClaim, or at once for the next
// period), or the claim failed (the error; claimed again next time).
func (s *Scheduler) claimDue(ctx context.Context, j Job) (time.Time, bool, error) {
	now := s.Now()
	period, due := j.Schedule.Period(now)
	if !due || s.done[j.Name].Equal(period) || (now.Before(s.nextTry[j.Name]) && s.held[j.Name].Equal(period)) {
		return period, false, nil
	}
	s.done[j.Name] = period
	ok, takeover, err := s.claim(ctx, j.Name, period)
	if err != nil {
		if ctx.Err() != nil {
			return period, false, nil // shutting down
		}
		delete(s.done, j.Name) // claim again next time
		return period, false, err
	}
	if !ok {
		s.Logger.Debug("job claimed elsewhere", "job", j.Name, "period", period)
		delete(s.done, j.Name)
		s.nextTry[j.Name], s.held[j.Name] = now.Add(RetryClaim), period
		return period, false, nil
	}
	if takeover {
		s.Logger.Warn("job period taken over from an expired claim", "job", j.Name, "period", period)
		s.Metrics.JobTakeover(j.Name)
	}
	return period, true, nil
}

// execute runs a claimed period and records its outcome, even when
// shutting down.
func (s *Scheduler) execute(ctx context.Context, j Job, period time.Time) error {
	start := time.Now()
	err := s.runJob(ctx, j, period)
	if ferr := s.Store.FinishJob(context.WithoutCancel(ctx), j.Name, period, err); ferr != nil {
		s.Logger.Error("finish job", "job", j.Name, "err", ferr)
	}
	s.Metrics.JobRun(j.Name, time.Since(start), err, time.Now())
	if err != nil {
		s.Logger.Error("job failed", "job", j.Name, "period", period, "err", err, "took", time.Since(start))
	} else {
		s.Logger.Info("job done", "job", j.Name, "period", period, "took", time.Since(start))
	}
	return err
}

// takeoverClaimer is a JobStore that also says when a claim took a period
// over from an expired lease (store.DB does).
type takeoverClaimer interface {
	ClaimJobRun(ctx context.Context, name string, period time.Time, owner string) (claimed, takeover bool, err error)
}

func (s *Scheduler) claim(ctx context.Context, name string, period time.Time) (ok, takeover bool, err error) {
	if tc, isTC := s.Store.(takeoverClaimer); isTC {
		return tc.ClaimJobRun(ctx, name, period, s.Owner)
	}
	ok, err = s.Store.ClaimJob(ctx, name, period, s.Owner)
	return ok, false, err
}

// runJob runs one period, turning a panic into the run's error so the
// period is recorded as failed (and the process survives); the panic value
// is redacted, since it is stored and logged.
func (s *Scheduler) runJob(ctx context.Context, j Job, period time.Time) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("job %s panicked: %s", j.Name, redact.String(fmt.Sprint(p)))
			s.Logger.Error("job panicked", "job", j.Name, "stack", redact.String(string(debug.Stack())))
		}
	}()
	return j.Run(ctx, period)
}
