package backtest

import (
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/forecastbench"
)

// The board's questions: a dataset question's resolved dates in one
// question, in date order; a market
// question alone; an unresolved item and a second group's aggregate of an
// item left out.
func TestHumanQuestions(t *testing.T) {
	due := time.Date(2024, 7, 21, 0, 0, 0, 0, time.UTC)
	day := func(s string) time.Time { d, _ := time.Parse(time.DateOnly, s); return d }
	agg := func(group, source, id, date string, median float64, n int) forecastbench.HumanAggregate {
		f := arena.HumanForecast{Group: group, Due: due, Source: source, QuestionID: id}
		sid := forecastbench.MarketSourceID(due, source, id)
		kind := "market"
		if date != "" {
			f.ResolutionDate = day(date)
			sid = forecastbench.DatasetSourceID(due, source, id, day(date))
			kind = "dataset"
		}
		a := forecastbench.HumanAggregate{Group: group, SourceID: sid, Kind: kind, Median: median}
		for range n {
			a.Forecasts = append(a.Forecasts, f)
		}
		return a
	}
	aggs := []forecastbench.HumanAggregate{
		agg(arena.HumanSuper, "fred", "rate", "2024-08-20", 0.4, 3),
		agg(arena.HumanSuper, "fred", "rate", "2024-07-28", 0.3, 3),
		agg(arena.HumanSuper, "fred", "rate", "2025-01-17", 0.5, 3), // unresolved
		agg(arena.HumanSuper, "manifold", "m", "", 0.8, 2),
		agg(arena.HumanPublic, "manifold", "m", "", 0.6, 9),
	}
	text := func(date string) string {
		return "Will the rate have increased by " + date + " as compared to its value on 2024-07-21? e.g. If the rate was 5.0 …"
	}
	items := map[string]*arena.Market{
		aggs[0].SourceID: {Question: text("2024-08-20"), Resolution: arena.No},
		aggs[1].SourceID: {Question: text("2024-07-28"), Resolution: arena.Yes},
		aggs[2].SourceID: {Question: text("2025-01-17")},
		aggs[3].SourceID: {Question: "Will it rain?", Resolution: arena.Yes},
	}
	got := humanQuestions(aggs, items)
	if len(got) != 2 {
		t.Fatalf("%d questions, want 2: %+v", len(got), got)
	}
	ds := got[0]
	if ds.Kind != "dataset" ||
		len(ds.Items) != 2 || ds.Items[0].ResolutionDate != "2024-07-28" || ds.Items[0].Median != 0.3 || ds.Items[0].Outcome != arena.Yes ||
		ds.Items[1].ResolutionDate != "2024-08-20" || ds.Items[1].Question != text("2024-08-20") {
		t.Errorf("dataset question %+v", ds)
	}
	if m := got[1]; m.Kind != "market" || m.Items[0].Question != "Will it rain?" || len(m.Items) != 1 || m.Items[0].Median != 0.8 || m.Items[0].Humans != 2 || m.Items[0].ResolutionDate != "" {
		t.Errorf("market question %+v", m)
	}
}
