package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.RoundStore = (*DB)(nil)

// CreateRound implements arena.RoundStore; it sets r.ID.
func (d *DB) CreateRound(ctx context.Context, r *arena.Round) error {
	if len(r.Markets) == 0 {
		return arena.Errorf(arena.EINVALID, "store: round without markets")
	}
	rules := string(r.Rules)
	if rules == "" {
		rules = "{}"
	}
	return d.tx(ctx, func(tx *sql.Tx) error {
		var id int64
		err := tx.QueryRowContext(ctx, d.rebind(`INSERT INTO rounds (commit_deadline, reveal_start, reveal_deadline,
			grace_micros, rules, created_at) VALUES (?,?,?,?,?,?) RETURNING id`),
			r.CommitDeadline.UnixMicro(), r.RevealStart.UnixMicro(), r.RevealDeadline.UnixMicro(),
			r.Grace.Microseconds(), rules, r.CreatedAt.UnixMicro()).Scan(&id)
		if err != nil {
			return fmt.Errorf("store: create round: %w", err)
		}
		for i, m := range r.Markets {
			if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO round_markets (round_id, idx, market_id) VALUES (?,?,?)`), id, i, m.MarketID); err != nil {
				return fmt.Errorf("store: create round: market %d: %w", m.MarketID, err)
			}
			r.Markets[i].Index = i
		}
		r.ID = uint64(id)
		d.touch(tx, arena.DomainRounds)
		return nil
	})
}

const roundColumns = `id, commit_deadline, reveal_start, reveal_deadline, grace_micros, rules, created_at, benchmark_at, triggered_at, invalidated`

func scanRound(sc scanner) (*arena.Round, error) {
	var r arena.Round
	var id, cd, rs, rd, grace, created int64
	var rules string
	var bench, trig sql.NullInt64
	if err := sc.Scan(&id, &cd, &rs, &rd, &grace, &rules, &created, &bench, &trig, &r.Invalidated); err != nil {
		return nil, err
	}
	r.ID = uint64(id)
	r.CommitDeadline, r.RevealStart, r.RevealDeadline = time.UnixMicro(cd).UTC(), time.UnixMicro(rs).UTC(), time.UnixMicro(rd).UTC()
	r.Grace, r.Rules, r.CreatedAt = time.Duration(grace)*time.Microsecond, json.RawMessage(rules), time.UnixMicro(created).UTC()
	r.BenchmarkAt, r.TriggeredAt = fromMicros(bench), fromMicros(trig)
	return &r, nil
}

func (d *DB) loadRoundMarkets(ctx context.Context, q queryer, rounds map[uint64]*arena.Round) error {
	if len(rounds) == 0 {
		return nil
	}
	ids := make([]string, 0, len(rounds))
	for id := range rounds {
		ids = append(ids, fmt.Sprint(id))
	}
	rows, err := q.QueryContext(ctx, `SELECT round_id, idx, market_id, benchmark, benchmark_bps, benchmark_time, benchmark_source, outcome
		FROM round_markets WHERE round_id IN (`+strings.Join(ids, ",")+`) ORDER BY round_id, idx`)
	if err != nil {
		return fmt.Errorf("store: round markets: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var m arena.RoundMarket
		var bench sql.NullFloat64
		var bps, btime, outcome sql.NullInt64
		var src string
		if err := rows.Scan(&rid, &m.Index, &m.MarketID, &bench, &bps, &btime, &src, &outcome); err != nil {
			return fmt.Errorf("store: round markets: %w", err)
		}
		if bench.Valid {
			v := bench.Float64
			m.Benchmark = &v
			m.BenchmarkBps = int32(bps.Int64)
		}
		m.BenchmarkTime, m.BenchmarkSource = fromMicros(btime), arena.PriceSource(src)
		if outcome.Valid {
			o := int8(outcome.Int64)
			m.Outcome = &o
		}
		r := rounds[uint64(rid)]
		r.Markets = append(r.Markets, m)
	}
	return rows.Err()
}

// Round implements arena.RoundStore.
func (d *DB) Round(ctx context.Context, id uint64) (*arena.Round, error) {
	return d.round(ctx, d.r(), id)
}

func (d *DB) round(ctx context.Context, q queryer, id uint64) (*arena.Round, error) {
	r, err := scanRound(q.QueryRowContext(ctx, d.rebind(`SELECT `+roundColumns+` FROM rounds WHERE id = ?`), int64(id)))
	if isNoRows(err) {
		return nil, arena.Rejectf(arena.ENOTFOUND, "round_not_found", "round %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: load round %d: %w", id, err)
	}
	if err := d.loadRoundMarkets(ctx, q, map[uint64]*arena.Round{r.ID: r}); err != nil {
		return nil, err
	}
	return r, nil
}

// Rounds implements arena.RoundStore: newest first.
func (d *DB) Rounds(ctx context.Context, f arena.RoundFilter) ([]*arena.Round, error) {
	rows, err := d.r().QueryContext(ctx, `SELECT `+roundColumns+` FROM rounds ORDER BY id DESC`)
	if err != nil {
		return nil, fmt.Errorf("store: list rounds: %w", err)
	}
	var out []*arena.Round
	byID := map[uint64]*arena.Round{}
	for rows.Next() {
		r, err := scanRound(rows)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: list rounds: %w", err)
		}
		if f.Status != "" && r.Status(f.Now) != f.Status {
			continue
		}
		if f.Limit > 0 && len(out) >= f.Limit {
			break
		}
		out = append(out, r)
		byID[r.ID] = r
	}
	if err := rows.Close(); err != nil {
		return nil, err
	}
	return out, d.loadRoundMarkets(ctx, d.r(), byID)
}

// SetBenchmarks implements arena.RoundStore. Benchmarks are recorded once.
func (d *DB) SetBenchmarks(ctx context.Context, roundID uint64, ms []arena.RoundMarket, at time.Time, leaves ...*arena.LogLeaf) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		// Claim the round row first, as SaveRoundResult does: one lock order
		// (rounds, then round_markets) cannot deadlock, and the conditional
		// update lets exactly one of several concurrent captures through,
		// so the stored benchmarks are the ones that get scored.
		res, err := tx.ExecContext(ctx, d.rebind(`UPDATE rounds SET benchmark_at = ? WHERE id = ? AND benchmark_at IS NULL`),
			at.UnixMicro(), int64(roundID))
		if err != nil {
			return fmt.Errorf("store: set benchmarks of round %d: %w", roundID, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return fmt.Errorf("store: set benchmarks of round %d: %w", roundID, err)
		} else if n == 0 {
			if _, err := d.round(ctx, tx, roundID); err != nil {
				return err // not found
			}
			return arena.Errorf(arena.ECONFLICT, "round %d: benchmarks already recorded", roundID)
		}
		r, err := d.round(ctx, tx, roundID)
		if err != nil {
			return err
		}
		if len(ms) != len(r.Markets) {
			return arena.Errorf(arena.EINVALID, "round %d: %d benchmarks for %d markets", roundID, len(ms), len(r.Markets))
		}
		for i, m := range ms {
			var b, bps any
			if m.Benchmark != nil {
				b, bps = *m.Benchmark, m.BenchmarkBps
			}
			if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE round_markets SET benchmark = ?, benchmark_bps = ?, benchmark_time = ?,
				benchmark_source = ? WHERE round_id = ? AND idx = ?`), b, bps, micros(m.BenchmarkTime), string(m.BenchmarkSource), int64(roundID), i); err != nil {
				return fmt.Errorf("store: set benchmark %d of round %d: %w", i, roundID, err)
			}
		}
		d.touch(tx, arena.DomainRounds)
		return d.appendLeaves(ctx, tx, at, leaves)
	})
}

