package forecast

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/score"
)

// Store is what the service needs of storage.
type Store interface {
	arena.MarketStore
	arena.RoundStore
}

// PriceLookup finds a market's Yes price near t from a source other than
// the local price history (e.g. Polymarket's CLOB prices-history).
type PriceLookup func(ctx context.Context, m *arena.Market, t time.Time) (price float64, at time.Time, ok bool, err error)

// OutcomeUnresolved is the frozen outcome of a market that had not
// resolved when the round was triggered; like a void market
// (OutcomeExcluded) it is excluded from scoring, but the API shows it as
// unresolved (null), not as VOID.
const OutcomeUnresolved int8 = -2

// BenchmarkTolerance is how far from the commit deadline a price point may
// lie and still serve as the benchmark.
const BenchmarkTolerance = 300 * time.Second

// Baseline agents scored in every round. The market baseline is the one
// the scoring package adds to every analysis, under the same name.
const (
	RandomAgent = "random"
	MarketAgent = score.MarketAgent
)

// Service runs the forecast track: rounds, submissions, benchmarks,
// triggering and scoring. Every method takes the clock from Now, so the
// demo can run it on an accelerated clock.
type Service struct {
	Store  Store
	Domain Domain
	Now    func() time.Time
	// Lookup is consulted when the local price history has no benchmark.
	Lookup PriceLookup
	Logger *slog.Logger
	// Log, when set, receives every accepted commit, reveal, benchmark,
	// resolution, outcome and score (the tamper-evident log). A tlog.Log
	// on the service's own store gets commits and reveals in the very
	// transaction that records them; other items are appended just after.
	Log Appender

	// Admission caps the agents a round and an hour admit (zero: none).
	Admission Admission

	// Method is the scoring method of the leaderboard (zero: DefaultMethod).
	Method Method

	// Round creation by rule.
	K     int
	Rules Rules
	Grace time.Duration
}

func (s *Service) now() time.Time {
	return arena.Clock(s.Now)().UTC()
}

func (s *Service) log() *slog.Logger {
	return arena.Logger(s.Logger)
}

// CreateRoundRequest is the admin request to create a round.
type CreateRoundRequest struct {
	MarketIDs      []int64   `json:"market_ids,omitempty"`
	CommitDeadline time.Time `json:"commit_deadline"`
	RevealStart    time.Time `json:"reveal_start"`
	RevealDeadline time.Time `json:"reveal_deadline"`
}

// CreateRound creates a round from explicit markets or, when none are
// given, from the stored rules.
func (s *Service) CreateRound(ctx context.Context, req CreateRoundRequest) (*arena.Round, error) {
	sched := Schedule{CommitDeadline: req.CommitDeadline.UTC(), RevealStart: req.RevealStart.UTC(), RevealDeadline: req.RevealDeadline.UTC()}
	if err := sched.Validate(); err != nil {
		return nil, err
	}
	now := s.now()
	if !sched.CommitDeadline.After(now) {
		return nil, reject(CodeScheduleInvalid, "schedule: commit deadline %s is not in the future", fmtTime(sched.CommitDeadline))
	}
	var markets []*arena.Market
	var rules []byte
	if len(req.MarketIDs) > 0 {
		for _, id := range req.MarketIDs {
			m, err := s.Store.Market(ctx, id)
			if err != nil {
				return nil, err
			}
			markets = append(markets, m)
		}
		rules, _ = json.Marshal(map[string]any{"manual": true, "market_ids": req.MarketIDs})
	} else {
		k := s.K
		if k == 0 {
			k = DefaultK
		}
		cands, err := s.Store.Markets(ctx, arena.MarketFilter{Type: arena.Binary, Status: arena.StatusOpen, ClosesAfter: sched.RevealDeadline})
		if err != nil {
			return nil, err
		}
		if markets, err = SelectMarkets(cands, k, s.Rules, sched.RevealDeadline); err != nil {
			return nil, err
		}
		rules, _ = json.Marshal(map[string]any{"k": k, "rules": s.Rules})
	}
	for _, m := range markets {
		if m.Status != arena.StatusOpen {
			return nil, reject(CodeRoundMarketsInvalid, "round: market %d (%s) is %s, not open", m.ID, m, m.Status)
		}
	}
	if err := ValidateRound(sched, len(markets), markets); err != nil {
		return nil, err
	}
	grace := s.Grace
	if grace == 0 {
		grace = 24 * time.Hour
	}
	r := &arena.Round{CommitDeadline: sched.CommitDeadline, RevealStart: sched.RevealStart, RevealDeadline: sched.RevealDeadline,
		Grace: grace, Rules: rules, CreatedAt: now}
	for i, m := range markets {
		r.Markets = append(r.Markets, arena.RoundMarket{Index: i, MarketID: m.ID})
	}
	if err := s.Store.CreateRound(ctx, r); err != nil {
		return nil, err
	}
	s.log().InfoContext(ctx, "round created", "round", r.ID, "markets", len(markets), "commit_deadline", fmtTime(r.CommitDeadline))
	return r, nil
}

