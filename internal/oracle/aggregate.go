// Package oracle resolves questions with a panel of LLM resolvers: every
// resolver reads the same evidence packet and answers YES, NO or TOO_EARLY
// with a confidence; architectures combine the answers (single, majority,
// confidence-weighted, two-round deliberation), and an escalation rule
// decides whether the result stands or goes to a human arbiter. The
// aggregation and escalation rules here are pure functions.
package oracle

import (
	"fmt"
	"slices"
	"strings"

	arena "github.com/forecast-arena/arena"
)

// Architectures.
const (
	ArchMajority     = "majority"
	ArchWeighted     = "weighted"
	ArchDeliberative = "deliberative"
	archSinglePrefix = "single:"
)

// Rules that can decide an outcome.
const (
	RuleSingle         = "single"          // the resolver's own round-1 answer
	RuleMajority       = "majority"        // more YES than NO votes, or the reverse
	RuleTieNo          = "tie_no"          // equal YES and NO votes: NO
	RuleNoVotesNo      = "no_votes_no"     // no YES/NO vote at all: NO
	RuleWeighted       = "weighted"        // larger confidence sum
	RuleWeightedTieNo  = "weighted_tie_no" // equal sums: NO
	RuleRound2Majority = "round2_majority"
	RuleRound1Majority = "round1_majority"
	RuleDefaultNo      = "default_no" // both rounds tied or empty: NO
)

// SingleArch returns the architecture name of one resolver alone.
func SingleArch(agent string) string { return archSinglePrefix + agent }

// ParseArch validates an architecture name against the panel's agent ids
// and returns the agent of a single:<id> architecture.
func ParseArch(arch string, agents []string) (agent string, err error) {
	switch {
	case arch == ArchMajority || arch == ArchWeighted || arch == ArchDeliberative:
		return "", nil
	case strings.HasPrefix(arch, archSinglePrefix):
		a := strings.TrimPrefix(arch, archSinglePrefix)
		if !slices.Contains(agents, a) {
			return "", fmt.Errorf("oracle: architecture %q: unknown agent %q (panel: %s)", arch, a, strings.Join(agents, ", "))
		}
		return a, nil
	default:
		return "", fmt.Errorf("oracle: unknown architecture %q (want single:<agent>, majority, weighted or deliberative)", arch)
	}
}

// Outcome is an architecture's answer on one question. Decision is empty
// when a single resolver failed.
type Outcome struct {
	Decision arena.OracleDecision `json:"decision"`
	Rule     string               `json:"rule"`
}

func count(votes []arena.OracleVote) (yes, no int) {
	for _, v := range votes {
		if !v.Answered() {
			continue
		}
		switch v.Decision {
		case arena.OracleYes:
			yes++
		case arena.OracleNo:
			no++
		}
	}
	return yes, no
}

// Majority counts the YES and NO votes; abstentions and failures do not
// vote. A tie, or no vote at all, resolves NO: the event is not shown to
// have happened.
func Majority(votes []arena.OracleVote) Outcome {
	yes, no := count(votes)
	switch {
	case yes > no:
		return Outcome{arena.OracleYes, RuleMajority}
	case no > yes:
		return Outcome{arena.OracleNo, RuleMajority}
	case yes == 0:
		return Outcome{arena.OracleNo, RuleNoVotesNo}
	default:
		return Outcome{arena.OracleNo, RuleTieNo}
	}
}

// Weighted compares the sums of confidences of the YES and NO votes; equal
// sums (including none) resolve NO.
func Weighted(votes []arena.OracleVote) Outcome {
	var y, n float64
	for _, v := range votes {
		if !v.Answered() {
			continue
		}
		switch v.Decision {
		case arena.OracleYes:
			y += v.Confidence
		case arena.OracleNo:
			n += v.Confidence
		}
	}
	switch {
	case y > n:
		return Outcome{arena.OracleYes, RuleWeighted}
	case n > y:
		return Outcome{arena.OracleNo, RuleWeighted}
	default:
		return Outcome{arena.OracleNo, RuleWeightedTieNo}
	}
}

