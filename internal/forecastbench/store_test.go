package forecastbench

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/testscale"
)

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// snapshot is every forecastbench market in the store, keyed by SourceID,
// without the bookkeeping timestamp.
func snapshot(t *testing.T, db *store.DB) map[string]arena.Market {
	t.Helper()
	ms, err := db.Markets(context.Background(), arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]arena.Market, len(ms))
	for _, m := range ms {
		c := *m
		c.UpdatedAt = time.Time{}
		out[m.SourceID] = c
	}
	return out
}

func TestImportRealDataIntoStore(t *testing.T) {
	if !testscale.Full() {
		t.Skip("imports every published set into each engine: at full size only (ARENA_TEST_FULL=1, set by CI)")
	}
	files := Files{Questions: realFiles(t, "question_sets"), Resolutions: realFiles(t, "resolution_sets")}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		start := time.Now()
		rep, err := Import(ctx, db, files, now)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("first import: %+v in %v", rep.Saved, time.Since(start))
		// 3500 freeze points + 1676 latest values of unresolved market rows.
		if want := (arena.SaveResult{Inserted: 31450, Prices: 5176}); rep.Saved != want {
			t.Errorf("first import saved %+v, want %+v", rep.Saved, want)
		}
		if rep.Counts[0].Resolved != 1423 || rep.Counts[1].Resolved != 12277 {
			t.Errorf("counts %+v", rep.Counts)
		}

		start = time.Now()
		rep, err = Import(ctx, db, files, now)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("re-import: %+v in %v", rep.Saved, time.Since(start))
		if want := (arena.SaveResult{Unchanged: 31450}); rep.Saved != want {
			t.Errorf("re-import saved %+v, want %+v", rep.Saved, want)
		}

		// What the store holds agrees with the report.
		resolved, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench, Status: arena.StatusResolved, Kind: arena.KindMarket})
		if err != nil {
			t.Fatal(err)
		}
		if len(resolved) != 1423 {
			t.Errorf("%d resolved market items stored", len(resolved))
		}
		m, err := db.MarketBySource(ctx, arena.SourceForecastBench, "2025-10-26:manifold:K8qazyZJ3tXyuLlzkkyk")
		if err != nil {
			t.Fatal(err)
		}
		if m.FreezeValue == nil || *m.FreezeValue != 0.979920031255855 || m.Question != "Will San Diego FC make the playoffs in 2025?" {
			t.Errorf("stored market %+v", m)
		}
		hist, err := db.PriceHistory(ctx, m.ID, arena.Yes, time.Time{}, now)
		if err != nil {
			t.Fatal(err)
		}
		if len(hist) == 0 || hist[0].Source != arena.PriceFreeze || hist[0].Price != 0.979920031255855 {
			t.Errorf("history %+v", hist)
		}
	})
}

func TestImportLeaderboardResolutionSetsIntoStore(t *testing.T) {
	if !testscale.Full() {
		t.Skip("imports the leaderboard resolution sets into each engine: at full size only (ARENA_TEST_FULL=1, set by CI)")
	}
	files := Files{Resolutions: realFiles(t, "leaderboard-2025-10-06/resolution_sets")}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		start := time.Now()
		rep, err := Import(ctx, db, files, now)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("import: %+v in %v", rep.Saved, time.Since(start))
		if want := (arena.SaveResult{Inserted: 13668, Prices: 1715}); rep.Saved != want {
			t.Errorf("saved %+v, want %+v", rep.Saved, want)
		}
		rep, err = Import(ctx, db, files, now)
		if err != nil {
			t.Fatal(err)
		}
		if want := (arena.SaveResult{Unchanged: 13668}); rep.Saved != want {
			t.Errorf("re-import saved %+v, want %+v", rep.Saved, want)
		}
		for _, c := range []struct {
			kind string
			n    int
		}{{arena.KindMarket, 623}, {arena.KindDataset, 11330}} {
			ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench, Status: arena.StatusResolved, Kind: c.kind})
			if err != nil {
				t.Fatal(err)
			}
			if len(ms) != c.n {
				t.Errorf("%d resolved %s items stored, want the leaderboard's N %d", len(ms), c.kind, c.n)
			}
		}
	})
}

