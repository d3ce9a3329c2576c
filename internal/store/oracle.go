package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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

// SaveOracleResolution implements arena.OracleStore.
func (d *DB) SaveOracleResolution(ctx context.Context, r *arena.OracleResolution) error {
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
		m, err := scanMarket(tx.QueryRowContext(ctx, d.rebind(`SELECT `+marketColumns+` FROM markets WHERE id = ?`), r.MarketID))
		if isNoRows(err) {
			return arena.Errorf(arena.ENOTFOUND, "market %d not found", r.MarketID)
		}
		if err != nil {
			return fmt.Errorf("store: oracle: market %d: %w", r.MarketID, err)
		}
		if m.Resolution != "" {
			return arena.Errorf(arena.ECONFLICT, "market %d is already resolved (%s)", r.MarketID, m.Resolution)
		}
		prev, err := d.latestOracle(ctx, tx, r.MarketID)
		if err != nil {
			return err
		}
		r.Seq = 1
		if prev != nil {
			if prev.Status == arena.OracleEscalated {
				return arena.Errorf(arena.ECONFLICT, "market %d is waiting for an arbiter", r.MarketID)
			}
			return arena.Errorf(arena.ECONFLICT, "market %d was already resolved by the oracle (%s)", r.MarketID, prev.Final)
		}
		if err := d.insertOracle(ctx, tx, r); err != nil {
			return err
		}
		if r.Status == arena.OracleAuto {
			res, _ := r.Final.MarketResolution()
			return d.setResolution(ctx, tx, r.MarketID, res, r.CreatedAt, false)
		}
		return nil
	})
}