func roundState(r *arena.Round) *RoundState {
	if r == nil {
		return nil
	}
	return &RoundState{ID: r.ID, K: len(r.Markets), Invalidated: r.Invalidated, Triggered: !r.TriggeredAt.IsZero(),
		Schedule: Schedule{CommitDeadline: r.CommitDeadline, RevealStart: r.RevealStart, RevealDeadline: r.RevealDeadline}}
}

func state(st arena.SubmissionState) State {
	out := State{Round: roundState(st.Round), Nonce: st.Nonce}
	if sub := st.Submission; sub != nil {
		out.Committed = true
		out.CommitHash = common.HexToHash(sub.CommitHash)
		if sub.ReasoningHash != "" {
			out.ReasoningHash = common.HexToHash(sub.ReasoningHash)
		}
		out.Revealed = sub.Revealed()
		out.ReasoningStored = sub.Reasoning != ""
	}
	return out
}

// ParseAddress accepts a 0x-prefixed address in any case.
func ParseAddress(s string) (common.Address, error) {
	if !common.IsHexAddress(s) || len(s) != 42 {
		return common.Address{}, reject(CodeAddressInvalid, "agent %q is not a 0x-prefixed 20-byte hex address", s)
	}
	return common.HexToAddress(s), nil
}

func parseHash(field, s string) (common.Hash, error) {
	if len(s) != 66 || s[:2] != "0x" {
		return common.Hash{}, reject(CodeHashInvalid, "%s %q is not a 0x-prefixed 32-byte hex value", field, s)
	}
	b, err := hex.DecodeString(s[2:])
	if err != nil {
		return common.Hash{}, reject(CodeHashInvalid, "%s %q is not hex", field, s)
	}
	return common.BytesToHash(b), nil
}

