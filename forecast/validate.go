package forecast

import (
	"fmt"
	"time"

	"github.com/ethereum/go-ethereum/common"
)

// MaxDeadlineAhead bounds how far in the future a signed deadline may lie,
// so a leaked signed message cannot be held back and replayed much later.
const MaxDeadlineAhead = 24 * time.Hour

// BenchmarkTolerance is how far from the commit deadline a price point may
// lie and still serve as the benchmark.
const BenchmarkTolerance = 300 * time.Second

// Schedule is a round's deadlines. Commits are accepted while
// now ≤ CommitDeadline; reveals while RevealStart ≤ now ≤ RevealDeadline.
type Schedule struct {
	CommitDeadline time.Time `json:"commit_deadline"`
	RevealStart    time.Time `json:"reveal_start"`
	RevealDeadline time.Time `json:"reveal_deadline"`
}

// Validate checks commit_deadline < reveal_start ≤ reveal_deadline.
func (s Schedule) Validate() error {
	switch {
	case s.CommitDeadline.IsZero() || s.RevealStart.IsZero() || s.RevealDeadline.IsZero():
		return Reject(CodeScheduleInvalid, "schedule: every deadline must be set")
	case !s.CommitDeadline.Before(s.RevealStart):
		return Reject(CodeScheduleInvalid, "schedule: commit deadline %s is not before reveal start %s", fmtTime(s.CommitDeadline), fmtTime(s.RevealStart))
	case s.RevealDeadline.Before(s.RevealStart):
		return Reject(CodeScheduleInvalid, "schedule: reveal deadline %s is before reveal start %s", fmtTime(s.RevealDeadline), fmtTime(s.RevealStart))
	}
	return nil
}

// RoundState is the part of a round the validators read.
type RoundState struct {
	ID          uint64
	K           int // number of markets = number of predictions
	Schedule    Schedule
	Invalidated bool
	// Triggered: outcomes are frozen and the round scored; no reveal can
	// count any more, whatever the clock says.
	Triggered bool
}

// State is everything ValidateCommit, ValidateReveal and ValidateReasoning
// need about one agent in one round. The service loads it in the
// transaction that then records the accepted request and increments the
// agent's nonce, so two racing requests cannot both pass.
type State struct {
	Round *RoundState // nil: the round does not exist

	Nonce uint64 // the agent's current nonce; 0 for an agent never seen

	Committed     bool
	CommitHash    common.Hash // stored commitment, when Committed
	ReasoningHash common.Hash // committed reasoning hash; zero for none
	Revealed      bool
	// ReasoningStored is set once reasoning text has been accepted.
	ReasoningStored bool
}

// ValidateCommit checks a signed commit (whose signature VerifyCommit has
// already checked) against the round and the agent's state at time now. It
// returns the first failing rule, in the order of the table in Codes.
func ValidateCommit(st State, c Commit, now time.Time) error {
	if err := checkRound(st, c.RoundID); err != nil {
		return err
	}
	if err := CheckDeadline(c.Deadline, now); err != nil {
		return err
	}
	if now.After(st.Round.Schedule.CommitDeadline) {
		return Reject(CodeCommitClosed, "round %d: commits closed at %s", c.RoundID, st.Round.Schedule.CommitDeadline.UTC().Format(time.RFC3339))
	}
	// already_committed before nonce_invalid: a retried commit that was in
	// fact accepted then says what happened instead of "bad nonce".
	if st.Committed {
		return Reject(CodeAlreadyCommitted, "round %d: agent %s already committed", c.RoundID, c.Agent.Hex())
	}
	return checkNonce(st.Nonce, c.Nonce)
}

