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

// OracleDecisionInput is a human arbiter's decision. ReResolve marks a
// change of a market the oracle already resolved; it needs a Reason.
type OracleDecisionInput struct {
	MarketID  int64
	Decision  OracleDecision // YES, NO or VOID
	Arbiter   string
	Reason    string
	ReResolve bool
	// Revises is the Seq of the resolution a re-resolution corrects: when
	// another resolution was recorded since, the re-resolution is refused
	// (CodeResolutionChanged), so two arbiters correcting the same
	// resolution at once cannot both apply. 0 takes the resolution in force
	// when the oracle service reads it.
	Revises int
	At      time.Time
}

// OracleStep is what an arbiter's decision does to a market's oracle
// history (see OracleDecisionInput.Step).
type OracleStep int

const (
	OracleUnchanged       OracleStep = iota // already so: nothing to record, re-score or re-settle
	OracleDecideEscalated                   // the escalated resolution in force is decided
	OracleSettleDispute                     // a first resolution settles a dispute without a panel run
	OracleRevise                            // a new resolution revises the one in force
)

// Step is the oracle's state machine for an arbiter's input, given the
// market's latest oracle resolution (nil when none), whether its source's
// resolution is disputed and whether it has a resolution: the step to
// take, or why the input is refused. The store applies it in the
// transaction that records it.
func (in OracleDecisionInput) Step(prev *OracleResolution, disputed, resolved bool) (OracleStep, error) {
	if !in.ReResolve {
		switch {
		case prev != nil && prev.Status == OracleEscalated:
			return OracleDecideEscalated, nil
		case prev == nil && disputed:
			return OracleSettleDispute, nil
		case prev != nil && prev.Status == OracleDecided && prev.Final == in.Decision:
			// Another arbiter decided the same meanwhile (two racing
			// decisions of one market): the decision stands, once.
			return OracleUnchanged, nil
		case prev != nil:
			return 0, Errorf(ECONFLICT, "market %d is already resolved by the oracle (%s); re-resolve it instead", in.MarketID, prev.Final)
		}
		return 0, Errorf(ECONFLICT, "market %d is neither escalated to an arbiter nor disputed", in.MarketID)
	}
	if prev == nil || prev.Final == "" {
		hint := "an escalated market is decided, not re-resolved"
		if prev == nil && resolved {
			hint = "the source resolved it: dispute it first"
		}
		return 0, Errorf(ECONFLICT, "market %d has no oracle resolution to revise (%s)", in.MarketID, hint)
	}
	if prev.Final == in.Decision {
		// The decision in force, whether or not another re-resolution
		// came first: nothing to revise.
		return OracleUnchanged, nil
	}
	if in.Revises != 0 && prev.Seq != in.Revises {
		by := prev.Arbiter
		if by == "" {
			by = "the panel"
		}
		return 0, Rejectf(ECONFLICT, CodeResolutionChanged, "market %d: resolution %d is no longer the latest: resolution %d (%s by %s) was recorded since; review it and retry",
			in.MarketID, in.Revises, prev.Seq, prev.Final, by)
	}
	return OracleRevise, nil
}

// PanelStep is the oracle's state machine for a panel's resolution: it
// may resolve a market only when nothing did before, or when the source's
// resolution is disputed, and never over an earlier oracle resolution.
func PanelStep(marketID int64, prev *OracleResolution, disputed bool, resolution string) error {
	if resolution != "" && !disputed {
		return Errorf(ECONFLICT, "market %d is already resolved (%s)", marketID, resolution)
	}
	if prev != nil {
		if prev.Status == OracleEscalated {
			return Errorf(ECONFLICT, "market %d is waiting for an arbiter", marketID)
		}
		return Errorf(ECONFLICT, "market %d was already resolved by the oracle (%s)", marketID, prev.Final)
	}
	return nil
}

// CodeResolutionChanged: a re-resolution names a resolution that is no
// longer the market's latest; the arbiter reviews the new one and retries.
const CodeResolutionChanged = "resolution_changed"

// Caps, in characters, on the free-text fields of oracle and admin inputs.
const (
	MaxNameChars   = 100  // an arbiter's or an admin's name
	MaxReasonChars = 2000 // why a market is flagged, disputed or decided
)

