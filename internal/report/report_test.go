package report_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/report"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/stats"
	"github.com/forecast-arena/arena/stats/scoreio"
)

// Alice's politics Brier is (0.2² + 0.4²)/2 = 0.1, her sports one 0.3² =
// 0.09; Bob's 0.25 both.
const forecasts = `agent,round,market,category,forecast,benchmark,outcome
alice,1,m1,politics,0.80,0.60,1
alice,1,m2,sports,0.30,0.40,0
alice,2,m3,politics,0.60,0.50,1
bob,1,m1,politics,0.50,0.60,1
bob,1,m2,sports,0.50,0.40,0
bob,2,m3,politics,0.50,0.50,1
`

func input(t *testing.T, csv string) report.Input {
	t.Helper()
	tb, err := scoreio.Read(strings.NewReader(csv), "f.csv")
	if err != nil {
		t.Fatal(err)
	}
	return report.Input{Table: tb, Src: "f.csv"}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

func TestCategories(t *testing.T) {
	t.Parallel()
	rows, err := report.Categories(context.Background(), input(t, forecasts).Table, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		cat, agent string
		n          int
		brier      float64
	}{
		{"politics", "alice", 2, 0.1}, {"politics", "bob", 2, 0.25}, {"politics", "market", 2, 0.205},
		{"sports", "alice", 1, 0.09}, {"sports", "bob", 1, 0.25}, {"sports", "market", 1, 0.16},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	for i, w := range want {
		r := rows[i]
		if r.Category != w.cat || r.Agent != w.agent || r.N != w.n || !near(r.Brier, w.brier) {
			t.Errorf("row %d: %s %s n=%d brier=%v, want %+v", i, r.Category, r.Agent, r.N, r.Brier, w)
		}
	}
}

// Murphy's rows add up (Brier = UNC + REL − RES + residual); the market
// has no alpha split against itself. Calibration's rows are the same
// agents' bins.
func TestMurphyAndCalibration(t *testing.T) {
	t.Parallel()
	in := input(t, forecasts)
	res, err := in.Analyze(context.Background(), stats.Options{Bins: 5})
	if err != nil {
		t.Fatal(err)
	}
	rows := report.Murphy(res)
	cal := report.Calibration(res)
	if len(rows) != 3 || len(cal) != 3 {
		t.Fatalf("%d Murphy rows, %d calibration rows", len(rows), len(cal))
	}
	for i, r := range rows {
		if !near(r.Brier, r.UNC+r.REL-r.RES+r.Residual) || r.N != 3 || r.Bins != len(res[i].Murphy.Bins) {
			t.Errorf("%+v does not add up", r)
		}
		if (r.Agent == stats.MarketAgent) != (r.AlphaSplit == nil) {
			t.Errorf("%s: alpha split %+v", r.Agent, r.AlphaSplit)
		}
		if a := r.AlphaSplit; a != nil && !near(a.Alpha, a.ResGain+a.RelGap+a.ResidualDiff) {
			t.Errorf("%s: alpha split %+v does not add up", r.Agent, a)
		}
		if c := cal[i]; c.Agent != r.Agent || c.N != r.N || len(c.Bins) != r.Bins {
			t.Errorf("calibration row %+v beside %+v", c, r)
		}
	}
}

// A refused input is an invalid-input error naming its source.
func TestAnalyzeNamesSource(t *testing.T) {
	t.Parallel()
	in := input(t, forecasts+"alice,1,m1,politics,0.10,0.60,1\n")
	_, err := in.Analyze(context.Background(), stats.Options{})
	if arena.ErrorKind(err) != arena.EINVALID || !strings.Contains(err.Error(), "f.csv") {
		t.Errorf("conflicting forecasts: %v", err)
	}
	if _, err := in.Adjusted(context.Background(), scoring.DefaultMethod(), nil); arena.ErrorKind(err) != arena.EINVALID {
		t.Errorf("adjusted, conflicting forecasts: %v", err)
	}
}

func TestBaselines(t *testing.T) {
	t.Parallel()
	p := func(f float64) *float64 { return &f }
	ms := []*arena.Market{
		{Source: "s", SourceID: "1", Type: arena.Binary, Kind: arena.KindMarket, Resolution: arena.Yes, FreezeValue: p(0.9)},
		{Source: "s", SourceID: "2", Type: arena.Binary, Kind: arena.KindMarket, Resolution: arena.No, FreezeValue: p(0.2)},
		{Source: "s", SourceID: "3", Type: arena.Binary, Kind: arena.KindDataset, Resolution: arena.No, FreezeValue: p(0.7)}, // a dataset's value is no price
		{Source: "s", SourceID: "4", Type: arena.Binary, Kind: arena.KindMarket},                                             // unresolved
		{Source: "s", SourceID: "5", Type: arena.Binary, Kind: arena.KindMarket, Resolution: arena.Void},                     // void
		{Source: "s", SourceID: "6", Type: arena.Multi, Kind: arena.KindMarket, Resolution: "a"},                             // not binary
	}
	rows, skipped := report.Baselines(ms, 1)
	if skipped != 3 {
		t.Errorf("skipped %d, want 3", skipped)
	}
	var price *stats.BaselineRow
	for i, r := range rows {
		if r.Forecaster == stats.BaselineMarket && r.Kind == arena.KindMarket {
			price = &rows[i]
		}
	}
	// The market price on the two priced markets: (0.1² + 0.2²)/2.
	if price == nil || price.N != 2 || !near(price.Brier, 0.025) {
		t.Errorf("market-price baseline %+v in %+v", price, rows)
	}
}

// An empty store has no scored forecasts: ErrNoForecasts, not a failure
// nor an empty report.
func TestStoredEmpty(t *testing.T) {
	t.Parallel()
	db := storetest.Open(t, "sqlite")
	if _, err := report.Stored(context.Background(), &rounds.Service{Store: db}); !errors.Is(err, report.ErrNoForecasts) {
		t.Errorf("empty store: %v", err)
	}
}
