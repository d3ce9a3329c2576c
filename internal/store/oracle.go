package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/forecast-arena/arena"
)

const oracleColumns = `id, market_id, seq, status, evidence, verdict, policy, final, arbiter, reason, created_at, decided_at`

func scanOracle(sc scanner) (arena.OracleResolution, error) {
	var r arena.OracleResolution
	var evidence, verdict, policy, final string
	var created int64
	var decided sql.NullInt64
	if err := sc.Scan(&r.ID, &r.MarketID, &r.Seq, &r.Status, &evidence, &verdict, &policy, &final, &r.Arbiter, &r.Reason, &created, &decided); err != nil {
		return r, err
	}
	for _, f := range []struct {
		src string
		dst any
	}{{evidence, &r.Evidence}, {verdict, &r.Verdict}, {policy, &r.Policy}} {
		if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
			return r, fmt.Errorf("store: oracle resolution %d: %w", r.ID, err)
		}
	}
	r.Final = arena.OracleDecision(final)
	r.CreatedAt = time.UnixMicro(created).UTC()
	r.DecidedAt = fromMicros(decided)
	return r, nil
}

// latestOracle returns a market's latest resolution, or nil.
func (d *DB) latestOracle(ctx context.Context, q queryer, marketID int64) (*arena.OracleResolution, error) {
	r, err := scanOracle(q.QueryRowContext(ctx, d.rebind(`SELECT `+oracleColumns+` FROM oracle_resolutions WHERE market_id = ? ORDER BY seq DESC LIMIT 1`), marketID))
	if isNoRows(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("store: oracle resolution of market %d: %w", marketID, err)
	}
	return &r, nil
}

func (d *DB) insertOracle(ctx context.Context, tx *sql.Tx, r *arena.OracleResolution) error {
	d.touch(tx, arena.DomainOracle)
	ev, err := json.Marshal(r.Evidence)
	if err != nil {
		return err
	}
	vd, err := json.Marshal(r.Verdict)
	if err != nil {
		return err
	}
	pol, err := json.Marshal(r.Policy)
	if err != nil {
		return err
	}
	q := `INSERT INTO oracle_resolutions (market_id, seq, status, architecture, decision, composite, final, evidence, verdict, policy,
		arbiter, reason, created_at, decided_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`
	args := []any{r.MarketID, r.Seq, r.Status, r.Verdict.Architecture, string(r.Verdict.Decision), r.Verdict.Composite, string(r.Final),
		string(ev), string(vd), string(pol), r.Arbiter, r.Reason, r.CreatedAt.UnixMicro(), micros(r.DecidedAt)}
	if d.dialect == postgres {
		if err := tx.QueryRowContext(ctx, d.rebind(q+` RETURNING id`), args...).Scan(&r.ID); err != nil {
			return fmt.Errorf("store: save oracle resolution of market %d: %w", r.MarketID, err)
		}
		return nil
	}
	res, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("store: save oracle resolution of market %d: %w", r.MarketID, err)
	}
	r.ID, err = res.LastInsertId()
	return err
}

// lockMarket reads a market inside tx and, on PostgreSQL, locks its row
// until tx ends (SQLite's write transactions are serialised already): the
// oracle's writes to one market happen one at a time, each seeing the
// last one's result.
func (d *DB) lockMarket(ctx context.Context, tx *sql.Tx, id int64) (*arena.Market, error) {
	q := `SELECT ` + marketColumns + ` FROM markets WHERE id = ?`
	if d.dialect == postgres {
		q += ` FOR UPDATE`
	}
	m, err := scanMarket(tx.QueryRowContext(ctx, d.rebind(q), id))
	if isNoRows(err) {
		return nil, arena.Errorf(arena.ENOTFOUND, "market %d not found", id)
	}
	if err != nil {
		return nil, fmt.Errorf("store: oracle: market %d: %w", id, err)
	}
	return m, nil
}

