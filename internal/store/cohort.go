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

var _ arena.CohortStore = (*DB)(nil)

// trading is the domain of every cohort write.
var trading = []arena.Domain{arena.DomainTrading}

// CreateCohort implements arena.CohortStore.
func (d *DB) CreateCohort(ctx context.Context, c *arena.Cohort) (bool, error) {
	if err := c.Validate(); err != nil {
		return false, err
	}
	lineup, err := json.Marshal(c.Lineup)
	if err != nil {
		return false, fmt.Errorf("store: encode lineup: %w", err)
	}
	if c.Status == "" {
		c.Status = arena.CohortActive
	}
	created := false
	err = d.tx(ctx, func(tx *sql.Tx) error {
		now := d.Now()
		var id int64
		// A week whose cohort exists is the common case (the decision run
		// makes sure of it every 10 minutes): look first, because an insert
		// that conflicts still uses up a serial number, and cohorts would be
		// numbered with gaps.
		err := tx.QueryRowContext(ctx, d.rebind(`SELECT id FROM cohorts WHERE week_start = ?`), c.WeekStart.UnixMicro()).Scan(&id)
		if err == nil {
			return nil
		}
		if !isNoRows(err) {
			return fmt.Errorf("store: look up the cohort of %s: %w", c.WeekStart.UTC().Format(time.DateOnly), err)
		}
		err = tx.QueryRowContext(ctx, d.rebind(`INSERT INTO cohorts (week_start, status, lineup, initial_cash, created_at)
			VALUES (?,?,?,?,?) ON CONFLICT (week_start) DO NOTHING RETURNING id`),
			c.WeekStart.UnixMicro(), string(c.Status), string(lineup), int64(c.InitialCash), now.UnixMicro()).Scan(&id)
		if isNoRows(err) {
			return nil // the week already has its cohort
		}
		if err != nil {
			return fmt.Errorf("store: insert cohort: %w", err)
		}
		for _, e := range c.Lineup {
			if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO portfolios (cohort_id, agent_id, cash) VALUES (?,?,?)`),
				id, e.AgentID, int64(c.InitialCash)); err != nil {
				return fmt.Errorf("store: insert portfolio of %s: %w", e.AgentID, err)
			}
		}
		created, c.ID, c.CreatedAt = true, id, time.UnixMicro(now.UnixMicro()).UTC()
		d.touch(tx, arena.DomainTrading)
		return nil
	})
	if err != nil || created {
		return created, err
	}
	got, err := d.CohortByWeek(ctx, c.WeekStart)
	if err != nil {
		return false, err
	}
	*c = *got
	return false, nil
}

const cohortColumns = `id, week_start, status, lineup, initial_cash, created_at, completed_at`

func scanCohort(sc scanner) (*arena.Cohort, error) {
	var c arena.Cohort
	var week, created int64
	var completed sql.NullInt64
	var status, lineup string
	if err := sc.Scan(&c.ID, &week, &status, &lineup, &c.InitialCash, &created, &completed); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(lineup), &c.Lineup); err != nil {
		return nil, fmt.Errorf("store: cohort %d lineup: %w", c.ID, err)
	}
	c.Status, c.WeekStart, c.CreatedAt = arena.CohortStatus(status), time.UnixMicro(week).UTC(), time.UnixMicro(created).UTC()
	c.CompletedAt = fromMicros(completed)
	return &c, nil
}

// Cohort implements arena.CohortStore.
func (d *DB) Cohort(ctx context.Context, id int64) (*arena.Cohort, error) {
	return lookup(d.r().QueryRowContext(ctx, d.rebind(`SELECT `+cohortColumns+` FROM cohorts WHERE id = ?`), id), scanCohort, fmt.Sprintf("cohort %d", id))
}

// CohortByWeek implements arena.CohortStore.
func (d *DB) CohortByWeek(ctx context.Context, weekStart time.Time) (*arena.Cohort, error) {
	c, err := scanCohort(d.r().QueryRowContext(ctx, d.rebind(`SELECT `+cohortColumns+` FROM cohorts WHERE week_start = ?`), weekStart.UnixMicro()))
	if isNoRows(err) {
		return nil, arena.Errorf(arena.ENOTFOUND, "no cohort for the week of %s", weekStart.UTC().Format("2006-01-02"))
	}
	if err != nil {
		return nil, fmt.Errorf("store: load cohort of %s: %w", weekStart.UTC().Format("2006-01-02"), err)
	}
	return c, nil
}

// Cohorts implements arena.CohortStore.
func (d *DB) Cohorts(ctx context.Context, status arena.CohortStatus) ([]*arena.Cohort, error) {
	q, args := `SELECT `+cohortColumns+` FROM cohorts`, []any{}
	if status != "" {
		q, args = q+` WHERE status = ?`, append(args, string(status))
	}
	out, err := queryAll(ctx, d.r(), d.rebind(q+` ORDER BY week_start DESC`), args, scanCohort)
	if err != nil {
		return nil, fmt.Errorf("store: list cohorts: %w", err)
	}
	return out, nil
}

// CompleteCohorts implements arena.CohortStore.
func (d *DB) CompleteCohorts(ctx context.Context, weekStartBefore, at time.Time) (int, error) {
	r, err := d.exec(ctx, trading, `UPDATE cohorts SET status = ?, completed_at = ?
		WHERE status = ? AND week_start < ? AND NOT EXISTS (
			SELECT 1 FROM positions p JOIN portfolios f ON p.portfolio_id = f.id
			WHERE f.cohort_id = cohorts.id AND p.status = ?)`,
		string(arena.CohortCompleted), at.UnixMicro(), string(arena.CohortActive), weekStartBefore.UnixMicro(), string(arena.PositionOpen))
	if err != nil {
		return 0, fmt.Errorf("store: complete cohorts: %w", err)
	}
	n, err := r.RowsAffected()
	return int(n), err
}

const portfolioColumns = `id, cohort_id, agent_id, cash, realized, bankrupt, version`

func scanPortfolio(sc scanner) (*arena.Portfolio, error) {
	var p arena.Portfolio
	err := sc.Scan(&p.ID, &p.CohortID, &p.AgentID, &p.Cash, &p.Realized, &p.Bankrupt, &p.Version)
	return &p, err
}

const positionColumns = `id, portfolio_id, market_id, side, shares, cost_basis, mark, status, opened_at, closed_at`

func scanPosition(sc scanner) (*arena.Position, error) {
	var p arena.Position
	var status string
	var opened int64
	var closed sql.NullInt64
	if err := sc.Scan(&p.ID, &p.PortfolioID, &p.MarketID, &p.Side, &p.Shares, &p.CostBasis, &p.Mark, &status, &opened, &closed); err != nil {
		return nil, err
	}
	p.Status, p.OpenedAt, p.ClosedAt = arena.PositionStatus(status), time.UnixMicro(opened).UTC(), fromMicros(closed)
	return &p, nil
}

func (d *DB) positions(ctx context.Context, q queryer, where string, args ...any) ([]*arena.Position, error) {
	out, err := queryAll(ctx, q, d.rebind(`SELECT `+positionColumns+` FROM positions WHERE `+where+` ORDER BY id`), args, scanPosition)
	if err != nil {
		return nil, fmt.Errorf("store: load positions: %w", err)
	}
	return out, nil
}

// portfolioReadHook, when set by a test, runs between the read of portfolio
// rows and the read of their positions, where a concurrent write used to
// tear the result.
var portfolioReadHook func()

// readTx runs fn in a read-only transaction that sees one consistent state
// of the database: REPEATABLE READ on PostgreSQL (a single snapshot for
// every statement), a deferred transaction on SQLite (its WAL snapshot is
// fixed by the first read, and a read-only begin takes no write lock).
// Reads that span several statements use it so a concurrent write between
// them cannot tear the result.
func (d *DB) readTx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if d.snap != nil {
		return fn(d.snap) // a snapshot reads one state already
	}
	opts := &sql.TxOptions{ReadOnly: true}
	if d.dialect == postgres {
		opts.Isolation = sql.LevelRepeatableRead
	}
	tx, err := d.db.BeginTx(ctx, opts)
	if err != nil {
		return fmt.Errorf("store: begin read: %w", err)
	}
	defer tx.Rollback() // read-only: nothing to commit
	return fn(tx)
}

// Portfolios implements arena.CohortStore. The portfolio rows and their
// open positions are read in one snapshot, so a settlement or decision
// committing in between cannot pair a new cash with old positions.
func (d *DB) Portfolios(ctx context.Context, cohortID int64) ([]*arena.Portfolio, error) {
	var out []*arena.Portfolio
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = queryAll(ctx, tx, d.rebind(`SELECT `+portfolioColumns+` FROM portfolios WHERE cohort_id = ? ORDER BY agent_id`),
			[]any{cohortID}, scanPortfolio)
		if err != nil {
			return fmt.Errorf("store: portfolios of cohort %d: %w", cohortID, err)
		}
		if portfolioReadHook != nil {
			portfolioReadHook()
		}
		byID := make(map[int64]*arena.Portfolio, len(out))
		for _, p := range out {
			byID[p.ID] = p
		}
		pos, err := d.positions(ctx, tx, `status = ? AND portfolio_id IN (SELECT id FROM portfolios WHERE cohort_id = ?)`, string(arena.PositionOpen), cohortID)
		if err != nil {
			return err
		}
		for _, p := range pos {
			if f := byID[p.PortfolioID]; f != nil {
				f.Positions = append(f.Positions, p)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Portfolio implements arena.CohortStore; like Portfolios, it reads the row
// and the open positions in one snapshot.
func (d *DB) Portfolio(ctx context.Context, id int64) (*arena.Portfolio, error) {
	var p *arena.Portfolio
	err := d.readTx(ctx, func(tx *sql.Tx) error {
		var err error
		p, err = scanPortfolio(tx.QueryRowContext(ctx, d.rebind(`SELECT `+portfolioColumns+` FROM portfolios WHERE id = ?`), id))
		if isNoRows(err) {
			return arena.Errorf(arena.ENOTFOUND, "portfolio %d not found", id)
		}
		if err != nil {
			return fmt.Errorf("store: load portfolio %d: %w", id, err)
		}
		if portfolioReadHook != nil {
			portfolioReadHook()
		}
		p.Positions, err = d.positions(ctx, tx, `portfolio_id = ? AND status = ?`, id, string(arena.PositionOpen))
		return err
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// PositionsOf implements arena.CohortStore.
func (d *DB) PositionsOf(ctx context.Context, portfolioID int64) ([]*arena.Position, error) {
	return d.positions(ctx, d.r(), `portfolio_id = ?`, portfolioID)
}

// Trades implements arena.CohortStore.
func (d *DB) Trades(ctx context.Context, portfolioID int64) ([]*arena.Trade, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT `+tradeColumns+` FROM trades WHERE portfolio_id = ? ORDER BY id`), []any{portfolioID}, scanTrade)
	if err != nil {
		return nil, fmt.Errorf("store: trades of portfolio %d: %w", portfolioID, err)
	}
	return out, nil
}

// CohortTrades implements arena.CohortStore.
func (d *DB) CohortTrades(ctx context.Context, cohortID int64) ([]*arena.Trade, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT `+tradeColumns+` FROM trades
		WHERE portfolio_id IN (SELECT id FROM portfolios WHERE cohort_id = ?) ORDER BY portfolio_id, id`), []any{cohortID}, scanTrade)
	if err != nil {
		return nil, fmt.Errorf("store: trades of cohort %d: %w", cohortID, err)
	}
	return out, nil
}

const tradeColumns = `id, portfolio_id, position_id, decision_id, market_id, side, kind,
	amount, shares, price, cost_basis, cash_before, confidence, created_at`

func scanTrade(sc scanner) (*arena.Trade, error) {
	var t arena.Trade
	var dec sql.NullInt64
	var kind string
	var created int64
	err := sc.Scan(&t.ID, &t.PortfolioID, &t.PositionID, &dec, &t.MarketID, &t.Side, &kind, &t.Amount, &t.Shares,
		&t.Price, &t.CostBasis, &t.CashBefore, &t.Confidence, &created)
	t.DecisionID, t.Kind, t.CreatedAt = dec.Int64, arena.TradeKind(kind), time.UnixMicro(created).UTC()
	return &t, err
}

// ApplyChange implements arena.CohortStore.
func (d *DB) ApplyChange(ctx context.Context, ch *arena.PortfolioChange) error {
	return d.tx(ctx, func(tx *sql.Tx) error { return d.applyChange(ctx, tx, ch, 0) })
}

// applyChange writes one portfolio's ledger change: the portfolio row
// (guarded by its version), changed positions before new ones (so a
// position closed and reopened on the same side never trips the one-open
// index), then the trades with provisional position ids mapped to real ones.
func (d *DB) applyChange(ctx context.Context, tx *sql.Tx, ch *arena.PortfolioChange, decisionID int64) error {
	d.touch(tx, arena.DomainTrading)
	r, err := tx.ExecContext(ctx, d.rebind(`UPDATE portfolios SET cash = ?, realized = ?, bankrupt = ?, version = version + 1
		WHERE id = ? AND version = ?`), int64(ch.Cash), int64(ch.Realized), ch.Bankrupt, ch.PortfolioID, ch.ExpectVersion)
	if err != nil {
		return fmt.Errorf("store: update portfolio %d: %w", ch.PortfolioID, err)
	}
	if n, err := r.RowsAffected(); err != nil || n != 1 {
		return arena.Rejectf(arena.ECONFLICT, arena.CodePortfolioChanged, "portfolio %d changed since version %d", ch.PortfolioID, ch.ExpectVersion)
	}
	ids := map[int64]int64{}
	for _, p := range ch.Positions {
		if p.ID < 0 {
			continue
		}
		// A decision's ledger carries the mark it loaded, which the
		// snapshot job may have refreshed since: a decision never writes the
		// mark of an existing position (settlements do, with the payout).
		q, args := `UPDATE positions SET shares = ?, cost_basis = ?, mark = ?, status = ?, closed_at = ? WHERE id = ? AND portfolio_id = ?`,
			[]any{int64(p.Shares), int64(p.CostBasis), int64(p.Mark), string(p.Status), micros(p.ClosedAt), p.ID, ch.PortfolioID}
		if decisionID != 0 {
			q, args = `UPDATE positions SET shares = ?, cost_basis = ?, status = ?, closed_at = ? WHERE id = ? AND portfolio_id = ?`,
				[]any{int64(p.Shares), int64(p.CostBasis), string(p.Status), micros(p.ClosedAt), p.ID, ch.PortfolioID}
		}
		r, err := tx.ExecContext(ctx, d.rebind(q), args...)
		if err != nil {
			return fmt.Errorf("store: update position %d: %w", p.ID, err)
		}
		if n, _ := r.RowsAffected(); n != 1 {
			return arena.Errorf(arena.ENOTFOUND, "position %d not found in portfolio %d", p.ID, ch.PortfolioID)
		}
		ids[p.ID] = p.ID
	}
	for _, p := range ch.Positions {
		if p.ID >= 0 {
			continue
		}
		var id int64
		err := tx.QueryRowContext(ctx, d.rebind(`INSERT INTO positions (portfolio_id, market_id, side, shares, cost_basis, mark, status, opened_at, closed_at)
			VALUES (?,?,?,?,?,?,?,?,?) RETURNING id`), ch.PortfolioID, p.MarketID, p.Side, int64(p.Shares), int64(p.CostBasis),
			int64(p.Mark), string(p.Status), p.OpenedAt.UnixMicro(), micros(p.ClosedAt)).Scan(&id)
		if err != nil {
			if isUniqueViolation(err) {
				return arena.Rejectf(arena.ECONFLICT, "position_exists", "portfolio %d already has an open %s position in market %d", ch.PortfolioID, p.Side, p.MarketID)
			}
			return fmt.Errorf("store: insert position in market %d: %w", p.MarketID, err)
		}
		ids[p.ID] = id
		p.ID = id
	}
	var dec any
	if decisionID != 0 {
		dec = decisionID
	}
	for _, t := range ch.Trades {
		pid, ok := ids[t.PositionID]
		if !ok {
			if t.PositionID < 0 {
				return fmt.Errorf("store: trade refers to unknown provisional position %d", t.PositionID)
			}
			pid = t.PositionID
		}
		t.PositionID, t.PortfolioID, t.DecisionID = pid, ch.PortfolioID, decisionID
		err := tx.QueryRowContext(ctx, d.rebind(`INSERT INTO trades (portfolio_id, position_id, decision_id, market_id, side, kind,
			amount, shares, price, cost_basis, cash_before, confidence, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?) RETURNING id`),
			ch.PortfolioID, pid, dec, t.MarketID, t.Side, string(t.Kind), int64(t.Amount), int64(t.Shares), int64(t.Price),
			int64(t.CostBasis), int64(t.CashBefore), t.Confidence, t.CreatedAt.UnixMicro()).Scan(&t.ID)
		if err != nil {
			return fmt.Errorf("store: insert %s trade: %w", t.Kind, err)
		}
	}
	return nil
}

func isUniqueViolation(err error) bool {
	s := err.Error()
	return strings.Contains(s, "UNIQUE constraint failed") || strings.Contains(s, "SQLSTATE 23505")
}

// SaveFrame implements arena.CohortStore.
func (d *DB) SaveFrame(ctx context.Context, cohortID int64, week time.Time, frame []byte) ([]byte, error) {
	if _, err := d.exec(ctx, trading, `INSERT INTO trading_frames (cohort_id, week, frame, created_at) VALUES (?,?,?,?)
		ON CONFLICT (cohort_id, week) DO NOTHING`, cohortID, week.UnixMicro(), string(frame), d.Now().UnixMicro()); err != nil {
		return nil, fmt.Errorf("store: save frame of cohort %d: %w", cohortID, err)
	}
	var stored string
	if err := d.r().QueryRowContext(ctx, d.rebind(`SELECT frame FROM trading_frames WHERE cohort_id = ? AND week = ?`),
		cohortID, week.UnixMicro()).Scan(&stored); err != nil {
		return nil, fmt.Errorf("store: load frame of cohort %d: %w", cohortID, err)
	}
	return []byte(stored), nil
}

const decisionColumns = `id, cohort_id, agent_id, week, status, owner, claimed_at, attempts, system_prompt, user_prompt,
	raw_responses, action, executions, retries, system_default, tokens_in, tokens_out, cost, latency_ms, error, finished_at`

func scanDecision(sc scanner) (*arena.Decision, error) {
	var dc arena.Decision
	var week, claimed int64
	var status, raw string
	var action, execs sql.NullString
	var finished sql.NullInt64
	err := sc.Scan(&dc.ID, &dc.CohortID, &dc.AgentID, &week, &status, &dc.Owner, &claimed, &dc.Attempts, &dc.SystemPrompt,
		&dc.UserPrompt, &raw, &action, &execs, &dc.Retries, &dc.SystemDefault, &dc.TokensIn, &dc.TokensOut, &dc.Cost,
		&dc.LatencyMS, &dc.Error, &finished)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(raw), &dc.RawResponses); err != nil {
		return nil, fmt.Errorf("store: decision %d raw responses: %w", dc.ID, err)
	}
	if action.Valid {
		dc.Action = json.RawMessage(action.String)
	}
	if execs.Valid {
		dc.Executions = json.RawMessage(execs.String)
	}
	dc.Week, dc.Status, dc.ClaimedAt = time.UnixMicro(week).UTC(), arena.DecisionStatus(status), time.UnixMicro(claimed).UTC()
	dc.FinishedAt = fromMicros(finished)
	return &dc, nil
}

func (d *DB) decision(ctx context.Context, q queryer, cohortID int64, agentID string, week time.Time) (*arena.Decision, error) {
	dc, err := scanDecision(q.QueryRowContext(ctx, d.rebind(`SELECT `+decisionColumns+` FROM decisions
		WHERE cohort_id = ? AND agent_id = ? AND week = ?`), cohortID, agentID, week.UnixMicro()))
	if err != nil {
		return nil, fmt.Errorf("store: load decision of %s in cohort %d: %w", agentID, cohortID, err)
	}
	return dc, nil
}

// ClaimDecision implements arena.CohortStore. Every step is a single
// statement whose WHERE clause re-checks the state it read, so of any
// number of concurrent claimants exactly one wins, on either engine.
func (d *DB) ClaimDecision(ctx context.Context, r arena.ClaimRequest) (*arena.Decision, bool, error) {
	if r.Owner == "" {
		return nil, false, arena.Errorf(arena.EINVALID, "claim: missing owner")
	}
	week, now := r.Week.UnixMicro(), r.Now.UnixMicro()
	res, err := d.exec(ctx, trading, `INSERT INTO decisions (cohort_id, agent_id, week, status, owner, claimed_at, attempts)
		VALUES (?,?,?,?,?,?,1) ON CONFLICT (cohort_id, agent_id, week) DO NOTHING`,
		r.CohortID, r.AgentID, week, string(arena.DecisionClaimed), r.Owner, now)
	if err != nil {
		return nil, false, fmt.Errorf("store: claim decision of %s in cohort %d: %w", r.AgentID, r.CohortID, err)
	}
	won, _ := res.RowsAffected()
	if won == 0 {
		cur, err := d.decision(ctx, d.db, r.CohortID, r.AgentID, r.Week)
		if err != nil {
			return nil, false, err
		}
		retry := cur.Status == arena.DecisionRetryable && (r.MaxAttempts == 0 || cur.Attempts < r.MaxAttempts)
		// A claim left by crashed processes is taken over only while
		// attempts remain, like a retryable failure: an agent whose run
		// keeps crashing its process stops being retried.
		stale := cur.Status == arena.DecisionClaimed && cur.ClaimedAt.Before(r.StaleBefore) &&
			(r.MaxAttempts == 0 || cur.Attempts < r.MaxAttempts)
		if !retry && !stale {
			return cur, false, nil
		}
		res, err := d.exec(ctx, trading, `UPDATE decisions SET status = ?, owner = ?, claimed_at = ?, attempts = attempts + 1
			WHERE id = ? AND status = ? AND owner = ? AND claimed_at = ?`,
			string(arena.DecisionClaimed), r.Owner, now, cur.ID, string(cur.Status), cur.Owner, cur.ClaimedAt.UnixMicro())
		if err != nil {
			return nil, false, fmt.Errorf("store: take over decision %d: %w", cur.ID, err)
		}
		won, _ = res.RowsAffected()
	}
	cur, err := d.decision(ctx, d.db, r.CohortID, r.AgentID, r.Week)
	if err != nil {
		return nil, false, err
	}
	return cur, won == 1, nil
}

func encodeRaw(d *arena.Decision) (string, any, any, error) {
	raw := d.RawResponses
	if raw == nil {
		raw = []string{}
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return "", nil, nil, err
	}
	var action, execs any
	if len(d.Action) > 0 {
		action = string(d.Action)
	}
	if len(d.Executions) > 0 {
		execs = string(d.Executions)
	}
	return string(b), action, execs, nil
}

// finish writes the decision's audit fields and new status, provided the
// caller still holds the claim.
func (d *DB) finish(ctx context.Context, tx *sql.Tx, dc *arena.Decision, status arena.DecisionStatus) error {
	raw, action, execs, err := encodeRaw(dc)
	if err != nil {
		return fmt.Errorf("store: encode decision %d: %w", dc.ID, err)
	}
	finished := d.Now()
	res, err := tx.ExecContext(ctx, d.rebind(`UPDATE decisions SET status = ?, system_prompt = ?, user_prompt = ?, raw_responses = ?,
		action = ?, executions = ?, retries = ?, system_default = ?, tokens_in = ?, tokens_out = ?, cost = ?, latency_ms = ?,
		error = ?, finished_at = ? WHERE id = ? AND owner = ? AND status = ?`),
		string(status), dc.SystemPrompt, dc.UserPrompt, raw, action, execs, dc.Retries, dc.SystemDefault, dc.TokensIn,
		dc.TokensOut, int64(dc.Cost), dc.LatencyMS, dc.Error, finished.UnixMicro(), dc.ID, dc.Owner, string(arena.DecisionClaimed))
	if err != nil {
		return fmt.Errorf("store: finish decision %d: %w", dc.ID, err)
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return arena.Rejectf(arena.ECONFLICT, arena.CodeClaimLost, "decision %d of %s is no longer claimed by %s", dc.ID, dc.AgentID, dc.Owner)
	}
	dc.Status, dc.FinishedAt = status, time.UnixMicro(finished.UnixMicro()).UTC()
	d.touch(tx, arena.DomainTrading)
	return nil
}

// FinishDecision implements arena.CohortStore.
func (d *DB) FinishDecision(ctx context.Context, dc *arena.Decision, ch *arena.PortfolioChange) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		if err := d.finish(ctx, tx, dc, arena.DecisionDone); err != nil {
			return err
		}
		if ch == nil {
			return nil
		}
		return d.applyChange(ctx, tx, ch, dc.ID)
	})
}

// FailDecision implements arena.CohortStore.
func (d *DB) FailDecision(ctx context.Context, dc *arena.Decision) error {
	return d.tx(ctx, func(tx *sql.Tx) error { return d.finish(ctx, tx, dc, arena.DecisionRetryable) })
}

// Decisions implements arena.CohortStore.
func (d *DB) Decisions(ctx context.Context, cohortID int64) ([]*arena.Decision, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT `+decisionColumns+` FROM decisions WHERE cohort_id = ? ORDER BY week, agent_id`),
		[]any{cohortID}, scanDecision)
	if err != nil {
		return nil, fmt.Errorf("store: decisions of cohort %d: %w", cohortID, err)
	}
	return out, nil
}

