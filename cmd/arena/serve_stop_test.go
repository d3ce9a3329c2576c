package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/testscale"
)

// SIGTERM during the leaderboard's analysis of a flood of one-shot agents
// (60,000 at full size) ends `arena serve` within 5 s, while a reader
// waits for that analysis: the analysis stops with the server's context
// instead of running its bootstraps to the end.
func TestServeStopsDuringAnalysis(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a large database and a server process")
	}
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "arena.db")
	storeFlood(t, dbURL, testscale.Size(30_000, 60_000))
	p := startServe(t, "--db", dbURL, "--log-key", filepath.Join(t.TempDir(), "log.key"), "--no-rounds")
	// A reader of the leaderboard waits for the analysis that started with
	// the server; once it has waited a while, the analysis is under way.
	read := make(chan error, 1)
	go func() {
		resp, err := http.Get("http://" + p.addr + "/api/v1/leaderboard")
		if err == nil {
			resp.Body.Close()
		}
		read <- err
	}()
	select {
	case err := <-read:
		t.Fatalf("the leaderboard was read before the signal (%v): the analysis was not under way", err)
	case <-time.After(time.Second):
	}
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case err := <-exited:
		took := time.Since(start)
		t.Logf("exited %v after the signal: %v", took.Round(time.Millisecond), err)
		if took > 5*time.Second {
			t.Errorf("serve exited %v after SIGTERM, want within 5 s", took.Round(time.Millisecond))
		}
		if !strings.Contains(p.logs.String(), "msg=stopped") {
			t.Errorf("serve did not say it stopped:\n%s", p.logs)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("serve still runs 30 s after SIGTERM:\n%s", p.logs)
	}
}

// storeFlood stores scored rounds: 50 of 3 markets that 100 agents
// answered, then one that agents one-shot agents answered.
func storeFlood(t *testing.T, dbURL string, agents int) {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	r := rand.New(rand.NewPCG(3, 3))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	for round := range 51 {
		at := t0.Add(time.Duration(round) * 24 * time.Hour)
		var ms []*arena.Market
		for i := range 3 {
			ms = append(ms, &arena.Market{Source: arena.SourceSim, Kind: arena.KindMarket, SourceID: fmt.Sprintf("flood-%d-%d", round, i),
				Question: fmt.Sprintf("Will flood event %d/%d happen?", round, i), Category: "politics", EventID: fmt.Sprintf("e%d-%d", round, i),
				Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.5, arena.No: 0.5},
				CloseTime: at.Add(48 * time.Hour), Status: arena.StatusOpen})
		}
		if _, err := db.SaveMarkets(ctx, ms); err != nil {
			t.Fatal(err)
		}
		rd := &arena.Round{CommitDeadline: at.Add(time.Hour), RevealStart: at.Add(2 * time.Hour), RevealDeadline: at.Add(3 * time.Hour), CreatedAt: at}
		truth, outcomes := make([]float64, 3), make([]int8, 3)
		for i := range 3 {
			truth[i] = 0.05 + 0.9*r.Float64()
			if r.Float64() < truth[i] {
				outcomes[i] = 1
			}
			b := float64(int(1e4*min(0.99, max(0.01, truth[i]+0.1*r.NormFloat64())))) / 1e4
			rd.Markets = append(rd.Markets, arena.RoundMarket{Index: i, MarketID: ms[i].ID, Benchmark: &b, BenchmarkBps: int32(b * 1e4),
				BenchmarkTime: at.Add(time.Hour), BenchmarkSource: arena.PriceSim})
		}
		if err := db.CreateRound(ctx, rd); err != nil {
			t.Fatal(err)
		}
		if err := db.SetBenchmarks(ctx, rd.ID, rd.Markets, at.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		n, name := 100, "0x%040x"
		if round == 50 {
			n, name = agents, "0x1%039x"
		}
		var scores []arena.RoundScore
		var rows []arena.ScoredForecast
		for a := range n {
			var brier float64
			for i, m := range rd.Markets {
				p := float64(int(1e4*min(1, max(0, truth[i]+0.2*r.NormFloat64())))) / 1e4
				brier += (p - float64(outcomes[i])) * (p - float64(outcomes[i])) / 3
				rows = append(rows, arena.ScoredForecast{RoundID: rd.ID, Agent: fmt.Sprintf(name, a), MarketID: m.MarketID, Category: "politics",
					Event: ms[i].EventID, Forecast: p, Benchmark: m.Benchmark, Outcome: outcomes[i]})
			}
			scores = append(scores, arena.RoundScore{RoundID: rd.ID, Agent: fmt.Sprintf(name, a), Brier: brier, BrierBps2: int64(brier * 1e8), Scored: 3})
		}
		if err := db.SaveRoundResult(ctx, rd.ID, outcomes, scores, rows, at.Add(4*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
}
