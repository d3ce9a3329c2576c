package storetest

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// Human forecasts: a set replaces the stored set of its round and group
// (and only it), reads back exactly, by group, source, question,
// resolution date and user; a bad row fails the whole replacement and
// leaves the store as it was.
func testHumanForecasts(t *testing.T, db *store.DB) {
	ctx := context.Background()
	due := time.Date(2024, 7, 21, 0, 0, 0, 0, time.UTC)
	rd := time.Date(2024, 8, 20, 0, 0, 0, 0, time.UTC)
	if got, err := db.HumanForecasts(ctx, due); err != nil || len(got) != 0 {
		t.Fatalf("empty store: %v, %v", got, err)
	}
	super := []arena.HumanForecast{
		{Due: due, Group: arena.HumanSuper, Source: "polymarket", QuestionID: "0xabc", UserID: "u2", Forecast: 0.25, Reasoning: "base rate\nand news", Searches: "q1   q2", ConsultedURLs: "https://example.org/a"},
		{Due: due, Group: arena.HumanSuper, Source: "acled", QuestionID: "h1", ResolutionDate: rd, UserID: "u1", Forecast: 0.05, Reasoning: "quiet \x00region"},
		{Due: due, Group: arena.HumanSuper, Source: "acled", QuestionID: "h1", ResolutionDate: rd, UserID: "u2", Forecast: 1},
	}
	public := []arena.HumanForecast{{Due: due, Group: arena.HumanPublic, Source: "acled", QuestionID: "h1", ResolutionDate: rd, UserID: "p1", Forecast: 0.5}}
	if err := db.ReplaceHumanForecasts(ctx, due, arena.HumanSuper, super); err != nil {
		t.Fatal(err)
	}
	if err := db.ReplaceHumanForecasts(ctx, due, arena.HumanPublic, public); err != nil {
		t.Fatal(err)
	}
	want := []arena.HumanForecast{public[0], super[1], super[2], super[0]}
	want[1].Reasoning = "quiet region" // NUL dropped: PostgreSQL cannot store it
	got, err := db.HumanForecasts(ctx, due)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("read back\n got %+v\nwant %+v", got, want)
	}
	// A bad row (forecast outside [0,1], or of another group) changes nothing.
	for _, bad := range []arena.HumanForecast{
		{Due: due, Group: arena.HumanSuper, Source: "acled", QuestionID: "h2", UserID: "u1", Forecast: 1.5},
		{Due: due, Group: arena.HumanPublic, Source: "acled", QuestionID: "h2", UserID: "u1", Forecast: 0.5},
	} {
		err := db.ReplaceHumanForecasts(ctx, due, arena.HumanSuper, []arena.HumanForecast{super[0], bad})
		if arena.ErrorKind(err) != arena.EINVALID {
			t.Fatalf("bad row %+v: %v, want EINVALID", bad, err)
		}
	}
	if again, err := db.HumanForecasts(ctx, due); err != nil || !reflect.DeepEqual(again, want) {
		t.Fatalf("after refused replacements: %v, %+v", err, again)
	}
	// Replacing the super set again keeps only the new rows, and the public set.
	if err := db.ReplaceHumanForecasts(ctx, due, arena.HumanSuper, super[:1]); err != nil {
		t.Fatal(err)
	}
	sets, err := db.HumanSets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantSets := []arena.HumanSet{{Due: due, Group: arena.HumanPublic, Forecasts: 1, Forecasters: 1}, {Due: due, Group: arena.HumanSuper, Forecasts: 1, Forecasters: 1}}
	if !reflect.DeepEqual(sets, wantSets) {
		t.Fatalf("sets %+v, want %+v", sets, wantSets)
	}
	// Another round is empty.
	if other, err := db.HumanForecasts(ctx, due.AddDate(0, 0, 14)); err != nil || len(other) != 0 {
		t.Fatalf("other round: %v, %v", other, err)
	}
}
