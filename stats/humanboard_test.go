package stats

import (
	"context"
	"math"
	"testing"
)

// boardItems: A is a human forecaster, B always says 0.5, C is a model.
// Items: d1, d2 resolved dataset; d3 an unresolved dataset item (not
// scored); m1 a resolved market; m2 an unresolved market whose value on
// the resolution date is 0.3.
func boardItems() []BoardItem {
	type f struct{ d1, d2, d3, m1, m2 float64 }
	fs := map[string]f{"A": {0.1, 0.8, 0.5, 0.9, 0.3}, "B": {0.5, 0.5, 0.5, 0.5, 0.5}, "C": {0, 0.6, 0.5, 0.7, 0.5}}
	var out []BoardItem
	for _, name := range []string{"B", "C", "A"} {
		v := fs[name]
		out = append(out,
			BoardItem{Forecaster: name, Human: name == "A", Item: "d1", Kind: KindDataset, Resolved: true, Forecast: v.d1, Outcome: 0},
			BoardItem{Forecaster: name, Human: name == "A", Item: "d2", Kind: KindDataset, Resolved: true, Forecast: v.d2, Outcome: 1},
			BoardItem{Forecaster: name, Human: name == "A", Item: "d3", Kind: KindDataset, Resolved: false, Forecast: v.d3, Outcome: 0.7},
			BoardItem{Forecaster: name, Human: name == "A", Item: "m1", Kind: KindMarket, Resolved: true, Forecast: v.m1, Outcome: 1},
			BoardItem{Forecaster: name, Human: name == "A", Item: "m2", Kind: KindMarket, Resolved: false, Forecast: v.m2, Outcome: 0.3},
		)
	}
	return out
}

