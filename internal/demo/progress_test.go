package demo_test

import (
	"context"
	"testing"

	"github.com/forecast-arena/arena/internal/demo"
)

// A demo reports its progress in two stages, each over a total counted
// before the stage's first report: the rounds, then the clock's settling
// steps until the markets still pending (in an unscored round or an open
// position) have resolved, a dispute included. Settling stops once
// everything is scored and settled, which may be a few steps early (no
// dispute came).
func TestDemoProgress(t *testing.T) {
	t.Parallel()
	_, p := played(t)
	checkProgress(t, fixtureSeed, fixtureRounds, p)
	// A shorter demo of another seed, whose settling ends earlier.
	p = progressLog{reports: map[string][][2]int{}}
	res, err := demo.Run(context.Background(), demo.Config{Seed: 2, Rounds: 2, Dir: t.TempDir(), Progress: p.record})
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	checkProgress(t, 2, 2, p)
}

func checkProgress(t *testing.T, seed int64, rounds int, p progressLog) {
	t.Helper()
	if len(p.stages) != 2 || p.stages[0] != demo.StageRounds || p.stages[1] != demo.StageSettle {
		t.Fatalf("seed %d: stages %v", seed, p.stages)
	}
	for _, stage := range p.stages {
		steps := p.reports[stage]
		total := steps[0][1]
		for i, g := range steps {
			if g != [2]int{i + 1, total} {
				t.Fatalf("seed %d, %s: report %d is %v, want [%d %d]: %v", seed, stage, i, g, i+1, total, steps)
			}
		}
		t.Logf("seed %d, %d rounds, %s: %d of %d steps", seed, rounds, stage, len(steps), total)
		if want := total - 6; len(steps) < want {
			t.Errorf("seed %d, %s: ended at %d of %d steps", seed, stage, len(steps), total)
		}
	}
	if n := len(p.reports[demo.StageRounds]); n != rounds {
		t.Errorf("seed %d: %d reports of %d rounds", seed, n, rounds)
	}
}