// Commit verifies and records a signed commit.
func (s *Service) Commit(ctx context.Context, roundID uint64, req CommitRequest) (SubmissionJSON, error) {
	agent, err := ParseAddress(req.Agent)
	if err != nil {
		return SubmissionJSON{}, err
	}
	ch, err := parseHash("commit_hash", req.CommitHash)
	if err != nil {
		return SubmissionJSON{}, err
	}
	var rh common.Hash
	if req.ReasoningHash != "" {
		if rh, err = parseHash("reasoning_hash", req.ReasoningHash); err != nil {
			return SubmissionJSON{}, err
		}
	}
	if err := s.Domain.CheckRequest(req.ChainID, req.VerifyingContract); err != nil {
		return SubmissionJSON{}, err
	}
	sig, err := DecodeSignature(req.Signature)
	if err != nil {
		return SubmissionJSON{}, err
	}
	msg := Commit{RoundID: roundID, CommitHash: ch, ReasoningHash: rh, Agent: agent, Nonce: req.Nonce, Deadline: req.Deadline}
	if err := s.Domain.VerifyCommit(msg, sig); err != nil {
		return SubmissionJSON{}, err
	}
	now := s.now()
	if err := s.Admission.admit(ctx, roundID, agent.Hex(), now); err != nil {
		return SubmissionJSON{}, err
	}
	sub := &arena.Submission{RoundID: roundID, Agent: agent.Hex(), CommitHash: ch.Hex(), CommitNonce: req.Nonce, CommitSig: EncodeSignature(sig),
		CommitSigDeadline: req.Deadline}
	if rh != (common.Hash{}) {
		sub.ReasoningHash = rh.Hex()
	}
	// Deadlines are checked against the arrival time: a request that came
	// in time is not refused because it waited in the group commit.
	entry := CommitEntry{RoundID: roundID, Agent: sub.Agent, CommitHash: sub.CommitHash, ReasoningHash: sub.ReasoningHash,
		Nonce: req.Nonce, Deadline: req.Deadline, Signature: sub.CommitSig}
	if sub.Log, err = s.leafInTx(logCommit, entry); err != nil {
		return SubmissionJSON{}, err
	}
	err = s.Store.Submit(ctx, arena.SubmitCommit, sub, now, func(st arena.SubmissionState) error {
		return ValidateCommit(state(st), msg, now)
	})
	if err != nil {
		return SubmissionJSON{}, err
	}
	if sub.Log == nil {
		s.record(ctx, logCommit, entry)
	}
	return SubmissionJSON{RoundID: roundID, Agent: agent.Hex(), Nonce: req.Nonce}, nil
}

// Reveal verifies and records a signed reveal.
func (s *Service) Reveal(ctx context.Context, roundID uint64, req RevealRequest) (SubmissionJSON, error) {
	agent, err := ParseAddress(req.Agent)
	if err != nil {
		return SubmissionJSON{}, err
	}
	salt, err := parseHash("salt", req.Salt)
	if err != nil {
		return SubmissionJSON{}, err
	}
	if req.Predictions == nil {
		return SubmissionJSON{}, reject(CodePredictionCount, "predictions missing")
	}
	if err := s.Domain.CheckRequest(req.ChainID, req.VerifyingContract); err != nil {
		return SubmissionJSON{}, err
	}
	sig, err := DecodeSignature(req.Signature)
	if err != nil {
		return SubmissionJSON{}, err
	}
	msg := Reveal{RoundID: roundID, Predictions: req.Predictions, Salt: salt, Agent: agent, Nonce: req.Nonce, Deadline: req.Deadline}
	if err := s.Domain.VerifyReveal(msg, sig); err != nil {
		return SubmissionJSON{}, err
	}
	now := s.now()
	sub := &arena.Submission{RoundID: roundID, Agent: agent.Hex(), Predictions: req.Predictions, Salt: salt.Hex(),
		RevealNonce: req.Nonce, RevealSig: EncodeSignature(sig), RevealSigDeadline: req.Deadline}
	// As for commits, deadlines use the arrival time. What must never
	// happen, a reveal counted after the round was scored, is excluded in
	// the transaction: the check refuses a triggered round, and the trigger
	// re-scores if a reveal landed while it was scoring.
	entry := RevealEntry{RoundID: roundID, Agent: sub.Agent, Predictions: sub.Predictions, Salt: sub.Salt,
		Nonce: req.Nonce, Deadline: req.Deadline, Signature: sub.RevealSig}
	if sub.Log, err = s.leafInTx(logReveal, entry); err != nil {
		return SubmissionJSON{}, err
	}
	err = s.Store.Submit(ctx, arena.SubmitReveal, sub, now, func(st arena.SubmissionState) error {
		return ValidateReveal(state(st), msg, now)
	})
	if err != nil {
		return SubmissionJSON{}, err
	}
	if sub.Log == nil {
		s.record(ctx, logReveal, entry)
	}
	return SubmissionJSON{RoundID: roundID, Agent: agent.Hex(), Nonce: req.Nonce}, nil
}

