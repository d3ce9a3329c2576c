package arena

import "time"

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
