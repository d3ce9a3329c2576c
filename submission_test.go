package arena_test

import (
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

// The submission state machine: commit once, reveal a commit once, store
// reasoning once for a commit; each refusal has the API's code.
func TestSubmissionNext(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	commit := &arena.Submission{RoundID: 7, Agent: "0xA", CommitHash: "h", CommitNonce: 3, CommittedAt: at.Add(-time.Hour)}
	revealed := *commit
	revealed.Predictions, revealed.Salt = []uint16{5000}, "s"
	reasoned := *commit
	reasoned.Reasoning = `{"why":"x"}`
	for _, c := range []struct {
		name string
		kind arena.SubmissionKind
		cur  *arena.Submission
		sub  arena.Submission
		code string // "" accepted
	}{
		{"first commit", arena.SubmitCommit, nil, arena.Submission{RoundID: 7, Agent: "0xA", CommitHash: "h", Predictions: []uint16{1}, Reasoning: "r"}, ""},
		{"second commit", arena.SubmitCommit, commit, arena.Submission{RoundID: 7, Agent: "0xA"}, "already_committed"},
		{"reveal", arena.SubmitReveal, commit, arena.Submission{RoundID: 7, Agent: "0xA", Predictions: []uint16{5000}, Salt: "s", RevealNonce: 4}, ""},
		{"reveal of no prediction", arena.SubmitReveal, commit, arena.Submission{RoundID: 7, Agent: "0xA", Salt: "s"}, ""},
		{"reveal without a commit", arena.SubmitReveal, nil, arena.Submission{RoundID: 7, Agent: "0xA"}, "not_committed"},
		{"second reveal", arena.SubmitReveal, &revealed, arena.Submission{RoundID: 7, Agent: "0xA", Predictions: []uint16{1}}, "already_revealed"},
		{"reasoning", arena.SubmitReasoning, commit, arena.Submission{RoundID: 7, Agent: "0xA", Reasoning: `{"why":"x"}`}, ""},
		{"empty reasoning", arena.SubmitReasoning, commit, arena.Submission{RoundID: 7, Agent: "0xA"}, "reasoning_already_stored"},
		{"second reasoning", arena.SubmitReasoning, &reasoned, arena.Submission{RoundID: 7, Agent: "0xA", Reasoning: "y"}, "reasoning_already_stored"},
		{"reasoning without a commit", arena.SubmitReasoning, nil, arena.Submission{RoundID: 7, Agent: "0xA", Reasoning: "y"}, "reasoning_not_committed"},
	} {
		sub := c.sub
		next, err := c.kind.Next(c.cur, &sub, at)
		if c.code != "" {
			if e, ok := err.(*arena.Error); !ok || e.Code != c.code || next != nil {
				t.Errorf("%s: %v, %v; want code %s", c.name, next, err, c.code)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		switch c.kind {
		case arena.SubmitCommit:
			if next.Predictions != nil || next.Reasoning != "" || !next.CommittedAt.Equal(at) || next.CommitHash != "h" {
				t.Errorf("%s: %+v, want the commit alone, committed at %s", c.name, next, at)
			}
		case arena.SubmitReveal:
			if !next.Revealed() || !slices.Equal(next.Predictions, sub.Predictions) && len(sub.Predictions) > 0 || !next.RevealedAt.Equal(at) ||
				next.CommitHash != "h" || next.CommitNonce != 3 || !next.CommittedAt.Equal(commit.CommittedAt) {
				t.Errorf("%s: %+v, want the commit revealed at %s", c.name, next, at)
			}
		case arena.SubmitReasoning:
			if next.Reasoning != sub.Reasoning || next.CommitHash != "h" {
				t.Errorf("%s: %+v", c.name, next)
			}
		}
	}
	if commit.Predictions != nil || commit.Reasoning != "" {
		t.Errorf("Next changed the stored submission: %+v", commit)
	}
	if _, err := arena.SubmissionKind(9).Next(nil, &arena.Submission{}, at); arena.ErrorKind(err) != arena.EINVALID {
		t.Errorf("unknown kind: %v", err)
	}
}
