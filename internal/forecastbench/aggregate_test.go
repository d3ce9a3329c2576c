package forecastbench

import (
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
)

func TestAggregateAndBoardItems(t *testing.T) {
	due := time.Date(2024, 7, 21, 0, 0, 0, 0, time.UTC)
	rd := time.Date(2024, 8, 20, 0, 0, 0, 0, time.UTC)
	hf := func(group, src, id string, rd time.Time, user string, p float64) arena.HumanForecast {
		return arena.HumanForecast{Due: due, Group: group, Source: src, QuestionID: id, ResolutionDate: rd, UserID: user, Forecast: p}
	}
	fs := []arena.HumanForecast{
		hf(arena.HumanSuper, "acled", "a", rd, "u2", 0.2),
		hf(arena.HumanSuper, "acled", "a", rd, "u1", 0.1),
		hf(arena.HumanSuper, "manifold", "m", time.Time{}, "u1", 0.9),
		hf(arena.HumanSuper, "manifold", "m", time.Time{}, "u3", 0.7),
		hf(arena.HumanSuper, "manifold", "m", time.Time{}, "u2", 0.6),
		hf(arena.HumanSuper, "infer", "gone", time.Time{}, "u1", 0.5),
		hf(arena.HumanPublic, "manifold", "m", time.Time{}, "p1", 0.4),
	}
	aggs := Aggregate(fs)
	want := []struct {
		group, sid       string
		median, min, max float64
		n                int
		firstUser, kind  string
	}{
		{arena.HumanPublic, "2024-07-21:manifold:m", 0.4, 0.4, 0.4, 1, "p1", arena.KindMarket},
		{arena.HumanSuper, "2024-07-21:acled:a:2024-08-20", 0.15000000000000002, 0.1, 0.2, 2, "u1", arena.KindDataset},
		{arena.HumanSuper, "2024-07-21:infer:gone", 0.5, 0.5, 0.5, 1, "u1", arena.KindMarket},
		{arena.HumanSuper, "2024-07-21:manifold:m", 0.7, 0.6, 0.9, 3, "u1", arena.KindMarket},
	}
	if len(aggs) != len(want) {
		t.Fatalf("%d aggregates, want %d: %+v", len(aggs), len(want), aggs)
	}
	for i, w := range want {
		a := aggs[i]
		if a.Group != w.group || a.SourceID != w.sid || a.Median != w.median || a.Min != w.min || a.Max != w.max ||
			len(a.Forecasts) != w.n || a.Forecasts[0].UserID != w.firstUser || a.Kind != w.kind {
			t.Errorf("aggregate %d: %+v, want %+v", i, a, w)
		}
	}
	// The dataset item resolved Yes; the market is open with a reported
	// value; "gone" has no reported value (its freeze price does not count).
	items := map[string]*arena.Market{
		"2024-07-21:acled:a:2024-08-20": {SourceID: "2024-07-21:acled:a:2024-08-20", Kind: arena.KindDataset, Resolution: arena.Yes},
		"2024-07-21:manifold:m":         {SourceID: "2024-07-21:manifold:m", Kind: arena.KindMarket, Prices: map[string]float64{arena.Yes: 0.8}},
		"2024-07-21:infer:gone":         {SourceID: "2024-07-21:infer:gone", Kind: arena.KindMarket, Prices: map[string]float64{arena.Yes: 0.5}},
	}
	values := map[string]float64{"2024-07-21:manifold:m": 0.8}
	got := HumanBoardItems(aggs, items, values, true)
	wantItems := []stats.BoardItem{
		{Forecaster: PublicMedian, Human: true, Item: "2024-07-21:manifold:m", Kind: arena.KindMarket, Forecast: 0.4, Outcome: 0.8},
		{Forecaster: "Public forecaster p1", Human: true, Item: "2024-07-21:manifold:m", Kind: arena.KindMarket, Forecast: 0.4, Outcome: 0.8},
		{Forecaster: SuperMedian, Human: true, Item: "2024-07-21:acled:a:2024-08-20", Kind: arena.KindDataset, Resolved: true, Forecast: 0.15000000000000002, Outcome: 1},
		{Forecaster: "Superforecaster u1", Human: true, Item: "2024-07-21:acled:a:2024-08-20", Kind: arena.KindDataset, Resolved: true, Forecast: 0.1, Outcome: 1},
		{Forecaster: "Superforecaster u2", Human: true, Item: "2024-07-21:acled:a:2024-08-20", Kind: arena.KindDataset, Resolved: true, Forecast: 0.2, Outcome: 1},
		{Forecaster: SuperMedian, Human: true, Item: "2024-07-21:manifold:m", Kind: arena.KindMarket, Forecast: 0.7, Outcome: 0.8},
		{Forecaster: "Superforecaster u1", Human: true, Item: "2024-07-21:manifold:m", Kind: arena.KindMarket, Forecast: 0.9, Outcome: 0.8},
		{Forecaster: "Superforecaster u2", Human: true, Item: "2024-07-21:manifold:m", Kind: arena.KindMarket, Forecast: 0.6, Outcome: 0.8},
		{Forecaster: "Superforecaster u3", Human: true, Item: "2024-07-21:manifold:m", Kind: arena.KindMarket, Forecast: 0.7, Outcome: 0.8},
	}
	if len(got) != len(wantItems) {
		t.Fatalf("%d items, want %d: %+v", len(got), len(wantItems), got)
	}
	for i := range wantItems {
		if got[i] != wantItems[i] {
			t.Errorf("item %d: %+v, want %+v", i, got[i], wantItems[i])
		}
	}
	// A void item is not scored.
	if _, _, ok := BoardOutcome(&arena.Market{Kind: arena.KindMarket, Resolution: arena.Void}, values); ok {
		t.Error("a void item scored")
	}
}