// UploadReasoning records reasoning that hashes to the committed value.
func (s *Service) UploadReasoning(ctx context.Context, roundID uint64, req ReasoningRequest) error {
	agent, err := ParseAddress(req.Agent)
	if err != nil {
		return err
	}
	if len(req.Content) > 4*MaxReasoningBytes {
		return reject(CodeReasoningTooLarge, "reasoning upload of %d bytes exceeds the limit", len(req.Content))
	}
	sub := &arena.Submission{RoundID: roundID, Agent: agent.Hex()}
	return s.Store.Submit(ctx, arena.SubmitReasoning, sub, s.now(), func(st arena.SubmissionState) error {
		_, canon, err := ValidateReasoning(state(st), []byte(req.Content))
		sub.Reasoning = string(canon)
		return err
	})
}

// Reasoning returns an agent's reasoning, published only after outcomes
// are triggered.
func (s *Service) Reasoning(ctx context.Context, roundID uint64, agent string) ([]string, error) {
	addr, err := ParseAddress(agent)
	if err != nil {
		return nil, err
	}
	r, err := s.Store.Round(ctx, roundID)
	if err != nil {
		return nil, err
	}
	if r.TriggeredAt.IsZero() {
		return nil, reject(CodeReasoningUnpublished, "round %d: reasoning is published after outcomes are triggered", roundID)
	}
	subs, err := s.Store.Submissions(ctx, roundID)
	if err != nil {
		return nil, err
	}
	for _, sub := range subs {
		if sub.Agent == addr.Hex() && sub.Reasoning != "" {
			var out []string
			if err := json.Unmarshal([]byte(sub.Reasoning), &out); err != nil {
				return nil, fmt.Errorf("forecast: stored reasoning of %s: %w", sub.Agent, err)
			}
			return out, nil
		}
	}
	return nil, reject(CodeReasoningNotFound, "round %d: no reasoning from %s", roundID, addr.Hex())
}

// BenchmarkRetryFor bounds how long after a round's commit deadline a
// failing benchmark lookup is retried; after it, the market whose lookup
// still fails has no benchmark (excluded from Alpha) and the others keep
// theirs.
const BenchmarkRetryFor = time.Hour

// ResolveMarket publishes the operator's resolution of a market; the
// resolution the market already has is a no-op. It is refused while a
// round containing the market, not yet scored, is before its reveal
// deadline: agents still able to reveal would see the outcome.
func (s *Service) ResolveMarket(ctx context.Context, marketID int64, resolution string) error {
	// The resolution in force again (such as the source's own, repeated
	// by an admin) changes nothing: no write, no new log entry.
	m, err := s.Store.Market(ctx, marketID)
	if err != nil {
		return err
	}
	if name, ok := m.ResolutionName(resolution); ok && m.Resolution == name {
		s.log().InfoContext(ctx, "market already resolved so; nothing recorded", "market", marketID, "resolution", name)
		return nil
	}
	now := s.now()
	rounds, err := s.Store.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		return err
	}
	for _, r := range rounds {
		if !r.TriggeredAt.IsZero() || r.Invalidated || now.After(r.RevealDeadline) {
			continue
		}
		for _, rm := range r.Markets {
			if rm.MarketID == marketID {
				return reject(CodeMarketInOpenRound, "market %d is in round %d, whose reveals close at %s; resolve it after that",
					marketID, r.ID, fmtTime(r.RevealDeadline))
			}
		}
	}
	if err := s.Store.ResolveMarket(ctx, marketID, resolution, now); err != nil {
		return err
	}
	s.record(ctx, logResolution, ResolutionEntry{MarketID: marketID, Resolution: resolution})
	return nil
}

