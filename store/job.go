package store

import (
	"context"
	"fmt"
	"time"
)

// ClaimJob implements arena.JobStore: the primary key (job, period) lets
// exactly one claimant win, on either engine.
func (d *DB) ClaimJob(ctx context.Context, name string, period time.Time, owner string) (bool, error) {
	r, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO job_runs (job, period, owner, started_at) VALUES (?,?,?,?)
		ON CONFLICT (job, period) DO NOTHING`), name, period.UnixMicro(), owner, d.Now().UnixMicro())
	if err != nil {
		return false, fmt.Errorf("store: claim job %s at %s: %w", name, period.Format(time.RFC3339), err)
	}
	n, err := r.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: claim job %s: %w", name, err)
	}
	return n == 1, nil
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
	rows, err := d.db.QueryContext(ctx, d.rebind(`SELECT job, period, owner, finished_at IS NOT NULL, COALESCE(error, '') FROM job_runs WHERE job = ? ORDER BY period`), name)
	if err != nil {
		return nil, fmt.Errorf("store: job runs of %s: %w", name, err)
	}
	defer rows.Close()
	var out []JobRun
	for rows.Next() {
		var r JobRun
		var p int64
		if err := rows.Scan(&r.Job, &p, &r.Owner, &r.Finished, &r.Error); err != nil {
			return nil, err
		}
		r.Period = time.UnixMicro(p).UTC()
		out = append(out, r)
	}
	return out, rows.Err()
}
