package store

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.HumanStore = (*DB)(nil)

// dateText writes a date as the table stores it; the zero time is "".
func dateText(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.DateOnly)
}

func parseDateText(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.DateOnly, s)
}

// ReplaceHumanForecasts implements arena.HumanStore: a delete and batched
// inserts in one transaction.
func (d *DB) ReplaceHumanForecasts(ctx context.Context, due time.Time, group string, rows []arena.HumanForecast) error {
	if due.IsZero() || group == "" {
		return arena.Errorf(arena.EINVALID, "store: human forecasts need a due date and a group")
	}
	dueS := dateText(due)
	for _, r := range rows {
		if dateText(r.Due) != dueS || r.Group != group {
			return arena.Errorf(arena.EINVALID, "store: human forecast of %s/%s in the set %s/%s", dateText(r.Due), r.Group, dueS, group)
		}
		if math.IsNaN(r.Forecast) || r.Forecast < 0 || r.Forecast > 1 {
			return arena.Errorf(arena.EINVALID, "store: human forecast %v of %s by %s outside [0,1]", r.Forecast, r.QuestionID, r.UserID)
		}
	}
	// PostgreSQL refuses NUL in text; the texts are shown, never matched.
	clean := func(s string) string { return strings.ReplaceAll(s, "\x00", "") }
	return d.tx(ctx, func(tx *sql.Tx) error {
		d.touch(tx, arena.DomainHumans)
		if _, err := tx.ExecContext(ctx, d.rebind(`DELETE FROM human_forecasts WHERE due_date = ? AND grp = ?`), dueS, group); err != nil {
			return fmt.Errorf("store: replace human forecasts %s/%s: %w", dueS, group, err)
		}
		const chunk = 400
		for lo := 0; lo < len(rows); lo += chunk {
			hi := min(lo+chunk, len(rows))
			vals := make([]string, 0, hi-lo)
			args := make([]any, 0, 10*(hi-lo))
			for _, r := range rows[lo:hi] {
				vals = append(vals, "(?,?,?,?,?,?,?,?,?,?)")
				args = append(args, dueS, group, clean(r.Source), clean(r.QuestionID), dateText(r.ResolutionDate), clean(r.UserID),
					r.Forecast, clean(r.Reasoning), clean(r.Searches), clean(r.ConsultedURLs))
			}
			if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO human_forecasts (due_date, grp, source, question_id, resolution_date, user_id,
				forecast, reasoning, searches, consulted_urls) VALUES `+strings.Join(vals, ",")), args...); err != nil {
				return fmt.Errorf("store: replace human forecasts %s/%s: %w", dueS, group, err)
			}
		}
		return nil
	})
}

// HumanForecasts implements arena.HumanStore.
func (d *DB) HumanForecasts(ctx context.Context, due time.Time) ([]arena.HumanForecast, error) {
	dueS := dateText(due)
	rows, err := d.r().QueryContext(ctx, d.rebind(`SELECT grp, source, question_id, resolution_date, user_id, forecast, reasoning, searches, consulted_urls
		FROM human_forecasts WHERE due_date = ? ORDER BY grp, source, question_id, resolution_date, user_id`), dueS)
	if err != nil {
		return nil, fmt.Errorf("store: human forecasts %s: %w", dueS, err)
	}
	defer rows.Close()
	var out []arena.HumanForecast
	for rows.Next() {
		f := arena.HumanForecast{Due: due.UTC().Truncate(24 * time.Hour)}
		var rd string
		if err := rows.Scan(&f.Group, &f.Source, &f.QuestionID, &rd, &f.UserID, &f.Forecast, &f.Reasoning, &f.Searches, &f.ConsultedURLs); err != nil {
			return nil, fmt.Errorf("store: human forecasts %s: %w", dueS, err)
		}
		if f.ResolutionDate, err = parseDateText(rd); err != nil {
			return nil, fmt.Errorf("store: human forecasts %s: resolution date: %w", dueS, err)
		}
		out = append(out, f)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: human forecasts %s: %w", dueS, err)
	}
	return out, nil
}

// HumanSets implements arena.HumanStore.
func (d *DB) HumanSets(ctx context.Context) ([]arena.HumanSet, error) {
	rows, err := d.r().QueryContext(ctx, `SELECT due_date, grp, COUNT(*), COUNT(DISTINCT user_id) FROM human_forecasts GROUP BY due_date, grp ORDER BY due_date, grp`)
	if err != nil {
		return nil, fmt.Errorf("store: human sets: %w", err)
	}
	defer rows.Close()
	var out []arena.HumanSet
	for rows.Next() {
		var s arena.HumanSet
		var due string
		if err := rows.Scan(&due, &s.Group, &s.Forecasts, &s.Forecasters); err != nil {
			return nil, fmt.Errorf("store: human sets: %w", err)
		}
		if s.Due, err = parseDateText(due); err != nil {
			return nil, fmt.Errorf("store: human sets: due date: %w", err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: human sets: %w", err)
	}
	return out, nil
}
