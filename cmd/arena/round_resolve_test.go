package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// `arena round resolve ID --from-sim` resolves a round's simulated
// markets, after its reveal deadline and before their close, with the
// outcomes the simulator fixed for them, each an entry of the
// tamper-evident log; `arena round trigger` then scores the round, its
// outcomes and scores logged too, so that the export verifies. Every
// refusal (no --from-sim, reveals still open, a market of another source
// or in a round still revealing, no simulated world) changes nothing.
func TestRoundResolveFromSim(t *testing.T) {
	t.Parallel()
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dbURL := storetest.URL(t, engine)
			logKey := filepath.Join(t.TempDir(), "log.key")
			run := func(args ...string) (string, error) {
				out, _, err := cli(t, nil, append(args, "--db", dbURL, "--log-key", logKey)...)
				return out, err
			}
			now := time.Now().UTC()
			start := now.Add(-48 * time.Hour).Truncate(time.Hour)
			if _, _, err := cli(t, nil, "sync", "--source", "sim", "--seed", "3", "--start", start.Format(time.RFC3339), "--db", dbURL); err != nil {
				t.Fatal(err)
			}
			db := openStore(t, dbURL)
			ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceSim, Status: arena.StatusOpen})
			if err != nil || len(ms) < 4 {
				t.Fatalf("%d open sim markets, %v", len(ms), err)
			}
			other := saveMarkets(t, dbURL, []*arena.Market{{Source: "test", SourceID: "x", Kind: arena.KindMarket, Question: "Will x happen?", Category: "politics", EventID: "x",
				Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.5, arena.No: 0.5},
				CloseTime: now.Add(72 * time.Hour), Status: arena.StatusOpen}})[0]
			// Rounds made on a clock ten hours back: 1 and 2 past their
			// reveal deadline, 3 (sharing a market with 2) still revealing.
			past := now.Add(-10 * time.Hour)
			o := config.Defaults()
			o.DB, o.LogKey = dbURL, logKey
			a, err := app.New(ctx, o, app.Deps{Now: func() time.Time { return past }, Log: app.LogWrite})
			if err != nil {
				t.Fatal(err)
			}
			defer a.Close()
			svc := a.Rounds
			mk := func(ids []int64, revealEnds time.Time) uint64 {
				r, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: ids,
					CommitDeadline: past.Add(time.Hour), RevealStart: past.Add(2 * time.Hour), RevealDeadline: revealEnds})
				if err != nil {
					t.Fatal(err)
				}
				return r.ID
			}
			simRound := mk([]int64{ms[0].ID, ms[1].ID}, past.Add(3*time.Hour))
			mixed := mk([]int64{ms[2].ID, other}, past.Add(3*time.Hour))
			shared := mk([]int64{ms[3].ID}, past.Add(3*time.Hour))
			revealing := mk([]int64{ms[3].ID}, now.Add(time.Hour))
			for _, c := range []struct {
				args []string
				want string
			}{
				{[]string{"round", "resolve", fmt.Sprint(simRound)}, "want --from-sim"},
				{[]string{"round", "resolve", fmt.Sprint(revealing), "--from-sim"}, "resolve it after that"},
				{[]string{"round", "resolve", fmt.Sprint(mixed), "--from-sim"}, "is from test, not the simulator"},
				{[]string{"round", "resolve", fmt.Sprint(shared), "--from-sim"}, fmt.Sprintf("also in round %d, whose reveals close", revealing)},
				{[]string{"round", "resolve", "99", "--from-sim"}, "not found"},
			} {
				if _, err := run(c.args...); err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("%v: %v, want an error saying %q", c.args, err, c.want)
				}
			}
			logged, _ := db.LogSize(ctx)
			if n, _ := db.LogSize(ctx); n != logged {
				t.Fatalf("refusals logged %d entries", n-logged)
			}
			for _, m := range ms[:4] {
				if got, _ := db.Market(ctx, m.ID); got.Resolution != "" {
					t.Fatalf("a refusal resolved market %d: %s", m.ID, got.Resolution)
				}
			}

			out, err := run("round", "resolve", fmt.Sprint(simRound), "--from-sim")
			if err != nil {
				t.Fatal(err)
			}
			cfg, _, _ := sim.Recorded(ctx, db)
			world, _ := sim.New(cfg)
			truth := map[string]string{}
			for _, m := range world.MarketsAt(start.Add(100 * 24 * time.Hour)) {
				truth[m.SourceID] = m.Resolution
			}
			for _, m := range ms[:2] {
				got, _ := db.Market(ctx, m.ID)
				if got.Resolution == "" || got.Resolution != truth[m.SourceID] || !got.CloseTime.After(now) || got.ResolvedBy != arena.ResolvedByOperator {
					t.Errorf("market %d (closes %s): resolved %q by %q, the simulator's outcome is %q, by the operator", m.ID, got.CloseTime, got.Resolution, got.ResolvedBy, truth[m.SourceID])
				}
				if !strings.Contains(out, fmt.Sprintf("%d  ", m.ID)) {
					t.Errorf("output does not list market %d:\n%s", m.ID, out)
				}
			}
			if n, _ := db.LogSize(ctx); n != logged+2 {
				t.Errorf("%d log entries after resolving 2 markets", n-logged)
			}
			if !strings.Contains(out, fmt.Sprintf("arena round trigger %d", simRound)) {
				t.Errorf("no next step:\n%s", out)
			}
			// Again: nothing left to resolve, nothing logged.
			if out, err := run("round", "resolve", fmt.Sprint(simRound), "--from-sim"); err != nil || !strings.Contains(out, "0 resolved now") {
				t.Errorf("second resolve: %v\n%s", err, out)
			}
			if out, err := run("round", "trigger", fmt.Sprint(simRound)); err != nil || !strings.Contains(out, "(scored)") {
				t.Fatalf("trigger: %v\n%s", err, out)
			}
			exp := filepath.Join(t.TempDir(), "export")
			if _, err := run("export", "--out", exp); err != nil {
				t.Fatal(err)
			}
			if out, _, err := cli(t, nil, "verify", "--export", exp); err != nil || !strings.Contains(out, "2 outcomes") {
				t.Fatalf("verify: %v\n%s", err, out)
			}
			if _, err := run("round", "resolve", fmt.Sprint(simRound), "--from-sim"); err == nil || !strings.Contains(err.Error(), "frozen") {
				t.Errorf("resolve of a scored round: %v", err)
			}

			// A database without a simulated world.
			plain := storetest.URL(t, engine)
			id := fcMarkets(t, plain, 1)
			pdb := openStore(t, plain)
			psvc := &rounds.Service{Store: pdb, Now: func() time.Time { return past }, Logger: slog.New(slog.DiscardHandler)}
			r, err := psvc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: id, CommitDeadline: past.Add(time.Hour), RevealStart: past.Add(2 * time.Hour), RevealDeadline: past.Add(3 * time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			if _, _, err := cli(t, nil, "round", "resolve", fmt.Sprint(r.ID), "--from-sim", "--db", plain, "--log-key", filepath.Join(t.TempDir(), "k")); err == nil || !strings.Contains(err.Error(), "no simulated world") {
				t.Errorf("resolve without a simulated world: %v", err)
			}
		})
	}
}
