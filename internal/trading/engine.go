package trading

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/cache"
)

// Store is what the engine needs: markets and the trading records.
type Store interface {
	arena.MarketStore
	arena.CohortStore
}

// Decision is what a Decider returns: the action and the audit record of
// how it was reached.
type Decision struct {
	Action        Action
	SystemPrompt  string
	UserPrompt    string
	RawResponses  []string // every attempt, in order
	Retries       int
	SystemDefault bool // the action is the fallback HOLD, not the agent's
	TokensIn      int64
	TokensOut     int64
	Cost          Micros
	Latency       time.Duration
	// Note is stored in the decision row's error field even when the
	// decision succeeds: why earlier answers were rejected, for the audit.
	Note string
}

// Decider decides one agent's weekly action from its frozen snapshot. The
// LLM agent and the simulated traders implement it. An error means no
// decision was reached (stored as a retryable failure); a valid fallback
// HOLD is a decision.
type Decider interface {
	Decide(ctx context.Context, s Snapshot) (Decision, error)
}

// DeciderFunc adapts a function to Decider.
type DeciderFunc func(ctx context.Context, s Snapshot) (Decision, error)

// Decide implements Decider.
func (f DeciderFunc) Decide(ctx context.Context, s Snapshot) (Decision, error) { return f(ctx, s) }

// Policy says what settlement does with an ambiguous market (upstream says
// resolved, winner unknown).
type Policy string

const (
	PolicyRefund Policy = "refund" // cancel positions at cost basis
	PolicyDefer  Policy = "defer"  // leave positions open until resolved
	PolicyOracle Policy = "oracle" // wait for the oracle's resolution
)

// ParsePolicy validates a policy name.
func ParsePolicy(s string) (Policy, error) {
	switch p := Policy(s); p {
	case PolicyRefund, PolicyDefer, PolicyOracle:
		return p, nil
	}
	return "", arena.Errorf(arena.EINVALID, "unknown settlement policy %q (want refund, defer or oracle)", s)
}

// Engine runs cohorts: starts them, runs weekly decisions, values and
// settles portfolios.
type Engine struct {
	Store Store
	// Lineup is frozen into each new cohort.
	Lineup      []arena.LineupEntry
	InitialCash Micros // default $10,000
	TopMarkets  int    // markets offered per week, by volume (default 500)
	// ModelTimeout bounds one model call; a decision gets twice that, and a
	// claim older than twice that may be taken over.
	ModelTimeout time.Duration // default 120 s
	// ProviderLimit bounds concurrent decisions per provider across all
	// runs of this engine (default 2). Set it before the first run.
	ProviderLimit int
	// MaxAttempts bounds claims of a decision that keeps failing (default 3).
	MaxAttempts int
	Now         func() time.Time // default time.Now
	Logger      *slog.Logger

	mu     sync.Mutex
	sems   map[string]chan struct{} // per provider, shared by concurrent runs
	boards *cache.Cache[time.Duration, []LeaderRow]
}

// semaphore returns the provider's concurrency bound, shared by every run
// of this engine.
func (e *Engine) semaphore(provider string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.sems == nil {
		e.sems = map[string]chan struct{}{}
	}
	s := e.sems[provider]
	if s == nil {
		s = make(chan struct{}, e.providerLimit())
		e.sems[provider] = s
	}
	return s
}

func (e *Engine) initialCash() Micros {
	if e.InitialCash > 0 {
		return e.InitialCash
	}
	return InitialCash
}

func (e *Engine) topMarkets() int {
	if e.TopMarkets > 0 {
		return e.TopMarkets
	}
	return 500
}

func (e *Engine) modelTimeout() time.Duration {
	if e.ModelTimeout > 0 {
		return e.ModelTimeout
	}
	return 120 * time.Second
}

func (e *Engine) providerLimit() int {
	if e.ProviderLimit > 0 {
		return e.ProviderLimit
	}
	return 2
}

func (e *Engine) maxAttempts() int {
	if e.MaxAttempts > 0 {
		return e.MaxAttempts
	}
	return 3
}

func (e *Engine) now() time.Time {
	return arena.Clock(e.Now)().UTC()
}

func (e *Engine) log() *slog.Logger {
	return arena.Logger(e.Logger)
}

