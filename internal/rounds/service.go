package rounds

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sync"
	"time"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/cache"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
)

// Store is what the service needs of storage.
type Store = arena.ForecastStore

// PriceLookup finds a market's Yes price near t from a source other than
// the local price history (Polymarket's CLOB prices-history, another
// venue's own history: venue.Benchmarker), with its provenance; ok is
// false when the source has none.
type PriceLookup func(ctx context.Context, m *arena.Market, t time.Time) (p arena.PricePoint, ok bool, err error)

// Service runs the forecast track: rounds, submissions, benchmarks,
// triggering and scoring. Every accepted commit, reveal, profile,
// benchmark, resolution, outcome and score is appended to the
// tamper-evident log kept in Store, in the transaction that records it.
// Every method takes the clock from Now, so the demo can run it on an
// accelerated clock.
type Service struct {
	Store  Store
	Domain forecast.Domain
	Now    func() time.Time
	// Lookup is consulted when the local price history has no benchmark.
	Lookup PriceLookup
	Logger *slog.Logger

	// Admission caps the agents a round and an hour admit (zero: none).
	Admission Admission

	// Method is the scoring method of the leaderboard (zero: DefaultMethod).
	Method scoring.Method

	// Round creation by rule. RulesErr is why the configured rules could
	// not be read: only a round that selects its markets by them fails
	// with it, so commands that create no such round still work.
	K        int
	Rules    Rules
	RulesErr error
	Grace    time.Duration

	// analyses are the leaderboard's analyses by view, made on first use
	// (a Service is used by pointer; vet's copylocks check keeps it so).
	analysesOnce sync.Once
	analyses     *cache.Cache[string, *view]
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
	sched := forecast.Schedule{CommitDeadline: req.CommitDeadline.UTC(), RevealStart: req.RevealStart.UTC(), RevealDeadline: req.RevealDeadline.UTC()}
	if err := sched.Validate(); err != nil {
		return nil, err
	}
	now := s.now()
	if !sched.CommitDeadline.After(now) {
		return nil, forecast.Reject(forecast.CodeScheduleInvalid, "schedule: commit deadline %s is not in the future", fmtTime(sched.CommitDeadline))
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
		if s.RulesErr != nil {
			return nil, s.RulesErr
		}
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
			return nil, forecast.Reject(forecast.CodeRoundMarketsInvalid, "round: market %d (%s) is %s, not open", m.ID, m, m.Status)
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

func roundState(r *arena.Round) *forecast.RoundState {
	if r == nil {
		return nil
	}
	return &forecast.RoundState{ID: r.ID, K: len(r.Markets), Invalidated: r.Invalidated, Triggered: !r.TriggeredAt.IsZero(),
		Schedule: forecast.Schedule{CommitDeadline: r.CommitDeadline, RevealStart: r.RevealStart, RevealDeadline: r.RevealDeadline}}
}

func state(st arena.SubmissionState) forecast.State {
	out := forecast.State{Round: roundState(st.Round), Nonce: st.Nonce}
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

func parseHash(field, s string) (common.Hash, error) {
	if len(s) != 66 || s[:2] != "0x" {
		return common.Hash{}, forecast.Reject(forecast.CodeHashInvalid, "%s %q is not a 0x-prefixed 32-byte hex value", field, s)
	}
	b, err := hex.DecodeString(s[2:])
	if err != nil {
		return common.Hash{}, forecast.Reject(forecast.CodeHashInvalid, "%s %q is not hex", field, s)
	}
	return common.BytesToHash(b), nil
}

// Commit verifies and records a signed commit.
func (s *Service) Commit(ctx context.Context, roundID uint64, req forecast.CommitRequest) (forecast.SubmissionJSON, error) {
	agent, err := forecast.ParseAddress(req.Agent)
	if err != nil {
		return forecast.SubmissionJSON{}, err
	}
	ch, err := parseHash("commit_hash", req.CommitHash)
	if err != nil {
		return forecast.SubmissionJSON{}, err
	}
	var rh common.Hash
	if req.ReasoningHash != "" {
		if rh, err = parseHash("reasoning_hash", req.ReasoningHash); err != nil {
			return forecast.SubmissionJSON{}, err
		}
	}
	if err := s.Domain.CheckRequest(req.ChainID, req.VerifyingContract); err != nil {
		return forecast.SubmissionJSON{}, err
	}
	sig, err := forecast.DecodeSignature(req.Signature)
	if err != nil {
		return forecast.SubmissionJSON{}, err
	}
	msg := forecast.Commit{RoundID: roundID, CommitHash: ch, ReasoningHash: rh, Agent: agent, Nonce: req.Nonce, Deadline: req.Deadline}
	if err := s.Domain.VerifyCommit(msg, sig); err != nil {
		return forecast.SubmissionJSON{}, err
	}
	now := s.now()
	if err := s.Admission.admit(ctx, roundID, agent.Hex(), now); err != nil {
		return forecast.SubmissionJSON{}, err
	}
	sub := &arena.Submission{RoundID: roundID, Agent: agent.Hex(), CommitHash: ch.Hex(), CommitNonce: req.Nonce, CommitSig: forecast.EncodeSignature(sig),
		CommitSigDeadline: req.Deadline}
	if rh != (common.Hash{}) {
		sub.ReasoningHash = rh.Hex()
	}
	// Deadlines are checked against the arrival time: a request that came
	// in time is not refused because it waited in the group commit.
	entry := forecast.CommitEntry{RoundID: roundID, Agent: sub.Agent, CommitHash: sub.CommitHash, ReasoningHash: sub.ReasoningHash,
		Nonce: req.Nonce, Deadline: req.Deadline, Signature: sub.CommitSig}
	if sub.Log, err = leaf(logCommit, entry); err != nil {
		return forecast.SubmissionJSON{}, err
	}
	err = s.Store.Submit(ctx, arena.SubmitCommit, sub, now, func(st arena.SubmissionState) error {
		return forecast.ValidateCommit(state(st), msg, now)
	})
	if err != nil {
		return forecast.SubmissionJSON{}, err
	}
	return forecast.SubmissionJSON{RoundID: roundID, Agent: agent.Hex(), Nonce: req.Nonce}, nil
}

// Reveal verifies and records a signed reveal.
func (s *Service) Reveal(ctx context.Context, roundID uint64, req forecast.RevealRequest) (forecast.SubmissionJSON, error) {
	agent, err := forecast.ParseAddress(req.Agent)
	if err != nil {
		return forecast.SubmissionJSON{}, err
	}
	salt, err := parseHash("salt", req.Salt)
	if err != nil {
		return forecast.SubmissionJSON{}, err
	}
	if req.Predictions == nil {
		return forecast.SubmissionJSON{}, forecast.Reject(forecast.CodePredictionCount, "predictions missing")
	}
	if err := s.Domain.CheckRequest(req.ChainID, req.VerifyingContract); err != nil {
		return forecast.SubmissionJSON{}, err
	}
	sig, err := forecast.DecodeSignature(req.Signature)
	if err != nil {
		return forecast.SubmissionJSON{}, err
	}
	msg := forecast.Reveal{RoundID: roundID, Predictions: req.Predictions, Salt: salt, Agent: agent, Nonce: req.Nonce, Deadline: req.Deadline}
	if err := s.Domain.VerifyReveal(msg, sig); err != nil {
		return forecast.SubmissionJSON{}, err
	}
	now := s.now()
	sub := &arena.Submission{RoundID: roundID, Agent: agent.Hex(), Predictions: req.Predictions, Salt: salt.Hex(),
		RevealNonce: req.Nonce, RevealSig: forecast.EncodeSignature(sig), RevealSigDeadline: req.Deadline}
	// As for commits, deadlines use the arrival time. What must never
	// happen, a reveal counted after the round was scored, is excluded in
	// the transaction: the check refuses a triggered round, and the trigger
	// re-scores if a reveal landed while it was scoring.
	entry := forecast.RevealEntry{RoundID: roundID, Agent: sub.Agent, Predictions: sub.Predictions, Salt: sub.Salt,
		Nonce: req.Nonce, Deadline: req.Deadline, Signature: sub.RevealSig}
	if sub.Log, err = leaf(logReveal, entry); err != nil {
		return forecast.SubmissionJSON{}, err
	}
	err = s.Store.Submit(ctx, arena.SubmitReveal, sub, now, func(st arena.SubmissionState) error {
		return forecast.ValidateReveal(state(st), msg, now)
	})
	if err != nil {
		return forecast.SubmissionJSON{}, err
	}
	return forecast.SubmissionJSON{RoundID: roundID, Agent: agent.Hex(), Nonce: req.Nonce}, nil
}

// UploadReasoning records reasoning that hashes to the committed value.
func (s *Service) UploadReasoning(ctx context.Context, roundID uint64, req forecast.ReasoningRequest) error {
	agent, err := forecast.ParseAddress(req.Agent)
	if err != nil {
		return err
	}
	if len(req.Content) > 4*forecast.MaxReasoningBytes {
		return forecast.Reject(forecast.CodeReasoningTooLarge, "reasoning upload of %d bytes exceeds the limit", len(req.Content))
	}
	sub := &arena.Submission{RoundID: roundID, Agent: agent.Hex()}
	return s.Store.Submit(ctx, arena.SubmitReasoning, sub, s.now(), func(st arena.SubmissionState) error {
		_, canon, err := forecast.ValidateReasoning(state(st), []byte(req.Content))
		sub.Reasoning = string(canon)
		return err
	})
}

// Reasoning returns an agent's reasoning, published only after outcomes
// are triggered.
func (s *Service) Reasoning(ctx context.Context, roundID uint64, agent string) ([]string, error) {
	addr, err := forecast.ParseAddress(agent)
	if err != nil {
		return nil, err
	}
	r, err := s.Store.Round(ctx, roundID)
	if err != nil {
		return nil, err
	}
	if r.TriggeredAt.IsZero() {
		return nil, forecast.Reject(forecast.CodeReasoningUnpublished, "round %d: reasoning is published after outcomes are triggered", roundID)
	}
	subs, err := s.Store.Submissions(ctx, roundID)
	if err != nil {
		return nil, err
	}
	for _, sub := range subs {
		if sub.Agent == addr.Hex() && sub.Reasoning != "" {
			var out []string
			if err := json.Unmarshal([]byte(sub.Reasoning), &out); err != nil {
				return nil, fmt.Errorf("rounds: stored reasoning of %s: %w", sub.Agent, err)
			}
			return out, nil
		}
	}
	return nil, forecast.Reject(forecast.CodeReasoningNotFound, "round %d: no reasoning from %s", roundID, addr.Hex())
}

// BenchmarkRetryFor bounds how long after a round's commit deadline a
// failing benchmark lookup is retried; after it, the market whose lookup
// still fails has no benchmark (excluded from Alpha) and the others keep
// theirs.
const BenchmarkRetryFor = time.Hour

// ResolveMarket publishes the operator's resolution of a market and
// reports whether it changed the market: the resolution the market
// already has (such as the source's own, repeated by an admin, or sent by
// two admins at once) changes nothing and logs nothing. It is refused
// while a round containing the market, not yet scored, is before its
// reveal deadline: agents still able to reveal would see the outcome.
func (s *Service) ResolveMarket(ctx context.Context, marketID int64, resolution string) (bool, error) {
	m, err := s.Store.Market(ctx, marketID)
	if err != nil {
		return false, err
	}
	name, ok := m.ResolutionName(resolution)
	if !ok {
		return false, arena.Errorf(arena.EINVALID, "market %d: %q is not an outcome (want one of %v or %s)", marketID, resolution, m.Outcomes, arena.Void)
	}
	if m.Resolution == name {
		s.log().InfoContext(ctx, "market already resolved so; nothing recorded", "market", marketID, "resolution", name)
		return false, nil
	}
	now := s.now()
	rounds, err := s.Store.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		return false, err
	}
	for _, r := range rounds {
		if !r.TriggeredAt.IsZero() || r.Invalidated || now.After(r.RevealDeadline) {
			continue
		}
		for _, rm := range r.Markets {
			if rm.MarketID == marketID {
				return false, forecast.Reject(forecast.CodeMarketInOpenRound, "market %d is in round %d, whose reveals close at %s; resolve it after that",
					marketID, r.ID, fmtTime(r.RevealDeadline))
			}
		}
	}
	l, err := leaf(logResolution, forecast.ResolutionEntry{MarketID: marketID, Resolution: name})
	if err != nil {
		return false, err
	}
	changed, err := s.Store.ResolveMarket(ctx, marketID, name, now, l)
	if err == nil && !changed {
		s.log().InfoContext(ctx, "market already resolved so; nothing recorded", "market", marketID, "resolution", name)
	}
	return changed, err
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
	if now.Before(r.CommitDeadline.Add(forecast.BenchmarkTolerance)) {
		if !early {
			return false, nil
		}
		s.log().WarnContext(ctx, "capturing benchmarks before the tolerance window closed (operator trigger)", "round", r.ID,
			"window_closes", fmtTime(r.CommitDeadline.Add(forecast.BenchmarkTolerance)))
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
			err = fmt.Errorf("rounds: benchmark of market %d in round %d: %w", m.ID, r.ID, err)
			if !giveUp {
				errs = append(errs, err)
				continue // try the others too, so one pass reports every failing market
			}
			s.log().WarnContext(ctx, "benchmark lookup still failing after the retry bound; market has no benchmark",
				"round", r.ID, "market", m.ID, "bound", BenchmarkRetryFor, "err", err)
			ok = false
		}
		if ok {
			ms[i].Benchmark, ms[i].BenchmarkBps, ms[i].BenchmarkTime, ms[i].BenchmarkSource = &p, int32(math.Round(p*forecast.MaxBps)), at, src
		}
	}
	if len(errs) > 0 {
		return false, errors.Join(errs...) // retried on a later pass
	}
	be := forecast.BenchmarkEntry{RoundID: r.ID}
	for _, rm := range ms {
		b := scoring.NoBenchmark
		if rm.Benchmark != nil {
			b = rm.BenchmarkBps
		}
		be.MarketIDs, be.Benchmarks = append(be.MarketIDs, rm.MarketID), append(be.Benchmarks, b)
	}
	l, err := leaf(logBenchmark, be)
	if err != nil {
		return false, err
	}
	if err := s.Store.SetBenchmarks(ctx, r.ID, ms, now, l); err != nil {
		if arena.ErrorKind(err) == arena.ECONFLICT {
			return true, nil // another replica recorded them first
		}
		return false, err
	}
	return true, nil
}

func (s *Service) benchmark(ctx context.Context, m *arena.Market, t time.Time) (float64, time.Time, arena.PriceSource, bool, error) {
	pts, err := s.Store.PriceHistory(ctx, m.ID, arena.Yes, t.Add(-forecast.BenchmarkTolerance), t.Add(forecast.BenchmarkTolerance))
	if err != nil {
		return 0, time.Time{}, "", false, err
	}
	var best *arena.PricePoint
	for i := range pts {
		p := &pts[i]
		if !p.Source.IsBenchmark() {
			continue // never Gamma's quote, a frozen value or a settlement
		}
		if best == nil || absDur(p.Time.Sub(t)) < absDur(best.Time.Sub(t)) {
			best = p
		}
	}
	if best != nil {
		return best.Price, best.Time, best.Source, true, nil
	}
	if s.Lookup != nil {
		p, ok, err := s.Lookup(ctx, m, t)
		switch {
		case err != nil || !ok:
			return 0, time.Time{}, "", false, err
		case !p.Source.IsBenchmark():
			return 0, time.Time{}, "", false, fmt.Errorf("rounds: benchmark of %s: a %q price is not a benchmark", m, p.Source)
		case !(p.Price >= 0 && p.Price <= 1):
			return 0, time.Time{}, "", false, fmt.Errorf("rounds: benchmark of %s: price %v outside [0,1]", m, p.Price)
		case absDur(p.Time.Sub(t)) > forecast.BenchmarkTolerance:
			return 0, time.Time{}, "", false, nil // the venue's price then is unknown
		}
		return p.Price, p.Time.UTC(), p.Source, true, nil
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
			errs = append(errs, fmt.Errorf("rounds: trigger round %d: %w", r.ID, err))
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
		return forecast.Reject(forecast.CodeTriggerNotAllowed, "round %d is %s; outcomes are triggered after the reveal deadline, once", roundID, st)
	}
	ok, err := s.trigger(ctx, r, true)
	if errors.Is(err, errTriggeredElsewhere) {
		return forecast.Reject(forecast.CodeTriggerNotAllowed, "round %d: outcomes were already triggered (by another run)", roundID)
	}
	if errors.Is(err, errNoBenchmarks) {
		return forecast.Reject(forecast.CodeTriggerNotAllowed, "round %d: benchmarks are not captured yet (a lookup is retried until %s)",
			roundID, fmtTime(r.CommitDeadline.Add(BenchmarkRetryFor)))
	}
	if err != nil {
		return err
	}
	if !ok {
		return forecast.Reject(forecast.CodeNoResolvedMarkets, "round %d: no market has resolved to YES or NO yet", roundID)
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
		frozen[i] = scoring.OutcomeUnresolved
		// An ambiguous market (resolved upstream, winner unknown) waits for
		// the oracle: it is not resolved yet.
		if m.Status == arena.StatusResolved && !m.Ambiguous {
			resolved++
			switch m.Resolution {
			case arena.Yes:
				frozen[i], scoreable = scoring.OutcomeYes, scoreable+1
			case arena.No:
				frozen[i], scoreable = scoring.OutcomeNo, scoreable+1
			default:
				frozen[i] = scoring.OutcomeExcluded
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
		ls, err := leaves(scoreEntries(r.ID, frozen, nil)...)
		if err != nil {
			return false, err
		}
		if err := s.Store.SaveRoundResult(ctx, r.ID, frozen, nil, nil, now, ls...); err != nil {
			if arena.ErrorCode(err) == arena.CodeAlreadyTriggered {
				return false, errTriggeredElsewhere
			}
			return false, err
		}
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
var errTriggeredElsewhere = errors.New("rounds: outcomes already triggered by another run")

// errNoBenchmarks: the round is due but its benchmarks are not recorded.
var errNoBenchmarks = forecast.Reject(forecast.CodeTriggerNotAllowed, "benchmarks are not captured yet")

func (s *Service) scoreAndSave(ctx context.Context, r *arena.Round, frozen []int8, markets []*arena.Market, now time.Time) error {
	subs, err := s.Store.Submissions(ctx, r.ID)
	if err != nil {
		return err
	}
	scores, rows, err := scoring.ScoreFrozen(r, frozen, markets, subs)
	if err != nil {
		return err
	}
	ls, err := leaves(scoreEntries(r.ID, frozen, scores)...)
	if err != nil {
		return err
	}
	if err := s.Store.SaveRoundResult(ctx, r.ID, frozen, scores, rows, now, ls...); err != nil {
		return err
	}
	s.log().InfoContext(ctx, "round scored", "round", r.ID, "scored_forecasts", len(rows), "agents", len(subs)+1)
	return nil
}

// Clock is the service's current time (UTC).
func (s *Service) Clock() time.Time { return s.now() }