// Partial imports through the store end where one full import ends, and a
// full re-import then changes nothing.
func TestImportPartialThenFull(t *testing.T) {
	q := writeFile(t, "2025-10-26-llm.json", questionSet("2025-10-26", marketQ, polyQ, datasetQ))
	r := writeFile(t, "2025-10-26_resolution_set.json", resolutionSet("2025-10-26",
		row("K8qazyZJ3tXyuLlzkkyk", "manifold", "2025-12-30", "1.0", true),
		row(polyID, "polymarket", "2026-03-01", "0.0346", false),
		row("DAAA", "fred", "2025-11-02", "0.0", true),
	))
	storetest.Each(t, func(t *testing.T, full *store.DB) {
		ctx := context.Background()
		if _, err := Import(ctx, full, Files{Questions: []string{q}, Resolutions: []string{r}}, now); err != nil {
			t.Fatal(err)
		}
		want := snapshot(t, full)
		for _, order := range [][2]Files{
			{{Resolutions: []string{r}}, {Questions: []string{q}}},
			{{Questions: []string{q}}, {Resolutions: []string{r}}},
		} {
			db, err := store.Open(ctx, storetest.URL(t, full.Engine()))
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			for _, f := range order {
				if _, err := Import(ctx, db, f, now); err != nil {
					t.Fatal(err)
				}
			}
			if got := snapshot(t, db); !sameMarkets(got, want) {
				t.Errorf("partial imports %v differ from one full import", order)
				for k := range want {
					g, w := got[k], want[k]
					g.ID, w.ID = 0, 0
					if !reflect.DeepEqual(g, w) {
						t.Errorf("%s\n got %+v\nwant %+v", k, g, w)
					}
				}
			}
			rep, err := Import(ctx, db, Files{Questions: []string{q}, Resolutions: []string{r}}, now)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Saved != (arena.SaveResult{Unchanged: 5}) {
				t.Errorf("full import after partial ones: %+v", rep.Saved)
			}
		}
	})
}

func sameMarkets(a, b map[string]arena.Market) bool {
	if len(a) != len(b) {
		return false
	}
	for k, x := range a {
		y, ok := b[k]
		x.ID, y.ID = 0, 0
		if !ok || !reflect.DeepEqual(x, y) {
			return false
		}
	}
	return true
}

func TestImportBadInputLeavesStoreUnchanged(t *testing.T) {
	good := writeFile(t, "good.json", questionSet("2025-10-26", marketQ, datasetQ))
	other := writeFile(t, "other.json", questionSet("2025-11-09", polyQ))
	goodRes := writeFile(t, "res.json", resolutionSet("2025-10-26", row("DAAA", "fred", "2025-11-02", "1.0", true)))
	invalid := writeFile(t, "invalid.json", questionSet("2025-11-09", polyQ)[:300])
	wrongType := writeFile(t, "wrongtype.json", resolutionSet("2025-10-26",
		row("DAAA", "fred", "2025-11-02", "1.0", true),
		strings.Replace(row("DAAA", "fred", "2025-11-25", "1.0", true), `"resolved": true`, `"resolved": 1`, 1)))
	conflict := writeFile(t, "conflict.json", resolutionSet("2025-10-26", row("DAAA", "fred", "2025-11-02", "0.0", true)))
	missing := filepath.Join(t.TempDir(), "nope.json")

	cases := []struct {
		name  string
		files Files
		want  []string
	}{
		{"missing file", Files{Questions: []string{other, missing}}, []string{"nope.json", "no such file"}},
		{"invalid JSON", Files{Questions: []string{other, invalid}}, []string{"invalid.json:", "unexpected end of file"}},
		{"wrong type", Files{Questions: []string{other}, Resolutions: []string{wrongType}}, []string{"wrongtype.json:", "resolutions[1] (id DAAA).resolved: want boolean, got number"}},
		{"question file as resolutions", Files{Resolutions: []string{other}}, []string{"other.json", "missing resolutions (this looks like a question set)"}},
		{"conflicting rows", Files{Resolutions: []string{goodRes, conflict}}, []string{"resolved twice"}},
		{"nothing", Files{}, []string{"no question, resolution or human forecast files"}},
	}
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if _, err := Import(ctx, db, Files{Questions: []string{good}}, now); err != nil {
			t.Fatal(err)
		}
		before := snapshot(t, db)
		for _, c := range cases {
			_, err := Import(ctx, db, c.files, now)
			if err == nil {
				t.Errorf("%s: no error", c.name)
				continue
			}
			if arena.ErrorKind(err) != arena.EINVALID {
				t.Errorf("%s: error kind %s (%v)", c.name, arena.ErrorKind(err), err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%s: error %q does not mention %q", c.name, err, w)
				}
			}
			if after := snapshot(t, db); !reflect.DeepEqual(after, before) {
				t.Errorf("%s: store changed", c.name)
			}
		}
	})
}