// CaptureBenchmarks records the benchmark price of every market of each
// round whose commit deadline has passed by more than the tolerance (so
// points on both sides of the deadline are in) and returns how many rounds
// it completed. A round whose lookup fails is left for a later
// pass (until BenchmarkRetryFor); the other rounds are captured anyway and
// the errors are returned together.
func (s *Service) CaptureBenchmarks(ctx context.Context) (int, error) {
	rounds, err := s.Store.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		return 0, err
	}
	done := 0
	var errs []error
	for _, r := range rounds {
		if !r.BenchmarkAt.IsZero() || r.Invalidated || !r.TriggeredAt.IsZero() {
			continue
		}
		ok, err := s.captureRound(ctx, r, false)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			done++
		}
	}
	return done, errors.Join(errs...)
}

// captureRound records r's benchmarks when due; ok reports whether they
// are recorded now (by this call or, concurrently, by another replica).
// early (the operator's trigger of a round whose reveal deadline lies
// within the tolerance of its commit deadline) captures from the points
// available now instead of waiting for the window to close.
func (s *Service) captureRound(ctx context.Context, r *arena.Round, early bool) (bool, error) {
	now := s.now()
	if now.Before(r.CommitDeadline.Add(BenchmarkTolerance)) {
		if !early {
			return false, nil
		}
		s.log().WarnContext(ctx, "capturing benchmarks before the tolerance window closed (operator trigger)", "round", r.ID,
			"window_closes", fmtTime(r.CommitDeadline.Add(BenchmarkTolerance)))
	}
	giveUp := !now.Before(r.CommitDeadline.Add(BenchmarkRetryFor))
	ms := make([]arena.RoundMarket, len(r.Markets))
	var errs []error
	for i, rm := range r.Markets {
		ms[i] = rm
		m, err := s.Store.Market(ctx, rm.MarketID)
		if err != nil {
			return false, err
		}
		p, at, src, ok, err := s.benchmark(ctx, m, r.CommitDeadline)
		if err != nil {
			err = fmt.Errorf("forecast: benchmark of market %d in round %d: %w", m.ID, r.ID, err)
			if !giveUp {
				errs = append(errs, err)
				continue // try the others too, so one pass reports every failing market
			}
			s.log().WarnContext(ctx, "benchmark lookup still failing after the retry bound; market has no benchmark",
				"round", r.ID, "market", m.ID, "bound", BenchmarkRetryFor, "err", err)
			ok = false
		}
		if ok {
			ms[i].Benchmark, ms[i].BenchmarkBps, ms[i].BenchmarkTime, ms[i].BenchmarkSource = &p, int32(math.Round(p*MaxBps)), at, src
		}
	}
	if len(errs) > 0 {
		return false, errors.Join(errs...) // retried on a later pass
	}
	if err := s.Store.SetBenchmarks(ctx, r.ID, ms, now); err != nil {
		if arena.ErrorKind(err) == arena.ECONFLICT {
			return true, nil // another replica recorded them first
		}
		return false, err
	}
	be := BenchmarkEntry{RoundID: r.ID}
	for _, rm := range ms {
		b := NoBenchmark
		if rm.Benchmark != nil {
			b = rm.BenchmarkBps
		}
		be.MarketIDs, be.Benchmarks = append(be.MarketIDs, rm.MarketID), append(be.Benchmarks, b)
	}
	s.record(ctx, logBenchmark, be)
	return true, nil
}

func (s *Service) benchmark(ctx context.Context, m *arena.Market, t time.Time) (float64, time.Time, arena.PriceSource, bool, error) {
	pts, err := s.Store.PriceHistory(ctx, m.ID, arena.Yes, t.Add(-BenchmarkTolerance), t.Add(BenchmarkTolerance))
	if err != nil {
		return 0, time.Time{}, "", false, err
	}
	var best *arena.PricePoint
	for i := range pts {
		p := &pts[i]
		if p.Source == arena.PriceGamma || p.Source == arena.PriceFreeze {
			continue // the benchmark is a mid-price (CLOB or simulator), never Gamma's quote
		}
		if best == nil || absDur(p.Time.Sub(t)) < absDur(best.Time.Sub(t)) {
			best = p
		}
	}
	if best != nil {
		return best.Price, best.Time, best.Source, true, nil
	}
	if s.Lookup != nil {
		p, at, ok, err := s.Lookup(ctx, m, t)
		if err != nil || !ok {
			return 0, time.Time{}, "", false, err
		}
		return p, at, arena.PriceCLOBHistory, true, nil
	}
	return 0, time.Time{}, "", false, nil
}

