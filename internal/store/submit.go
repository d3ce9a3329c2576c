package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
)

// Submit implements arena.RoundStore. It is the hot path of the API (every
// signed commit and reveal), so
//
//   - concurrent submissions are group-committed: a caller leads and writes
//     everything queued so far in one transaction (one BEGIN, one COMMIT
//     and, on PostgreSQL, one WAL flush for the batch), then hands the lead
//     to the next waiter. A batch is written as a set with a fixed number
//     of statements (submitSet); within it each submission is checked
//     against the state left by those before it, so the checks and the
//     nonce sequence are exactly those of one transaction per submission. A
//     rejected submission writes nothing; anything doubtful rolls the batch
//     back and replays each submission in its own transaction;
//   - alone, a submission is three prepared statements (submitIn): one query
//     loads the round, the agent's nonce and its submission together; one
//     upsert advances the nonce with a compare-and-set (so two racing
//     requests with the same nonce cannot both be recorded, across replicas
//     and on PostgreSQL's READ COMMITTED too); one statement records the
//     commit, reveal or reasoning.
//
// The Round handed to check carries the schedule, the invalidation flag and
// k markets with their indices only (no market ids, benchmarks or
// outcomes): all a submission's checks read.
func (d *DB) Submit(ctx context.Context, kind arena.SubmissionKind, sub *arena.Submission, at time.Time, check func(arena.SubmissionState) error) error {
	g := d.submitGroup()
	r := &submitReq{kind: kind, sub: sub, at: at, check: check, lead: make(chan bool, 1)}
	g.mu.Lock()
	if g.leaders < d.maxLeaders() {
		g.leaders++
		g.mu.Unlock()
	} else {
		g.queue = append(g.queue, r)
		g.mu.Unlock()
		// Wait even if ctx ends: once queued the submission is written by
		// some leader, or this caller is handed the lead.
		if !<-r.lead {
			return r.err
		}
	}
	// Lead one batch: r and what is queued now (a queued request belongs
	// to whichever leader takes it, under g.mu), then hand the lead to the
	// next waiter, taking it off the queue first. Yielding before taking
	// the batch lets submissions about to queue join it.
	runtime.Gosched()
	g.mu.Lock()
	n := min(len(g.queue), maxSubmitBatch-1)
	batch := append([]*submitReq{r}, g.queue[:n]...)
	g.queue = g.queue[n:]
	g.mu.Unlock()
	// The batch is everyone's: it outlives its leader's request (a client
	// hanging up must not fail the others) but not a stuck database.
	bctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), submitBatchTimeout)
	d.runSubmitBatch(bctx, batch)
	cancel()
	for _, q := range batch[1:] {
		q.lead <- false
	}
	g.mu.Lock()
	if len(g.queue) > 0 {
		next := g.queue[0]
		g.queue = g.queue[1:]
		g.mu.Unlock()
		next.lead <- true
	} else {
		g.leaders--
		g.mu.Unlock()
	}
	return r.err
}

// maxSubmitBatch bounds a group commit, and so the latency one batch adds.
const maxSubmitBatch = 128

// submitBatchTimeout bounds one batch, replays included.
const submitBatchTimeout = 30 * time.Second

// maxLeaders is how many batches run at once: one on SQLite (one writer at
// a time anyway), a few on PostgreSQL, where a batch mostly waits for its
// WAL flush and concurrent batches share flushes. Batches running at once
// are safe for the same reasons replicas are (compare-and-set nonces,
// unique commits); a collision makes the later batch replay one by one.
func (d *DB) maxLeaders() int {
	if d.dialect == postgres {
		return 4
	}
	return 1
}

type submitGroup struct {
	mu      sync.Mutex
	leaders int // batches running
	queue   []*submitReq
}

type submitReq struct {
	kind  arena.SubmissionKind
	sub   *arena.Submission
	at    time.Time
	check func(arena.SubmissionState) error
	err   error
	lead  chan bool // true: lead the next batch; false: done, see err
}

func (d *DB) submitGroup() *submitGroup { return &d.submits }

// errReplay aborts a batch whose transaction can no longer be trusted.
var errReplay = errors.New("store: replay the batch one by one")

