package scoring

import (
	"fmt"
	"testing"
)

func TestCombineVenues(t *testing.T) {
	f := func(v float64) *float64 { return &v }
	row := func(agent string, score *float64, prelim bool) Row {
		return Row{Agent: agent, Name: "name " + agent, Score: score, Preliminary: prelim}
	}
	boards := map[string]Board{
		// Kalshi has many more questions; the combined score still weighs
		// it as much as Polymarket.
		"kalshi":     {Rows: []Row{row("a", f(80), false), row("b", f(60), false), row("c", f(90), false), row("d", f(70), false)}},
		"polymarket": {Rows: []Row{row("b", f(70), false), row("a", f(60), false), row("c", f(99), true), row("e", nil, false)}},
	}
	vb := CombineVenues(boards)
	if fmt.Sprint(vb.Venues) != "[kalshi polymarket]" {
		t.Fatalf("venues %v", vb.Venues)
	}
	type want struct {
		rank     int
		agent    string
		combined string
		scores   string
		prelim   string
	}
	str := func(p *float64) string {
		if p == nil {
			return "null"
		}
		return fmt.Sprint(*p)
	}
	wants := []want{
		{1, "a", "70", "80 60", "[]"},             // (80 + 60) / 2
		{2, "b", "65", "60 70", "[]"},             // (60 + 70) / 2
		{0, "c", "null", "90 99", "[polymarket]"}, // preliminary on Polymarket: its score shown, no combined
		{0, "d", "null", "70 null", "[]"},         // absent from Polymarket
		{0, "e", "null", "null null", "[]"},
	}
	if len(vb.Rows) != len(wants) {
		t.Fatalf("%d rows, want %d: %+v", len(vb.Rows), len(wants), vb.Rows)
	}
	for i, w := range wants {
		r := vb.Rows[i]
		got := want{r.Rank, r.Agent, str(r.Combined), str(r.Scores["kalshi"]) + " " + str(r.Scores["polymarket"]), fmt.Sprint(r.Preliminary)}
		if got != w {
			t.Errorf("row %d: %+v, want %+v", i, got, w)
		}
		if len(r.Scores) != 2 {
			t.Errorf("row %d: scores %v, want one per venue", i, r.Scores)
		}
	}
	if len(CombineVenues(map[string]Board{}).Rows) != 0 {
		t.Error("no venue, rows")
	}
	one := CombineVenues(map[string]Board{"kalshi": boards["kalshi"]})
	if one.Rows[0].Agent != "c" || *one.Rows[0].Combined != 90 {
		t.Errorf("one venue: %+v", one.Rows[0])
	}
}