// ValidateReveal checks a signed reveal (whose signature VerifyReveal has
// already checked) against the round, the agent's commit and nonce at now.
func ValidateReveal(st State, r Reveal, now time.Time) error {
	if err := checkRound(st, r.RoundID); err != nil {
		return err
	}
	if err := CheckDeadline(r.Deadline, now); err != nil {
		return err
	}
	if err := CheckPredictions(r.Predictions, st.Round.K); err != nil {
		return err
	}
	s := st.Round.Schedule
	if now.Before(s.RevealStart) {
		return Reject(CodeRevealNotOpen, "round %d: reveals open at %s", r.RoundID, s.RevealStart.UTC().Format(time.RFC3339))
	}
	if now.After(s.RevealDeadline) {
		return Reject(CodeRevealClosed, "round %d: reveals closed at %s", r.RoundID, s.RevealDeadline.UTC().Format(time.RFC3339))
	}
	if st.Round.Triggered {
		return Reject(CodeRevealClosed, "round %d: reveals closed: the round was scored", r.RoundID)
	}
	if !st.Committed {
		return Reject(CodeNotCommitted, "round %d: agent %s has no commit to reveal", r.RoundID, r.Agent.Hex())
	}
	if st.Revealed {
		return Reject(CodeAlreadyRevealed, "round %d: agent %s already revealed", r.RoundID, r.Agent.Hex())
	}
	if err := checkNonce(st.Nonce, r.Nonce); err != nil {
		return err
	}
	if h := CommitHash(r.RoundID, r.Agent, r.Predictions, r.Salt); h != st.CommitHash {
		return Reject(CodeCommitMismatch, "round %d: predictions and salt hash to %s, the commit was %s", r.RoundID, h.Hex(), st.CommitHash.Hex())
	}
	return nil
}

// CheckPredictions checks a prediction vector's length and range; agents
// can run it before committing.
func CheckPredictions(preds []uint16, k int) error {
	if len(preds) != k {
		return Reject(CodePredictionCount, "%d predictions, the round has %d markets", len(preds), k)
	}
	for i, p := range preds {
		if p > MaxBps {
			return Reject(CodePredictionRange, "prediction %d is %d bps, the maximum is %d", i, p, MaxBps)
		}
	}
	return nil
}

// ValidateReasoning checks an uploaded reasoning document against
// the agent's commit. It needs no signature: only the agent can know text
// that hashes to the reasoning hash it signed. It returns the reasons and
// their canonical encoding, which is what the service stores.
func ValidateReasoning(st State, data []byte) ([]string, []byte, error) {
	if st.Round == nil {
		return nil, nil, Reject(CodeRoundNotFound, "round not found")
	}
	switch {
	case !st.Revealed:
		return nil, nil, Reject(CodeReasoningNotRevealed, "reasoning is accepted only after the reveal")
	case st.ReasoningHash == (common.Hash{}):
		return nil, nil, Reject(CodeReasoningNotCommitted, "the commit carried no reasoning hash")
	case st.ReasoningStored:
		return nil, nil, Reject(CodeReasoningStored, "reasoning for this commit was already accepted")
	}
	reasons, canon, err := ParseReasoning(data, st.Round.K)
	if err != nil {
		return nil, nil, err
	}
	h, err := ReasoningHash(reasons)
	if err != nil {
		return nil, nil, err
	}
	if h != st.ReasoningHash {
		return nil, nil, Reject(CodeReasoningMismatch, "reasoning hashes to %s, the commit carried %s", h.Hex(), st.ReasoningHash.Hex())
	}
	return reasons, canon, nil
}

func checkRound(st State, id uint64) error {
	if st.Round == nil {
		return Reject(CodeRoundNotFound, "round %d not found", id)
	}
	if st.Round.ID != id {
		// The service loaded the wrong round: a bug, not a user error.
		return fmt.Errorf("forecast: state is for round %d, message for round %d", st.Round.ID, id)
	}
	if st.Round.Invalidated {
		return Reject(CodeRoundInvalidated, "round %d was invalidated", id)
	}
	return nil
}

// CheckDeadline applies Solidity's rule to a signed deadline at second
// resolution: valid while now ≤ deadline, and at most MaxDeadlineAhead
// later than now.
func CheckDeadline(deadline uint64, now time.Time) error {
	n := now.Unix()
	if n < 0 {
		return fmt.Errorf("forecast: clock before 1970: %v", now)
	}
	if deadline < uint64(n) {
		return Reject(CodeDeadlineExpired, "signed deadline %d is before now (%d)", deadline, n)
	}
	if deadline-uint64(n) > uint64(MaxDeadlineAhead/time.Second) {
		return Reject(CodeDeadlineTooFar, "signed deadline %d is more than %s after now (%d)", deadline, MaxDeadlineAhead, n)
	}
	return nil
}

func checkNonce(current, got uint64) error {
	if got != current {
		return Reject(CodeNonceInvalid, "nonce %d, the agent's current nonce is %d", got, current)
	}
	return nil
}

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