func (d *DB) runSubmitBatch(ctx context.Context, batch []*submitReq) {
	if len(batch) > 1 {
		if err := d.tx(ctx, func(tx *sql.Tx) error { return d.submitSet(ctx, tx, batch) }); err == nil {
			return
		}
	}
	for _, r := range batch {
		r.err = d.tx(ctx, func(tx *sql.Tx) error {
			_, err := d.submitIn(ctx, tx, r)
			return err
		})
	}
}

type subKey struct {
	round uint64
	agent string
}

// submitSet records a batch with a fixed number of statements whatever its
// size: one query loads the state of every (round, agent) involved; the
// checks then run in order against that state as updated by the batch's
// earlier accepted submissions (exactly what one transaction per
// submission would read); then one statement each writes the new agents,
// the advanced nonces (compare-and-set on the nonces read), the commits and
// the reveals, and reasoning uploads one statement each. Anything the
// one-by-one path could decide differently — a write not matching what was
// read (another replica), or a check accepting what the database would
// refuse — returns errReplay and the batch is replayed one by one.
func (d *DB) submitSet(ctx context.Context, tx *sql.Tx, batch []*submitReq) error {
	p, err := d.planSet(ctx, tx, batch)
	if err != nil {
		return err
	}
	return d.writeSet(ctx, tx, p)
}

// setPlan is what a batch writes once each of its requests has been checked
// in order against the state the earlier ones leave.
type setPlan struct {
	commits, reveals, reasons []*submitReq
	logged                    []timedLeaf // log entries of the accepted commits and reveals, in order
	newAgents, movedNonces    [][]any     // agents rows to insert; (address, old, new) nonces
}

// planSet reads the state the batch touches and replays the batch on it in
// memory: each request's check sees the state the earlier accepted ones
// leave, a refused one gets its error in r.err, and whatever the
// one-by-one path's writes would refuse fails the whole set (errReplay).
func (d *DB) planSet(ctx context.Context, tx *sql.Tx, batch []*submitReq) (*setPlan, error) {
	var keys []subKey
	seen := map[subKey]int{}
	var revealRounds []uint64
	for _, r := range batch {
		k := subKey{r.sub.RoundID, r.sub.Agent}
		if _, ok := seen[k]; !ok {
			seen[k] = len(keys)
			keys = append(keys, k)
		}
		if r.kind == arena.SubmitReveal && !slices.Contains(revealRounds, r.sub.RoundID) {
			revealRounds = append(revealRounds, r.sub.RoundID)
		}
	}
	if err := d.lockRoundsShared(ctx, tx, revealRounds); err != nil {
		return nil, err
	}
	states, agentRows, err := d.submissionStates(ctx, tx, keys)
	if err != nil {
		return nil, err
	}
	type agentState struct {
		exists bool // a row existed before the batch
		loaded uint64
		nonce  uint64 // current, after the batch's accepted submissions
		first  time.Time
	}
	agents := map[string]*agentState{}
	subs := map[subKey]*arena.Submission{}
	for i, k := range keys {
		if _, ok := agents[k.agent]; !ok {
			agents[k.agent] = &agentState{exists: agentRows[i], loaded: states[i].Nonce, nonce: states[i].Nonce}
		}
		subs[k] = states[i].Submission
	}
	var commits, reveals, reasons []*submitReq
	var logged []timedLeaf
	var bumped []string // agents whose nonce advances, in first-seen order
	for _, r := range batch {
		k := subKey{r.sub.RoundID, r.sub.Agent}
		a := agents[k.agent]
		cur := subs[k]
		st := arena.SubmissionState{Round: states[seen[k]].Round, Nonce: a.nonce, Submission: cur}
		if err := safeCheck(r.check, st); err != nil {
			r.err = err
			continue
		}
		// What the one-by-one path would refuse goes there, to say why.
		if r.kind == arena.SubmitCommit && st.Round == nil {
			return nil, errReplay
		}
		next, err := r.kind.Next(cur, r.sub, r.at)
		if err != nil {
			return nil, errReplay
		}
		switch r.kind {
		case arena.SubmitCommit, arena.SubmitReveal:
			nonce := r.sub.CommitNonce
			if r.kind == arena.SubmitReveal {
				nonce = r.sub.RevealNonce
			}
			if nonce != a.nonce {
				return nil, errReplay
			}
			if a.nonce == a.loaded {
				bumped = append(bumped, k.agent)
				a.first = r.at
			}
			a.nonce++
		}
		switch r.kind {
		case arena.SubmitCommit:
			commits = append(commits, r)
		case arena.SubmitReveal:
			reveals = append(reveals, r)
		case arena.SubmitReasoning:
			reasons = append(reasons, r)
		}
		subs[k] = next
		r.err = nil
		if r.sub.Log != nil && r.kind != arena.SubmitReasoning {
			logged = append(logged, timedLeaf{r.sub.Log, r.at})
		}
	}

	// Nonces: new agents inserted, known ones moved from the value read.
	var ins, upd [][]any
	for _, addr := range bumped {
		a := agents[addr]
		if a.exists {
			upd = append(upd, []any{addr, int64(a.loaded), int64(a.nonce)})
		} else {
			ins = append(ins, []any{addr, int64(a.nonce), a.first.UnixMicro()})
		}
	}
	return &setPlan{commits: commits, reveals: reveals, reasons: reasons, logged: logged, newAgents: ins, movedNonces: upd}, nil
}