// disputed reports whether an admin disputed the market's resolution.
func (d *DB) disputed(ctx context.Context, q queryer, id int64) (bool, error) {
	var n int
	if err := q.QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM oracle_disputes WHERE market_id = ?`), id).Scan(&n); err != nil {
		return false, fmt.Errorf("store: disputes of market %d: %w", id, err)
	}
	return n > 0, nil
}

// applyResolution makes r's final decision the market's resolution inside
// tx, and runs the tracks' hooks in tx too: when the market had a
// resolution already (a re-resolution, a decided dispute), which the
// tracks may have settled or scored, they correct it (replace allows that
// change); on every resolution they may log it. A resolution that stays
// the same is not written again.
func (d *DB) applyResolution(ctx context.Context, tx *sql.Tx, m *arena.Market, r *arena.OracleResolution, at time.Time, replace bool, hooks []arena.ResolutionHook) error {
	res, _ := r.Final.MarketResolution()
	c := &arena.ResolutionChange{Market: m, Resolution: r, Outcome: res, At: at}
	if _, err := d.setResolution(ctx, tx, m.ID, res, at, replace, ""); err != nil {
		return err
	}
	d.touch(tx, arena.DomainOracle)
	for _, h := range hooks {
		if err := h(ctx, resolutionTx{d, tx}, c); err != nil {
			return err
		}
	}
	return nil
}

// SaveOracleResolution implements arena.OracleStore.
func (d *DB) SaveOracleResolution(ctx context.Context, r *arena.OracleResolution, hooks ...arena.ResolutionHook) error {
	if r.CreatedAt.IsZero() {
		r.CreatedAt = d.Now()
	}
	r.CreatedAt = r.CreatedAt.UTC()
	if r.Verdict.Escalate {
		r.Status, r.Final = arena.OracleEscalated, ""
	} else {
		if _, ok := r.Verdict.Decision.MarketResolution(); !ok || r.Verdict.Decision == arena.OracleVoid {
			return arena.Errorf(arena.EINVALID, "oracle: market %d: the panel's decision %q cannot resolve a market", r.MarketID, r.Verdict.Decision)
		}
		r.Status, r.Final = arena.OracleAuto, r.Verdict.Decision
	}
	return d.tx(ctx, func(tx *sql.Tx) error {
		m, err := d.lockMarket(ctx, tx, r.MarketID)
		if err != nil {
			return err
		}
		disputed, err := d.disputed(ctx, tx, r.MarketID)
		if err != nil {
			return err
		}
		prev, err := d.latestOracle(ctx, tx, r.MarketID)
		if err != nil {
			return err
		}
		if err := arena.PanelStep(r.MarketID, prev, disputed, m.Resolution); err != nil {
			return err
		}
		r.Seq = 1
		if err := d.insertOracle(ctx, tx, r); err != nil {
			return err
		}
		if r.Status == arena.OracleAuto {
			return d.applyResolution(ctx, tx, m, r, r.CreatedAt, disputed, hooks)
		}
		return nil
	})
}

// OracleResolutions implements arena.OracleStore.
func (d *DB) OracleResolutions(ctx context.Context, marketID int64) ([]arena.OracleResolution, error) {
	rows, err := d.r().QueryContext(ctx, d.rebind(`SELECT `+oracleColumns+` FROM oracle_resolutions WHERE market_id = ? ORDER BY seq`), marketID)
	if err != nil {
		return nil, fmt.Errorf("store: oracle resolutions of market %d: %w", marketID, err)
	}
	defer rows.Close()
	var out []arena.OracleResolution
	for rows.Next() {
		r, err := scanOracle(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if len(out) == 0 {
		return nil, arena.Errorf(arena.ENOTFOUND, "market %d has no oracle resolution", marketID)
	}
	if err := d.loadRescores(ctx, marketID, out); err != nil {
		return nil, err
	}
	return out, nil
}

// loadRescores attaches to each resolution the rounds it re-scored.
func (d *DB) loadRescores(ctx context.Context, marketID int64, rs []arena.OracleResolution) error {
	list, err := queryAll(ctx, d.r(), d.rebind(`SELECT round_id, market_id, resolution_id, idx, prev_outcome, outcome, outcomes, previous, scores, created_at
		FROM round_rescores WHERE market_id = ? ORDER BY id`), []any{marketID}, func(sc scanner) (arena.RoundRescore, error) {
		var x arena.RoundRescore
		var round, at int64
		var outs, prev, next string
		if err := sc.Scan(&round, &x.MarketID, &x.ResolutionID, &x.Index, &x.PrevOutcome, &x.Outcome, &outs, &prev, &next, &at); err != nil {
			return x, err
		}
		x.RoundID, x.At = uint64(round), time.UnixMicro(at).UTC()
		for _, f := range []struct {
			src string
			dst any
		}{{outs, &x.Outcomes}, {prev, &x.Previous}, {next, &x.Scores}} {
			if err := json.Unmarshal([]byte(f.src), f.dst); err != nil {
				return x, fmt.Errorf("re-score of round %d: %w", round, err)
			}
		}
		return x, nil
	})
	if err != nil {
		return fmt.Errorf("store: re-scores of market %d: %w", marketID, err)
	}
	for _, x := range list {
		for i := range rs {
			if rs[i].ID == x.ResolutionID {
				rs[i].Rescored = append(rs[i].Rescored, x)
			}
		}
	}
	return nil
}

// AllOracleResolutions implements arena.OracleStore.
func (d *DB) AllOracleResolutions(ctx context.Context) ([]arena.OracleResolution, error) {
	out, err := queryAll(ctx, d.r(), `SELECT `+oracleColumns+` FROM oracle_resolutions ORDER BY market_id, seq`, nil, scanOracle)
	if err != nil {
		return nil, fmt.Errorf("store: oracle resolutions: %w", err)
	}
	return out, nil
}

// RecentOracleResolutions implements arena.OracleStore.
func (d *DB) RecentOracleResolutions(ctx context.Context, n int) ([]arena.OracleResolution, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT `+oracleColumns+` FROM oracle_resolutions ORDER BY created_at DESC, id DESC LIMIT ?`), []any{n}, scanOracle)
	if err != nil {
		return nil, fmt.Errorf("store: recent oracle resolutions: %w", err)
	}
	return out, nil
}

