package view

import (
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/backtest"
)

func TestBriefQuestion(t *testing.T) {
	long := strings.Repeat("word ", 100)
	for _, c := range []struct{ name, in, want string }{
		{"a market question", "Will 2024 be the hottest year on record?", "Will 2024 be the hottest year on record?"},
		{"a worked example after the question", "Will there be more 'Battles' in Laos for the 30 days before 2024-07-28 compared to the 30-day average?  " +
			"e.g. If the forecast due date is 2024-01-01 and we have the following data: Date,'Battles' 2023-11-11,1",
			"Will there be more 'Battles' in Laos for the 30 days before 2024-07-28 compared to the 30-day average?"},
		{"notes after the question", "Will CTAS's market close price on 2024-08-20 be higher than on 2024-07-21?  Stock splits are accounted for.",
			"Will CTAS's market close price on 2024-08-20 be higher than on 2024-07-21?"},
		{"white space collapsed", "Will it\n rain   tomorrow?", "Will it rain tomorrow?"},
		{"no question mark", "Rainfall above 30 mm in July", "Rainfall above 30 mm in July"},
		{"a question mark past the bound", long + "?", strings.TrimSpace(long[:strings.LastIndexByte(long[:200], ' ')]) + " …"},
	} {
		if got := briefQuestion(c.in); got != c.want {
			t.Errorf("%s: briefQuestion(%q) = %q, want %q", c.name, c.in, got, c.want)
		}
	}
}

// A question of several dated items is headed with "the resolution
// date" where each item names its own; a question of one item by its
// first sentence.
func TestHumanQuestionHeading(t *testing.T) {
	text := func(date string) string {
		return "Will the rate have increased by " + date + " as compared to its value on 2024-07-21? e.g. If the rate was 5.0 …"
	}
	ds := humanQuestionJSON(backtest.HumanQuestion{Kind: "dataset", Items: []backtest.HumanItem{
		{Item: "a", ResolutionDate: "2024-07-28", Question: text("2024-07-28"), Outcome: arena.Yes, Median: 0.3, Humans: 3},
		{Item: "b", ResolutionDate: "2024-08-20", Question: text("2024-08-20"), Outcome: arena.No, Median: 0.4, Humans: 3},
	}})
	if ds.Kind != "dataset" || ds.Question != "Will the rate have increased by the resolution date as compared to its value on 2024-07-21?" ||
		len(ds.Items) != 2 || ds.Items[0].ResolutionDate != "2024-07-28" || ds.Items[0].Median != 0.3 || ds.Items[1].Question != text("2024-08-20") {
		t.Errorf("dataset question %+v", ds)
	}
	one := humanQuestionJSON(backtest.HumanQuestion{Kind: "dataset", Items: []backtest.HumanItem{{Item: "a", ResolutionDate: "2024-07-28", Question: text("2024-07-28")}}})
	if one.Question != "Will the rate have increased by 2024-07-28 as compared to its value on 2024-07-21?" {
		t.Errorf("one dated item: %q", one.Question)
	}
	if m := humanQuestionJSON(backtest.HumanQuestion{Kind: "market", Items: []backtest.HumanItem{{Item: "m", Question: "Will it rain?  Notes.", Humans: 2}}}); m.Question != "Will it rain?" || m.Items[0].Humans != 2 {
		t.Errorf("market question %+v", m)
	}
}