// writeSet writes a planned set: nonces, then commits, reveals and
// reasoning, each kind in multi-row statements. A row that another writer
// changed since planSet read it fails the set (errReplay).
func (d *DB) writeSet(ctx context.Context, tx *sql.Tx, p *setPlan) error {
	d.touch(tx, arena.DomainSubmissions)
	if len(p.newAgents) > 0 {
		d.touch(tx, arena.DomainAgents)
	}
	commits, reveals, reasons, ins, upd := p.commits, p.reveals, p.reasons, p.newAgents, p.movedNonces
	err := d.chunked(ctx, tx, ins, func(n int) string {
		return `INSERT INTO agents (address, nonce, created_at) VALUES ` + paramRows(n, 3)
	}, nil)
	if err != nil {
		return errReplay // e.g. another replica registered the agent meanwhile
	}
	err = d.chunked(ctx, tx, upd, func(n int) string {
		return `UPDATE agents SET nonce = v.new FROM ` + d.valuesTable(n, "v", "addr TEXT", "old BIGINT", "new BIGINT") +
			` WHERE agents.address = v.addr AND agents.nonce = v.old`
	}, errReplay) // a nonce moved under us
	if err != nil {
		return err
	}
	var commitRows, revealRows [][]any
	for _, r := range commits {
		s := r.sub
		commitRows = append(commitRows, []any{int64(s.RoundID), s.Agent, s.CommitHash, s.ReasoningHash, int64(s.CommitNonce), s.CommitSig, int64(s.CommitSigDeadline), r.at.UnixMicro()})
	}
	err = d.chunked(ctx, tx, commitRows, func(n int) string {
		return `INSERT INTO submissions (round_id, agent, commit_hash, reasoning_hash, commit_nonce, commit_sig, commit_sig_deadline, committed_at) VALUES ` + paramRows(n, 8)
	}, nil)
	if err != nil {
		return errReplay
	}
	for _, r := range reveals {
		s := r.sub
		preds, _ := json.Marshal(s.Predictions)
		revealRows = append(revealRows, []any{int64(s.RoundID), s.Agent, string(preds), s.Salt, int64(s.RevealNonce), s.RevealSig, int64(s.RevealSigDeadline), r.at.UnixMicro()})
	}
	err = d.chunked(ctx, tx, revealRows, func(n int) string {
		return `UPDATE submissions SET predictions = v.preds, salt = v.salt, reveal_nonce = v.nonce, reveal_sig = v.sig, reveal_sig_deadline = v.dl, revealed_at = v.at FROM ` +
			d.valuesTable(n, "v", "rid BIGINT", "addr TEXT", "preds TEXT", "salt TEXT", "nonce BIGINT", "sig TEXT", "dl BIGINT", "at BIGINT") +
			` WHERE submissions.round_id = v.rid AND submissions.agent = v.addr AND submissions.predictions IS NULL`
	}, errReplay)
	if err != nil {
		return err
	}
	for _, r := range reasons {
		res, err := d.execPrepared(ctx, tx, `UPDATE submissions SET reasoning = ? WHERE round_id = ? AND agent = ? AND reasoning IS NULL`,
			r.sub.Reasoning, int64(r.sub.RoundID), r.sub.Agent)
		if err != nil {
			return fmt.Errorf("store: record reasoning: %w", err)
		}
		if k, _ := res.RowsAffected(); k != 1 {
			return errReplay
		}
	}
	if len(p.logged) > 0 {
		if _, err := d.appendLogIn(ctx, tx, p.logged); err != nil {
			return fmt.Errorf("store: append the batch's submissions to the log: %w", err)
		}
	}
	return nil
}