// OracleQueue implements arena.OracleStore.
func (d *DB) OracleQueue(ctx context.Context) ([]arena.OracleResolution, error) {
	rows, err := d.r().QueryContext(ctx, d.rebind(`SELECT `+oracleColumns+` FROM oracle_resolutions WHERE status = ? ORDER BY created_at, id`), arena.OracleEscalated)
	if err != nil {
		return nil, fmt.Errorf("store: oracle queue: %w", err)
	}
	defer rows.Close()
	out := []arena.OracleResolution{}
	for rows.Next() {
		r, err := scanOracle(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// DecideOracle implements arena.OracleStore.
func (d *DB) DecideOracle(ctx context.Context, in arena.OracleDecisionInput, hooks ...arena.ResolutionHook) (*arena.OracleResolution, bool, error) {
	if err := in.Validate(); err != nil {
		return nil, false, err
	}
	at := in.At
	if at.IsZero() {
		at = d.Now()
	}
	at = at.UTC()
	var out *arena.OracleResolution
	changed := false
	err := d.tx(ctx, func(tx *sql.Tx) error {
		changed = false
		m, err := d.lockMarket(ctx, tx, in.MarketID)
		if err != nil {
			return err
		}
		prev, err := d.latestOracle(ctx, tx, in.MarketID)
		if err != nil {
			return err
		}
		disputed, err := d.disputed(ctx, tx, in.MarketID)
		if err != nil {
			return err
		}
		step, err := in.Step(prev, disputed, m.Resolution != "")
		if err != nil {
			return err
		}
		switch step {
		case arena.OracleUnchanged:
			out = prev
			return nil
		}
		changed = true
		switch step {
		case arena.OracleDecideEscalated:
			_, err := tx.ExecContext(ctx, d.rebind(`UPDATE oracle_resolutions SET status = ?, final = ?, arbiter = ?, reason = ?, decided_at = ? WHERE id = ? AND status = ?`),
				arena.OracleDecided, string(in.Decision), in.Arbiter, in.Reason, at.UnixMicro(), prev.ID, arena.OracleEscalated)
			if err != nil {
				return fmt.Errorf("store: decide market %d: %w", in.MarketID, err)
			}
			prev.Status, prev.Final, prev.Arbiter, prev.Reason, prev.DecidedAt = arena.OracleDecided, in.Decision, in.Arbiter, in.Reason, at
			out = prev
			return d.applyResolution(ctx, tx, m, out, at, disputed, hooks)
		case arena.OracleSettleDispute:
			out = &arena.OracleResolution{MarketID: in.MarketID, Seq: 1, Status: arena.OracleDecided, Final: in.Decision, Arbiter: in.Arbiter,
				Reason: in.Reason, Evidence: arena.EvidencePacket{Question: m.Question, Criteria: m.Criteria}, CreatedAt: at, DecidedAt: at}
			if err := d.insertOracle(ctx, tx, out); err != nil {
				return err
			}
			return d.applyResolution(ctx, tx, m, out, at, disputed, hooks)
		}
		// OracleRevise
		next := *prev
		next.Seq, next.Status, next.Final, next.Arbiter, next.Reason, next.CreatedAt, next.DecidedAt = prev.Seq+1, arena.OracleDecided, in.Decision, in.Arbiter, in.Reason, at, at
		next.Rescored = nil
		if err := d.insertOracle(ctx, tx, &next); err != nil {
			return err
		}
		out = &next
		return d.applyResolution(ctx, tx, m, out, at, true, hooks)
	})
	if err != nil {
		return nil, false, err
	}
	return out, changed, nil
}

// resolutionTx is the transaction applying a resolution, as the tracks'
// hooks use it (arena.ResolutionTx): plain reads and writes of their
// records; what to change is theirs to decide.
type resolutionTx struct {
	d  *DB
	tx *sql.Tx
}

var _ arena.ResolutionTx = resolutionTx{}

// AppendLeaves implements arena.LogTx.
func (x resolutionTx) AppendLeaves(ctx context.Context, leaves ...*arena.LogLeaf) error {
	return x.d.appendLeaves(ctx, x.tx, x.d.Now(), leaves)
}

// ScoredRounds implements arena.RescoreTx.
func (x resolutionTx) ScoredRounds(ctx context.Context, marketID int64) ([]uint64, error) {
	ids, err := queryAll(ctx, x.tx, x.d.rebind(`SELECT DISTINCT rm.round_id FROM round_markets rm JOIN rounds r ON r.id = rm.round_id
		WHERE rm.market_id = ? AND r.triggered_at IS NOT NULL ORDER BY rm.round_id`), []any{marketID}, func(sc scanner) (uint64, error) {
		var id int64
		err := sc.Scan(&id)
		return uint64(id), err
	})
	if err != nil {
		return nil, fmt.Errorf("store: rounds scoring market %d: %w", marketID, err)
	}
	return ids, nil
}

// LockRound implements arena.RescoreTx.
func (x resolutionTx) LockRound(ctx context.Context, id uint64) (*arena.Round, error) {
	if x.d.dialect == postgres {
		// Two re-resolutions of markets of one round must not both score
		// from the outcomes they read: the second waits for the first.
		if _, err := x.tx.ExecContext(ctx, `SELECT id FROM rounds WHERE id = $1 FOR UPDATE`, int64(id)); err != nil {
			return nil, fmt.Errorf("store: lock round %d: %w", id, err)
		}
	}
	return x.d.round(ctx, x.tx, id)
}

// MarketsByID implements arena.RescoreTx.
func (x resolutionTx) MarketsByID(ctx context.Context, ids []int64) (map[int64]*arena.Market, error) {
	return x.d.marketsByID(ctx, x.tx, ids)
}

// Submissions implements arena.RescoreTx.
func (x resolutionTx) Submissions(ctx context.Context, roundID uint64) ([]*arena.Submission, error) {
	return x.d.submissions(ctx, x.tx, roundID)
}

// RoundScores implements arena.RescoreTx.
func (x resolutionTx) RoundScores(ctx context.Context, roundID uint64) ([]arena.RoundScore, error) {
	return x.d.roundScores(ctx, x.tx, roundID)
}

// SaveRescore implements arena.RescoreTx.
func (x resolutionTx) SaveRescore(ctx context.Context, rs *arena.RoundRescore, rows []arena.ScoredForecast) error {
	d, tx, id := x.d, x.tx, int64(rs.RoundID)
	if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE round_markets SET outcome = ? WHERE round_id = ? AND idx = ?`), int(rs.Outcome), id, rs.Index); err != nil {
		return fmt.Errorf("store: re-score round %d: %w", rs.RoundID, err)
	}
	for _, table := range []string{"round_scores", "scored_forecasts"} {
		if _, err := tx.ExecContext(ctx, d.rebind(`DELETE FROM `+table+` WHERE round_id = ?`), id); err != nil {
			return fmt.Errorf("store: re-score round %d: %w", rs.RoundID, err)
		}
	}
	if err := d.insertRoundScores(ctx, tx, rs.RoundID, rs.Scores, rows); err != nil {
		return err
	}
	d.touch(tx, arena.DomainRounds, arena.DomainScores)
	outs, _ := json.Marshal(rs.Outcomes)
	prev, _ := json.Marshal(rs.Previous)
	next, _ := json.Marshal(rs.Scores)
	if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO round_rescores (round_id, market_id, resolution_id, idx, prev_outcome, outcome, outcomes, previous, scores, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?)`), id, rs.MarketID, rs.ResolutionID, rs.Index, int(rs.PrevOutcome), int(rs.Outcome), string(outs), string(prev), string(next), rs.At.UnixMicro()); err != nil {
		return fmt.Errorf("store: re-score round %d: %w", rs.RoundID, err)
	}
	return nil
}

// Settlement implements arena.ResettleTx.
func (x resolutionTx) Settlement(ctx context.Context, marketID int64) (arena.Settlement, bool, error) {
	s := arena.Settlement{MarketID: marketID}
	var at int64
	err := x.tx.QueryRowContext(ctx, x.d.rebind(`SELECT resolution, policy, positions, settled_at FROM market_settlements WHERE market_id = ?`), marketID).
		Scan(&s.Resolution, &s.Policy, &s.Positions, &at)
	if isNoRows(err) {
		return arena.Settlement{}, false, nil
	}
	if err != nil {
		return arena.Settlement{}, false, fmt.Errorf("store: settlement of market %d: %w", marketID, err)
	}
	s.SettledAt = time.UnixMicro(at).UTC()
	return s, true, nil
}

// MarketTrades implements arena.ResettleTx.
func (x resolutionTx) MarketTrades(ctx context.Context, marketID int64) ([]*arena.Trade, error) {
	out, err := queryAll(ctx, x.tx, x.d.rebind(`SELECT `+tradeColumns+` FROM trades WHERE market_id = ? ORDER BY id`), []any{marketID}, scanTrade)
	if err != nil {
		return nil, fmt.Errorf("store: trades in market %d: %w", marketID, err)
	}
	return out, nil
}

// MarketPositions implements arena.ResettleTx.
func (x resolutionTx) MarketPositions(ctx context.Context, marketID int64) ([]*arena.Position, error) {
	return x.d.positions(ctx, x.tx, `market_id = ?`, marketID)
}

// LockPortfolio implements arena.ResettleTx.
func (x resolutionTx) LockPortfolio(ctx context.Context, id int64) (*arena.Portfolio, error) {
	q := `SELECT ` + portfolioColumns + ` FROM portfolios WHERE id = ?`
	if x.d.dialect == postgres {
		q += ` FOR UPDATE`
	}
	p, err := lookup(x.tx.QueryRowContext(ctx, x.d.rebind(q), id), scanPortfolio, fmt.Sprintf("portfolio %d", id))
	if err != nil {
		return nil, err
	}
	if p.Positions, err = x.d.positions(ctx, x.tx, `portfolio_id = ? AND status = ?`, id, string(arena.PositionOpen)); err != nil {
		return nil, err
	}
	return p, nil
}

// Cohort implements arena.ResettleTx.
func (x resolutionTx) Cohort(ctx context.Context, id int64) (*arena.Cohort, error) {
	return lookup(x.tx.QueryRowContext(ctx, x.d.rebind(`SELECT `+cohortColumns+` FROM cohorts WHERE id = ?`), id), scanCohort, fmt.Sprintf("cohort %d", id))
}

// ApplyChange implements arena.ResettleTx.
func (x resolutionTx) ApplyChange(ctx context.Context, ch *arena.PortfolioChange) error {
	return x.d.applyChange(ctx, x.tx, ch, 0)
}

// Resettled implements arena.ResettleTx.
func (x resolutionTx) Resettled(ctx context.Context, marketID int64, resolution string) error {
	if _, err := x.tx.ExecContext(ctx, x.d.rebind(`UPDATE market_settlements SET resolution = ?, policy = ? WHERE market_id = ?`), resolution, "re-resolved", marketID); err != nil {
		return fmt.Errorf("store: re-settle market %d: %w", marketID, err)
	}
	x.d.touch(x.tx, arena.DomainTrading)
	return nil
}

// FlagOracle implements arena.OracleStore: the flag and the market's
// ambiguity are recorded together, so from then on the tracks wait for
// the oracle and syncs keep the source's resolution out (see SaveMarkets).
func (d *DB) FlagOracle(ctx context.Context, f arena.OracleFlag) error {
	if err := f.Validate(); err != nil {
		return err
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = d.Now()
	}
	return d.tx(ctx, func(tx *sql.Tx) error {
		m, err := d.lockMarket(ctx, tx, f.MarketID)
		if err != nil {
			return err
		}
		prev, err := d.latestOracle(ctx, tx, f.MarketID)
		if err != nil {
			return err
		}
		if m.Resolution != "" {
			if prev != nil {
				return arena.Errorf(arena.ECONFLICT, "market %d is already resolved (%s) by the oracle; re-resolve it instead", f.MarketID, m.Resolution)
			}
			return arena.Errorf(arena.ECONFLICT, "market %d is already resolved (%s) by its source; dispute it instead", f.MarketID, m.Resolution)
		}
		if !m.IsBinary() {
			return arena.Errorf(arena.EINVALID, "market %d is not a Yes/No market; the oracle resolves binary markets only", f.MarketID)
		}
		if prev != nil {
			return arena.Errorf(arena.ECONFLICT, "market %d is already with the oracle (%s)", f.MarketID, prev.Status)
		}
		var n int
		if err := tx.QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM oracle_flags WHERE market_id = ?`), f.MarketID).Scan(&n); err != nil {
			return fmt.Errorf("store: flag market %d: %w", f.MarketID, err)
		}
		if n > 0 {
			return arena.Errorf(arena.ECONFLICT, "market %d is already flagged", f.MarketID)
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO oracle_flags (market_id, reason, created_at) VALUES (?, ?, ?)`),
			f.MarketID, f.Reason, f.CreatedAt.UnixMicro()); err != nil {
			if isUniqueViolation(err) {
				return arena.Errorf(arena.ECONFLICT, "market %d is already flagged", f.MarketID)
			}
			return fmt.Errorf("store: flag market %d: %w", f.MarketID, err)
		}
		m.Ambiguous = true
		r, err := encodeMarket(m)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE markets SET ambiguous = ?, digest = ?, updated_at = ? WHERE id = ?`),
			true, r.digest, d.Now().UnixMicro(), f.MarketID); err != nil {
			return fmt.Errorf("store: flag market %d: %w", f.MarketID, err)
		}
		d.touch(tx, arena.DomainOracle, arena.DomainMarkets)
		return nil
	})
}

// DisputeOracle implements arena.OracleStore. The market's row is not
// touched: it keeps the source's resolution, and the dispute keeps syncs
// from changing it (see SaveMarkets).
func (d *DB) DisputeOracle(ctx context.Context, dp *arena.OracleDispute, hooks ...arena.DisputeHook) (bool, error) {
	if err := dp.Validate(); err != nil {
		return false, err
	}
	if dp.CreatedAt.IsZero() {
		dp.CreatedAt = d.Now()
	}
	recorded := false
	err := d.tx(ctx, func(tx *sql.Tx) error {
		recorded = false
		m, err := d.lockMarket(ctx, tx, dp.MarketID)
		if err != nil {
			return err
		}
		if !m.IsBinary() {
			return arena.Errorf(arena.EINVALID, "market %d is not a Yes/No market; the oracle resolves binary markets only", dp.MarketID)
		}
		prev, err := d.latestOracle(ctx, tx, dp.MarketID)
		if err != nil {
			return err
		}
		switch {
		case prev != nil && prev.Final != "":
			return arena.Errorf(arena.ECONFLICT, "market %d was resolved by the oracle (%s); re-resolve it instead", dp.MarketID, prev.Final)
		case prev != nil:
			return arena.Errorf(arena.ECONFLICT, "market %d is already with the oracle (%s)", dp.MarketID, prev.Status)
		case m.Resolution == "":
			return arena.Errorf(arena.ECONFLICT, "market %d is not resolved; flag it for the oracle instead", dp.MarketID)
		}
		// The dispute recorded already, sent again (two admins' requests
		// racing, a retry): nothing changes. Read after the market's lock,
		// it sees a dispute that committed while this one waited.
		if was, err := lookup(tx.QueryRowContext(ctx, d.rebind(`SELECT `+disputeColumns+` FROM oracle_disputes WHERE market_id = ?`), dp.MarketID),
			scanDispute, "dispute"); err == nil {
			if was.Admin != dp.Admin || was.Reason != dp.Reason {
				return arena.Errorf(arena.ECONFLICT, "market %d is already disputed (by %s)", dp.MarketID, was.Admin)
			}
			*dp = *was
			return nil
		} else if arena.ErrorKind(err) != arena.ENOTFOUND {
			return err
		}
		dp.Resolution = m.Resolution
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO oracle_disputes (market_id, resolution, admin, reason, created_at) VALUES (?, ?, ?, ?, ?)`),
			dp.MarketID, m.Resolution, dp.Admin, dp.Reason, dp.CreatedAt.UnixMicro()); err != nil {
			if isUniqueViolation(err) {
				return arena.Errorf(arena.ECONFLICT, "market %d is already disputed", dp.MarketID)
			}
			return fmt.Errorf("store: dispute market %d: %w", dp.MarketID, err)
		}
		d.touch(tx, arena.DomainOracle)
		for _, h := range hooks {
			if err := h(ctx, resolutionTx{d, tx}, dp); err != nil {
				return err
			}
		}
		recorded = true
		return nil
	})
	return recorded, err
}