// StartCohort creates the cohort of the week containing weekStart with the
// engine's lineup, or returns the existing one (created false).
func (e *Engine) StartCohort(ctx context.Context, weekStart time.Time) (*arena.Cohort, bool, error) {
	if len(e.Lineup) == 0 {
		return nil, false, arena.Errorf(arena.EINVALID, "trading: no agents in the lineup")
	}
	c := &arena.Cohort{WeekStart: arena.WeekStart(weekStart), Status: arena.CohortActive, InitialCash: e.initialCash(),
		Lineup: append([]arena.LineupEntry(nil), e.Lineup...)}
	created, err := e.Store.CreateCohort(ctx, c)
	if err != nil {
		return nil, false, fmt.Errorf("trading: start cohort of %s: %w", c.WeekStart.Format("2006-01-02"), err)
	}
	if created {
		e.log().Info("cohort started", "cohort", c.ID, "week", c.WeekStart.Format("2006-01-02"), "agents", len(c.Lineup))
	}
	return c, created, nil
}

// Outcome of one agent in a run.
const (
	OutcomeDone      = "done"      // decision recorded now
	OutcomeSkipped   = "skipped"   // already done, claimed by a live run, or out of attempts
	OutcomeRetryable = "retryable" // failed; a later run may retry
	OutcomeNoDecider = "no_decider"
)

// AgentResult is what happened to one agent in a run.
type AgentResult struct {
	AgentID    string
	Outcome    string
	DecisionID int64
	Status     arena.DecisionStatus // the row's status after the run
	Action     ActionKind
	Executed   int
	Failed     int
	Error      string
}

// RunReport summarizes a decision run, agents in lineup order.
type RunReport struct {
	CohortID int64
	Week     time.Time
	Owner    string
	Markets  int
	Agents   []AgentResult
}

// Count returns how many agents ended with outcome.
func (r *RunReport) Count(outcome string) int {
	n := 0
	for _, a := range r.Agents {
		if a.Outcome == outcome {
			n++
		}
	}
	return n
}

func newOwner() string {
	b := make([]byte, 6)
	rand.Read(b)
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d/%s", host, os.Getpid(), hex.EncodeToString(b))
}

// Run is the weekly decision run of a cohort for the week
// containing now. It freezes the week's frame (or reuses the stored one),
// then for every lineup agent with a decider claims the (agent, cohort,
// week) row before calling the decider, executes the action at the frame's
// prices, and records decision and ledger change in one transaction.
// Agents run concurrently, at most ProviderLimit per provider. Running it
// again, or twice at once, never decides an agent twice.
func (e *Engine) Run(ctx context.Context, cohortID int64, now time.Time, deciders map[string]Decider) (*RunReport, error) {
	c, err := e.Store.Cohort(ctx, cohortID)
	if err != nil {
		return nil, fmt.Errorf("trading: run cohort %d: %w", cohortID, err)
	}
	week := arena.WeekStart(now)
	switch {
	case c.Status != arena.CohortActive:
		return nil, arena.Errorf(arena.EINVALID, "cohort %d is %s", c.ID, c.Status)
	case week.Before(c.WeekStart):
		return nil, arena.Errorf(arena.EINVALID, "cohort %d starts %s, after the week of %s", c.ID,
			c.WeekStart.Format("2006-01-02"), now.UTC().Format(time.RFC3339))
	}
	frame, err := e.freeze(ctx, c, week, now)
	if err != nil {
		return nil, err
	}
	ports, err := e.Store.Portfolios(ctx, c.ID)
	if err != nil {
		return nil, fmt.Errorf("trading: run cohort %d: %w", c.ID, err)
	}
	portfolioOf := map[string]int64{}
	for _, p := range ports {
		portfolioOf[p.AgentID] = p.ID
	}
	rep := &RunReport{CohortID: c.ID, Week: week, Owner: newOwner(), Markets: len(frame.Markets), Agents: make([]AgentResult, len(c.Lineup))}
	var wg sync.WaitGroup
	for i, entry := range c.Lineup {
		rep.Agents[i] = AgentResult{AgentID: entry.AgentID}
		dec := deciders[entry.AgentID]
		pid, ok := portfolioOf[entry.AgentID]
		if dec == nil || !ok {
			rep.Agents[i].Outcome = OutcomeNoDecider
			continue
		}
		provider := entry.Provider
		if provider == "" {
			provider = entry.Kind
		}
		sem := e.semaphore(provider)
		wg.Add(1)
		job := decision{cohort: c, frame: frame, owner: rep.Owner, agent: entry.AgentID, portfolio: pid, decider: dec, at: now}
		go func(i int) {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				rep.Agents[i].Outcome, rep.Agents[i].Error = OutcomeRetryable, ctx.Err().Error()
				return
			}
			defer func() { <-sem }()
			rep.Agents[i] = e.decide(ctx, job)
		}(i)
	}
	wg.Wait()
	e.log().Info("decision run finished", "cohort", c.ID, "week", week.Format("2006-01-02"), "done", rep.Count(OutcomeDone),
		"skipped", rep.Count(OutcomeSkipped), "retryable", rep.Count(OutcomeRetryable))
	return rep, ctx.Err()
}

