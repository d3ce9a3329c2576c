package rounds_test

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/jobs"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

func TestJobsConfig(t *testing.T) {
	d := rounds.DefaultJobsConfig()
	if d.RoundEvery != 24*time.Hour || d.CommitIn != time.Hour || d.RevealDelay != time.Hour || d.RevealWindow != time.Hour ||
		d.BenchmarkEvery != time.Minute || d.TriggerEvery != 5*time.Minute {
		t.Fatalf("defaults %+v", d)
	}
	now := time.Date(2026, 5, 4, 10, 17, 42, 987654321, time.UTC)
	s := rounds.JobsConfig{}.ScheduleAt(now)
	want := forecast.Schedule{CommitDeadline: time.Date(2026, 5, 4, 11, 17, 42, 0, time.UTC),
		RevealStart: time.Date(2026, 5, 4, 12, 17, 42, 0, time.UTC), RevealDeadline: time.Date(2026, 5, 4, 13, 17, 42, 0, time.UTC)}
	if s != want {
		t.Fatalf("schedule at %s: %+v, want %+v (1 h commits, reveals 1 h → 2 h after, whole seconds)", now, s, want)
	}
	if err := s.Validate(); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []rounds.JobsConfig{{CommitIn: -time.Hour}, {RevealWindow: -1}, {CommitIn: time.Millisecond}, {RetryEvery: -1}, {TriggerEvery: -time.Second}} {
		if err := bad.Validate(); err == nil {
			t.Errorf("%+v validated", bad)
		}
		if _, err := rounds.Jobs(&rounds.Service{}, bad); err == nil {
			t.Errorf("Jobs(%+v) accepted", bad)
		}
	}
	js, err := rounds.Jobs(&rounds.Service{}, rounds.JobsConfig{})
	if err != nil || len(js) != 3 || js[0].Name != rounds.JobCreateRound || js[1].Name != rounds.JobBenchmarks || js[2].Name != rounds.JobTrigger {
		t.Fatalf("jobs %+v, %v", js, err)
	}
	for i, every := range []time.Duration{24 * time.Hour, time.Minute, 5 * time.Minute} {
		if js[i].Schedule != jobs.Every(every) {
			t.Errorf("%s: every %v, want %s", js[i].Name, js[i].Schedule, every)
		}
	}
	if js, _ := rounds.Jobs(&rounds.Service{}, rounds.JobsConfig{NoRounds: true}); len(js) != 2 || js[0].Name != rounds.JobBenchmarks {
		t.Fatalf("NoRounds jobs %+v", js)
	}
}

// The scheduler runs the forecast jobs end to end on a controlled clock:
// a round by rule at start-up, benchmarks after the commit deadline, the
// trigger after the reveal deadline once every market resolved.
func TestJobsUnderScheduler(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		clk := clock.New(t0.Add(17 * time.Minute))
		var specs []spec
		for i := 0; i < 3; i++ {
			specs = append(specs, spec{id: fmt.Sprintf("j%d", i), event: fmt.Sprintf("jev%d", i), category: fmt.Sprintf("cat%d", i),
				volume: 50_000, closeIn: 3 * 24 * time.Hour, price: 0.4})
		}
		saveMarkets(t, db, specs)
		rules := testRules()
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, K: 3, Rules: rules}
		js, err := rounds.Jobs(svc, rounds.JobsConfig{})
		if err != nil {
			t.Fatal(err)
		}
		sched := &jobs.Scheduler{Store: db, Jobs: js, Now: clk.Now, Logger: quiet, Owner: "test"}
		step := func(at time.Time) {
			t.Helper()
			clk.Set(at)
			if err := sched.RunDue(ctx); err != nil {
				t.Fatalf("at %s: %v", at.Format(time.RFC3339), err)
			}
		}
		step(clk.Now())
		rs, err := db.Rounds(ctx, arena.RoundFilter{})
		if err != nil || len(rs) != 1 {
			t.Fatalf("scheduled rounds %d, %v: want one at start-up", len(rs), err)
		}
		r := rs[0]
		want := rounds.DefaultJobsConfig().ScheduleAt(clk.Now())
		if !r.CommitDeadline.Equal(want.CommitDeadline) || !r.RevealStart.Equal(want.RevealStart) || !r.RevealDeadline.Equal(want.RevealDeadline) || len(r.Markets) != 3 {
			t.Fatalf("scheduled round %+v, want schedule %+v", r, want)
		}
		ms, _ := db.Markets(ctx, arena.MarketFilter{Source: "test"})
		for _, m := range ms {
			addPoints(t, db, m, arena.PricePoint{Time: r.CommitDeadline.Add(-time.Minute), Price: 0.45, Source: arena.PriceCLOBMid})
		}
		step(r.CommitDeadline.Add(forecast.BenchmarkTolerance + time.Minute))
		if got, err := db.Round(ctx, r.ID); err != nil || got.BenchmarkAt.IsZero() {
			t.Fatalf("no benchmarks after the commit deadline: %v", err)
		}
		for _, m := range ms {
			if _, err := db.ResolveMarket(ctx, m.ID, arena.No, clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
		step(r.RevealDeadline.Add(5 * time.Minute))
		if got, err := db.Round(ctx, r.ID); err != nil || got.TriggeredAt.IsZero() {
			t.Fatalf("not triggered after the reveal deadline: %v", err)
		}
		if sc := scoreMap(t, db, r.ID); len(sc) != 2 || *sc[forecast.MarketAgent].Alpha != 0 {
			t.Fatalf("scores %+v: want the random and market baselines", sc)
		}
		// Still one round: the creation period was claimed once.
		if rs, _ := db.Rounds(ctx, arena.RoundFilter{}); len(rs) != 1 {
			t.Fatalf("%d rounds", len(rs))
		}
		runs, err := db.JobRuns(context.Background(), rounds.JobCreateRound)
		if err != nil || len(runs) != 1 || runs[0].Error != "" {
			t.Fatalf("create-round runs %+v, %v", runs, err)
		}
	})
}