// Validate checks what a decision needs before anything is touched: YES,
// NO or VOID, the arbiter's name and, to re-resolve, a reason, both clean
// text (see CleanText), which it trims.
func (in *OracleDecisionInput) Validate() error {
	if _, ok := in.Decision.MarketResolution(); !ok {
		return Errorf(EINVALID, "decision %q: want YES, NO or VOID", in.Decision)
	}
	var err error
	if in.Arbiter, err = CleanText("the arbiter's name", in.Arbiter, MaxNameChars, true); err != nil {
		return err
	}
	if in.ReResolve && strings.TrimSpace(in.Reason) == "" {
		return Errorf(EINVALID, "re-resolving market %d needs a reason", in.MarketID)
	}
	if in.Reason, err = CleanText("the reason", in.Reason, MaxReasonChars, false); err != nil {
		return err
	}
	if in.Revises < 0 {
		return Errorf(EINVALID, "revises %d: want the seq of a resolution", in.Revises)
	}
	return nil
}

// OracleStore keeps oracle resolutions. Saving a resolution that is not
// escalated, and deciding one, resolve the market in the same transaction
// (YES → Yes, NO → No, VOID → VOID), so the tracks settle and score from
// the market as usual and nothing settles while a market is escalated.
// When a resolution is applied to a market that had one already, the
// hooks given run inside that same transaction (see ResolutionHook): the
// tracks' corrections commit with the resolution or not at all. Every
// write locks the market first, so writes to one market are serialised.
type OracleStore interface {
	// SaveOracleResolution records a panel run (ID, Seq and CreatedAt are
	// filled in) on an unresolved market or a disputed one. A market whose
	// latest resolution is escalated or final is a conflict: decide it
	// instead.
	SaveOracleResolution(ctx context.Context, r *OracleResolution, hooks ...ResolutionHook) error
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
	// DecideOracle records a human decision: on an escalated market, or a
	// disputed one the oracle has not run on, it resolves it (ECONFLICT
	// otherwise); with ReResolve it appends a new resolution to a market
	// the oracle resolved (EINVALID without a reason; ECONFLICT with
	// CodeResolutionChanged when in.Revises is set and no longer the
	// latest). A decision already in force (a re-resolution to it, or an
	// arbiter deciding as another just did) changes nothing: it returns
	// the resolution in force and false, and runs no hook.
	DecideOracle(ctx context.Context, in OracleDecisionInput, hooks ...ResolutionHook) (*OracleResolution, bool, error)
	// FlagOracle marks an unresolved binary market ambiguous (EINVALID
	// without a reason or for a market that is not Yes/No, ENOTFOUND for
	// an unknown market, ECONFLICT when it is resolved, already flagged or
	// already with the oracle).
	FlagOracle(ctx context.Context, f OracleFlag) error
	// OracleFlags lists the flagged markets, oldest first.
	OracleFlags(ctx context.Context) ([]OracleFlag, error)
	// DisputeOracle records an admin's dispute of a binary market's
	// resolution by its source (EINVALID without the admin's name or a
	// reason, or for a market that is not Yes/No; ENOTFOUND for an unknown
	// market; ECONFLICT when it is unresolved, already disputed otherwise,
	// or went through the oracle). The market keeps its resolution until
	// the oracle or an arbiter decides, and from then on only they change
	// it. Resolution is filled in. The hooks run in the transaction that
	// records it. The dispute recorded already (the same admin and reason)
	// changes nothing: it reports false, runs no hook and fills d in
	// from the record.
	DisputeOracle(ctx context.Context, d *OracleDispute, hooks ...DisputeHook) (bool, error)
	// OracleDispute returns a market's dispute (ENOTFOUND when none).
	OracleDispute(ctx context.Context, marketID int64) (*OracleDispute, error)
	// OracleDisputes lists the disputed markets, oldest first.
	OracleDisputes(ctx context.Context) ([]OracleDispute, error)
}

// OracleFlag is an admin's mark that an unresolved market is ambiguous:
// the market goes through the oracle before either track settles or scores
// it, and its resolution comes from the oracle, not the source.
type OracleFlag struct {
	MarketID  int64     `json:"market_id"`
	Reason    string    `json:"reason"`
	CreatedAt time.Time `json:"created_at"`
}

// Validate checks and trims the flag's reason (see CleanText).
func (f *OracleFlag) Validate() error {
	if strings.TrimSpace(f.Reason) == "" {
		return Errorf(EINVALID, "flagging market %d needs a reason", f.MarketID)
	}
	var err error
	f.Reason, err = CleanText("the reason", f.Reason, MaxReasonChars, true)
	return err
}