// freeze returns the week's frame, building and storing it on first use:
// the open markets of traded venues closing after now, top by volume, plus
// the markets of every open position in the cohort.
func (e *Engine) freeze(ctx context.Context, c *arena.Cohort, week, now time.Time) (*Frame, error) {
	top, err := e.Store.Markets(ctx, arena.MarketFilter{Status: arena.StatusOpen, ClosesAfter: now, Traded: true, Limit: e.topMarkets()})
	if err != nil {
		return nil, fmt.Errorf("trading: freeze markets: %w", err)
	}
	ports, err := e.Store.Portfolios(ctx, c.ID)
	if err != nil {
		return nil, fmt.Errorf("trading: freeze positions: %w", err)
	}
	seen := map[int64]bool{}
	var held []*arena.Market
	for _, p := range ports {
		for _, pos := range p.Positions {
			if seen[pos.MarketID] {
				continue
			}
			seen[pos.MarketID] = true
			m, err := e.Store.Market(ctx, pos.MarketID)
			if err != nil {
				return nil, fmt.Errorf("trading: freeze market %d: %w", pos.MarketID, err)
			}
			held = append(held, m)
		}
	}
	b, err := EncodeFrame(BuildFrame(c.ID, week, now, top, held))
	if err != nil {
		return nil, fmt.Errorf("trading: encode frame: %w", err)
	}
	stored, err := e.Store.SaveFrame(ctx, c.ID, week, b)
	if err != nil {
		return nil, fmt.Errorf("trading: store frame: %w", err)
	}
	return DecodeFrame(stored)
}

// decision is one agent's weekly decision within a run.
type decision struct {
	cohort    *arena.Cohort
	frame     *Frame
	owner     string // the run's claim owner
	agent     string
	portfolio int64
	decider   Decider
	at        time.Time // the run's time, which stamps the trades
}

// maxReexecutions bounds how often an action is re-executed on a fresh
// portfolio after a concurrent change (a settlement) before the decision
// is left retryable.
const maxReexecutions = 3

// decide handles one agent: claim, decide, execute, record. Trades are
// stamped at j.at, the run's time (so `--now` replays are consistent with
// the frame, snapshots and settlement); the claim uses the wall clock,
// since its staleness is judged against other live processes.
func (e *Engine) decide(ctx context.Context, j decision) AgentResult {
	res := AgentResult{AgentID: j.agent}
	now := e.now()
	row, won, err := e.Store.ClaimDecision(ctx, arena.ClaimRequest{CohortID: j.cohort.ID, AgentID: j.agent, Week: j.frame.Week, Owner: j.owner,
		Now: now, StaleBefore: now.Add(-2 * e.modelTimeout()), MaxAttempts: e.maxAttempts()})
	if err != nil {
		res.Outcome, res.Error = OutcomeRetryable, err.Error()
		return res
	}
	res.DecisionID, res.Status = row.ID, row.Status
	if !won {
		res.Outcome = OutcomeSkipped
		return res
	}
	// The claim is ours: whatever happens next is written to the row, even
	// if the run is being cancelled, so a rerun can retry at once.
	cl := &claimed{e: e, j: j, row: row, res: res, bg: context.WithoutCancel(ctx)}
	p, err := e.Store.Portfolio(ctx, j.portfolio)
	if err != nil {
		return cl.fail(Decision{}, err.Error())
	}
	l, err := NewLedger(p, j.cohort.InitialCash)
	if err != nil {
		return cl.fail(Decision{}, err.Error())
	}
	d, err := cl.choose(ctx, l)
	if err != nil {
		return cl.fail(d, "decider: "+err.Error())
	}
	if err := d.Action.Validate(); err != nil {
		return cl.fail(d, "invalid action: "+arena.ErrorMessage(err))
	}
	cl.res.Action = d.Action.Kind
	return cl.execute(l, d)
}