func absDur(d time.Duration) time.Duration {
	if d < 0 {
		return -d
	}
	return d
}

// TriggerDue triggers every round that is due and returns how
// many it scored.
func (s *Service) TriggerDue(ctx context.Context) (int, error) {
	rounds, err := s.Store.Rounds(ctx, arena.RoundFilter{Status: arena.RoundScoring, Now: s.now()})
	if err != nil {
		return 0, err
	}
	n := 0
	var errs []error
	for _, r := range rounds {
		ok, err := s.trigger(ctx, r, false)
		if errors.Is(err, errNoBenchmarks) || errors.Is(err, errTriggeredElsewhere) {
			continue // retried on the next pass, or done by another run
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("forecast: trigger round %d: %w", r.ID, err))
		}
		if ok {
			n++
		}
	}
	return n, errors.Join(errs...)
}

// Trigger freezes a round's outcomes and scores it now, without waiting
// for the grace period (the admin trigger). At least one market must have
// resolved to YES or NO.
func (s *Service) Trigger(ctx context.Context, roundID uint64) error {
	r, err := s.Store.Round(ctx, roundID)
	if err != nil {
		return err
	}
	if st := r.Status(s.now()); st != arena.RoundScoring {
		return reject(CodeTriggerNotAllowed, "round %d is %s; outcomes are triggered after the reveal deadline, once", roundID, st)
	}
	ok, err := s.trigger(ctx, r, true)
	if errors.Is(err, errTriggeredElsewhere) {
		return reject(CodeTriggerNotAllowed, "round %d: outcomes were already triggered (by another run)", roundID)
	}
	if errors.Is(err, errNoBenchmarks) {
		return reject(CodeTriggerNotAllowed, "round %d: benchmarks are not captured yet (a lookup is retried until %s)",
			roundID, fmtTime(r.CommitDeadline.Add(BenchmarkRetryFor)))
	}
	if err != nil {
		return err
	}
	if !ok {
		return reject(CodeNoResolvedMarkets, "round %d: no market has resolved to YES or NO yet", roundID)
	}
	return nil
}

