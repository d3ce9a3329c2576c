package jobs_test

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// A failing run is counted as an error with its duration, and a panicking
// one is recovered, recorded as failed and counted the same way; neither
// sets the last-success time.
func TestSchedulerCountsFailures(t *testing.T) {
	db := storetest.Open(t, "sqlite")
	m := metrics.New()
	fail := func(panics bool) func(context.Context, time.Time) error {
		return func(context.Context, time.Time) error {
			if panics {
				panic("boom at postgres://u:pw@h/x")
			}
			return errors.New("upstream down")
		}
	}
	s := &jobs.Scheduler{Store: db, Logger: slog.New(slog.DiscardHandler), Metrics: m, Jobs: []jobs.Job{
		{Name: "broken", Schedule: jobs.Every(time.Hour), Run: fail(false)},
		{Name: "panicky", Schedule: jobs.Every(time.Hour), Run: fail(true)},
	}}
	err := s.RunDue(context.Background())
	if err == nil || !strings.Contains(err.Error(), "upstream down") || !strings.Contains(err.Error(), "panicked") {
		t.Fatalf("RunDue: %v, want both failures", err)
	}
	for _, job := range []string{"broken", "panicky"} {
		l := map[string]string{"job": job}
		if e, ok, d, last := m.Value("arena_job_runs_total", map[string]string{"job": job, "result": "error"}),
			m.Value("arena_job_runs_total", map[string]string{"job": job, "result": "ok"}),
			m.Value("arena_job_duration_seconds", l), m.Value("arena_job_last_success_timestamp_seconds", l); e != 1 || ok != 0 || d != 1 || last != 0 {
			t.Errorf("%s: %v errors, %v ok, %v durations, last success %v", job, e, ok, d, last)
		}
	}
	runs, err := db.JobRuns(context.Background(), "panicky")
	if err != nil || len(runs) != 1 || !runs[0].Finished || runs[0].Error == "" {
		t.Fatalf("panicky run recorded as %+v (%v)", runs, err)
	}
	if strings.Contains(runs[0].Error, "pw@") {
		t.Errorf("recorded panic keeps the password: %s", runs[0].Error)
	}
}