// claimed is one agent's decision once its claim is won: the decision
// row it writes, whatever happens, and the result so far. bg is the run's
// context without its cancellation, for the writes.
type claimed struct {
	e   *Engine
	j   decision
	row *arena.Decision
	res AgentResult
	bg  context.Context
}

// fail records the decision d as failed (retryable) for msg, and returns
// the agent's result.
func (cl *claimed) fail(d Decision, msg string) AgentResult {
	row := cl.row
	cl.e.audit(row, d)
	row.Error = msg
	if d.Note != "" {
		row.Error += "; earlier: " + d.Note
	}
	if err := cl.e.Store.FailDecision(cl.bg, row); err != nil {
		msg += "; recording the failure: " + err.Error()
	}
	cl.res.Outcome, cl.res.Status, cl.res.Error = OutcomeRetryable, arena.DecisionRetryable, msg
	cl.e.log().Warn("decision failed", "cohort", cl.j.cohort.ID, "agent", cl.j.agent, "attempt", row.Attempts, "err", msg)
	return cl.res
}

// choose asks the agent's decider for its action on the ledger l, within
// twice the model timeout; an agent that can do nothing holds without a
// model call.
func (cl *claimed) choose(ctx context.Context, l *Ledger) (Decision, error) {
	if len(l.Open()) == 0 && !l.CanBet() {
		// Nothing the agent could do: no model call, a recorded HOLD.
		return Decision{Action: Hold(fmt.Sprintf("no open positions and cash %s is below the %s needed for a minimum bet", l.Cash(), MaxBetDivisor*MinBet)), SystemDefault: true}, nil
	}
	dctx, cancel := context.WithTimeout(ctx, 2*cl.e.modelTimeout())
	start := time.Now()
	d, err := safeDecide(dctx, cl.j.decider, BuildSnapshot(l, cl.j.frame, cl.j.agent))
	cancel()
	if d.Latency == 0 {
		d.Latency = time.Since(start)
	}
	return d, err
}

// execute executes d's action on the ledger l and records the decision
// with the portfolio's change. A concurrent settlement may change the
// portfolio between load and write; the same action is re-executed on the
// fresh state then, up to maxReexecutions times.
func (cl *claimed) execute(l *Ledger, d Decision) AgentResult {
	e, row, res := cl.e, cl.row, &cl.res
	for attempt := 0; ; attempt++ {
		ex, err := Execute(l, cl.j.frame, d.Action, cl.j.at.UTC())
		if err != nil {
			return cl.fail(d, err.Error())
		}
		res.Executed, res.Failed = Executed(ex), len(ex)-Executed(ex)
		e.audit(row, d)
		row.Executions, _ = json.Marshal(ex)
		if d.Action.Kind != ActionHold && res.Executed == 0 {
			return cl.fail(d, "no successful executions: "+reasons(ex))
		}
		var ch *arena.PortfolioChange
		if l.Changed() {
			if ch, err = l.Change(); err != nil {
				return cl.fail(d, err.Error())
			}
		}
		row.Error = d.Note
		err = e.Store.FinishDecision(cl.bg, row, ch)
		if err == nil {
			res.Outcome, res.Status = OutcomeDone, arena.DecisionDone
			return *res
		}
		if arena.ErrorCode(err) != arena.CodePortfolioChanged || attempt == maxReexecutions {
			return cl.notRecorded(d, err)
		}
		p, err := e.Store.Portfolio(cl.bg, cl.j.portfolio)
		if err != nil {
			return cl.fail(d, err.Error())
		}
		if l, err = NewLedger(p, cl.j.cohort.InitialCash); err != nil {
			return cl.fail(d, err.Error())
		}
	}
}