// DecisionCosts implements arena.CohortStore.
func (d *DB) DecisionCosts(ctx context.Context, cohortID int64) ([]arena.DecisionCost, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT agent_id, COUNT(*), COALESCE(SUM(cost), 0) FROM decisions
		WHERE cohort_id = ? GROUP BY agent_id ORDER BY agent_id`), []any{cohortID},
		func(sc scanner) (c arena.DecisionCost, err error) {
			return c, sc.Scan(&c.AgentID, &c.Decisions, &c.Cost)
		})
	if err != nil {
		return nil, fmt.Errorf("store: decision costs of cohort %d: %w", cohortID, err)
	}
	return out, nil
}

// OpenPositionMarkets implements arena.CohortStore.
func (d *DB) OpenPositionMarkets(ctx context.Context) ([]int64, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT DISTINCT market_id FROM positions WHERE status = ? ORDER BY market_id`), []any{string(arena.PositionOpen)},
		func(sc scanner) (id int64, err error) { return id, sc.Scan(&id) })
	if err != nil {
		return nil, fmt.Errorf("store: markets with open positions: %w", err)
	}
	return out, nil
}

// OpenPositionsIn implements arena.CohortStore.
func (d *DB) OpenPositionsIn(ctx context.Context, marketID int64) ([]*arena.Position, error) {
	return d.positions(ctx, d.r(), `market_id = ? AND status = ?`, marketID, string(arena.PositionOpen))
}