// chunks splits n rows into power-of-two statements, largest first, so a
// multi-row statement comes in few shapes that are prepared once each.
func chunks(n int) []int {
	var out []int
	for size := 64; n > 0; size /= 2 {
		for n >= size {
			out, n = append(out, size), n-size
		}
	}
	return out
}

// chunked executes query(size) over rows in chunks of prepared statements.
// With short non-nil, a chunk changing fewer rows than it has fails with
// short.
func (d *DB) chunked(ctx context.Context, tx *sql.Tx, rows [][]any, query func(n int) string, short error) error {
	for _, n := range chunks(len(rows)) {
		args := make([]any, 0, n*len(rows[0]))
		for _, r := range rows[:n] {
			args = append(args, r...)
		}
		rows = rows[n:]
		res, err := d.execPrepared(ctx, tx, query(n), args...)
		if err != nil {
			return fmt.Errorf("store: batch write: %w", err)
		}
		if k, _ := res.RowsAffected(); short != nil && k != int64(n) {
			return short
		}
	}
	return nil
}

// paramRows is n groups of k placeholders: (?,?,…),(…).
func paramRows(n, k int) string {
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", k), ",") + ")"
	return strings.TrimSuffix(strings.Repeat(row+",", n), ",")
}

// valuesTable is an n-row derived table of parameters named alias, with
// columns "name TYPE": VALUES with typed columns on PostgreSQL, VALUES
// with named columns on SQLite (whose VALUES columns are column1, …).
func (d *DB) valuesTable(n int, alias string, cols ...string) string {
	var b strings.Builder
	names := make([]string, len(cols))
	types := make([]string, len(cols))
	for j, c := range cols {
		names[j], types[j], _ = strings.Cut(c, " ")
	}
	if d.dialect == postgres {
		b.WriteString("(VALUES ")
		for i := 0; i < n; i++ {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('(')
			for j := range cols {
				if j > 0 {
					b.WriteByte(',')
				}
				b.WriteString("CAST(? AS " + types[j] + ")")
			}
			b.WriteByte(')')
		}
		b.WriteString(") AS " + alias + "(" + strings.Join(names, ", ") + ")")
		return b.String()
	}
	b.WriteString("(SELECT ")
	for j, name := range names {
		if j > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "column%d AS %s", j+1, name)
	}
	b.WriteString(" FROM (VALUES " + paramRows(n, len(cols)) + ")) AS " + alias)
	return b.String()
}

