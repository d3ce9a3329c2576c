package oracle

import (
	"log/slog"
	"reflect"
	"strconv"
	"testing"

	arena "github.com/forecast-arena/arena"
)

// v builds a vote: "Y0.9" is YES at 0.9, "N0.6" NO at 0.6, "T0.5" TOO_EARLY,
// "F" a failure.
func v(agent, s string) arena.OracleVote {
	out := arena.OracleVote{Agent: agent, Round: 1}
	switch s[0] {
	case 'Y':
		out.Decision = arena.OracleYes
	case 'N':
		out.Decision = arena.OracleNo
	case 'T':
		out.Decision = arena.OracleTooEarly
	case 'F':
		out.Failure = "boom"
		return out
	}
	c, err := strconv.ParseFloat(s[1:], 64)
	if err != nil {
		panic(err)
	}
	out.Confidence = c
	return out
}

func votes(ss ...string) []arena.OracleVote {
	out := make([]arena.OracleVote, len(ss))
	for i, s := range ss {
		out[i] = v(string(rune('a'+i)), s)
	}
	return out
}

func TestVoteHelper(t *testing.T) {
	if x := v("a", "Y0.85"); x.Confidence != 0.85 || x.Decision != arena.OracleYes {
		t.Fatal(x)
	}
	if x := v("a", "N1"); x.Confidence != 1 {
		t.Fatal(x)
	}
}

func TestAggregation(t *testing.T) {
	cases := []struct {
		name            string
		r1, r2          []string
		maj, wtd, delib Outcome
		unanimous       bool
		composite       float64
		escalate        []string
	}{
		{"unanimous yes", []string{"Y0.9", "Y0.8", "Y1"}, []string{"Y0.9", "Y0.9", "Y0.9"},
			Outcome{"YES", RuleMajority}, Outcome{"YES", RuleWeighted}, Outcome{"YES", RuleRound2Majority}, true, 1.9, nil},
		{"unanimous but unconfident", []string{"N0.5", "N0.6", "N0.7"}, nil,
			Outcome{"NO", RuleMajority}, Outcome{"NO", RuleWeighted}, Outcome{"NO", RuleRound1Majority}, true, 1.6, []string{ReasonLowScore}},
		{"2-1 split, weighted flips", []string{"Y0.4", "Y0.4", "N0.9"}, []string{"N0.8", "N0.7", "N0.9"},
			Outcome{"YES", RuleMajority}, Outcome{"NO", RuleWeighted}, Outcome{"NO", RuleRound2Majority}, false, 0.5666666666666667, []string{ReasonSplit, ReasonNotUnanimous, ReasonLowScore}},
		{"failure leaves a tie", []string{"Y0.9", "N0.9", "F"}, []string{"Y0.9", "N0.9"},
			Outcome{"NO", RuleTieNo}, Outcome{"NO", RuleWeightedTieNo}, Outcome{"NO", RuleDefaultNo}, false, 0.9, []string{ReasonFailure, ReasonSplit, ReasonNotUnanimous, ReasonLowScore}},
		{"tie in round 2 falls back to round 1", []string{"Y0.9", "Y0.9", "N0.9"}, []string{"Y0.9", "N0.9", "T0.5"},
			Outcome{"YES", RuleMajority}, Outcome{"YES", RuleWeighted}, Outcome{"YES", RuleRound1Majority}, false, 0.9, []string{ReasonSplit, ReasonNotUnanimous, ReasonLowScore}},
		{"abstention does not vote", []string{"Y0.9", "Y0.9", "T0.9"}, nil,
			Outcome{"YES", RuleMajority}, Outcome{"YES", RuleWeighted}, Outcome{"YES", RuleRound1Majority}, false, 0.9, []string{ReasonTooEarly, ReasonNotUnanimous, ReasonLowScore}},
		{"nobody answers", []string{"F", "T0.9", "F"}, nil,
			Outcome{"NO", RuleNoVotesNo}, Outcome{"NO", RuleWeightedTieNo}, Outcome{"NO", RuleDefaultNo}, false, 0, []string{ReasonTooEarly, ReasonFailure, ReasonNoVotes, ReasonNotUnanimous, ReasonLowScore}},
		{"empty panel", nil, nil,
			Outcome{"NO", RuleNoVotesNo}, Outcome{"NO", RuleWeightedTieNo}, Outcome{"NO", RuleDefaultNo}, false, 0, []string{ReasonNoVotes, ReasonNotUnanimous, ReasonLowScore}},
	}
	pol := arena.DefaultOraclePolicy
	for _, c := range cases {
		r1, r2 := votes(c.r1...), votes(c.r2...)
		if got := Majority(r1); got != c.maj {
			t.Errorf("%s: majority %v want %v", c.name, got, c.maj)
		}
		if got := Weighted(r1); got != c.wtd {
			t.Errorf("%s: weighted %v want %v", c.name, got, c.wtd)
		}
		if got := Deliberative(r1, r2); got != c.delib {
			t.Errorf("%s: deliberative %v want %v", c.name, got, c.delib)
		}
		if got := Unanimous(r1); got != c.unanimous {
			t.Errorf("%s: unanimous %v", c.name, got)
		}
		if got := Composite(r1); got-c.composite > 1e-12 || c.composite-got > 1e-12 {
			t.Errorf("%s: composite %v want %v", c.name, got, c.composite)
		}
		if got := Escalate(pol, r1); !reflect.DeepEqual(got, c.escalate) {
			t.Errorf("%s: escalate %v want %v", c.name, got, c.escalate)
		}
	}
}

func TestEscalatePolicyThresholds(t *testing.T) {
	r1 := votes("Y0.7", "Y0.7")
	if got := Escalate(arena.OraclePolicy{AutoMinScore: 1.7, RequireUnanimous: true}, r1); got != nil {
		t.Errorf("1.7 ≥ 1.7 escalated: %v", got)
	}
	if got := Escalate(arena.OraclePolicy{AutoMinScore: 1.71}, r1); !reflect.DeepEqual(got, []string{ReasonLowScore}) {
		t.Errorf("got %v", got)
	}
	// Without the unanimity requirement a split still escalates.
	if got := Escalate(arena.OraclePolicy{AutoMinScore: 0}, votes("Y0.9", "N0.1")); !reflect.DeepEqual(got, []string{ReasonSplit}) {
		t.Errorf("got %v", got)
	}
}

func TestSingleAndDecide(t *testing.T) {
	r1 := votes("Y0.9", "T0.5", "F")
	for _, c := range []struct {
		arch string
		want arena.OracleDecision
	}{{"single:a", "YES"}, {"single:b", "TOO_EARLY"}, {"single:c", ""}, {"single:zz", ""}, {"majority", "YES"}, {"weighted", "YES"}, {"deliberative", "YES"}} {
		if got := Decide(c.arch, r1, nil).Decision; got != c.want {
			t.Errorf("%s: %q want %q", c.arch, got, c.want)
		}
	}
	if _, err := ParseArch("single:zz", []string{"a", "b"}); err == nil {
		t.Error("unknown agent accepted")
	}
	if _, err := ParseArch("unanimity", []string{"a"}); err == nil {
		t.Error("unknown architecture accepted")
	}
	got, err := Systems([]string{"single", "majority", "single:b", "deliberative"}, []string{"a", "b"})
	if err != nil || !reflect.DeepEqual(got, []string{"single:a", "single:b", "majority", "deliberative"}) {
		t.Errorf("systems %v %v", got, err)
	}
}

var quiet = slog.New(slog.DiscardHandler)
