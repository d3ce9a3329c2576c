package store

import (
	"context"
	"fmt"
	"time"
)

// JobLease is how long a claimed, unfinished job run is presumed alive. A
// replica killed mid-run leaves its claim behind; after the lease another
// replica may take the period over (every job is idempotent, so a run that
// was merely slow and is repeated changes nothing twice).
const JobLease = 30 * time.Minute

// ClaimJob implements arena.JobStore: the primary key (job, period) lets
// exactly one claimant win, on either engine; a claim left unfinished past
// JobLease is taken over by a compare-and-set on its start time.
func (d *DB) ClaimJob(ctx context.Context, name string, period time.Time, owner string) (bool, error) {
	ok, _, err := d.ClaimJobRun(ctx, name, period, owner)
	return ok, err
}

// ClaimJobRun is ClaimJob that also says whether the claim took the period
// over from a claimant whose lease expired (a replica that died mid-run).
func (d *DB) ClaimJobRun(ctx context.Context, name string, period time.Time, owner string) (claimed, takeover bool, err error) {
	now := d.Now()
	r, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO job_runs (job, period, owner, started_at) VALUES (?,?,?,?)
		ON CONFLICT (job, period) DO NOTHING`), name, period.UnixMicro(), owner, now.UnixMicro())
	if err != nil {
		return false, false, fmt.Errorf("store: claim job %s at %s: %w", name, period.Format(time.RFC3339), err)
	}
	if n, err := r.RowsAffected(); err != nil || n == 1 {
		return n == 1, false, err
	}
	r, err = d.db.ExecContext(ctx, d.rebind(`UPDATE job_runs SET owner = ?, started_at = ? WHERE job = ? AND period = ?
		AND finished_at IS NULL AND started_at < ?`), owner, now.UnixMicro(), name, period.UnixMicro(), now.Add(-JobLease).UnixMicro())
	if err != nil {
		return false, false, fmt.Errorf("store: take over job %s at %s: %w", name, period.Format(time.RFC3339), err)
	}
	n, err := r.RowsAffected()
	return n == 1, n == 1, err
}

// FinishJob implements arena.JobStore.
func (d *DB) FinishJob(ctx context.Context, name string, period time.Time, runErr error) error {
	var msg any
	if runErr != nil {
		msg = runErr.Error()
	}
	_, err := d.db.ExecContext(ctx, d.rebind(`UPDATE job_runs SET finished_at = ?, error = ? WHERE job = ? AND period = ?`),
		d.Now().UnixMicro(), msg, name, period.UnixMicro())
	if err != nil {
		return fmt.Errorf("store: finish job %s: %w", name, err)
	}
	return nil
}

// JobRun is one recorded run of a scheduled job.
type JobRun struct {
	Job      string
	Period   time.Time
	Owner    string
	Finished bool
	Error    string
}

// JobRuns lists the recorded runs of a job, oldest first.
func (d *DB) JobRuns(ctx context.Context, name string) ([]JobRun, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT job, period, owner, finished_at IS NOT NULL, COALESCE(error, '') FROM job_runs WHERE job = ? ORDER BY period`), []any{name},
		func(sc scanner) (JobRun, error) {
			var r JobRun
			var p int64
			err := sc.Scan(&r.Job, &p, &r.Owner, &r.Finished, &r.Error)
			r.Period = time.UnixMicro(p).UTC()
			return r, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: job runs of %s: %w", name, err)
	}
	return out, nil
}