const submissionColumns = `round_id, agent, commit_hash, reasoning_hash, commit_nonce, commit_sig, committed_at,
	predictions, salt, reveal_nonce, reveal_sig, revealed_at, reasoning, commit_sig_deadline, reveal_sig_deadline`

func scanSubmission(sc scanner) (*arena.Submission, error) {
	var s arena.Submission
	var rid, cnonce, committed int64
	var preds, salt, rsig, reasoning sql.NullString
	var rnonce, revealed, cdl, rdl sql.NullInt64
	if err := sc.Scan(&rid, &s.Agent, &s.CommitHash, &s.ReasoningHash, &cnonce, &s.CommitSig, &committed,
		&preds, &salt, &rnonce, &rsig, &revealed, &reasoning, &cdl, &rdl); err != nil {
		return nil, err
	}
	s.CommitSigDeadline, s.RevealSigDeadline = uint64(cdl.Int64), uint64(rdl.Int64)
	s.RoundID, s.CommitNonce, s.CommittedAt = uint64(rid), uint64(cnonce), time.UnixMicro(committed).UTC()
	if preds.Valid {
		if err := json.Unmarshal([]byte(preds.String), &s.Predictions); err != nil {
			return nil, fmt.Errorf("store: predictions of round %d agent %s: %w", rid, s.Agent, err)
		}
		if s.Predictions == nil {
			s.Predictions = []uint16{}
		}
	}
	s.Salt, s.RevealNonce, s.RevealSig, s.RevealedAt, s.Reasoning = salt.String, uint64(rnonce.Int64), rsig.String, fromMicros(revealed), reasoning.String
	return &s, nil
}

