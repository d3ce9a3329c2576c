package demo_test

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/forecast-arena/arena/internal/demo"
)

// progressLog is what a demo reported through Config.Progress: the stages
// in order and each stage's (done, total) reports.
type progressLog struct {
	stages  []string
	reports map[string][][2]int
}

func (p *progressLog) record(stage string, done, total int) {
	if len(p.stages) == 0 || p.stages[len(p.stages)-1] != stage {
		p.stages = append(p.stages, stage)
	}
	p.reports[stage] = append(p.reports[stage], [2]int{done, total})
}

// fixture is one 8-round demo of seed 1, played once for the tests that
// only read what it made (its oracle resolutions, names, progress, served
// log, dashboard pages); TestMain closes it.
var fixture struct {
	once     sync.Once
	dir      string
	res      *demo.Result
	progress progressLog
	err      error
}

const fixtureSeed, fixtureRounds = 1, 8

func played(t *testing.T) (*demo.Result, progressLog) {
	t.Helper()
	if testing.Short() {
		t.Skip("plays a demo")
	}
	fixture.once.Do(func() {
		if fixture.dir, fixture.err = os.MkdirTemp("", "arena-demo-fixture-"); fixture.err != nil {
			return
		}
		fixture.progress.reports = map[string][][2]int{}
		fixture.res, fixture.err = demo.Run(context.Background(), demo.Config{Seed: fixtureSeed, Rounds: fixtureRounds,
			Dir: fixture.dir + "/demo", Progress: fixture.progress.record})
	})
	if fixture.err != nil {
		t.Fatalf("the demo fixture: %v", fixture.err)
	}
	return fixture.res, fixture.progress
}

func TestMain(m *testing.M) {
	code := m.Run()
	if fixture.res != nil {
		fixture.res.Close()
	}
	if fixture.dir != "" {
		os.RemoveAll(fixture.dir)
	}
	os.Exit(code)
}
