package forecastbench

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/shareddata"
)

// realFiles lists the published files under forecastbench/<dir>.
func realFiles(t testing.TB, dir string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(shareddata.Path(t, "forecastbench", dir), "*.json"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in %s: %v", dir, err)
	}
	return files
}

// The counts below were measured on the snapshot of 2026-08-21 and checked
// independently with a Python script over the same files.
func TestRealQuestionAndResolutionSets(t *testing.T) {
	start := time.Now()
	b, err := Load(Files{Questions: realFiles(t, "question_sets"), Resolutions: realFiles(t, "resolution_sets")}, now)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("parsed and mapped %d markets in %v", len(b.Markets), time.Since(start))
	want := ReadStats{QuestionSets: 14, Questions: 7000, ResolutionSets: 14, Rows: 15376, Combination: map[string]int{}}
	if fmt.Sprint(b.Read) != fmt.Sprint(want) {
		t.Errorf("read %+v, want %+v", b.Read, want)
	}
	// 250 market questions per set; 250 dataset questions per set with 8
	// resolution dates each (50 of them with 7): 14·250·8 − 50 = 27950.
	c := b.Count()
	if c[0] != (Stats{Kind: "market", Items: 3500, Resolved: 1423, Unresolved: 2077}) {
		t.Errorf("market counts %+v", c[0])
	}
	if c[1] != (Stats{Kind: "dataset", Items: 27950, Resolved: 12277, Unresolved: 15673}) {
		t.Errorf("dataset counts %+v", c[1])
	}
	// Every market question of these sets has a freeze value.
	for _, m := range b.Markets {
		if m.Kind == arena.KindMarket && (m.FreezeValue == nil || m.FreezeTime.IsZero()) {
			t.Fatalf("%s: no freeze value", m.SourceID)
		}
		if m.Kind == arena.KindDataset && (m.ResolutionDate.IsZero() || m.FreezeValue != nil) {
			t.Fatalf("%s: dataset item %+v", m.SourceID, m)
		}
	}
}

// The 12 resolution sets behind the published 2025-10-06 baseline
// leaderboard, imported without question sets, must give that leaderboard's
// N per source kind and its constant-forecaster scores.
func TestRealLeaderboardResolutionSets(t *testing.T) {
	b, err := Load(Files{Resolutions: realFiles(t, "leaderboard-2025-10-06/resolution_sets")}, now)
	if err != nil {
		t.Fatal(err)
	}
	want := ReadStats{ResolutionSets: 12, Rows: 66180, Combination: map[string]int{"market": 9028, "dataset": 43484}}
	if fmt.Sprint(b.Read) != fmt.Sprint(want) {
		t.Errorf("read %+v, want %+v", b.Read, want)
	}
	c := b.Count()
	if c[0] != (Stats{Kind: "market", Items: 2338, Resolved: 623, Unresolved: 1715, NoText: 2338}) {
		t.Errorf("market counts %+v", c[0])
	}
	if c[1] != (Stats{Kind: "dataset", Items: 11330, Resolved: 11330, NoText: 11330}) {
		t.Errorf("dataset counts %+v", c[1])
	}

	published := shareddata.ForecastBenchLeaderboard(t)
	for _, forecaster := range []struct {
		name string
		p    float64
	}{{"Always 0", 0}, {"Always 1", 1}, {"Always 0.5", 0.5}} {
		row := published[forecaster.name]
		for _, kind := range []struct{ kind, score, n string }{
			{arena.KindDataset, "Dataset", "N dataset"},
			{arena.KindMarket, "Market", "N market"},
		} {
			var sum float64
			n := 0
			for _, m := range b.Markets {
				if m.Kind != kind.kind || m.Status != arena.StatusResolved || m.Resolution == arena.Void {
					continue
				}
				x := 0.0
				if m.Resolution == arena.Yes {
					x = 1
				}
				sum += (forecaster.p - x) * (forecaster.p - x)
				n++
			}
			wantN, _ := strconv.Atoi(row[kind.n])
			wantScore, _ := strconv.ParseFloat(row[kind.score], 64)
			if n != wantN || math.Abs(sum/float64(n)-wantScore) > 0.0005 {
				t.Errorf("%s on %s: N %d Brier %.4f, published N %d Brier %.3f", forecaster.name, kind.kind, n, sum/float64(n), wantN, wantScore)
			}
		}
	}
}

func BenchmarkReadResolutionSet(b *testing.B) {
	path := realFiles(b, "leaderboard-2025-10-06/resolution_sets")[0]
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadResolutionSet(bytesReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadQuestionSet(b *testing.B) {
	path := realFiles(b, "question_sets")[0]
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ReadQuestionSet(bytesReader(data)); err != nil {
			b.Fatal(err)
		}
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