// notRecorded is the result of a decision whose record failed for err: a
// lost claim is skipped (another run has the row); otherwise the row
// records why the decision was not kept, and it is retryable.
func (cl *claimed) notRecorded(d Decision, err error) AgentResult {
	res, row := &cl.res, cl.row
	res.Outcome, res.Error = OutcomeRetryable, err.Error()
	if arena.ErrorCode(err) == arena.CodeClaimLost {
		res.Outcome = OutcomeSkipped
		return *res
	}
	row.Error = "recording the decision: " + err.Error()
	if d.Note != "" {
		row.Error += "; earlier: " + d.Note
	}
	if ferr := cl.e.Store.FailDecision(cl.bg, row); ferr == nil {
		res.Status = arena.DecisionRetryable
	} else {
		res.Error += "; recording the failure: " + ferr.Error()
	}
	return *res
}

// safeDecide turns a decider's panic into an error, so one broken agent
// records a retryable failure instead of taking the run down.
func safeDecide(ctx context.Context, dec Decider, s Snapshot) (d Decision, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return dec.Decide(ctx, s)
}

// audit copies the decider's record into the decision row.
func (e *Engine) audit(row *arena.Decision, d Decision) {
	row.SystemPrompt, row.UserPrompt, row.RawResponses = d.SystemPrompt, d.UserPrompt, d.RawResponses
	row.Retries, row.SystemDefault = d.Retries, d.SystemDefault
	row.TokensIn, row.TokensOut, row.Cost, row.LatencyMS = d.TokensIn, d.TokensOut, d.Cost, d.Latency.Milliseconds()
	if d.Action.Kind != "" {
		row.Action, _ = json.Marshal(d.Action)
	}
}

func reasons(ex []Execution) string {
	var parts []string
	for _, x := range ex {
		if !x.OK {
			parts = append(parts, fmt.Sprintf("%s[%d]: %s", strings.ToLower(string(x.Kind)), x.Index, x.Reason))
		}
	}
	if len(parts) == 0 {
		return "nothing to execute"
	}
	return strings.Join(parts, "; ")
}

// marketCache loads each market once per job.
type marketCache struct {
	store Store
	views map[int64]*MarketView
}

func (mc *marketCache) get(ctx context.Context, id int64) (*MarketView, error) {
	if v, ok := mc.views[id]; ok {
		return v, nil
	}
	m, err := mc.store.Market(ctx, id)
	if err != nil {
		return nil, err
	}
	v := ViewOf(m)
	if mc.views == nil {
		mc.views = map[int64]*MarketView{}
	}
	mc.views[id] = &v
	return &v, nil
}

// prefetch loads the markets of ids not cached yet in one query; get
// still loads any it missed.
func (mc *marketCache) prefetch(ctx context.Context, ids []int64) error {
	var want []int64
	seen := map[int64]bool{}
	for _, id := range ids {
		if _, ok := mc.views[id]; !ok && !seen[id] {
			seen[id] = true
			want = append(want, id)
		}
	}
	if len(want) == 0 {
		return nil
	}
	ms, err := mc.store.MarketsByID(ctx, want)
	if err != nil {
		return err
	}
	if mc.views == nil {
		mc.views = map[int64]*MarketView{}
	}
	for id, m := range ms {
		v := ViewOf(m)
		mc.views[id] = &v
	}
	return nil
}

// Snapshot values every portfolio of every active cohort at current market
// prices and stores one snapshot per portfolio at now floored to 10
// minutes; a second call in the same interval adds nothing. It
// returns how many snapshots were new.
func (e *Engine) Snapshot(ctx context.Context, now time.Time) (int, error) {
	at := now.UTC().Truncate(10 * time.Minute)
	cohorts, err := e.Store.Cohorts(ctx, arena.CohortActive)
	if err != nil {
		return 0, fmt.Errorf("trading: snapshot: %w", err)
	}
	mc := &marketCache{store: e.Store}
	total := 0
	for _, c := range cohorts {
		ports, err := e.Store.Portfolios(ctx, c.ID)
		if err != nil {
			return total, fmt.Errorf("trading: snapshot cohort %d: %w", c.ID, err)
		}
		var snaps []arena.ValuationSnapshot
		marks := map[int64]PPM{}
		for _, p := range ports {
			s, m, err := e.value(ctx, mc, c, p, at)
			if err != nil {
				return total, err
			}
			snaps = append(snaps, s)
			for id, v := range m {
				marks[id] = v
			}
		}
		n, err := e.Store.SaveSnapshots(ctx, snaps, marks)
		if err != nil {
			return total, fmt.Errorf("trading: snapshot cohort %d: %w", c.ID, err)
		}
		total += n
	}
	return total, nil
}