// submitIn records r in tx. wrote reports whether it changed anything
// before failing (then the transaction must be rolled back).
func (d *DB) submitIn(ctx context.Context, tx *sql.Tx, r *submitReq) (wrote bool, err error) {
	sub := r.sub
	if r.kind == arena.SubmitReveal {
		if err := d.lockRoundsShared(ctx, tx, []uint64{sub.RoundID}); err != nil {
			return false, err
		}
	}
	st, known, err := d.submissionState(ctx, tx, sub.RoundID, sub.Agent)
	if err != nil {
		return false, err
	}
	if err := safeCheck(r.check, st); err != nil {
		return false, err
	}
	// The state machine first; the statements below refuse the same steps
	// again should another writer have moved the row since it was read.
	if _, err := r.kind.Next(st.Submission, sub, r.at); err != nil {
		return false, err
	}
	bump := func(nonce uint64) error {
		res, err := d.execPrepared(ctx, tx, `INSERT INTO agents (address, nonce, created_at) VALUES (?, 1, ?)
			ON CONFLICT (address) DO UPDATE SET nonce = agents.nonce + 1 WHERE agents.nonce = ?`, sub.Agent, r.at.UnixMicro(), int64(nonce))
		if err != nil {
			wrote = true // a failed statement may poison the transaction (PostgreSQL)
			return fmt.Errorf("store: advance nonce of %s: %w", sub.Agent, err)
		}
		// A new agent is inserted with nonce 1: right, since check accepted
		// only its current nonce, 0. A known agent's nonce moves only from
		// the value check saw.
		if k, _ := res.RowsAffected(); k != 1 {
			return arena.Rejectf(arena.ECONFLICT, "nonce_invalid", "nonce %d of %s was used by a concurrent request", nonce, sub.Agent)
		}
		wrote = true
		return nil
	}
	switch r.kind {
	case arena.SubmitCommit:
		if err := bump(sub.CommitNonce); err != nil {
			return wrote, err
		}
		_, err = d.execPrepared(ctx, tx, `INSERT INTO submissions (round_id, agent, commit_hash, reasoning_hash, commit_nonce, commit_sig, commit_sig_deadline, committed_at)
			VALUES (?,?,?,?,?,?,?,?)`, int64(sub.RoundID), sub.Agent, sub.CommitHash, sub.ReasoningHash, int64(sub.CommitNonce), sub.CommitSig, int64(sub.CommitSigDeadline), r.at.UnixMicro())
		if err != nil {
			if isUniqueViolation(err) {
				return true, arena.Rejectf(arena.ECONFLICT, "already_committed", "round %d: agent %s already committed", sub.RoundID, sub.Agent)
			}
			return true, fmt.Errorf("store: insert commit: %w", err)
		}
	case arena.SubmitReveal:
		if err := bump(sub.RevealNonce); err != nil {
			return wrote, err
		}
		preds, _ := json.Marshal(sub.Predictions)
		res, err := d.execPrepared(ctx, tx, `UPDATE submissions SET predictions = ?, salt = ?, reveal_nonce = ?, reveal_sig = ?, reveal_sig_deadline = ?, revealed_at = ?
			WHERE round_id = ? AND agent = ? AND predictions IS NULL`, string(preds), sub.Salt, int64(sub.RevealNonce), sub.RevealSig, int64(sub.RevealSigDeadline), r.at.UnixMicro(), int64(sub.RoundID), sub.Agent)
		if err != nil {
			return true, fmt.Errorf("store: record reveal: %w", err)
		}
		if k, _ := res.RowsAffected(); k != 1 {
			return true, arena.Rejectf(arena.ECONFLICT, "already_revealed", "round %d: agent %s already revealed", sub.RoundID, sub.Agent)
		}
	case arena.SubmitReasoning:
		res, err := d.execPrepared(ctx, tx, `UPDATE submissions SET reasoning = ? WHERE round_id = ? AND agent = ? AND reasoning IS NULL`,
			sub.Reasoning, int64(sub.RoundID), sub.Agent)
		if err != nil {
			return true, fmt.Errorf("store: record reasoning: %w", err)
		}
		if k, _ := res.RowsAffected(); k != 1 {
			return false, arena.Rejectf(arena.ECONFLICT, "reasoning_already_stored", "round %d: reasoning of %s already stored", sub.RoundID, sub.Agent)
		}
	default:
		return false, fmt.Errorf("store: unknown submission kind %d", r.kind)
	}
	d.touch(tx, arena.DomainSubmissions)
	if !known {
		d.touch(tx, arena.DomainAgents) // registered by its first commit
	}
	if sub.Log != nil && r.kind != arena.SubmitReasoning {
		if _, err := d.appendLogIn(ctx, tx, []timedLeaf{{sub.Log, r.at}}); err != nil {
			return true, fmt.Errorf("store: append the %s to the log: %w", sub.Log.Kind, err)
		}
	}
	return true, nil
}

// lockRoundsShared holds the rounds' rows FOR SHARE on PostgreSQL before a
// reveal's state is loaded, so a reveal and SaveRoundResult (which updates
// the row) are serialized: either the trigger waits for the reveal to
// commit and sees it, or the reveal waits for the trigger and its check
// sees triggered_at. Shared locks do not block each other. SQLite needs
// nothing: its write transactions are serialized (BEGIN IMMEDIATE).
func (d *DB) lockRoundsShared(ctx context.Context, tx *sql.Tx, ids []uint64) error {
	if d.dialect != postgres {
		return nil
	}
	slices.Sort(ids)
	for _, id := range ids {
		if _, err := d.execPrepared(ctx, tx, `SELECT id FROM rounds WHERE id = ? FOR SHARE`, int64(id)); err != nil {
			return fmt.Errorf("store: lock round %d: %w", id, err)
		}
	}
	return nil
}

// safeCheck runs a caller's check; a panic becomes an error instead of
// killing the batch leader (and with it every queued submission).
func safeCheck(check func(arena.SubmissionState) error, st arena.SubmissionState) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("store: submission check panicked: %v", p)
		}
	}()
	return check(st)
}

