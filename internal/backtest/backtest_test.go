package backtest

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
)

func TestCut(t *testing.T) {
	mk := func(sid, res string) *arena.Market {
		return &arena.Market{Source: arena.SourceForecastBench, SourceID: sid, Kind: arena.KindMarket, Resolution: res}
	}
	var ms []*arena.Market
	for i := 9; i >= 0; i-- { // out of order on purpose
		ms = append(ms, mk(fmt.Sprintf("2025-10-26:manifold:q%d", i), arena.Yes))
	}
	ms = append(ms,
		mk("2025-10-26:manifold:void", arena.Void), mk("2025-10-26:manifold:open", ""),
		&arena.Market{Source: arena.SourceForecastBench, SourceID: "2025-10-26:fred:x:2025-11-02", Kind: arena.KindDataset, Resolution: arena.No},
		mk("2025-11-09:polymarket:a", arena.No), mk("2025-11-09:polymarket:b", arena.Yes), mk("2025-11-09:polymarket:c", arena.No))
	p, err := Cut(ms, 3, time.Time{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range p.Rounds {
		s := r.Key + ":"
		for _, q := range r.Questions {
			s += " " + q.Market.SourceID[11:]
		}
		got = append(got, s)
	}
	want := "[2025-10-26#1: manifold:q0 manifold:q1 manifold:q2 2025-10-26#2: manifold:q3 manifold:q4 manifold:q5 2025-10-26#3: manifold:q6 manifold:q7 manifold:q8 2025-11-09#1: polymarket:a polymarket:b polymarket:c]"
	if fmt.Sprint(got) != want || p.LeftOver != 1 || p.Questions() != 12 {
		t.Errorf("rounds %v left over %d", got, p.LeftOver)
	}
	p, _ = Cut(ms, 3, time.Date(2025, 11, 1, 0, 0, 0, 0, time.UTC), time.Time{})
	if len(p.Rounds) != 1 || p.LeftOver != 0 {
		t.Errorf("--from: %d rounds", len(p.Rounds))
	}
	if _, err := Cut(ms, 0, time.Time{}, time.Time{}); err == nil {
		t.Error("k = 0 accepted")
	}
}

// A plan without a round is an error that says why.
func TestCutNothingToRun(t *testing.T) {
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	ms := []*arena.Market{
		{Source: arena.SourceForecastBench, SourceID: "2025-10-26:manifold:a", Kind: arena.KindMarket, Resolution: arena.Yes},
		{Source: arena.SourceForecastBench, SourceID: "2025-10-26:manifold:b", Kind: arena.KindMarket, Resolution: arena.No},
		{Source: arena.SourceForecastBench, SourceID: "2025-11-09:manifold:c", Kind: arena.KindMarket, Resolution: ""},
	}
	for _, c := range []struct {
		name     string
		ms       []*arena.Market
		k        int
		from, to time.Time
		want     string
	}{
		{"nothing imported", nil, 2, time.Time{}, time.Time{}, "holds no resolved ForecastBench market question"},
		{"only unresolved questions", ms[2:], 2, time.Time{}, time.Time{}, "holds no resolved ForecastBench market question"},
		{"no set in the date range", ms, 2, day("2026-01-01"), time.Time{}, "none of the 2 resolved questions is due on or after 2026-01-01 (their due dates run from 2025-10-26 to 2025-10-26)"},
		{"inverted date range", ms, 2, day("2026-01-01"), day("2025-01-01"), "is due from 2026-01-01 to 2025-01-01"},
		{"sets smaller than a round", ms, 3, time.Time{}, time.Time{}, "no question set due at any date has 3 resolved questions"},
	} {
		p, err := Cut(c.ms, c.k, c.from, c.to)
		if err == nil || !strings.Contains(err.Error(), c.want) || arena.ErrorCode(err) != arena.EINVALID {
			t.Errorf("%s: plan %v, error %v; want %q", c.name, p, err, c.want)
		}
	}
}

func TestGuard(t *testing.T) {
	d := func(s string) llm.Date { t, _ := time.Parse(time.DateOnly, s); return llm.Date{Time: t} }
	reg := &llm.Registry{Agents: []llm.ModelSpec{
		{ID: "a", TrainingCutoff: d("2025-10-26")}, {ID: "b", TrainingCutoff: d("2025-12-01")}, {ID: "c"},
		{ID: "e", Kind: llm.KindEnsemble, Members: []string{"a", "b"}}, {ID: "f", Kind: llm.KindEnsemble, Members: []string{"a", "c"}},
	}}
	due := time.Date(2025, 10, 26, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		id   string
		due  time.Time
		want bool
	}{
		{"a", due, false}, // not strictly after
		{"a", due.AddDate(0, 0, 1), true},
		{"b", due.AddDate(0, 2, 0), true},
		{"b", due.AddDate(0, 0, 14), false},
		{"c", due.AddDate(5, 0, 0), false}, // no cutoff: nothing
		{"e", due.AddDate(0, 0, 14), false},
		{"e", due.AddDate(0, 2, 0), true},
		{"f", due.AddDate(5, 0, 0), false},
	} {
		spec, _ := reg.Agent(tc.id)
		c, ok := Cutoff(reg, spec)
		if got := Allowed(c, ok, tc.due); got != tc.want {
			t.Errorf("%s due %s: %v, want %v", tc.id, tc.due.Format(time.DateOnly), got, tc.want)
		}
	}
}