// value marks one portfolio; marks lists only positions with a fresh price.
func (e *Engine) value(ctx context.Context, mc *marketCache, c *arena.Cohort, p *arena.Portfolio, at time.Time) (arena.ValuationSnapshot, map[int64]PPM, error) {
	views := map[int64]*MarketView{}
	marks := map[int64]PPM{}
	for _, pos := range p.Positions {
		v, err := mc.get(ctx, pos.MarketID)
		if err != nil {
			return arena.ValuationSnapshot{}, nil, fmt.Errorf("trading: value portfolio %d: %w", p.ID, err)
		}
		views[pos.MarketID] = v
		if price, _, fresh := Mark(pos, v); fresh {
			marks[pos.ID] = price
		}
	}
	val, _ := Value(p.Cash, p.Positions, views, c.InitialCash)
	trades, err := e.Store.Trades(ctx, p.ID)
	if err != nil {
		return arena.ValuationSnapshot{}, nil, fmt.Errorf("trading: value portfolio %d: %w", p.ID, err)
	}
	for _, t := range trades {
		if t.Kind == arena.TradeBet {
			v, err := mc.get(ctx, t.MarketID)
			if err != nil {
				return arena.ValuationSnapshot{}, nil, fmt.Errorf("trading: value portfolio %d: %w", p.ID, err)
			}
			views[t.MarketID] = v
		}
	}
	brier, n := CumulativeBrier(trades, views)
	return arena.ValuationSnapshot{PortfolioID: p.ID, At: at, Cash: val.Cash, PositionsValue: val.PositionsValue, Total: val.Total,
		PnL: val.PnL, PnLPct: val.PnLPct, Brier: brier, ResolvedBets: n}, marks, nil
}

// Standing is one agent's live position in a cohort's leaderboard.
type Standing struct {
	AgentID       string
	Name          string
	PortfolioID   int64
	Valuation     Valuation
	Brier         float64 // mean over ResolvedBets; meaningful only when ResolvedBets > 0
	ResolvedBets  int
	OpenPositions int
	Bankrupt      bool
}

// Standings values a cohort's portfolios now at current market prices
// (without storing a snapshot), best total value first, ties by agent id.
func (e *Engine) Standings(ctx context.Context, cohortID int64) ([]Standing, error) {
	c, err := e.Store.Cohort(ctx, cohortID)
	if err != nil {
		return nil, fmt.Errorf("trading: standings: %w", err)
	}
	ports, err := e.Store.Portfolios(ctx, c.ID)
	if err != nil {
		return nil, fmt.Errorf("trading: standings: %w", err)
	}
	names := map[string]string{}
	for _, l := range c.Lineup {
		names[l.AgentID] = l.Name
	}
	mc := &marketCache{store: e.Store}
	var out []Standing
	for _, p := range ports {
		s, _, err := e.value(ctx, mc, c, p, e.now())
		if err != nil {
			return nil, err
		}
		out = append(out, Standing{AgentID: p.AgentID, Name: names[p.AgentID], PortfolioID: p.ID,
			Valuation: Valuation{Cash: s.Cash, PositionsValue: s.PositionsValue, Total: s.Total, PnL: s.PnL, PnLPct: s.PnLPct},
			Brier:     s.Brier, ResolvedBets: s.ResolvedBets, OpenPositions: len(p.Positions), Bankrupt: p.Bankrupt})
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Valuation.Total != out[j].Valuation.Total {
			return out[i].Valuation.Total > out[j].Valuation.Total
		}
		return out[i].AgentID < out[j].AgentID
	})
	return out, nil
}

// SettleReport summarizes a settlement pass.
type SettleReport struct {
	Markets          []arena.Settlement // settled now
	Settled          int                // positions paid out
	Cancelled        int                // positions refunded
	Deferred         []int64            // ambiguous markets left open by policy
	AwaitingOracle   []int64            // ambiguous markets waiting for the oracle
	CohortsCompleted int
}