// Nonce implements arena.RoundStore: 0 for an agent never seen.
func (d *DB) Nonce(ctx context.Context, agent string) (uint64, error) {
	var n int64
	err := d.r().QueryRowContext(ctx, d.rebind(`SELECT nonce FROM agents WHERE address = ?`), agent).Scan(&n)
	if isNoRows(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("store: nonce of %s: %w", agent, err)
	}
	return uint64(n), nil
}

// Submissions implements arena.RoundStore, ordered by agent.
func (d *DB) Submissions(ctx context.Context, roundID uint64) ([]*arena.Submission, error) {
	return d.submissions(ctx, d.r(), roundID)
}

func (d *DB) submissions(ctx context.Context, q queryer, roundID uint64) ([]*arena.Submission, error) {
	out, err := queryAll(ctx, q, d.rebind(`SELECT `+submissionColumns+` FROM submissions WHERE round_id = ? ORDER BY agent`),
		[]any{int64(roundID)}, func(sc scanner) (*arena.Submission, error) { return scanSubmission(sc) })
	if err != nil {
		return nil, fmt.Errorf("store: submissions of round %d: %w", roundID, err)
	}
	return out, nil
}

// SaveRoundResult implements arena.RoundStore. A round is scored once.
func (d *DB) SaveRoundResult(ctx context.Context, roundID uint64, outcomes []int8, scores []arena.RoundScore, rows []arena.ScoredForecast, at time.Time, leaves ...*arena.LogLeaf) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, d.rebind(`UPDATE rounds SET triggered_at = ? WHERE id = ? AND triggered_at IS NULL`), at.UnixMicro(), int64(roundID))
		if err != nil {
			return fmt.Errorf("store: trigger round %d: %w", roundID, err)
		}
		if k, _ := res.RowsAffected(); k != 1 {
			return arena.Rejectf(arena.ECONFLICT, arena.CodeAlreadyTriggered, "round %d: outcomes already triggered", roundID)
		}
		d.touch(tx, arena.DomainRounds, arena.DomainScores)
		// The caller scored submissions it read before this transaction; a
		// reveal may have committed since. Now that triggered_at is set
		// (and, on PostgreSQL, the round row is locked, which waits for
		// reveals holding it FOR SHARE), no further reveal can be accepted:
		// the scores must match the revealed set exactly, or the caller
		// rescores.
		if len(scores) > 0 {
			if err := d.checkScoredSet(ctx, tx, roundID, scores); err != nil {
				return err
			}
		}
		for i, o := range outcomes {
			if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE round_markets SET outcome = ? WHERE round_id = ? AND idx = ?`), int(o), int64(roundID), i); err != nil {
				return fmt.Errorf("store: outcome %d of round %d: %w", i, roundID, err)
			}
		}
		if err := d.insertRoundScores(ctx, tx, roundID, scores, rows); err != nil {
			return err
		}
		return d.appendLeaves(ctx, tx, at, leaves)
	})
}

// insertRoundScores stores a round's scores and scored forecasts.
func (d *DB) insertRoundScores(ctx context.Context, tx *sql.Tx, roundID uint64, scores []arena.RoundScore, rows []arena.ScoredForecast) error {
	for _, s := range scores {
		var a, ab any
		if s.Alpha != nil {
			a, ab = *s.Alpha, *s.AlphaBps2
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO round_scores (round_id, agent, brier, alpha, brier_bps2, alpha_bps2, scored_markets, benchmarked, forfeit)
				VALUES (?,?,?,?,?,?,?,?,?)`), int64(roundID), s.Agent, s.Brier, a, s.BrierBps2, ab, s.Scored, s.Benchmarked, s.Forfeit); err != nil {
			return fmt.Errorf("store: score of %s in round %d: %w", s.Agent, roundID, err)
		}
	}
	for _, f := range rows {
		var b any
		if f.Benchmark != nil {
			b = *f.Benchmark
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO scored_forecasts (round_id, agent, market_id, category, event, forecast, benchmark, outcome, forfeit)
				VALUES (?,?,?,?,?,?,?,?,?)`), int64(roundID), f.Agent, f.MarketID, f.Category, f.Event, f.Forecast, b, int(f.Outcome), f.Forfeit); err != nil {
			return fmt.Errorf("store: scored forecast of %s in round %d: %w", f.Agent, roundID, err)
		}
	}
	return nil
}

// checkScoredSet: every submission of the round has a score, forfeit
// exactly when it is not revealed.
func (d *DB) checkScoredSet(ctx context.Context, tx *sql.Tx, roundID uint64, scores []arena.RoundScore) error {
	forfeit := make(map[string]bool, len(scores))
	for _, s := range scores {
		forfeit[s.Agent] = s.Forfeit
	}
	rows, err := tx.QueryContext(ctx, d.rebind(`SELECT agent, predictions IS NOT NULL FROM submissions WHERE round_id = ?`), int64(roundID))
	if err != nil {
		return fmt.Errorf("store: submissions of round %d: %w", roundID, err)
	}
	defer rows.Close()
	for rows.Next() {
		var agent string
		var revealed bool
		if err := rows.Scan(&agent, &revealed); err != nil {
			return fmt.Errorf("store: submissions of round %d: %w", roundID, err)
		}
		f, ok := forfeit[agent]
		if !ok || f == revealed {
			return arena.Rejectf(arena.ECONFLICT, arena.CodeRescore, "round %d: submission of %s changed while scoring (revealed %v)", roundID, agent, revealed)
		}
	}
	return rows.Err()
}

// RoundScores implements arena.RoundStore, ordered by agent.
func (d *DB) RoundScores(ctx context.Context, roundID uint64) ([]arena.RoundScore, error) {
	return d.roundScores(ctx, d.r(), roundID)
}

func (d *DB) roundScores(ctx context.Context, q queryer, roundID uint64) ([]arena.RoundScore, error) {
	out, err := queryAll(ctx, q, d.rebind(`SELECT agent, brier, alpha, brier_bps2, alpha_bps2, scored_markets, benchmarked, forfeit
		FROM round_scores WHERE round_id = ? ORDER BY agent`), []any{int64(roundID)}, func(sc scanner) (arena.RoundScore, error) {
		s := arena.RoundScore{RoundID: roundID}
		var a sql.NullFloat64
		var ab sql.NullInt64
		if err := sc.Scan(&s.Agent, &s.Brier, &a, &s.BrierBps2, &ab, &s.Scored, &s.Benchmarked, &s.Forfeit); err != nil {
			return s, err
		}
		if a.Valid {
			v, vb := a.Float64, ab.Int64
			s.Alpha, s.AlphaBps2 = &v, &vb
		}
		return s, nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: scores of round %d: %w", roundID, err)
	}
	return out, nil
}

// ScoredForecasts implements arena.RoundStore: every frozen forecast, by
// round, agent and market.
func (d *DB) ScoredForecasts(ctx context.Context) ([]arena.ScoredForecast, error) {
	rows, err := d.r().QueryContext(ctx, `SELECT f.round_id, f.agent, f.market_id, f.category, f.event, m.source, m.origin,
			f.forecast, f.benchmark, f.outcome, f.forfeit
		FROM scored_forecasts f JOIN markets m ON m.id = f.market_id ORDER BY f.round_id, f.agent, f.market_id`)
	if err != nil {
		return nil, fmt.Errorf("store: scored forecasts: %w", err)
	}
	defer rows.Close()
	var out []arena.ScoredForecast
	for rows.Next() {
		var f arena.ScoredForecast
		var rid int64
		var b sql.NullFloat64
		var o int
		var source, origin string
		if err := rows.Scan(&rid, &f.Agent, &f.MarketID, &f.Category, &f.Event, &source, &origin, &f.Forecast, &b, &o, &f.Forfeit); err != nil {
			return nil, err
		}
		f.RoundID, f.Outcome, f.Venue = uint64(rid), int8(o), arena.VenueOf(source, origin)
		if b.Valid {
			v := b.Float64
			f.Benchmark = &v
		}
		out = append(out, f)
	}
	return out, rows.Err()
}
