package forecastbench

import (
	"context"
	"math"
	"strconv"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/stats"
)

// superBoard imports the human round of 2024-07-21 (its 200 questions, the
// superforecasters' individual forecasts and the given resolution set)
// into a fresh store and scores the superforecaster median from what the
// store reads back.
func superBoard(t *testing.T, resolutions string) (stats.BoardRow, *store.DB) {
	t.Helper()
	h := func(name string) string { return shareddata.Path(t, "forecastbench-human", name) }
	files := Files{Questions: []string{h("2024-07-21-human.json")}, Resolutions: []string{resolutions},
		Humans: []string{h("2024-07-21.ForecastBench.human_super_individual.json")}}
	db := storetest.Open(t, "sqlite")
	ctx := context.Background()
	now := time.Date(2026, 8, 21, 0, 0, 0, 0, time.UTC)
	rep, err := Import(ctx, db, files, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Humans) != 1 || rep.Humans[0].Forecasts != 7693 || rep.Humans[0].Forecasters != 40 || rep.Humans[0].Questions != 189 {
		t.Fatalf("human counts %+v, want 7693 forecasts by 40 superforecasters on 189 questions", rep.Humans)
	}
	due := time.Date(2024, 7, 21, 0, 0, 0, 0, time.UTC)
	fs, err := db.HumanForecasts(ctx, due)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		t.Fatal(err)
	}
	bySID := map[string]*arena.Market{}
	for _, m := range ms {
		bySID[m.SourceID] = m
	}
	values, err := MarketValues(ctx, db, ms)
	if err != nil {
		t.Fatal(err)
	}
	items := HumanBoardItems(Aggregate(fs), bySID, values, false)
	rows, err := stats.Board(context.Background(), items, stats.BoardOptions{Bootstrap: 200, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].Forecaster != SuperMedian || !rows[0].Human {
		t.Fatalf("board %+v, want the superforecaster median alone", rows)
	}
	return rows[0], db
}

func near(t *testing.T, what string, got stats.Mean, wantN int, want float64) {
	t.Helper()
	if got.N != wantN || !got.Brier.OK || math.Abs(got.Brier.V-want) > 1e-12 {
		t.Errorf("%s: %d items, Brier %v; want %d items, %.15g", what, got.N, got.Brier, wantN, want)
	}
}

// The superforecaster median, computed from the individual forecasts as
// ForecastBench computes it (the median per question and resolution date,
// a market question once, an unresolved market question scored against
// its latest value, overall = the mean of the dataset and market means).
// The expected figures were computed independently from the raw JSON files
// with a short Python script (docs/methodology.md).
func TestSuperforecasterMedianBoard(t *testing.T) {
	row, db := superBoard(t, shareddata.Path(t, "forecastbench-human", "2024-07-21_resolution_set.json"))
	near(t, "dataset", row.Dataset, 521, 0.12226520142994239)
	near(t, "market resolved", row.MarketResolved, 57, 0.08302036951754385)
	near(t, "market unresolved", row.MarketUnresolved, 18, 0.05395243109777952)
	near(t, "overall resolved", row.OverallResolved, 578, 0.10264278547374311)
	near(t, "overall", row.Overall, 596, 0.0991546328633714)
	// Importing the same files again changes nothing.
	ctx := context.Background()
	before, _ := db.HumanSets(ctx)
	h := func(name string) string { return shareddata.Path(t, "forecastbench-human", name) }
	if _, err := Import(ctx, db, Files{Humans: []string{h("2024-07-21.ForecastBench.human_super_individual.json")}}, time.Now()); err != nil {
		t.Fatal(err)
	}
	after, _ := db.HumanSets(ctx)
	if len(before) != 1 || len(after) != 1 || before[0] != after[0] {
		t.Fatalf("re-import: sets %+v then %+v", before, after)
	}
}

// ForecastBench's published baseline leaderboard of 2025-10-06 scored the
// superforecaster median on the round's resolution set as it stood then
// (the copy beside that leaderboard): its item counts are the published
// N dataset and N market (resolved market questions only, as that
// leaderboard counts them). Its Brier columns are difficulty-adjusted by a
// fit over every forecaster of its twelve rounds, which these files do not
// hold, so the raw Brier scores are pinned against the independent
// computation instead (see docs/methodology.md).
func TestSuperforecasterMedianMatchesPublishedCounts(t *testing.T) {
	pub := shareddata.ForecastBenchLeaderboard(t)[SuperMedian]
	if pub == nil {
		t.Fatalf("no %q row in the published leaderboard", SuperMedian)
	}
	row, _ := superBoard(t, shareddata.Path(t, "forecastbench", "leaderboard-2025-10-06", "resolution_sets", "2024-07-21_resolution_set.json"))
	for col, got := range map[string]int{"N dataset": row.Dataset.N, "N market": row.MarketResolved.N, "N": row.OverallResolved.N} {
		want, err := strconv.Atoi(pub[col])
		if err != nil || got != want {
			t.Errorf("%s: %d items, published %q", col, got, pub[col])
		}
	}
	near(t, "dataset", row.Dataset, 521, 0.12222681371401149)
	near(t, "market resolved", row.MarketResolved, 54, 0.08191039004629629)
	near(t, "market unresolved", row.MarketUnresolved, 22, 0.0498244613203165)
}
