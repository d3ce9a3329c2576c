package arena

import (
	"context"
	"strings"
	"time"
)

// OracleDecision is a resolver's or the oracle's answer to "did it happen?".
// TOO_EARLY is the abstention: the evidence does not settle the question
// yet. VOID is only ever a human arbiter's decision (refund at cost).
type OracleDecision string

const (
	OracleYes      OracleDecision = "YES"
	OracleNo       OracleDecision = "NO"
	OracleTooEarly OracleDecision = "TOO_EARLY"
	OracleVoid     OracleDecision = "VOID"
)

// Binary reports whether d is YES or NO.
func (d OracleDecision) Binary() bool { return d == OracleYes || d == OracleNo }

// OracleVote is one resolver call, stored whole for audit: what was asked,
// what came back, what was read from it, and what it cost. A failed call
// (transport errors after retries, or output that never parsed) has an
// empty Decision and says why in Failure.
type OracleVote struct {
	Agent        string         `json:"agent"`
	Round        int            `json:"round"`
	Decision     OracleDecision `json:"decision,omitempty"`
	Confidence   float64        `json:"confidence"`
	Reasoning    string         `json:"reasoning"`
	Failure      string         `json:"failure,omitempty"`
	System       string         `json:"system_prompt"`
	Prompt       string         `json:"prompt"`
	Raw          string         `json:"raw_response"`
	Format       string         `json:"response_format,omitempty"` // json_schema, json_object or "" (plain text) as finally used
	InputTokens  int64          `json:"input_tokens"`
	OutputTokens int64          `json:"output_tokens"`
	CostMicros   int64          `json:"cost_micros"`
	LatencyMS    int64          `json:"latency_ms"`
	Calls        int            `json:"calls"` // model calls made, including format fallbacks and re-asks
	Cached       bool           `json:"cached,omitempty"`
}

// Answered reports whether the call produced a decision (YES, NO or
// TOO_EARLY) rather than a failure.
func (v OracleVote) Answered() bool { return v.Decision != "" && v.Failure == "" }

// OraclePolicy decides when the oracle may resolve on its own. Any
// TOO_EARLY, failure or split vote escalates regardless of the thresholds.
type OraclePolicy struct {
	// Architecture is single:<agent id>, majority, weighted or deliberative.
	Architecture     string  `json:"architecture"`
	AutoMinScore     float64 `json:"auto_min_score"`
	RequireUnanimous bool    `json:"require_unanimous"`
}

// DefaultOraclePolicy resolves automatically only when the panel is
// unanimous and confident (composite ≥ 1.8, i.e. mean confidence ≥ 0.8).
var DefaultOraclePolicy = OraclePolicy{Architecture: "majority", AutoMinScore: 1.8, RequireUnanimous: true}

// OracleVerdict is the outcome of one panel run on one question.
type OracleVerdict struct {
	Architecture string         `json:"architecture"`
	Decision     OracleDecision `json:"decision"`
	// Rule names the rule that produced Decision, e.g. "majority",
	// "tie_no", "round2_majority", "round1_majority", "default_no".
	Rule      string       `json:"rule"`
	Unanimous bool         `json:"unanimous"`
	Composite float64      `json:"composite"`
	Escalate  bool         `json:"escalate"`
	Reasons   []string     `json:"escalation_reasons"`
	Round1    []OracleVote `json:"round1"`
	Round2    []OracleVote `json:"round2"`
	At        time.Time    `json:"at"`
}

// Oracle resolution statuses.
const (
	OracleEscalated = "escalated" // waiting for a human arbiter; nothing settles
	OracleAuto      = "auto"      // resolved by the panel under the policy
	OracleDecided   = "decided"   // resolved by a human arbiter
)

// OracleResolution is one oracle run on a market (Seq 1), or a later
// re-resolution (Seq 2, …, with Reason): the evidence shown, every vote,
// the architecture and policy, and any human decision. Final is the
// decision applied to the market (YES, NO or VOID), empty while escalated.
type OracleResolution struct {
	ID        int64          `json:"id"`
	MarketID  int64          `json:"market_id"`
	Seq       int            `json:"seq"`
	Status    string         `json:"status"`
	Evidence  EvidencePacket `json:"evidence"`
	Verdict   OracleVerdict  `json:"verdict"`
	Policy    OraclePolicy   `json:"policy"`
	Final     OracleDecision `json:"final"`
	Arbiter   string         `json:"arbiter,omitempty"`
	Reason    string         `json:"reason,omitempty"`
	CreatedAt time.Time      `json:"created_at"`
	DecidedAt time.Time      `json:"decided_at,omitzero"`
	// Rescored lists the scored forecast rounds this resolution re-scored
	// (a re-resolution of a market already frozen in them).
	Rescored []RoundRescore `json:"rescored,omitempty"`
}