const disputeColumns = `market_id, resolution, admin, reason, created_at`

func scanDispute(sc scanner) (*arena.OracleDispute, error) {
	var x arena.OracleDispute
	var at int64
	err := sc.Scan(&x.MarketID, &x.Resolution, &x.Admin, &x.Reason, &at)
	x.CreatedAt = time.UnixMicro(at).UTC()
	return &x, err
}

// OracleDispute implements arena.OracleStore.
func (d *DB) OracleDispute(ctx context.Context, marketID int64) (*arena.OracleDispute, error) {
	return lookup(d.r().QueryRowContext(ctx, d.rebind(`SELECT `+disputeColumns+` FROM oracle_disputes WHERE market_id = ?`), marketID),
		scanDispute, fmt.Sprintf("dispute of market %d", marketID))
}

// OracleDisputes implements arena.OracleStore.
func (d *DB) OracleDisputes(ctx context.Context) ([]arena.OracleDispute, error) {
	out, err := queryAll(ctx, d.r(), `SELECT `+disputeColumns+` FROM oracle_disputes ORDER BY created_at, market_id`, nil,
		func(sc scanner) (arena.OracleDispute, error) {
			x, err := scanDispute(sc)
			return *x, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: oracle disputes: %w", err)
	}
	if out == nil {
		out = []arena.OracleDispute{}
	}
	return out, nil
}

// OracleFlags implements arena.OracleStore.
func (d *DB) OracleFlags(ctx context.Context) ([]arena.OracleFlag, error) {
	out, err := queryAll(ctx, d.r(), `SELECT market_id, reason, created_at FROM oracle_flags ORDER BY created_at, market_id`, nil,
		func(sc scanner) (arena.OracleFlag, error) {
			var f arena.OracleFlag
			var at int64
			err := sc.Scan(&f.MarketID, &f.Reason, &at)
			f.CreatedAt = time.UnixMicro(at).UTC()
			return f, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: oracle flags: %w", err)
	}
	if out == nil {
		out = []arena.OracleFlag{}
	}
	return out, nil
}
