package relay

import (
	"context"
	"time"

	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/retry"
)

// JobName is the relayer's name in the scheduler's job_runs.
const JobName = "chain-relay"

// Job runs the relayer under the scheduler. The run of each period (one
// claim, so among replicas one relays at a time) makes a pass every poll
// until the period is over: commits reach the chain within seconds, as
// they must before the commit deadline, without a claim per pass. The run
// reports the last pass's error.
func Job(r *Relayer, period, poll time.Duration) jobs.Job {
	return jobs.Job{Name: JobName, Schedule: jobs.Every(period), Run: func(ctx context.Context, start time.Time) error {
		end := start.Add(period)
		for {
			err := r.Pass(ctx)
			if err != nil {
				r.Logger.Warn("chain relay pass", "err", err)
			}
			if retry.Sleep(ctx, poll) != nil {
				return nil
			}
			if !r.Now().Add(poll).Before(end) {
				return err
			}
		}
	}}
}