// SettleMarket implements arena.CohortStore. The settlement row is written
// only when no open position is left in the market after the changes.
func (d *DB) SettleMarket(ctx context.Context, s arena.Settlement, changes []*arena.PortfolioChange) error {
	return d.tx(ctx, func(tx *sql.Tx) error {
		for _, ch := range changes {
			if err := d.applyChange(ctx, tx, ch, 0); err != nil {
				return err
			}
		}
		var open int
		if err := tx.QueryRowContext(ctx, d.rebind(`SELECT COUNT(*) FROM positions WHERE market_id = ? AND status = ?`),
			s.MarketID, string(arena.PositionOpen)).Scan(&open); err != nil {
			return fmt.Errorf("store: count open positions of market %d: %w", s.MarketID, err)
		}
		if open > 0 {
			return arena.Rejectf(arena.ECONFLICT, "positions_open", "market %d still has %d open positions", s.MarketID, open)
		}
		_, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO market_settlements (market_id, resolution, policy, positions, settled_at)
			VALUES (?,?,?,?,?) ON CONFLICT (market_id) DO UPDATE SET positions = market_settlements.positions + excluded.positions,
			settled_at = excluded.settled_at`), s.MarketID, s.Resolution, s.Policy, s.Positions, s.SettledAt.UnixMicro())
		if err != nil {
			return fmt.Errorf("store: record settlement of market %d: %w", s.MarketID, err)
		}
		d.touch(tx, arena.DomainTrading)
		return nil
	})
}

// Settlements implements arena.CohortStore.
func (d *DB) Settlements(ctx context.Context) ([]arena.Settlement, error) {
	out, err := queryAll(ctx, d.r(), `SELECT market_id, resolution, policy, positions, settled_at FROM market_settlements ORDER BY market_id`, nil,
		func(sc scanner) (arena.Settlement, error) {
			var s arena.Settlement
			var at int64
			err := sc.Scan(&s.MarketID, &s.Resolution, &s.Policy, &s.Positions, &at)
			s.SettledAt = time.UnixMicro(at).UTC()
			return s, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: settlements: %w", err)
	}
	return out, nil
}

// SnapshotInterval is the valuation cadence; snapshot times are floored to it.
const SnapshotInterval = 10 * time.Minute

// SaveSnapshots implements arena.CohortStore.
func (d *DB) SaveSnapshots(ctx context.Context, snaps []arena.ValuationSnapshot, marks map[int64]arena.PPM) (int, error) {
	n := 0
	err := d.tx(ctx, func(tx *sql.Tx) error {
		n = 0
		for _, s := range snaps {
			at := s.At.UTC().Truncate(SnapshotInterval)
			r, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO portfolio_snapshots (portfolio_id, at, cash, positions_value, total, pnl,
				pnl_pct, brier, resolved_bets) VALUES (?,?,?,?,?,?,?,?,?) ON CONFLICT (portfolio_id, at) DO NOTHING`),
				s.PortfolioID, at.UnixMicro(), int64(s.Cash), int64(s.PositionsValue), int64(s.Total), int64(s.PnL), s.PnLPct, s.Brier, s.ResolvedBets)
			if err != nil {
				return fmt.Errorf("store: insert snapshot of portfolio %d: %w", s.PortfolioID, err)
			}
			k, _ := r.RowsAffected()
			n += int(k)
		}
		if n > 0 {
			d.touch(tx, arena.DomainTrading)
		}
		for id, mark := range marks {
			r, err := tx.ExecContext(ctx, d.rebind(`UPDATE positions SET mark = ? WHERE id = ? AND status = ? AND mark <> ?`),
				int64(mark), id, string(arena.PositionOpen), int64(mark))
			if err != nil {
				return fmt.Errorf("store: mark position %d: %w", id, err)
			}
			if err := d.touchIf(tx, r, arena.DomainTrading); err != nil {
				return fmt.Errorf("store: mark position %d: %w", id, err)
			}
		}
		return nil
	})
	return n, err
}

// Snapshots implements arena.CohortStore.
func (d *DB) Snapshots(ctx context.Context, portfolioID int64) ([]arena.ValuationSnapshot, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT portfolio_id, at, cash, positions_value, total, pnl, pnl_pct, brier, resolved_bets
		FROM portfolio_snapshots WHERE portfolio_id = ? ORDER BY at`), []any{portfolioID},
		func(sc scanner) (arena.ValuationSnapshot, error) {
			var s arena.ValuationSnapshot
			var at int64
			err := sc.Scan(&s.PortfolioID, &at, &s.Cash, &s.PositionsValue, &s.Total, &s.PnL, &s.PnLPct, &s.Brier, &s.ResolvedBets)
			s.At = time.UnixMicro(at).UTC()
			return s, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: snapshots of portfolio %d: %w", portfolioID, err)
	}
	return out, nil
}
