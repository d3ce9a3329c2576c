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
	for _, c := range []struct {
		seed   int64
		rounds int
	}{{1, 10}, {2, 6}} {
		got := map[string][][2]int{}
		var stages []string
		res, err := demo.Run(context.Background(), demo.Config{Seed: c.seed, Rounds: c.rounds, Dir: t.TempDir(),
			Progress: func(stage string, done, total int) {
				if len(stages) == 0 || stages[len(stages)-1] != stage {
					stages = append(stages, stage)
				}
				got[stage] = append(got[stage], [2]int{done, total})
			}})
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		if len(stages) != 2 || stages[0] != demo.StageRounds || stages[1] != demo.StageSettle {
			t.Fatalf("stages %v", stages)
		}
		for _, stage := range stages {
			steps := got[stage]
			total := steps[0][1]
			for i, g := range steps {
				if g != [2]int{i + 1, total} {
					t.Fatalf("seed %d, %s: report %d is %v, want [%d %d]: %v", c.seed, stage, i, g, i+1, total, steps)
				}
			}
			t.Logf("seed %d, %d rounds, %s: %d of %d steps", c.seed, c.rounds, stage, len(steps), total)
			if want := total - 6; len(steps) < want {
				t.Errorf("seed %d, %s: ended at %d of %d steps", c.seed, stage, len(steps), total)
			}
		}
		if n := len(got[demo.StageRounds]); n != c.rounds {
			t.Errorf("%d reports of %d rounds", n, c.rounds)
		}
	}
}