// OracleDispute is an admin's contest of a market's resolution by its
// source: who disputed it, when, why, and the resolution disputed. The
// market keeps that resolution until the oracle (run on it like on an
// ambiguous market) or an arbiter decides; the decision is then applied
// as a re-resolution: both tracks re-score and re-settle what it changes.
type OracleDispute struct {
	MarketID   int64     `json:"market_id"`
	Resolution string    `json:"resolution"` // the source's, as disputed
	Admin      string    `json:"admin"`
	Reason     string    `json:"reason"`
	CreatedAt  time.Time `json:"created_at"`
}

// Validate checks and trims the admin's name and the reason (see
// CleanText).
func (d *OracleDispute) Validate() error {
	var err error
	if d.Admin, err = CleanText("the admin's name", d.Admin, MaxNameChars, true); err != nil {
		return err
	}
	if strings.TrimSpace(d.Reason) == "" {
		return Errorf(EINVALID, "disputing market %d needs a reason", d.MarketID)
	}
	d.Reason, err = CleanText("the reason", d.Reason, MaxReasonChars, true)
	return err
}

// ResolutionChange is a resolution being applied to a market, as the
// tracks see it inside the transaction that records it.
type ResolutionChange struct {
	// Market is the market as it was before the change.
	Market *Market
	// Resolution is the oracle resolution applied (ID set); a track that
	// re-scores forecast rounds adds them to its Rescored.
	Resolution *OracleResolution
	// Outcome is the market's resolution from now on: Yes, No or Void.
	Outcome string
	At      time.Time
}

// ResolutionHook is one track's part of applying a resolution to a
// market: on a market that had one already (a re-resolution, a decided
// dispute) it corrects what the track settled or scored on the previous
// one; on every one, it may log what was applied. It runs inside the
// store's transaction tx; an error rolls everything back, the resolution
// included.
type ResolutionHook func(ctx context.Context, tx ResolutionTx, c *ResolutionChange) error

// ResolutionTx is the transaction that applies a resolution, as the tracks
// read and write through it.
type ResolutionTx interface {
	RescoreTx
	ResettleTx
	LogTx
}

// LogTx is a store transaction that appends to the tamper-evident log:
// the entries and the write they record are stored both or neither.
type LogTx interface {
	AppendLeaves(ctx context.Context, leaves ...*LogLeaf) error
}

// DisputeHook is a track's part of recording a dispute, run inside the
// store's transaction that records it (the forecast track logs it).
type DisputeHook func(ctx context.Context, tx LogTx, d *OracleDispute) error

// RescoreTx is what the forecast track needs to re-score the rounds that
// froze a market's outcome.
type RescoreTx interface {
	// ScoredRounds lists the triggered rounds holding the market, by id.
	ScoredRounds(ctx context.Context, marketID int64) ([]uint64, error)
	// LockRound reads a round with its markets and frozen outcomes, locked
	// against any other re-scoring of it until the transaction ends.
	LockRound(ctx context.Context, id uint64) (*Round, error)
	MarketsByID(ctx context.Context, ids []int64) (map[int64]*Market, error)
	Submissions(ctx context.Context, roundID uint64) ([]*Submission, error)
	RoundScores(ctx context.Context, roundID uint64) ([]RoundScore, error)
	// SaveRescore freezes rs.Outcome for the round's market rs.Index,
	// replaces the round's scores with rs.Scores and its scored forecasts
	// with rows, and keeps rs for audit.
	SaveRescore(ctx context.Context, rs *RoundRescore, rows []ScoredForecast) error
}

// ResettleTx is what the trading track needs to correct the settlement of
// a market.
type ResettleTx interface {
	// Settlement returns how the market was settled; ok is false while it
	// is not.
	Settlement(ctx context.Context, marketID int64) (s Settlement, ok bool, err error)
	// MarketTrades lists every trade in the market, by id.
	MarketTrades(ctx context.Context, marketID int64) ([]*Trade, error)
	// MarketPositions lists every position in the market, any status, by id.
	MarketPositions(ctx context.Context, marketID int64) ([]*Position, error)
	// LockPortfolio reads a portfolio with its open positions, locked
	// against any other write until the transaction ends.
	LockPortfolio(ctx context.Context, id int64) (*Portfolio, error)
	Cohort(ctx context.Context, id int64) (*Cohort, error)
	// ApplyChange writes a ledger change (see CohortStore.ApplyChange).
	ApplyChange(ctx context.Context, ch *PortfolioChange) error
	// Resettled records that the market's settlement now follows the
	// resolution given.
	Resettled(ctx context.Context, marketID int64, resolution string) error
}

// TradeResettle is the trading correction made when a settled market is
// re-resolved: Amount is the change of payout (negative when taken back),
// which moves cash and realized P/L alike; CostBasis is the cost basis the
// position had when it settled, for reference (nothing is released).
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