// Settle settles every open position in a resolved market:
// winners pay $1 a share, losers nothing, void markets refund cost basis as
// CANCELLED, and ambiguous markets follow policy. A market is recorded as
// settled in the same transaction that settles its last open position.
// Cohorts whose first week is over and that hold no open position are
// marked completed.
func (e *Engine) Settle(ctx context.Context, now time.Time, policy Policy) (*SettleReport, error) {
	if _, err := ParsePolicy(string(policy)); err != nil {
		return nil, err
	}
	ids, err := e.Store.OpenPositionMarkets(ctx)
	if err != nil {
		return nil, fmt.Errorf("trading: settle: %w", err)
	}
	rep := &SettleReport{}
	cohorts := map[int64]*arena.Cohort{}
	for _, id := range ids {
		m, err := e.Store.Market(ctx, id)
		if err != nil {
			return rep, fmt.Errorf("trading: settle market %d: %w", id, err)
		}
		resolution, how := m.Resolution, ""
		if resolution == "" {
			if !m.Ambiguous {
				continue // not resolved yet
			}
			switch policy {
			case PolicyDefer:
				rep.Deferred = append(rep.Deferred, id)
				continue
			case PolicyOracle:
				rep.AwaitingOracle = append(rep.AwaitingOracle, id)
				continue
			}
			resolution, how = arena.Void, string(PolicyRefund)
		}
		var s *arena.Settlement
		for attempt := 0; ; attempt++ {
			s, err = e.settleMarket(ctx, m, resolution, how, now, cohorts)
			if err == nil || arena.ErrorKind(err) != arena.ECONFLICT || attempt == 3 {
				break
			}
		}
		if err != nil {
			return rep, fmt.Errorf("trading: settle market %d: %w", id, err)
		}
		rep.Markets = append(rep.Markets, *s)
		if resolution == arena.Void {
			rep.Cancelled += s.Positions
		} else {
			rep.Settled += s.Positions
		}
	}
	n, err := e.Store.CompleteCohorts(ctx, arena.WeekStart(now), now)
	if err != nil {
		return rep, fmt.Errorf("trading: settle: %w", err)
	}
	rep.CohortsCompleted = n
	if len(rep.Markets) > 0 || n > 0 {
		e.log().Info("settlement", "markets", len(rep.Markets), "settled", rep.Settled, "cancelled", rep.Cancelled,
			"deferred", len(rep.Deferred), "awaiting_oracle", len(rep.AwaitingOracle), "cohorts_completed", n)
	}
	return rep, nil
}

func (e *Engine) settleMarket(ctx context.Context, m *arena.Market, resolution, how string, now time.Time, cohorts map[int64]*arena.Cohort) (*arena.Settlement, error) {
	open, err := e.Store.OpenPositionsIn(ctx, m.ID)
	if err != nil {
		return nil, err
	}
	byPortfolio := map[int64]bool{}
	var pids []int64
	for _, pos := range open {
		if !byPortfolio[pos.PortfolioID] {
			byPortfolio[pos.PortfolioID] = true
			pids = append(pids, pos.PortfolioID)
		}
	}
	sort.Slice(pids, func(i, j int) bool { return pids[i] < pids[j] })
	s := &arena.Settlement{MarketID: m.ID, Resolution: resolution, Policy: how, SettledAt: now}
	var changes []*arena.PortfolioChange
	for _, pid := range pids {
		p, err := e.Store.Portfolio(ctx, pid)
		if err != nil {
			return nil, err
		}
		c := cohorts[p.CohortID]
		if c == nil {
			if c, err = e.Store.Cohort(ctx, p.CohortID); err != nil {
				return nil, err
			}
			cohorts[p.CohortID] = c
		}
		l, err := NewLedger(p, c.InitialCash)
		if err != nil {
			return nil, err
		}
		for _, pos := range l.OpenIn(m.ID) {
			if resolution == arena.Void {
				_, err = l.Cancel(pos.ID, now)
			} else {
				won, _ := Won(resolution, m.Type, pos.Side)
				_, err = l.Settle(pos.ID, won, now)
			}
			if err != nil {
				return nil, err
			}
			s.Positions++
		}
		ch, err := l.Change()
		if err != nil {
			return nil, err
		}
		changes = append(changes, ch)
	}
	if err := e.Store.SettleMarket(ctx, *s, changes); err != nil {
		return nil, err
	}
	return s, nil
}
