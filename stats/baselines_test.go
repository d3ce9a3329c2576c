package stats_test

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/stats"
)

func TestBaselinesSmall(t *testing.T) {
	items := []stats.BaselineItem{
		{Key: "a", Kind: "market", Outcome: 1, Price: 0.8, HasPrice: true},
		{Key: "b", Kind: "market", Outcome: 0, Price: 0.4, HasPrice: true},
		{Key: "c", Kind: "dataset", Outcome: 1},
		{Key: "d", Kind: "dataset", Outcome: 1},
		{Key: "e", Kind: "dataset", Outcome: 0},
	}
	rows := stats.Baselines(items, 1)
	got := map[string]stats.BaselineRow{}
	for _, r := range rows {
		got[r.Forecaster+"/"+r.Kind] = r
	}
	for _, w := range []stats.BaselineRow{
		{stats.BaselineAlways0, "dataset", 3, 2.0 / 3}, {stats.BaselineAlways1, "dataset", 3, 1.0 / 3}, {stats.BaselineAlwaysHalf, "dataset", 3, 0.25},
		{stats.BaselineAlways0, "market", 2, 0.5}, {stats.BaselineMarket, "market", 2, (0.04 + 0.16) / 2},
		{stats.BaselineAlways0, stats.KindOverall, 5, (2.0/3 + 0.5) / 2},
	} {
		g, ok := got[w.Forecaster+"/"+w.Kind]
		if !ok || g.N != w.N || math.Abs(g.Brier-w.Brier) > 1e-15 {
			t.Errorf("%s/%s = %+v, want %+v", w.Forecaster, w.Kind, g, w)
		}
	}
	if _, ok := got[stats.BaselineMarket+"/dataset"]; ok {
		t.Error("market price on dataset items without a price")
	}
	if _, ok := got[stats.BaselineMarket+"/"+stats.KindOverall]; ok {
		t.Error("overall market price row although dataset has none")
	}
	// Random is seeded and order-independent.
	rev := append([]stats.BaselineItem(nil), items...)
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	a, b := stats.Baselines(items, 9), stats.Baselines(rev, 9)
	for i := range a {
		if a[i] != b[i] {
			t.Errorf("order changed %+v → %+v", a[i], b[i])
		}
	}
}

// fbMarketSources are ForecastBench's market sources; the rest are datasets.
var fbMarketSources = map[string]bool{"polymarket": true, "manifold": true, "metaculus": true, "infer": true}

// TestBaselinesForecastBench re-scores the constant forecasters on the 12
// resolution sets behind ForecastBench's 2025-10-06 baseline leaderboard
// and matches its "Always 0", "Always 1" and "Always 0.5" rows: dataset,
// market and overall columns, N exactly and Brier to the published 3
// decimals. Items: non-combination questions with resolved = true, each
// (set, question, resolution date) once.
func TestBaselinesForecastBench(t *testing.T) {
	dir := shareddata.Path(t, "forecastbench", "leaderboard-2025-10-06")
	files, _ := filepath.Glob(filepath.Join(dir, "resolution_sets", "*.json"))
	if len(files) != 12 {
		t.Fatalf("%d resolution sets, want 12", len(files))
	}
	var items []stats.BaselineItem
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var set struct {
			Due         string `json:"forecast_due_date"`
			Resolutions []struct {
				ID       json.RawMessage `json:"id"`
				Source   string          `json:"source"`
				Date     string          `json:"resolution_date"`
				To       float64         `json:"resolved_to"`
				Resolved bool            `json:"resolved"`
			} `json:"resolutions"`
		}
		if err := json.Unmarshal(data, &set); err != nil {
			t.Fatal(err)
		}
		for _, r := range set.Resolutions {
			if r.ID[0] == '[' || !r.Resolved {
				continue // combination question, or not resolved yet
			}
			if r.To != 0 && r.To != 1 {
				t.Fatalf("resolved item with outcome %v", r.To)
			}
			kind := "dataset"
			if fbMarketSources[r.Source] {
				kind = "market"
			}
			items = append(items, stats.BaselineItem{Key: set.Due + "/" + string(r.ID) + "/" + r.Date, Kind: kind, Outcome: r.To})
		}
	}
	rows := stats.Baselines(items, 1)
	got := map[string]stats.BaselineRow{}
	for _, r := range rows {
		got[r.Forecaster+"/"+r.Kind] = r
	}

	checked := 0
	for name, rec := range shareddata.ForecastBenchLeaderboard(t) {
		switch name {
		case stats.BaselineAlways0, stats.BaselineAlways1, stats.BaselineAlwaysHalf:
		case "Random Uniform":
			// Seeded draws differ from theirs; both must sit near 1/3.
			for _, k := range []string{"dataset", "market"} {
				g := got[stats.BaselineRandom+"/"+k]
				if math.Abs(g.Brier-1.0/3) > 4*math.Sqrt(4.0/45/float64(g.N)) {
					t.Errorf("random on %s: %v", k, g.Brier)
				}
			}
			continue
		default:
			continue
		}
		for _, c := range []struct{ kind, brier, n string }{{"dataset", "Dataset", "N dataset"}, {"market", "Market", "N market"}, {stats.KindOverall, "Overall", "N"}} {
			wantB, _ := strconv.ParseFloat(rec[c.brier], 64)
			wantN, _ := strconv.Atoi(rec[c.n])
			g := got[name+"/"+c.kind]
			if g.N != wantN || math.Round(g.Brier*1000)/1000 != wantB {
				t.Errorf("%s %s: N %d Brier %.5f, published N %d Brier %.3f", name, c.kind, g.N, g.Brier, wantN, wantB)
			}
			checked++
		}
	}
	if checked != 9 {
		t.Fatalf("checked %d published cells, want 9", checked)
	}
}