func TestBoard(t *testing.T) {
	rows, err := Board(context.Background(), boardItems(), BoardOptions{Bootstrap: 1999, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	// Hand-computed: Brier per item
	//   A: d1 .01 d2 .04 m1 .01 m2 0      B: .25 .25 .25 .04      C: 0 .16 .09 .04
	want := []struct {
		name                           string
		human                          bool
		ds, mr, mu, mk, overallR, over float64
		better                         float64
		peer                           float64
	}{
		{"A", true, 0.025, 0.01, 0, 0.005, 0.0175, 0.015, math.NaN(), (-0.115 - 0.165 - 0.16 - 0.04) / 4},
		{"C", false, 0.08, 0.09, 0.04, 0.065, 0.085, 0.0725, 0.25, ((0 - 0.13) + (0.16 - 0.145) + (0.09 - 0.13) + (0.04 - 0.02)) / 4},
		{"B", false, 0.25, 0.25, 0.04, 0.145, 0.25, 0.1975, 0, ((0.25 - 0.005) + (0.25 - 0.1) + (0.25 - 0.05) + (0.04 - 0.02)) / 4},
	}
	near := func(what string, got Float, want float64) {
		t.Helper()
		if math.IsNaN(want) {
			if got.OK {
				t.Errorf("%s = %v, want undefined", what, got.V)
			}
			return
		}
		if !got.OK || math.Abs(got.V-want) > 1e-12 {
			t.Errorf("%s = %+v, want %v", what, got, want)
		}
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, w := range want {
		r := rows[i]
		if r.Forecaster != w.name || r.Rank != i+1 || r.Human != w.human {
			t.Fatalf("row %d: %s rank %d human %v, want %s", i, r.Forecaster, r.Rank, r.Human, w.name)
		}
		near(w.name+" dataset", r.Dataset.Brier, w.ds)
		near(w.name+" market resolved", r.MarketResolved.Brier, w.mr)
		near(w.name+" market unresolved", r.MarketUnresolved.Brier, w.mu)
		near(w.name+" market", r.Market.Brier, w.mk)
		near(w.name+" overall resolved", r.OverallResolved.Brier, w.overallR)
		near(w.name+" overall", r.Overall.Brier, w.over)
		near(w.name+" better than first", r.BetterThanFirst, w.better)
		near(w.name+" peer", r.Peer, w.peer)
		near(w.name+" Brier Index", r.BrierIndex, (1-math.Sqrt(w.over))*100)
		near(w.name+" BSS", r.BSS, 1-w.over/0.25)
		if r.Dataset.N != 2 || r.MarketResolved.N != 1 || r.MarketUnresolved.N != 1 || r.Overall.N != 4 || r.OverallResolved.N != 3 {
			t.Errorf("%s counts %+v", w.name, r)
		}
		if !r.CILo.OK || !r.CIHi.OK || r.CILo.V > r.CIHi.V || !r.Adjusted.OK || !r.PRank1.OK {
			t.Errorf("%s: CI [%v, %v], adjusted %v, P(rank 1) %v", w.name, r.CILo, r.CIHi, r.Adjusted, r.PRank1)
		}
	}
	// B is worse than A on every item by more than any centred replicate
	// can reach: p = 0. Its overall replicates are (0.25 + m)/2 with the
	// market mean m one of 0.25, 0.145, 0.04 (each end with chance 1/4).
	near("B p", rows[2].PVsFirst, 0)
	near("B CI lo", rows[2].CILo, 0.145)
	near("B CI hi", rows[2].CIHi, 0.25)
	if rows[0].PVsFirst.OK {
		t.Errorf("rank 1 has a p-value against itself: %v", rows[0].PVsFirst)
	}
	// The same seed gives the same board.
	again, _ := Board(context.Background(), boardItems(), BoardOptions{Bootstrap: 1999, Seed: 7})
	for i := range rows {
		if again[i] != rows[i] {
			t.Fatalf("row %d differs with the same seed: %+v vs %+v", i, again[i], rows[i])
		}
	}
}

// A forecaster identical to rank 1 cannot be told apart from it: p = 1,
// and it is more accurate on no question.
func TestBoardTwinOfFirst(t *testing.T) {
	items := boardItems()
	for _, it := range items {
		if it.Forecaster == "A" {
			it.Forecaster, it.Human = "A2", false
			items = append(items, it)
		}
	}
	rows, err := Board(context.Background(), items, BoardOptions{Bootstrap: 500, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Forecaster != "A" || rows[1].Forecaster != "A2" {
		t.Fatalf("order %s, %s: ties go by name", rows[0].Forecaster, rows[1].Forecaster)
	}
	if rows[1].PVsFirst != Def(1) || rows[1].BetterThanFirst != Def(0) {
		t.Fatalf("twin: p %v, better %v", rows[1].PVsFirst, rows[1].BetterThanFirst)
	}
}

func TestBoardRefuses(t *testing.T) {
	for name, it := range map[string]BoardItem{
		"kind":     {Forecaster: "A", Item: "x", Kind: "other", Forecast: 0.5},
		"forecast": {Forecaster: "A", Item: "x", Kind: KindMarket, Forecast: 1.5, Resolved: true},
		"outcome":  {Forecaster: "A", Item: "x", Kind: KindMarket, Forecast: 0.5, Outcome: math.NaN()},
	} {
		if _, err := Board(context.Background(), []BoardItem{it}, BoardOptions{Bootstrap: 10}); err == nil {
			t.Errorf("%s: accepted %+v", name, it)
		}
	}
	dup := BoardItem{Forecaster: "A", Item: "x", Kind: KindMarket, Forecast: 0.5, Resolved: true, Outcome: 1}
	if _, err := Board(context.Background(), []BoardItem{dup, dup}, BoardOptions{Bootstrap: 10}); err == nil {
		t.Error("accepted an item forecast twice")
	}
	if rows, err := Board(context.Background(), nil, BoardOptions{}); err != nil || rows != nil {
		t.Errorf("empty board: %v, %v", rows, err)
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		x    []float64
		want float64
	}{
		{[]float64{0.3}, 0.3},
		{[]float64{0.9, 0.1, 0.5}, 0.5},
		{[]float64{0.9, 0.1, 0.5, 0.2}, 0.35},
	} {
		if got := Median(c.x); math.Abs(got-c.want) > 1e-15 {
			t.Errorf("Median(%v) = %v, want %v", c.x, got, c.want)
		}
	}
	if !math.IsNaN(Median(nil)) {
		t.Error("Median of nothing is not NaN")
	}
}
