package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// SaveTrace implements arena.TraceStore.
func (d *DB) SaveTrace(ctx context.Context, t *arena.ForecastTrace) error {
	created := t.CreatedAt
	if created.IsZero() {
		created = time.Now()
	}
	_, err := d.exec(ctx, []arena.Domain{arena.DomainTraces}, `INSERT INTO forecast_traces (round_id, agent, agent_id, submitted, failure, calls, cached_calls,
		input_tokens, output_tokens, cost_micros, billed_micros, billed_calls, latency_ms, trace, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
		ON CONFLICT (round_id, agent) DO UPDATE SET agent_id = excluded.agent_id, submitted = excluded.submitted, failure = excluded.failure,
		calls = excluded.calls, cached_calls = excluded.cached_calls, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
		cost_micros = excluded.cost_micros, billed_micros = excluded.billed_micros, billed_calls = excluded.billed_calls, latency_ms = excluded.latency_ms, trace = excluded.trace, created_at = excluded.created_at`,
		t.RoundID, t.Agent, t.AgentID, t.Submitted, t.Failure, t.Calls, t.CachedCalls, t.InputTokens, t.OutputTokens, int64(t.Cost),
		int64(t.Billed), t.BilledCalls, t.LatencyMS, string(t.Trace), created.UnixMicro())
	if err != nil {
		return fmt.Errorf("store: save trace of %s in round %d: %w", t.Agent, t.RoundID, err)
	}
	return nil
}

const traceColumns = `round_id, agent, agent_id, submitted, failure, calls, cached_calls, input_tokens, output_tokens,
	cost_micros, billed_micros, billed_calls, latency_ms, trace, created_at`

func scanTrace(sc scanner) (arena.ForecastTrace, error) {
	var t arena.ForecastTrace
	var cost, billed, created int64
	var trace string
	err := sc.Scan(&t.RoundID, &t.Agent, &t.AgentID, &t.Submitted, &t.Failure, &t.Calls, &t.CachedCalls, &t.InputTokens, &t.OutputTokens,
		&cost, &billed, &t.BilledCalls, &t.LatencyMS, &trace, &created)
	t.Cost, t.Billed, t.Trace, t.CreatedAt = arena.Micros(cost), arena.Micros(billed), []byte(trace), time.UnixMicro(created).UTC()
	return t, err
}

// Trace implements arena.TraceStore.
func (d *DB) Trace(ctx context.Context, roundID uint64, agent string) (*arena.ForecastTrace, error) {
	t, err := scanTrace(d.r().QueryRowContext(ctx, d.rebind(`SELECT `+traceColumns+` FROM forecast_traces WHERE round_id = ? AND agent = ?`), roundID, agent))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, arena.Errorf(arena.ENOTFOUND, "no trace of %s in round %d", agent, roundID)
	}
	if err != nil {
		return nil, fmt.Errorf("store: trace of %s in round %d: %w", agent, roundID, err)
	}
	return &t, nil
}

// RoundTraces implements arena.TraceStore.
func (d *DB) RoundTraces(ctx context.Context, roundID uint64) ([]arena.ForecastTrace, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT `+traceColumns+` FROM forecast_traces WHERE round_id = ? ORDER BY agent`), []any{roundID}, scanTrace)
	if err != nil {
		return nil, fmt.Errorf("store: traces of round %d: %w", roundID, err)
	}
	return out, nil
}

// TraceCosts implements arena.TraceStore.
func (d *DB) TraceCosts(ctx context.Context) ([]arena.AgentCost, error) {
	rows, err := d.r().QueryContext(ctx, `SELECT agent, COUNT(*), SUM(calls), SUM(cached_calls), SUM(cost_micros), SUM(billed_micros), SUM(billed_calls) FROM forecast_traces GROUP BY agent ORDER BY agent`)
	if err != nil {
		return nil, fmt.Errorf("store: trace costs: %w", err)
	}
	defer rows.Close()
	var out []arena.AgentCost
	for rows.Next() {
		var c arena.AgentCost
		var cost, billed int64
		if err := rows.Scan(&c.Agent, &c.Rounds, &c.Calls, &c.CachedCalls, &cost, &billed, &c.BilledCalls); err != nil {
			return nil, fmt.Errorf("store: trace costs: %w", err)
		}
		c.Cost, c.Billed = arena.Micros(cost), arena.Micros(billed)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: trace costs: %w", err)
	}
	return out, nil
}

// SaveBacktest implements arena.BacktestStore, in one transaction.
func (d *DB) SaveBacktest(ctx context.Context, rows []arena.BacktestForecast) error {
	if len(rows) == 0 {
		return nil
	}
	return d.tx(ctx, func(tx *sql.Tx) error {
		d.touch(tx, arena.DomainBacktest)
		const chunk = 500
		for lo := 0; lo < len(rows); lo += chunk {
			hi := min(lo+chunk, len(rows))
			vals := make([]string, 0, hi-lo)
			args := make([]any, 0, 10*(hi-lo))
			for _, r := range rows[lo:hi] {
				if r.Outcome != 0 && r.Outcome != 1 || r.Forecast > 10000 {
					return arena.Errorf(arena.EINVALID, "store: backtest row %s/%d: forecast %d outcome %d", r.Agent, r.MarketID, r.Forecast, r.Outcome)
				}
				created := r.CreatedAt
				if created.IsZero() {
					created = time.Now()
				}
				vals = append(vals, "(?,?,?,?,?,?,?,?,?,?)")
				args = append(args, r.Agent, r.MarketID, r.Round, r.SourceID, r.Category, r.Event, int(r.Forecast), r.Benchmark, int(r.Outcome), created.UnixMicro())
			}
			_, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO backtest_forecasts (agent, market_id, round_key, source_id, category, event,
				forecast_bps, benchmark, outcome, created_at) VALUES `+strings.Join(vals, ",")+`
				ON CONFLICT (agent, market_id) DO UPDATE SET round_key = excluded.round_key, source_id = excluded.source_id,
				category = excluded.category, event = excluded.event, forecast_bps = excluded.forecast_bps, benchmark = excluded.benchmark,
				outcome = excluded.outcome, created_at = excluded.created_at`), args...)
			if err != nil {
				return fmt.Errorf("store: save backtest: %w", err)
			}
		}
		return nil
	})
}

// BacktestForecasts implements arena.BacktestStore.
func (d *DB) BacktestForecasts(ctx context.Context) ([]arena.BacktestForecast, error) {
	rows, err := d.r().QueryContext(ctx, `SELECT agent, market_id, round_key, source_id, category, event, forecast_bps, benchmark, outcome, created_at
		FROM backtest_forecasts ORDER BY agent, round_key, source_id`)
	if err != nil {
		return nil, fmt.Errorf("store: backtest forecasts: %w", err)
	}
	defer rows.Close()
	var out []arena.BacktestForecast
	for rows.Next() {
		var r arena.BacktestForecast
		var f, o int
		var b sql.NullFloat64
		var created int64
		if err := rows.Scan(&r.Agent, &r.MarketID, &r.Round, &r.SourceID, &r.Category, &r.Event, &f, &b, &o, &created); err != nil {
			return nil, fmt.Errorf("store: backtest forecasts: %w", err)
		}
		r.Forecast, r.Outcome, r.CreatedAt = uint16(f), int8(o), time.UnixMicro(created).UTC()
		if b.Valid {
			v := b.Float64
			r.Benchmark = &v
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