// trigger scores r when all its markets resolved, or (force, or after the
// grace period) when at least one did.
func (s *Service) trigger(ctx context.Context, r *arena.Round, force bool) (bool, error) {
	now := s.now()
	frozen := make([]int8, len(r.Markets)) // as stored and shown: void and unresolved apart
	markets := make([]*arena.Market, len(r.Markets))
	resolved, scoreable := 0, 0
	for i, rm := range r.Markets {
		m, err := s.Store.Market(ctx, rm.MarketID)
		if err != nil {
			return false, err
		}
		markets[i] = m
		frozen[i] = OutcomeUnresolved
		// An ambiguous market (resolved upstream, winner unknown) waits for
		// the oracle: it is not resolved yet.
		if m.Status == arena.StatusResolved && !m.Ambiguous {
			resolved++
			switch m.Resolution {
			case arena.Yes:
				frozen[i], scoreable = OutcomeYes, scoreable+1
			case arena.No:
				frozen[i], scoreable = OutcomeNo, scoreable+1
			default:
				frozen[i] = OutcomeExcluded
			}
		}
	}
	all := resolved == len(r.Markets)
	due := all || ((force || !now.Before(r.RevealDeadline.Add(r.Grace))) && scoreable > 0)
	if !due {
		return false, nil
	}
	if scoreable == 0 {
		// Every market resolved and every one void: nothing to score, but
		// the round is over; freeze it with no scores rather than leave it
		// in "scoring" for ever.
		if err := s.Store.SaveRoundResult(ctx, r.ID, frozen, nil, nil, now); err != nil {
			if arena.ErrorCode(err) == arena.CodeAlreadyTriggered {
				return false, errTriggeredElsewhere
			}
			return false, err
		}
		s.record(ctx, logOutcome, OutcomeEntry{RoundID: r.ID, Outcomes: frozen})
		s.log().InfoContext(ctx, "round closed without scoreable markets", "round", r.ID, "void", len(r.Markets))
		return true, nil
	}
	// Alpha needs the benchmarks: capture them first if the job has not
	// (yet), and wait while a lookup is still being retried.
	if r.BenchmarkAt.IsZero() {
		ok, err := s.captureRound(ctx, r, force)
		if !ok {
			if err != nil {
				s.log().WarnContext(ctx, "round due but its benchmarks are not captured yet", "round", r.ID, "err", err)
			}
			return false, errNoBenchmarks
		}
		if r, err = s.Store.Round(ctx, r.ID); err != nil {
			return false, err
		}
		// The trigger follows the capture it waited for: its time is
		// after the benchmarks' (verify checks the order).
		if r.BenchmarkAt.After(now) {
			now = r.BenchmarkAt
		}
	}
	// A reveal committed between reading the submissions and saving the
	// result makes the store refuse (rescore): read and score again.
	for attempt := 1; ; attempt++ {
		err := s.scoreAndSave(ctx, r, frozen, markets, now)
		if arena.ErrorCode(err) == arena.CodeRescore && attempt < maxRescores {
			s.log().InfoContext(ctx, "submissions changed while scoring; rescoring", "round", r.ID)
			continue
		}
		if arena.ErrorCode(err) == arena.CodeAlreadyTriggered {
			return false, errTriggeredElsewhere // another replica scored it first
		}
		return err == nil, err
	}
}

// maxRescores bounds trigger's retries when reveals keep committing under
// it (each retry means a reveal was accepted before the trigger; they stop
// at the deadline).
const maxRescores = 5

// errTriggeredElsewhere: another run (a replica, a concurrent admin
// trigger) froze the round's outcomes between our read and our save.
var errTriggeredElsewhere = errors.New("forecast: outcomes already triggered by another run")

// errNoBenchmarks: the round is due but its benchmarks are not recorded.
var errNoBenchmarks = reject(CodeTriggerNotAllowed, "benchmarks are not captured yet")

func (s *Service) scoreAndSave(ctx context.Context, r *arena.Round, frozen []int8, markets []*arena.Market, now time.Time) error {
	subs, err := s.Store.Submissions(ctx, r.ID)
	if err != nil {
		return err
	}
	scores, rows, err := ScoreFrozen(r, frozen, markets, subs)
	if err != nil {
		return err
	}
	if err := s.Store.SaveRoundResult(ctx, r.ID, frozen, scores, rows, now); err != nil {
		return err
	}
	s.recordScores(ctx, r.ID, frozen, scores)
	s.log().InfoContext(ctx, "round scored", "round", r.ID, "scored_forecasts", len(rows), "agents", len(subs)+1)
	return nil
}

// recordScores logs a round's frozen outcomes and its scores.
func (s *Service) recordScores(ctx context.Context, roundID uint64, frozen []int8, scores []arena.RoundScore) {
	s.record(ctx, logOutcome, OutcomeEntry{RoundID: roundID, Outcomes: frozen})
	for _, sc := range scores {
		s.record(ctx, logScore, ScoreEntry{RoundID: roundID, Agent: sc.Agent, BrierBps2: sc.BrierBps2, AlphaBps2: sc.AlphaBps2,
			Scored: sc.Scored, Benchmarked: sc.Benchmarked, Forfeit: sc.Forfeit})
	}
}

