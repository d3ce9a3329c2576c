package trading

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/jobs"
)

// Job names of the trading track in `arena serve`.
const (
	JobCohortStart = "trading-cohort-start"
	JobDecisionRun = "trading-decision-run"
	JobSnapshot    = "trading-snapshot"
	JobSettle      = "trading-settle"
)

// Schedule offsets: cohorts start Sunday 00:00 UTC, decisions run at 00:05,
// snapshots every 10 minutes.
const (
	DecisionOffset = 5 * time.Minute  // Sunday 00:05 UTC
	SnapshotEvery  = 10 * time.Minute // portfolio valuations
	SettleEvery    = time.Hour        // resolution checks
	// DecisionRetryEvery is how often after 00:05 a week's run is resumed:
	// agents whose decision failed retryably, or whose claim was left by a
	// crashed process, are decided then. Agents already done are skipped at
	// the cost of a few queries.
	DecisionRetryEvery = 10 * time.Minute
)

// DecisionSchedule is due every Every from Offset after the start of each
// UTC week until the week ends. The first period is the weekly decision
// run; later ones resume it after a crash or retryable failures, since a
// claimed job period never runs twice.
type DecisionSchedule struct {
	Offset time.Duration
	Every  time.Duration
}

// Period implements jobs.Schedule.
func (d DecisionSchedule) Period(now time.Time) (time.Time, bool) {
	start := arena.WeekStart(now).Add(d.Offset)
	if now.Before(start) {
		return start, false
	}
	every := d.Every
	if every <= 0 {
		every = DecisionRetryEvery
	}
	k := now.Sub(start) / every
	return start.Add(k * every), true
}

// DecidersFunc returns the deciders for a cohort's frozen lineup. Agents
// without a decider are recorded as such and decided by a later run.
type DecidersFunc func(ctx context.Context, c *arena.Cohort) (map[string]Decider, error)

// JobsConfig configures the trading jobs.
type JobsConfig struct {
	// Deciders builds each cohort's deciders (e.g. agent.Factory.Deciders
	// on c.Lineup). Required for the decision job.
	Deciders DecidersFunc
	// Policy for ambiguous markets at settlement (default refund).
	Policy Policy
}

// Jobs returns the scheduled jobs of the trading track for `arena serve`:
// cohort start Sunday 00:00 UTC, the decision run from 00:05 (resumed
// every 10 minutes while any agent of the week is undecided), snapshots
// every 10 minutes and settlement hourly. Every job is idempotent, so a
// period retried after a crash changes nothing twice.
func Jobs(e *Engine, cfg JobsConfig) []Job {
	policy := cfg.Policy
	if policy == "" {
		policy = PolicyRefund
	}
	return []Job{
		{Name: JobCohortStart, Schedule: jobs.Weekly(0), Run: func(ctx context.Context, period time.Time) error {
			if len(e.Lineup) == 0 {
				e.log().Warn("no trading agents configured; no cohort started", "week", arena.WeekStart(period).Format("2006-01-02"))
				return nil
			}
			_, _, err := e.StartCohort(ctx, period)
			return err
		}},
		{Name: JobDecisionRun, Schedule: DecisionSchedule{Offset: DecisionOffset, Every: DecisionRetryEvery},
			Run: func(ctx context.Context, period time.Time) error {
				if cfg.Deciders == nil {
					return errors.New("trading: decision job without deciders")
				}
				// The cohort-start job's period is claimed once; if that run
				// failed, the week would have no cohort. StartCohort is
				// idempotent, so the decision run (retried every 10
				// minutes) makes sure the week's cohort exists first.
				var startErr error
				if len(e.Lineup) > 0 {
					if _, _, err := e.StartCohort(ctx, period); err != nil {
						startErr = err
					}
				}
				_, err := e.RunWeek(ctx, period, cfg.Deciders)
				return errors.Join(startErr, err)
			}},
		{Name: JobSnapshot, Schedule: jobs.Every(SnapshotEvery), Run: func(ctx context.Context, period time.Time) error {
			_, err := e.Snapshot(ctx, period)
			return err
		}},
		{Name: JobSettle, Schedule: jobs.Every(SettleEvery), Run: func(ctx context.Context, period time.Time) error {
			_, err := e.Settle(ctx, e.now(), policy)
			return err
		}},
	}
}

// Job is a jobs.Job (aliased so callers can append the result directly).
type Job = jobs.Job

// RunWeek runs the week's decisions (the week containing now) for every
// active cohort that started by then and still has an undecided agent,
// oldest cohort first. A cohort whose agents are all decided, out of
// attempts or without a decider is skipped without building a frame. Errors of one cohort do
// not stop the others; they are joined.
func (e *Engine) RunWeek(ctx context.Context, now time.Time, deciders DecidersFunc) ([]*RunReport, error) {
	cohorts, err := e.Store.Cohorts(ctx, arena.CohortActive)
	if err != nil {
		return nil, fmt.Errorf("trading: run week: %w", err)
	}
	week := arena.WeekStart(now)
	var reps []*RunReport
	var errs []error
	for i := len(cohorts) - 1; i >= 0; i-- { // Cohorts lists newest first
		c := cohorts[i]
		if c.WeekStart.After(week) {
			continue
		}
		ds, err := deciders(ctx, c)
		if err != nil {
			errs = append(errs, fmt.Errorf("trading: deciders of cohort %d: %w", c.ID, err))
			continue
		}
		pending, err := e.Pending(ctx, c, week, ds)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if pending == 0 {
			continue
		}
		rep, err := e.Run(ctx, c.ID, now, ds)
		if rep != nil {
			reps = append(reps, rep)
		}
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	return reps, errors.Join(errs...)
}

// Pending counts the lineup agents of cohort c still to be decided in the
// week (no decision row, a live or stale claim, or a retryable failure
// with attempts left) that have a decider in ds; nil ds counts every agent.
// An agent without a decider (e.g. its key is missing) does not keep the
// week's run going.
func (e *Engine) Pending(ctx context.Context, c *arena.Cohort, week time.Time, ds map[string]Decider) (int, error) {
	rows, err := e.Store.Decisions(ctx, c.ID)
	if err != nil {
		return 0, fmt.Errorf("trading: decisions of cohort %d: %w", c.ID, err)
	}
	settled := map[string]bool{}
	for _, d := range rows {
		if !d.Week.Equal(week) {
			continue
		}
		if d.Status == arena.DecisionDone || (d.Status == arena.DecisionRetryable && d.Attempts >= e.maxAttempts()) {
			settled[d.AgentID] = true
		}
	}
	n := 0
	for _, l := range c.Lineup {
		if _, ok := ds[l.AgentID]; ds != nil && !ok {
			continue
		}
		if !settled[l.AgentID] {
			n++
		}
	}
	return n, nil
}
