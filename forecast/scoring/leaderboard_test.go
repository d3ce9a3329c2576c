package scoring_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
)

// methodGolden pins, per method version, the digest of the default
// method and of the leaderboard it computes from fixtureForecasts. A
// change to a scoring rule changes one of them: it must come with a new
// MethodVersion, a changelog entry and a new line here.
var methodGolden = map[string]struct{ config, figures string }{
	"2.0": {"8f27a6bd90bae806b0163f150233c3061b86aa7b0285676ef367e89ce094a673", "b8076a3b4cba1b712d5ee03f07886206da8eeb390d6b0c197bfaeb76480ded99"},
	"2.1": {"d2fa97aa8b7552d99baee9b9aa5c73eb9df2e237851fe1f5b2e3901c9826a73d", "3d145c6da68d1c3bfec9c03ac0740fa4afb6be19fb8573b656fe0453baf878bd"},
}

// fixtureForecasts are a fixed data set: 5 agents of unequal skill over
// 12 rounds of 6 benchmarked markets, one agent missing half the rounds.
func fixtureForecasts() []arena.ScoredForecast {
	r := rand.New(rand.NewPCG(42, 42))
	var fs []arena.ScoredForecast
	for round := uint64(1); round <= 12; round++ {
		for m := int64(1); m <= 6; m++ {
			q := r.Float64()
			out := int8(0)
			if r.Float64() < q {
				out = 1
			}
			bench := min(0.99, max(0.01, q+0.2*(r.Float64()-0.5)))
			for a, noise := range []float64{0.05, 0.15, 0.3, 0.5, 0.1} {
				if a == 4 && round%2 == 0 {
					continue
				}
				p := min(1, max(0, q+noise*(r.Float64()-0.5)))
				fs = append(fs, arena.ScoredForecast{RoundID: round, Agent: fmt.Sprintf("agent-%d", a), MarketID: m + 10*int64(round),
					Category: []string{"politics", "sports"}[m%2], Event: fmt.Sprint("e", m), Forecast: p, Benchmark: &bench, Outcome: out})
			}
		}
	}
	return fs
}

// boardText is a board's figures, rounded so that the last bits of
// floating point cannot change them.
func boardText(b scoring.Board) string {
	var s strings.Builder
	f := func(p *float64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprintf("%.6g", *p)
	}
	fmt.Fprintln(&s, b.Methodology.Version, b.Methodology.Digest, b.Hidden)
	for _, r := range b.Rows {
		fmt.Fprintln(&s, r.Rank, r.Agent, r.Preliminary, r.N, r.Rounds, f(r.Score), f(r.ScoreCILo), f(r.ScoreCIHi), f(&r.Brier), f(r.BrierSE),
			f(&r.BrierIndex), f(&r.BSS), f(r.Peer), r.PeerN, f(r.Adjusted), f(r.Alpha), f(r.AlphaSE), f(r.AlphaCILo), f(r.AlphaCIHi), f(r.P),
			f(r.ShrunkAlpha), r.Provisional, f(r.PRank1), f(r.PTop), r.TieGroup, f(r.RoundsToSignificance))
		if v := r.VsLeader; v != nil {
			fmt.Fprintln(&s, " vs", v.Rounds, f(&v.BrierDiff), f(v.SE), f(v.P), f(v.AdjustedP))
		}
	}
	return s.String()
}

// The scoring method is a versioned contract: the default method's
// digest and the leaderboard it computes on a fixed data set are pinned
// to MethodVersion, and docs/methodology.md has a changelog entry for it.
func TestMethodVersioned(t *testing.T) {
	m := scoring.DefaultMethod()
	a, err := scoring.AnalyzeForecasts(context.Background(), fixtureForecasts(), m, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(boardText(a.Board(nil))))
	got := struct{ config, figures string }{m.Digest(), hex.EncodeToString(sum[:])}
	want, ok := methodGolden[scoring.MethodVersion]
	if !ok || got != want {
		t.Errorf("the scoring method changed (config digest %s, figures digest %s) but scoring.MethodVersion is still %q:\n"+
			"bump MethodVersion, add a changelog entry for the new version to docs/methodology.md, and pin the new digests in methodGolden",
			got.config, got.figures, scoring.MethodVersion)
	}
	doc, err := os.ReadFile("../../docs/methodology.md")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^### ` + regexp.QuoteMeta(scoring.MethodVersion) + `\b`).Match(doc) {
		t.Errorf("docs/methodology.md has no changelog entry \"### %s\"", scoring.MethodVersion)
	}
}

// The entry rules: an agent below the minimum of resolved forecasts is
// listed after the ranked ones without a rank; beyond the limit per
// organisation an agent is left out and counted; ranks stay 1…k.
func TestBoardEntryRules(t *testing.T) {
	m := scoring.DefaultMethod()
	m.MinForecasts, m.MaxPerOrganisation = 40, 1
	a, err := scoring.AnalyzeForecasts(context.Background(), fixtureForecasts(), m, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// agent-4 has 36 forecasts; agent-0 and agent-1 share an organisation.
	b := a.Board(map[string]arena.AgentInfo{"agent-0": {Name: "Zero", Organisation: "Org"}, "agent-1": {Name: "One", Organisation: "Org"}})
	if b.Hidden != 1 {
		t.Errorf("%d agents hidden, want 1", b.Hidden)
	}
	var got []string
	for i, r := range b.Rows {
		got = append(got, fmt.Sprint(r.Rank, " ", r.Name))
		if r.Preliminary != (r.Agent == "agent-4") || (r.Rank == 0) != r.Preliminary {
			t.Errorf("row %d: %+v", i, r)
		}
		if i > 0 && !r.Preliminary && b.Rows[i-1].Score != nil && r.Score != nil && *r.Score > *b.Rows[i-1].Score {
			t.Errorf("row %d scores %v above the row before it (%v)", i, *r.Score, *b.Rows[i-1].Score)
		}
	}
	if want := "1 agent-2|2 market|3 Zero|4 agent-3|0 agent-4"; strings.Join(got, "|") != want {
		t.Errorf("board %s, want %s", strings.Join(got, "|"), want)
	}
	if b.Rows[0].VsLeader != nil || b.Rows[1].VsLeader == nil || b.Rows[4].VsLeader != nil {
		t.Error("only ranked agents after the leader are compared with it")
	}
	if b.Rows[4].PRank1 != nil || b.Rows[4].TieGroup != 0 {
		t.Errorf("a preliminary agent competes for no place: %+v", b.Rows[4])
	}
	if err := m.Validate(); err != nil {
		t.Error(err)
	}
	for _, bad := range []scoring.Method{{MinForecasts: -1}, {MaxPerOrganisation: -1}} {
		d := scoring.DefaultMethod()
		d.MinForecasts, d.MaxPerOrganisation = bad.MinForecasts, bad.MaxPerOrganisation
		if err := d.Validate(); arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("%+v: %v, want EINVALID", bad, err)
		}
	}
}