// Single is one resolver's round-1 answer as is: TOO_EARLY stays an
// abstention and a failure gives no decision.
func Single(votes []arena.OracleVote, agent string) Outcome {
	for _, v := range votes {
		if v.Agent == agent {
			if !v.Answered() {
				return Outcome{"", RuleSingle}
			}
			return Outcome{v.Decision, RuleSingle}
		}
	}
	return Outcome{"", RuleSingle}
}

// Deliberative takes the round-2 majority; when round 2 ties or has no
// YES/NO vote, the round-1 majority; when that ties too, NO.
func Deliberative(round1, round2 []arena.OracleVote) Outcome {
	if y, n := count(round2); y != n {
		return Outcome{Majority(round2).Decision, RuleRound2Majority}
	}
	if y, n := count(round1); y != n {
		return Outcome{Majority(round1).Decision, RuleRound1Majority}
	}
	return Outcome{arena.OracleNo, RuleDefaultNo}
}

// Decide applies an architecture to the votes of both rounds.
func Decide(arch string, round1, round2 []arena.OracleVote) Outcome {
	switch {
	case arch == ArchMajority:
		return Majority(round1)
	case arch == ArchWeighted:
		return Weighted(round1)
	case arch == ArchDeliberative:
		return Deliberative(round1, round2)
	case strings.HasPrefix(arch, archSinglePrefix):
		return Single(round1, strings.TrimPrefix(arch, archSinglePrefix))
	}
	return Outcome{"", "unknown_architecture"}
}

// Unanimous reports whether every resolver of the panel answered YES or NO
// in round 1 and all gave the same answer. An empty panel is not unanimous.
func Unanimous(round1 []arena.OracleVote) bool {
	if len(round1) == 0 {
		return false
	}
	for _, v := range round1 {
		if !v.Answered() || !v.Decision.Binary() || v.Decision != round1[0].Decision {
			return false
		}
	}
	return true
}

// MeanConfidence is the mean confidence of the resolvers that answered YES
// or NO in round 1 (0 when none did).
func MeanConfidence(round1 []arena.OracleVote) float64 {
	var s float64
	n := 0
	for _, v := range round1 {
		if v.Answered() && v.Decision.Binary() {
			s += v.Confidence
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return s / float64(n)
}

// Composite is the escalation score in [0, 2]: 1 for a unanimous panel plus
// the mean confidence of the YES/NO answers.
func Composite(round1 []arena.OracleVote) float64 {
	c := MeanConfidence(round1)
	if Unanimous(round1) {
		c++
	}
	return c
}

// Escalation reasons.
const (
	ReasonTooEarly     = "too_early"     // some resolver abstained
	ReasonFailure      = "failure"       // some resolver failed
	ReasonSplit        = "split"         // YES and NO both voted
	ReasonNoVotes      = "no_votes"      // nobody answered YES or NO
	ReasonNotUnanimous = "not_unanimous" // policy requires unanimity
	ReasonLowScore     = "low_score"     // composite below auto_min_score
)

// Escalate applies the policy to a round-1 panel and returns why the
// result must go to a human (nil when it may resolve on its own). An
// abstention, a failure or a split always escalates; the thresholds add to
// that.
func Escalate(p arena.OraclePolicy, round1 []arena.OracleVote) []string {
	var why []string
	tooEarly, failed := false, false
	for _, v := range round1 {
		if !v.Answered() {
			failed = true
		} else if v.Decision == arena.OracleTooEarly {
			tooEarly = true
		}
	}
	if tooEarly {
		why = append(why, ReasonTooEarly)
	}
	if failed {
		why = append(why, ReasonFailure)
	}
	yes, no := count(round1)
	if yes > 0 && no > 0 {
		why = append(why, ReasonSplit)
	}
	if yes+no == 0 {
		why = append(why, ReasonNoVotes)
	}
	if p.RequireUnanimous && !Unanimous(round1) {
		why = append(why, ReasonNotUnanimous)
	}
	if Composite(round1) < p.AutoMinScore {
		why = append(why, ReasonLowScore)
	}
	return why
}