// Round creation retries while too few markets are eligible (start-up
// before the first sync), then succeeds; with no retry budget it fails.
// The retries wait on the bubble's clock (testing/synctest): the markets
// arrive at 50 ms, the fourth try (0, 20, 40, 60 ms) finds them.
func TestCreateRoundJobRetries(t *testing.T) {
	// The whole test runs in the bubble, the database's connections too: a
	// connection's timers may not cross it.
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { createRoundRetries(t, storetest.Open(t, engine)) })
		})
	}
}

func createRoundRetries(t *testing.T, db *store.DB) {
	ctx := context.Background()
	now := time.Now().UTC()
	svc := &rounds.Service{Store: db, Logger: quiet, K: 2, Rules: rounds.Rules{Sources: []string{"late"}}}
	js, _ := rounds.Jobs(svc, rounds.JobsConfig{RetryFor: -1})
	if err := js[0].Run(ctx, now); arena.ErrorCode(err) != forecast.CodeNotEnoughMarkets {
		t.Fatalf("without markets and retries: %v", err)
	}
	js, _ = rounds.Jobs(svc, rounds.JobsConfig{RetryFor: 5 * time.Second, RetryEvery: 20 * time.Millisecond})
	go func() {
		time.Sleep(50 * time.Millisecond)
		var ms []*arena.Market
		for i := 0; i < 2; i++ {
			ms = append(ms, &arena.Market{Source: "late", SourceID: fmt.Sprint(i), Kind: arena.KindMarket, Question: "late?",
				EventID: fmt.Sprint(i), Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, CloseTime: now.Add(30 * 24 * time.Hour),
				Status: arena.StatusOpen})
		}
		if _, err := db.SaveMarkets(ctx, ms); err != nil {
			t.Error(err)
		}
	}()
	start := time.Now()
	if err := js[0].Run(ctx, now); err != nil {
		t.Fatalf("with retries: %v", err)
	}
	if took := time.Since(start); took != 60*time.Millisecond {
		t.Fatalf("succeeded after %s, want the try at 60 ms", took)
	}
	if rs, _ := db.Rounds(ctx, arena.RoundFilter{}); len(rs) != 1 {
		t.Fatalf("%d rounds", len(rs))
	}
	// A cancelled context ends the retries.
	js, _ = rounds.Jobs(&rounds.Service{Store: db, Logger: quiet, K: 5, Rules: rounds.Rules{Sources: []string{"none"}}},
		rounds.JobsConfig{RetryFor: time.Hour, RetryEvery: 10 * time.Millisecond})
	cctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if err := js[0].Run(cctx, now); err == nil {
		t.Fatal("no error after cancellation")
	}
}
