package arena

import (
	"context"
	"encoding/json"
	"time"
)

// Forecast track domain records and storage interface.

// Round statuses, derived from the clock and the round's record.
const (
	RoundOpen        = "open"      // before the commit deadline
	RoundRevealing   = "revealing" // commit deadline passed, reveal window not yet closed
	RoundScoring     = "scoring"   // reveal window closed, outcomes not yet triggered
	RoundScored      = "scored"
	RoundInvalidated = "invalidated"
)

// Round is k markets with a commit deadline and a reveal window.
type Round struct {
	ID             uint64
	CommitDeadline time.Time
	RevealStart    time.Time
	RevealDeadline time.Time
	// Grace after the reveal deadline before scoring proceeds with only
	// part of the markets resolved.
	Grace time.Duration
	// Rules is the JSON of the selection rules the markets were chosen by.
	Rules       json.RawMessage
	Markets     []RoundMarket
	CreatedAt   time.Time
	BenchmarkAt time.Time // when benchmarks were captured; zero: not yet
	TriggeredAt time.Time // when outcomes were frozen and scored; zero: not yet
	Invalidated bool
}

// Status derives the round's status at now.
func (r *Round) Status(now time.Time) string {
	switch {
	case r.Invalidated:
		return RoundInvalidated
	case !r.TriggeredAt.IsZero():
		return RoundScored
	case !now.After(r.CommitDeadline):
		return RoundOpen
	case !now.After(r.RevealDeadline):
		return RoundRevealing
	}
	return RoundScoring
}

// RoundMarket is one market of a round.
type RoundMarket struct {
	Index    int
	MarketID int64
	// Benchmark is the market's Yes price at the commit deadline; nil
	// when there is none, and then the market is excluded from Alpha.
	Benchmark       *float64
	BenchmarkBps    int32 // the benchmark in basis points, as the scoring takes it
	BenchmarkTime   time.Time
	BenchmarkSource PriceSource
	// Outcome is frozen at trigger: 1 (Yes), 0 (No), −1 (void), −2
	// (unresolved at the trigger); only 0 and 1 are scored.
	Outcome *int8
}

// Submission is one agent's commit and, later, reveal in one round.
type Submission struct {
	RoundID       uint64
	Agent         string // checksummed address
	CommitHash    string
	ReasoningHash string // "" when the commit carried none
	CommitNonce   uint64
	CommitSig     string
	// CommitSigDeadline and RevealSigDeadline are the deadlines (Unix
	// seconds) of the signed messages, which a relayer needs to replay the
	// agent's signature to a chain; 0 when not recorded.
	CommitSigDeadline uint64
	CommittedAt       time.Time
	Predictions       []uint16 // nil until revealed
	Salt              string
	RevealNonce       uint64
	RevealSig         string
	RevealSigDeadline uint64
	RevealedAt        time.Time
	Reasoning         string // canonical JSON, once uploaded
	// Log, when set, is the tamper-evident log entry of this commit or
	// reveal: Submit appends it in the transaction that records the
	// submission (not stored with the submission).
	Log *LogLeaf
}

// Revealed reports whether the reveal was accepted.
func (s *Submission) Revealed() bool { return s.Predictions != nil }

// SubmissionState is what a submission's checks read, loaded inside the
// transaction that records it.
type SubmissionState struct {
	Round      *Round // nil: no such round
	Nonce      uint64
	Submission *Submission // nil: no commit yet
}

// SubmissionKind selects what Submit records.
type SubmissionKind int

const (
	SubmitCommit SubmissionKind = iota
	SubmitReveal
	SubmitReasoning
)

// Next is the submission's state machine: what the (round, agent)
// submission becomes when kind records sub at time at, given cur, the one
// stored (nil before the commit). A commit needs no earlier submission, a
// reveal an unrevealed commit, reasoning a commit without reasoning and
// some text. The store applies it inside the transaction that writes the
// result, so every path (one by one, or in sets) follows the same rule.
func (kind SubmissionKind) Next(cur, sub *Submission, at time.Time) (*Submission, error) {
	switch kind {
	case SubmitCommit:
		if cur != nil {
			return nil, Rejectf(ECONFLICT, "already_committed", "round %d: agent %s already committed", sub.RoundID, sub.Agent)
		}
		next := *sub
		next.Predictions, next.Salt, next.RevealNonce, next.RevealSig, next.RevealSigDeadline, next.RevealedAt, next.Reasoning = nil, "", 0, "", 0, time.Time{}, ""
		next.CommittedAt = at
		return &next, nil
	case SubmitReveal:
		if cur == nil {
			return nil, Rejectf(ECONFLICT, "not_committed", "round %d: agent %s has no commit to reveal", sub.RoundID, sub.Agent)
		}
		if cur.Revealed() {
			return nil, Rejectf(ECONFLICT, "already_revealed", "round %d: agent %s already revealed", sub.RoundID, sub.Agent)
		}
		next := *cur
		next.Predictions, next.Salt, next.RevealNonce, next.RevealSig, next.RevealSigDeadline, next.RevealedAt = sub.Predictions, sub.Salt, sub.RevealNonce, sub.RevealSig, sub.RevealSigDeadline, at
		if next.Predictions == nil {
			next.Predictions = []uint16{} // revealed, with no prediction
		}
		return &next, nil
	case SubmitReasoning:
		if cur == nil {
			return nil, Rejectf(ECONFLICT, "reasoning_not_committed", "round %d: agent %s has no commit for its reasoning", sub.RoundID, sub.Agent)
		}
		if cur.Reasoning != "" || sub.Reasoning == "" {
			return nil, Rejectf(ECONFLICT, "reasoning_already_stored", "round %d: reasoning of %s already stored", sub.RoundID, sub.Agent)
		}
		next := *cur
		next.Reasoning = sub.Reasoning
		return &next, nil
	}
	return nil, Errorf(EINVALID, "unknown submission kind %d", kind)
}