// The state of (round, agent) pairs: the round's schedule and market
// count, whether the agent is known and its nonce, and its submission, each
// NULL when absent; q is a derived table of (i, rid, addr).
const (
	stateColumns = `q.i, r.id, r.commit_deadline, r.reveal_start, r.reveal_deadline, r.grace_micros, r.created_at,
	r.benchmark_at, r.triggered_at, r.invalidated, (SELECT COUNT(*) FROM round_markets m WHERE m.round_id = r.id),
	a.address, a.nonce,
	s.commit_hash, s.reasoning_hash, s.commit_nonce, s.commit_sig, s.committed_at,
	s.predictions, s.salt, s.reveal_nonce, s.reveal_sig, s.revealed_at, s.reasoning`
	stateJoins = ` LEFT JOIN rounds r ON r.id = q.rid
	LEFT JOIN agents a ON a.address = q.addr
	LEFT JOIN submissions s ON s.round_id = q.rid AND s.agent = q.addr`
	submissionStateQuery = `SELECT ` + stateColumns + ` FROM (SELECT CAST(? AS BIGINT) AS i, CAST(? AS BIGINT) AS rid, CAST(? AS TEXT) AS addr) q` + stateJoins
)

// submissionState loads the state of the agent's submission in the
// round, and whether the agent has a row in agents.
func (d *DB) submissionState(ctx context.Context, tx *sql.Tx, roundID uint64, agent string) (arena.SubmissionState, bool, error) {
	stmt, err := d.prepared(ctx, tx, submissionStateQuery)
	if err != nil {
		return arena.SubmissionState{}, false, err
	}
	_, st, known, err := scanState(stmt.QueryRowContext(ctx, 0, int64(roundID), agent), roundID, agent)
	if err != nil {
		return st, false, fmt.Errorf("store: load submission state of %s in round %d: %w", agent, roundID, err)
	}
	return st, known, nil
}

// submissionStates loads the states of keys (in power-of-two chunks of
// one prepared query each); known[i] says whether keys[i].agent has a row
// in agents.
func (d *DB) submissionStates(ctx context.Context, tx *sql.Tx, keys []subKey) ([]arena.SubmissionState, []bool, error) {
	states, known := make([]arena.SubmissionState, len(keys)), make([]bool, len(keys))
	base := 0
	for _, n := range chunks(len(keys)) {
		args := make([]any, 0, 3*n)
		for i, k := range keys[base : base+n] {
			args = append(args, base+i, int64(k.round), k.agent)
		}
		stmt, err := d.prepared(ctx, tx, `SELECT `+stateColumns+` FROM `+d.valuesTable(n, "q", "i BIGINT", "rid BIGINT", "addr TEXT")+stateJoins)
		if err != nil {
			return nil, nil, err
		}
		rs, err := stmt.QueryContext(ctx, args...)
		if err != nil {
			return nil, nil, fmt.Errorf("store: load submission states: %w", err)
		}
		got := 0
		for rs.Next() {
			i, st, ok, err := scanState(rs, 0, "")
			if err != nil || i < base || i >= base+n {
				rs.Close()
				return nil, nil, fmt.Errorf("store: load submission states: row %d: %v", i, err)
			}
			if st.Submission != nil {
				st.Submission.RoundID, st.Submission.Agent = keys[i].round, keys[i].agent
			}
			states[i], known[i] = st, ok
			got++
		}
		if err := rs.Close(); err != nil {
			return nil, nil, fmt.Errorf("store: load submission states: %w", err)
		}
		if err := rs.Err(); err != nil || got != n {
			return nil, nil, fmt.Errorf("store: load submission states: %d rows for %d keys (%v)", got, n, err)
		}
		base += n
	}
	return states, known, nil
}

