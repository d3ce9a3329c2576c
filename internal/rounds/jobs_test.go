package rounds_test

import (
	"context"
	"fmt"
	"testing"
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
		sched := &jobs.Scheduler{Store: db, Jobs: js, Tick: 5 * time.Millisecond, Now: clk.Now, Logger: quiet, Owner: "test"}
		done := make(chan error, 1)
		go func() { done <- sched.Run(ctx) }()
		waitFor := func(what string, ok func() bool) {
			t.Helper()
			for end := time.Now().Add(10 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
				if ok() {
					return
				}
			}
			t.Fatalf("timed out waiting for %s", what)
		}
		var r *arena.Round
		waitFor("the scheduled round", func() bool {
			rs, err := db.Rounds(ctx, arena.RoundFilter{})
			if err != nil || len(rs) == 0 {
				return false
			}
			r = rs[0]
			return true
		})
		want := rounds.DefaultJobsConfig().ScheduleAt(clk.Now())
		if !r.CommitDeadline.Equal(want.CommitDeadline) || !r.RevealStart.Equal(want.RevealStart) || !r.RevealDeadline.Equal(want.RevealDeadline) || len(r.Markets) != 3 {
			t.Fatalf("scheduled round %+v, want schedule %+v", r, want)
		}
		ms, _ := db.Markets(ctx, arena.MarketFilter{Source: "test"})
		for _, m := range ms {
			addPoints(t, db, m, arena.PricePoint{Time: r.CommitDeadline.Add(-time.Minute), Price: 0.45, Source: arena.PriceCLOBMid})
		}
		clk.Set(r.CommitDeadline.Add(forecast.BenchmarkTolerance + time.Minute))
		waitFor("benchmarks", func() bool {
			got, err := db.Round(ctx, r.ID)
			return err == nil && !got.BenchmarkAt.IsZero()
		})
		for _, m := range ms {
			if err := db.ResolveMarket(ctx, m.ID, arena.No, clk.Now()); err != nil {
				t.Fatal(err)
			}
		}
		clk.Set(r.RevealDeadline.Add(5 * time.Minute))
		waitFor("the trigger", func() bool {
			got, err := db.Round(ctx, r.ID)
			return err == nil && !got.TriggeredAt.IsZero()
		})
		if sc := scoreMap(t, db, r.ID); len(sc) != 2 || *sc[forecast.MarketAgent].Alpha != 0 {
			t.Fatalf("scores %+v: want the random and market baselines", sc)
		}
		// Still one round: the creation period was claimed once.
		if rs, _ := db.Rounds(ctx, arena.RoundFilter{}); len(rs) != 1 {
			t.Fatalf("%d rounds", len(rs))
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		runs, err := db.JobRuns(context.Background(), rounds.JobCreateRound)
		if err != nil || len(runs) != 1 || runs[0].Error != "" {
			t.Fatalf("create-round runs %+v, %v", runs, err)
		}
	})
}

// Round creation retries while too few markets are eligible (start-up
// before the first sync), then succeeds; with no retry budget it fails.
func TestCreateRoundJobRetries(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		now := time.Now().UTC()
		svc := &rounds.Service{Store: db, Logger: quiet, K: 2, Rules: rounds.Rules{Sources: []string{"late"}}}
		js, _ := rounds.Jobs(svc, rounds.JobsConfig{RetryFor: -1})
		if err := js[0].Run(ctx, now); arena.ErrorCode(err) != forecast.CodeNotEnoughMarkets {
			t.Fatalf("without markets and retries: %v", err)
		}
		js, _ = rounds.Jobs(svc, rounds.JobsConfig{RetryFor: 5 * time.Second, RetryEvery: 20 * time.Millisecond})
		go func() {
			time.Sleep(60 * time.Millisecond)
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
		if time.Since(start) < 50*time.Millisecond {
			t.Fatal("succeeded before the markets existed")
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
	})
}