// ScoreFrozen scores a round from its frozen outcomes (as stored: YES 1,
// NO 0, void and unresolved excluded), its benchmarks and its submissions
// (an unrevealed commit is a forfeit), plus the random baseline, and the
// market baseline when some market has a benchmark: the scores and scored
// forecasts the trigger saves; markets (aligned with r.Markets) give the
// scored forecasts' categories and events. A re-resolution re-scores with
// it too (see Rescore). With no market scored YES or NO there are no
// scores.
func ScoreFrozen(r *arena.Round, frozen []int8, markets []*arena.Market, subs []*arena.Submission) ([]arena.RoundScore, []arena.ScoredForecast, error) {
	if len(markets) != len(r.Markets) {
		return nil, nil, arena.Errorf(arena.EINVALID, "score round %d: %d markets for %d round markets", r.ID, len(markets), len(r.Markets))
	}
	outcomes, err := RoundOutcomes(r, frozen)
	if err != nil {
		return nil, nil, err
	}
	agents := make([]string, 0, len(subs)+1)
	entries := make([]Entry, 0, len(subs)+1)
	for _, sub := range subs {
		agents = append(agents, sub.Agent)
		if sub.Revealed() {
			entries = append(entries, Entry{Predictions: sub.Predictions})
		} else {
			entries = append(entries, Entry{Forfeit: true})
		}
	}
	agents = append(agents, RandomAgent)
	entries = append(entries, Entry{Predictions: RandomPredictions(r.ID, r.CommitDeadline, len(r.Markets))})
	res, err := ScoreRound(outcomes, entries)
	if err != nil {
		return nil, nil, err
	}
	if res.N == 0 {
		return nil, nil, nil
	}
	var scores []arena.RoundScore
	var rows []arena.ScoredForecast
	for a, as := range res.Agents {
		sc := arena.RoundScore{RoundID: r.ID, Agent: agents[a], Brier: as.Brier, BrierBps2: as.BrierBps2,
			Scored: res.N, Benchmarked: res.AlphaN, Forfeit: as.Forfeit}
		if res.AlphaN > 0 {
			alpha, abps := as.Alpha, as.AlphaBps2
			sc.Alpha, sc.AlphaBps2 = &alpha, &abps
		}
		scores = append(scores, sc)
		for i, mo := range outcomes {
			if !mo.Scored() {
				continue
			}
			rows = append(rows, arena.ScoredForecast{RoundID: r.ID, Agent: agents[a], MarketID: mo.MarketID, Category: markets[i].Category,
				Event: markets[i].EventID, Outcome: mo.Outcome, Benchmark: mo.BenchmarkPrice(), Forfeit: as.Forfeit,
				Forecast: entries[a].Forecast(i, mo.Outcome)})
		}
	}
	if res.AlphaN > 0 {
		zero, zeroBps := 0.0, int64(0)
		scores = append(scores, arena.RoundScore{RoundID: r.ID, Agent: MarketAgent, Brier: res.BaseBrier, BrierBps2: res.BaseBrierBps2,
			Alpha: &zero, AlphaBps2: &zeroBps, Scored: res.AlphaN, Benchmarked: res.AlphaN})
	}
	return scores, rows, nil
}

// RandomPredictions is the random baseline of a round: uniform in
// [0, 10000], seeded by the round id and commit deadline (public, fixed
// before anyone commits) so anyone can recompute it, and two arenas'
// round 1 differ.
func RandomPredictions(roundID uint64, commitDeadline time.Time, k int) []uint16 {
	rng := rand.New(rand.NewPCG(roundID, uint64(commitDeadline.Unix())))
	out := make([]uint16, k)
	for i := range out {
		out[i] = uint16(rng.IntN(MaxBps + 1))
	}
	return out
}

// Clock is the service's current time (UTC).
func (s *Service) Clock() time.Time { return s.now() }