// scanState reads one row of stateColumns.
func scanState(sc interface{ Scan(...any) error }, roundID uint64, agent string) (int, arena.SubmissionState, bool, error) {
	var st arena.SubmissionState
	var (
		i                                             int64
		rid, cd, rs, rd, grace, created, k            sql.NullInt64
		bench, trig, nonce, cnonce, committed         sql.NullInt64
		rnonce, revealed                              sql.NullInt64
		invalidated                                   sql.NullBool
		addr                                          sql.NullString
		chash, rhash, csig, preds, salt, rsig, reason sql.NullString
	)
	if err := sc.Scan(&i, &rid, &cd, &rs, &rd, &grace, &created, &bench, &trig, &invalidated, &k,
		&addr, &nonce, &chash, &rhash, &cnonce, &csig, &committed, &preds, &salt, &rnonce, &rsig, &revealed, &reason); err != nil {
		return -1, st, false, err
	}
	st.Nonce = uint64(nonce.Int64)
	if !rid.Valid {
		return int(i), st, addr.Valid, nil // no such round: the check rejects
	}
	st.Round = &arena.Round{ID: uint64(rid.Int64), CommitDeadline: time.UnixMicro(cd.Int64).UTC(), RevealStart: time.UnixMicro(rs.Int64).UTC(),
		RevealDeadline: time.UnixMicro(rd.Int64).UTC(), Grace: time.Duration(grace.Int64) * time.Microsecond, CreatedAt: time.UnixMicro(created.Int64).UTC(),
		BenchmarkAt: fromMicros(bench), TriggeredAt: fromMicros(trig), Invalidated: invalidated.Bool, Markets: make([]arena.RoundMarket, k.Int64)}
	for j := range st.Round.Markets {
		st.Round.Markets[j].Index = j
	}
	if !chash.Valid {
		return int(i), st, addr.Valid, nil // no commit yet
	}
	s := &arena.Submission{RoundID: roundID, Agent: agent, CommitHash: chash.String, ReasoningHash: rhash.String, CommitNonce: uint64(cnonce.Int64),
		CommitSig: csig.String, CommittedAt: time.UnixMicro(committed.Int64).UTC(), Salt: salt.String, RevealNonce: uint64(rnonce.Int64),
		RevealSig: rsig.String, RevealedAt: fromMicros(revealed), Reasoning: reason.String}
	if preds.Valid {
		if err := json.Unmarshal([]byte(preds.String), &s.Predictions); err != nil {
			return -1, st, false, fmt.Errorf("predictions of round %d agent %s: %w", rid.Int64, agent, err)
		}
		if s.Predictions == nil {
			s.Predictions = []uint16{}
		}
	}
	st.Submission = s
	return int(i), st, addr.Valid, nil
}

// prepared returns query prepared for use in tx. A query not prepared yet
// is prepared on tx's own connection, and for the database once tx has
// ended (preparePending): preparing it on the pool would wait for a
// second connection while tx holds its locks, and with every connection
// taken by transactions waiting for those locks (24 identical admin
// writes on PostgreSQL's 16 connections) it would wait forever.
func (d *DB) prepared(ctx context.Context, tx *sql.Tx, query string) (*sql.Stmt, error) {
	if st, ok := d.stmts.Load(query); ok {
		return tx.StmtContext(ctx, st.(*sql.Stmt)), nil
	}
	d.pending.Store(query, true)
	st, err := tx.PrepareContext(ctx, d.rebind(query))
	if err != nil {
		return nil, fmt.Errorf("store: prepare: %w", err)
	}
	return st, nil // closed with tx
}

// preparePending prepares for the database the queries transactions
// prepared on their own connections, outside any transaction. A failure
// leaves the query to be prepared again by the next transaction.
func (d *DB) preparePending(ctx context.Context) {
	d.pending.Range(func(q, _ any) bool {
		d.pending.Delete(q)
		if _, err := d.stmt(ctx, q.(string)); err != nil {
			d.pending.Store(q, true)
			return false
		}
		return true
	})
}

// stmt returns query prepared once for the life of the database: for
// the queries run most often, which SQLite would otherwise parse and
// PostgreSQL plan on every call. query must be a constant text.
func (d *DB) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	s, ok := d.stmts.Load(query)
	if !ok {
		st, err := d.db.PrepareContext(ctx, d.rebind(query))
		if err != nil {
			return nil, fmt.Errorf("store: prepare: %w", err)
		}
		var loaded bool
		if s, loaded = d.stmts.LoadOrStore(query, st); loaded {
			st.Close()
		}
	}
	return s.(*sql.Stmt), nil
}

func (d *DB) execPrepared(ctx context.Context, tx *sql.Tx, query string, args ...any) (sql.Result, error) {
	st, err := d.prepared(ctx, tx, query)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(ctx, args...)
}