// RoundScore is one agent's frozen score in one round.
type RoundScore struct {
	RoundID     uint64   `json:"round_id"`
	Agent       string   `json:"agent"`
	Brier       float64  `json:"brier"`
	Alpha       *float64 `json:"alpha"` // nil when no market of the round had a benchmark
	BrierBps2   int64    `json:"brier_bps2"`
	AlphaBps2   *int64   `json:"alpha_bps2"`
	Scored      int      `json:"scored"` // markets in the frozen set M*
	Benchmarked int      `json:"benchmarked"`
	Forfeit     bool     `json:"forfeit"`
}

// ScoredForecast is one frozen (agent, market) forecast of a scored round:
// the rows every report and the leaderboard are computed from.
type ScoredForecast struct {
	RoundID   uint64
	Agent     string
	MarketID  int64
	Category  string
	Event     string
	Venue     string // the market's Venue
	Forecast  float64
	Benchmark *float64
	Outcome   int8 // 0 or 1
	Forfeit   bool
}

// AgentInfo describes a forecast-track agent: its record and its profile,
// what it says about itself. An external agent signs its profile (see
// forecast.Profile); the operator registers the profile of the agents it
// runs (hosted and simulated). Every field of the profile is display data.
type AgentInfo struct {
	Address string // checksummed address, or a built-in's name ("random", "market")
	Kind    string // external, builtin, sim, llm, ensemble
	Nonce   uint64

	Name         string // display name, unique per arena up to SameName; "" for none
	Organisation string
	Model        string
	Homepage     string // an http(s) URL
	Description  string
	// ProfileVersion counts the agent's signed profile updates: 0 when it
	// never signed one (its profile, if any, is the operator's).
	ProfileVersion uint64
	// ProfileSpentUntil is how far ahead the agent's allowance of signed
	// profile updates is spent (the forecast track's cap on updates a
	// day); zero before its first signed update.
	ProfileSpentUntil time.Time
}

// RoundFilter selects rounds.
type RoundFilter struct {
	// Status filters by derived status at Now.
	Status string
	Now    time.Time
	Limit  int
}

// ForecastStore is what the forecast track keeps: its markets and its
// rounds with their submissions and scores.
type ForecastStore interface {
	MarketStore
	RoundStore
	VersionStore
}

// RoundStore persists the forecast track.
type RoundStore interface {
	CreateRound(ctx context.Context, r *Round) error
	Round(ctx context.Context, id uint64) (*Round, error)
	Rounds(ctx context.Context, f RoundFilter) ([]*Round, error)
	// SetBenchmarks records a round's benchmarks, once (ECONFLICT after),
	// and appends leaves to the log in the same transaction.
	SetBenchmarks(ctx context.Context, roundID uint64, ms []RoundMarket, at time.Time, leaves ...*LogLeaf) error
	// Submit loads the agent's state in one transaction, runs check on it
	// and, when check passes, records sub (per kind) and, for commits and
	// reveals, advances the agent's nonce. A rejected request stores nothing.
	Submit(ctx context.Context, kind SubmissionKind, sub *Submission, at time.Time, check func(SubmissionState) error) error
	Nonce(ctx context.Context, agent string) (uint64, error)
	Submissions(ctx context.Context, roundID uint64) ([]*Submission, error)
	// SaveRoundResult freezes outcomes, scores and scored forecasts at
	// once, and appends leaves to the log in the same transaction.
	SaveRoundResult(ctx context.Context, roundID uint64, outcomes []int8, scores []RoundScore, rows []ScoredForecast, at time.Time, leaves ...*LogLeaf) error
	RoundScores(ctx context.Context, roundID uint64) ([]RoundScore, error)
	ScoredForecasts(ctx context.Context) ([]ScoredForecast, error)
	// SetAgent registers an agent, or overwrites its kind and profile
	// (not its profile version): the operator's own record, unchecked.
	SetAgent(ctx context.Context, a AgentInfo) error
	// SetProfile writes a's profile, profile version and allowance spent
	// (and its kind, unless empty), creating the agent, in one
	// transaction: check sees the agent as stored (cur, nil: never seen)
	// and the record about to be written (next, a copy of a), and may
	// refuse or set next's ProfileSpentUntil; a name another agent holds
	// up to SameName fails with CodeProfileNameTaken; an update stored
	// meanwhile fails with CodeProfileVersionInvalid; leaf, when set, is
	// appended to the log in the same transaction. A refused update
	// stores nothing.
	SetProfile(ctx context.Context, a AgentInfo, leaf *LogLeaf, check func(cur, next *AgentInfo) error) error
	// Agent returns one agent (ENOTFOUND: never seen).
	Agent(ctx context.Context, address string) (*AgentInfo, error)
	Agents(ctx context.Context) ([]AgentInfo, error)
	// AgentSubmissions lists the rounds an agent committed to, oldest
	// first.
	AgentSubmissions(ctx context.Context, agent string) ([]AgentSubmission, error)
}