// OracleResolutions implements arena.OracleStore.
func (d *DB) OracleResolutions(ctx context.Context, marketID int64) ([]arena.OracleResolution, error) {
	rows, err := d.db.QueryContext(ctx, d.rebind(`SELECT `+oracleColumns+` FROM oracle_resolutions WHERE market_id = ? ORDER BY seq`), marketID)
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

// AllOracleResolutions implements arena.OracleStore.
func (d *DB) AllOracleResolutions(ctx context.Context) ([]arena.OracleResolution, error) {
	out, err := queryAll(ctx, d.db, `SELECT `+oracleColumns+` FROM oracle_resolutions ORDER BY market_id, seq`, nil, scanOracle)
	if err != nil {
		return nil, fmt.Errorf("store: oracle resolutions: %w", err)
	}
	return out, nil
}

// RecentOracleResolutions implements arena.OracleStore.
func (d *DB) RecentOracleResolutions(ctx context.Context, n int) ([]arena.OracleResolution, error) {
	out, err := queryAll(ctx, d.db, d.rebind(`SELECT `+oracleColumns+` FROM oracle_resolutions ORDER BY created_at DESC, id DESC LIMIT ?`), []any{n}, scanOracle)
	if err != nil {
		return nil, fmt.Errorf("store: recent oracle resolutions: %w", err)
	}
	return out, nil
}

// OracleQueue implements arena.OracleStore.
func (d *DB) OracleQueue(ctx context.Context) ([]arena.OracleResolution, error) {
	rows, err := d.db.QueryContext(ctx, d.rebind(`SELECT `+oracleColumns+` FROM oracle_resolutions WHERE status = ? ORDER BY created_at, id`), arena.OracleEscalated)
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
func (d *DB) DecideOracle(ctx context.Context, in arena.OracleDecisionInput) (*arena.OracleResolution, error) {
	if err := in.Validate(); err != nil {
		return nil, err
	}
	res, _ := in.Decision.MarketResolution()
	at := in.At
	if at.IsZero() {
		at = d.Now()
	}
	at = at.UTC()
	var out *arena.OracleResolution
	err := d.tx(ctx, func(tx *sql.Tx) error {
		prev, err := d.latestOracle(ctx, tx, in.MarketID)
		if err != nil {
			return err
		}
		if prev == nil {
			var one int
			err := tx.QueryRowContext(ctx, d.rebind(`SELECT 1 FROM markets WHERE id = ?`), in.MarketID).Scan(&one)
			if isNoRows(err) {
				return arena.Errorf(arena.ENOTFOUND, "market %d not found", in.MarketID)
			}
			if err != nil {
				return fmt.Errorf("store: decide market %d: %w", in.MarketID, err)
			}
		}
		if !in.ReResolve {
			if prev == nil || prev.Status != arena.OracleEscalated {
				return arena.Errorf(arena.ECONFLICT, "market %d is not escalated to an arbiter", in.MarketID)
			}
			_, err := tx.ExecContext(ctx, d.rebind(`UPDATE oracle_resolutions SET status = ?, final = ?, arbiter = ?, reason = ?, decided_at = ? WHERE id = ? AND status = ?`),
				arena.OracleDecided, string(in.Decision), in.Arbiter, in.Reason, at.UnixMicro(), prev.ID, arena.OracleEscalated)
			if err != nil {
				return fmt.Errorf("store: decide market %d: %w", in.MarketID, err)
			}
			prev.Status, prev.Final, prev.Arbiter, prev.Reason, prev.DecidedAt = arena.OracleDecided, in.Decision, in.Arbiter, in.Reason, at
			out = prev
			return d.setResolution(ctx, tx, in.MarketID, res, at, false)
		}
		if prev == nil || prev.Final == "" {
			return arena.Errorf(arena.ECONFLICT, "market %d has no oracle resolution to revise (an escalated market is decided, not re-resolved)", in.MarketID)
		}
		// Re-resolution changes the market's resolution. Trading
		// settlements are corrected (resettle) and every scored forecast
		// round that froze the market's outcome is re-scored in this same
		// transaction, so nobody reads the new resolution with old scores.
		var settled int
		if err := tx.QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM market_settlements WHERE market_id = ?`), in.MarketID).Scan(&settled); err != nil {
			return fmt.Errorf("store: re-resolve market %d: %w", in.MarketID, err)
		}
		if settled > 0 {
			if err := d.resettle(ctx, tx, in.MarketID, res, at); err != nil {
				return err
			}
		}
		next := *prev
		next.Seq, next.Status, next.Final, next.Arbiter, next.Reason, next.CreatedAt, next.DecidedAt = prev.Seq+1, arena.OracleDecided, in.Decision, in.Arbiter, in.Reason, at, at
		next.Rescored = nil
		if err := d.insertOracle(ctx, tx, &next); err != nil {
			return err
		}
		if next.Rescored, err = d.rescoreRounds(ctx, tx, &next, frozenOutcome(res), in.Rescore); err != nil {
			return err
		}
		out = &next
		return d.setResolution(ctx, tx, in.MarketID, res, at, true)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Frozen outcomes of a round's markets, as the forecast track stores them.
const (
	frozenNo   int8 = 0
	frozenYes  int8 = 1
	frozenVoid int8 = -1
)

// frozenOutcome is the outcome a round freezes for a market resolved to
// res: scored YES or NO, or void (excluded from scoring).
func frozenOutcome(res string) int8 {
	switch res {
	case arena.Yes:
		return frozenYes
	case arena.No:
		return frozenNo
	}
	return frozenVoid
}

// rescoreRounds re-scores, with score, every scored round that froze the
// market of r as resolved (YES, NO or void; a round that froze it as
// unresolved never scored it and keeps its scores): the market's outcome
// becomes outcome, the round's scores and scored forecasts are replaced,
// and an audit row keeps the scores before and after. A round whose frozen
// outcome does not change is left alone.
func (d *DB) rescoreRounds(ctx context.Context, tx *sql.Tx, r *arena.OracleResolution, outcome int8, score arena.RoundScorer) ([]arena.RoundRescore, error) {
	type hit struct {
		round uint64
		idx   int
		prev  int8
	}
	hits, err := queryAll(ctx, tx, d.rebind(`SELECT rm.round_id, rm.idx, rm.outcome FROM round_markets rm JOIN rounds r ON r.id = rm.round_id
		WHERE rm.market_id = ? AND r.triggered_at IS NOT NULL AND rm.outcome IN (?, ?, ?) ORDER BY rm.round_id, rm.idx`),
		[]any{r.MarketID, frozenNo, frozenYes, frozenVoid}, func(sc scanner) (hit, error) {
			var h hit
			var id int64
			err := sc.Scan(&id, &h.idx, &h.prev)
			h.round = uint64(id)
			return h, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: rounds scoring market %d: %w", r.MarketID, err)
	}
	var out []arena.RoundRescore
	for _, h := range hits {
		if h.prev == outcome {
			continue
		}
		if score == nil {
			return nil, arena.Errorf(arena.ECONFLICT, "market %d is scored in forecast round %d and no scorer was given to re-score it", r.MarketID, h.round)
		}
		rs, err := d.rescoreRound(ctx, tx, r, h.round, h.idx, outcome, score)
		if err != nil {
			return nil, err
		}
		out = append(out, *rs)
	}
	return out, nil
}

// rescoreRound re-scores one round with market idx's outcome replaced.
func (d *DB) rescoreRound(ctx context.Context, tx *sql.Tx, r *arena.OracleResolution, roundID uint64, idx int, outcome int8, score arena.RoundScorer) (*arena.RoundRescore, error) {
	if d.dialect == postgres {
		// Two re-resolutions of markets of one round must not both score
		// from the outcomes they read: the second waits for the first.
		if _, err := tx.ExecContext(ctx, `SELECT id FROM rounds WHERE id = $1 FOR UPDATE`, int64(roundID)); err != nil {
			return nil, fmt.Errorf("store: lock round %d: %w", roundID, err)
		}
	}
	rd, err := d.round(ctx, tx, roundID)
	if err != nil {
		return nil, err
	}
	rs := &arena.RoundRescore{RoundID: roundID, MarketID: r.MarketID, ResolutionID: r.ID, Index: idx, Outcome: outcome, At: r.CreatedAt}
	markets := make([]*arena.Market, len(rd.Markets))
	for i, rm := range rd.Markets {
		if rm.Outcome == nil {
			return nil, fmt.Errorf("store: round %d is scored but market %d has no frozen outcome", roundID, i)
		}
		rs.Outcomes = append(rs.Outcomes, *rm.Outcome)
		m, err := scanMarket(tx.QueryRowContext(ctx, d.rebind(`SELECT `+marketColumns+` FROM markets WHERE id = ?`), rm.MarketID))
		if err != nil {
			return nil, fmt.Errorf("store: re-score round %d: market %d: %w", roundID, rm.MarketID, err)
		}
		markets[i] = m
	}
	rs.PrevOutcome, rs.Outcomes[idx] = rs.Outcomes[idx], outcome
	subs, err := d.submissions(ctx, tx, roundID)
	if err != nil {
		return nil, err
	}
	if rs.Previous, err = d.roundScores(ctx, tx, roundID); err != nil {
		return nil, err
	}
	scores, rows, err := score(rd, rs.Outcomes, markets, subs)
	if err != nil {
		return nil, fmt.Errorf("store: re-score round %d: %w", roundID, err)
	}
	// In agent order, as RoundScores reads them back.
	slices.SortFunc(scores, func(a, b arena.RoundScore) int { return strings.Compare(a.Agent, b.Agent) })
	rs.Scores = scores
	if rs.Previous == nil {
		rs.Previous = []arena.RoundScore{}
	}
	if rs.Scores == nil {
		rs.Scores = []arena.RoundScore{}
	}
	if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE round_markets SET outcome = ? WHERE round_id = ? AND idx = ?`), int(outcome), int64(roundID), idx); err != nil {
		return nil, fmt.Errorf("store: re-score round %d: %w", roundID, err)
	}
	for _, table := range []string{"round_scores", "scored_forecasts"} {
		if _, err := tx.ExecContext(ctx, d.rebind(`DELETE FROM `+table+` WHERE round_id = ?`), int64(roundID)); err != nil {
			return nil, fmt.Errorf("store: re-score round %d: %w", roundID, err)
		}
	}
	if err := d.insertRoundScores(ctx, tx, roundID, scores, rows); err != nil {
		return nil, err
	}
	outs, _ := json.Marshal(rs.Outcomes)
	prev, _ := json.Marshal(rs.Previous)
	next, _ := json.Marshal(rs.Scores)
	if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO round_rescores (round_id, market_id, resolution_id, idx, prev_outcome, outcome, outcomes, previous, scores, created_at)
		VALUES (?,?,?,?,?,?,?,?,?,?)`), int64(roundID), r.MarketID, r.ID, idx, int(rs.PrevOutcome), int(outcome), string(outs), string(prev), string(next), rs.At.UnixMicro()); err != nil {
		return nil, fmt.Errorf("store: re-score round %d: %w", roundID, err)
	}
	return rs, nil
}

// loadRescores attaches to each resolution the rounds it re-scored.
func (d *DB) loadRescores(ctx context.Context, marketID int64, rs []arena.OracleResolution) error {
	list, err := queryAll(ctx, d.db, d.rebind(`SELECT round_id, market_id, resolution_id, idx, prev_outcome, outcome, outcomes, previous, scores, created_at
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

// resettle corrects the trading settlement of a market after its
// resolution changed: each position's payout becomes what the new
// resolution pays (shares for a winning side, nothing for a losing one,
// the cost basis for VOID), and the difference moves cash and realized P/L
// alike, recorded as a RESETTLE trade, so the ledger still reconciles. A
// correction that would leave a portfolio with negative cash is refused.
func (d *DB) resettle(ctx context.Context, tx *sql.Tx, marketID int64, resolution string, at time.Time) error {
	rows, err := tx.QueryContext(ctx, d.rebind(`SELECT portfolio_id, position_id, side, kind, amount, shares, cost_basis FROM trades
		WHERE market_id = ? AND kind IN (?, ?, ?) ORDER BY id`), marketID, string(arena.TradeSettle), string(arena.TradeCancel), string(arena.TradeResettle))
	if err != nil {
		return fmt.Errorf("store: resettle market %d: %w", marketID, err)
	}
	type pos struct {
		portfolio, id int64
		side          string
		paid          int64
		shares, cost  int64
	}
	var order []int64
	byID := map[int64]*pos{}
	for rows.Next() {
		var p pos
		var kind string
		var amount int64
		if err := rows.Scan(&p.portfolio, &p.id, &p.side, &kind, &amount, &p.shares, &p.cost); err != nil {
			rows.Close()
			return fmt.Errorf("store: resettle market %d: %w", marketID, err)
		}
		if q := byID[p.id]; q != nil {
			q.paid += amount // corrections add to what the settlement paid
			continue
		}
		p.paid = amount
		byID[p.id] = &p
		order = append(order, p.id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range order {
		p := byID[id]
		pay, price, status := int64(0), int64(0), arena.PositionSettled
		switch {
		case resolution == arena.Void:
			pay, status = p.cost, arena.PositionCancelled
		case strings.EqualFold(p.side, resolution):
			pay, price = p.shares, int64(arena.OnePPM)
		}
		delta := pay - p.paid
		if delta == 0 {
			continue
		}
		var cash int64
		if err := tx.QueryRowContext(ctx, d.rebind(`SELECT cash FROM portfolios WHERE id = ?`), p.portfolio).Scan(&cash); err != nil {
			return fmt.Errorf("store: resettle market %d: %w", marketID, err)
		}
		if cash+delta < 0 {
			return arena.Errorf(arena.ECONFLICT, "market %d: re-resolving would take $%.2f from portfolio %d, which holds $%.2f", marketID, float64(-delta)/1e6, p.portfolio, float64(cash)/1e6)
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE portfolios SET cash = cash + ?, realized = realized + ?, version = version + 1 WHERE id = ?`),
			delta, delta, p.portfolio); err != nil {
			return fmt.Errorf("store: resettle market %d: %w", marketID, err)
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE positions SET status = ?, mark = ? WHERE id = ?`), string(status), price, p.id); err != nil {
			return fmt.Errorf("store: resettle market %d: %w", marketID, err)
		}
		if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO trades (portfolio_id, position_id, market_id, side, kind, amount, shares, price, cost_basis,
			cash_before, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?)`), p.portfolio, p.id, marketID, p.side, string(arena.TradeResettle), delta, p.shares, price,
			p.cost, cash, at.UnixMicro()); err != nil {
			return fmt.Errorf("store: resettle market %d: %w", marketID, err)
		}
	}
	if _, err := tx.ExecContext(ctx, d.rebind(`UPDATE market_settlements SET resolution = ?, policy = ? WHERE market_id = ?`), resolution, "re-resolved", marketID); err != nil {
		return fmt.Errorf("store: resettle market %d: %w", marketID, err)
	}
	return nil
}

// FlagOracle implements arena.OracleStore: the flag and the market's
// ambiguity are recorded together, so from then on the tracks wait for
// the oracle and syncs keep the source's resolution out (see SaveMarkets).
func (d *DB) FlagOracle(ctx context.Context, f arena.OracleFlag) error {
	f.Reason = strings.TrimSpace(f.Reason)
	if f.Reason == "" {
		return arena.Errorf(arena.EINVALID, "flagging market %d needs a reason", f.MarketID)
	}
	if f.CreatedAt.IsZero() {
		f.CreatedAt = d.Now()
	}
	return d.tx(ctx, func(tx *sql.Tx) error {
		m, err := scanMarket(tx.QueryRowContext(ctx, d.rebind(`SELECT `+marketColumns+` FROM markets WHERE id = ?`), f.MarketID))
		if isNoRows(err) {
			return arena.Errorf(arena.ENOTFOUND, "market %d not found", f.MarketID)
		}
		if err != nil {
			return fmt.Errorf("store: flag market %d: %w", f.MarketID, err)
		}
		if m.Resolution != "" {
			return arena.Errorf(arena.ECONFLICT, "market %d is already resolved (%s); re-resolve it through the oracle instead", f.MarketID, m.Resolution)
		}
		if !m.IsBinary() {
			return arena.Errorf(arena.EINVALID, "market %d is not a Yes/No market; the oracle resolves binary markets only", f.MarketID)
		}
		prev, err := d.latestOracle(ctx, tx, f.MarketID)
		if err != nil {
			return err
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
		return nil
	})
}

// OracleFlags implements arena.OracleStore.
func (d *DB) OracleFlags(ctx context.Context) ([]arena.OracleFlag, error) {
	out, err := queryAll(ctx, d.db, `SELECT market_id, reason, created_at FROM oracle_flags ORDER BY created_at, market_id`, nil,
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