// RoundRescore is the audit record of one re-scoring of a scored forecast
// round after one of its markets was re-resolved: the market's frozen
// outcome before and after, the round's outcomes as now frozen, and every
// score before and after. The reason and arbiter are the resolution's.
type RoundRescore struct {
	RoundID      uint64       `json:"round_id"`
	MarketID     int64        `json:"market_id"`
	ResolutionID int64        `json:"resolution_id"`
	Index        int          `json:"index"` // the market's position in the round
	PrevOutcome  int8         `json:"previous_outcome"`
	Outcome      int8         `json:"outcome"`
	Outcomes     []int8       `json:"outcomes"`
	Previous     []RoundScore `json:"previous_scores"`
	Scores       []RoundScore `json:"scores"`
	At           time.Time    `json:"at"`
}

// RoundScorer scores a triggered forecast round from its frozen outcomes
// (as stored: 1, 0, −1 void, −2 unresolved) and its submissions, exactly
// as the trigger does. The forecast track provides it; the store calls it
// inside the transaction that re-resolves a market, so the resolution and
// the scores change together.
type RoundScorer func(r *Round, outcomes []int8, markets []*Market, subs []*Submission) ([]RoundScore, []ScoredForecast, error)

// OracleDecisionInput is a human arbiter's decision. ReResolve marks a
// change of a market the oracle already resolved; it needs a Reason.
type OracleDecisionInput struct {
	MarketID  int64
	Decision  OracleDecision // YES, NO or VOID
	Arbiter   string
	Reason    string
	ReResolve bool
	At        time.Time
	// Rescore re-scores the forecast rounds a re-resolution changes; a
	// re-resolution of a market frozen in a scored round without it is a
	// conflict.
	Rescore RoundScorer
}

// Validate checks what a decision needs before anything is touched: YES,
// NO or VOID, the arbiter's name and, to re-resolve, a reason. It trims
// the arbiter and the reason.
func (in *OracleDecisionInput) Validate() error {
	if _, ok := in.Decision.MarketResolution(); !ok {
		return Errorf(EINVALID, "decision %q: want YES, NO or VOID", in.Decision)
	}
	in.Arbiter, in.Reason = strings.TrimSpace(in.Arbiter), strings.TrimSpace(in.Reason)
	if in.Arbiter == "" {
		return Errorf(EINVALID, "an arbiter decision needs the arbiter's name")
	}
	if in.ReResolve && in.Reason == "" {
		return Errorf(EINVALID, "re-resolving market %d needs a reason", in.MarketID)
	}
	return nil
}

// OracleStore keeps oracle resolutions. Saving a resolution that is not
// escalated, and deciding one, resolve the market in the same transaction
// (YES → Yes, NO → No, VOID → VOID), so the tracks settle and score from
// the market as usual and nothing settles while a market is escalated.
type OracleStore interface {
	// SaveOracleResolution records a panel run (ID, Seq and CreatedAt are
	// filled in). A market whose latest resolution is escalated or final
	// is a conflict: decide it instead.
	SaveOracleResolution(ctx context.Context, r *OracleResolution) error
	// OracleResolutions returns a market's resolutions, oldest first
	// (ENOTFOUND when there is none).
	OracleResolutions(ctx context.Context, marketID int64) ([]OracleResolution, error)
	// AllOracleResolutions returns every market's resolutions, by market
	// and then oldest first (without the re-scored rounds).
	AllOracleResolutions(ctx context.Context) ([]OracleResolution, error)
	// OracleQueue lists the markets waiting for an arbiter, oldest first.
	OracleQueue(ctx context.Context) ([]OracleResolution, error)
	// RecentOracleResolutions returns the n latest resolutions of any
	// market, newest first (without the re-scored rounds).
	RecentOracleResolutions(ctx context.Context, n int) ([]OracleResolution, error)
	// DecideOracle records a human decision: on an escalated market it
	// resolves it (ECONFLICT when the market is not escalated); with
	// ReResolve it appends a new resolution to a resolved market
	// (EINVALID without a reason), correcting its trading settlement
	// (see TradeResettle) and re-scoring, with in.Rescore, every scored
	// forecast round that froze its outcome, in the same transaction; the
	// re-scored rounds are returned in Rescored and kept for audit.
	DecideOracle(ctx context.Context, in OracleDecisionInput) (*OracleResolution, error)
	// FlagOracle marks an unresolved binary market ambiguous (EINVALID
	// without a reason or for a market that is not Yes/No, ENOTFOUND for
	// an unknown market, ECONFLICT when it is resolved, already flagged or
	// already with the oracle).
	FlagOracle(ctx context.Context, f OracleFlag) error
	// OracleFlags lists the flagged markets, oldest first.
	OracleFlags(ctx context.Context) ([]OracleFlag, error)
}

// OracleFlag is an admin's mark that a market is ambiguous or disputed:
// the market goes through the oracle before either track settles or scores
// it, and its resolution comes from the oracle, not the source.
type OracleFlag struct {
	MarketID  int64     `json:"market_id"`
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at"`
}

// TradeResettle is the trading correction made when a settled market is
// re-resolved: Amount is the change of payout (negative when taken back).
const TradeResettle TradeKind = "RESETTLE"

// MarketResolution maps an oracle decision to a market resolution.
func (d OracleDecision) MarketResolution() (string, bool) {
	switch d {
	case OracleYes:
		return Yes, true
	case OracleNo:
		return No, true
	case OracleVoid:
		return Void, true
	}
	return "", false
}
