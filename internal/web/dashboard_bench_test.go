package web_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
)

// Dashboard latency on a generated database of 100 agents × 500 scored
// rounds of 7 markets (350,000 frozen forecasts) and 20 weekly trading
// cohorts of 10 agents on SQLite: p50 and p99 of the leaderboard (also
// filtered by window and category), agent, round and cohort pages and of
// their JSON, of the question browser over its 3,500 markets, a market
// page with its forecasts and the comparison of two agents, sequential requests over loopback, next to GET /healthz (one
// database ping) measured in the same run (p99_x_healthz). The goal is
// p99 < 100 ms. cold_ms is the first leaderboard request, which computes
// the analysis (bootstrap CIs and the difficulty-adjusted fit) that later
// requests reuse; after_scoring_ms the first request after another round
// is scored, which gets the previous analysis while the next is computed.
//
//	go test ./internal/web -run '^$' -bench BenchmarkDashboard -benchtime 200x
//
// ARENA_BENCH_AGENTS, ARENA_BENCH_ROUNDS and ARENA_BENCH_COHORTS change the size.
func BenchmarkDashboard(b *testing.B) {
	agents, nRounds := envInt("ARENA_BENCH_AGENTS", 100), envInt("ARENA_BENCH_ROUNDS", 500)
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+b.TempDir()+"/bench.db")
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	top := generate(b, db, agents, nRounds, 7)
	b.Logf("generated %d agents × %d nRounds in %s", agents, nRounds, time.Since(start).Round(time.Millisecond))
	start = time.Now()
	eng, cohort := generateCohorts(b, db, envInt("ARENA_BENCH_COHORTS", 20), 10)
	b.Logf("generated %d cohorts in %s", envInt("ARENA_BENCH_COHORTS", 20), time.Since(start).Round(time.Millisecond))
	svc := &rounds.Service{Store: db, Logger: quiet, Now: func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }}
	boards := backtest.NewBoards(db, svc.ScoringMethod(), quiet)
	defer boards.Close() // before the store closes
	srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc, Trading: eng, Forecasters: db, Boards: boards})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()

	t0 := time.Now()
	fetch(b, hs.URL+"/leaderboard")
	cold := time.Since(t0)
	// Another round is scored: the first reader after it gets the previous
	// analysis at once while the new one is computed (the cold one was
	// slow), instead of waiting for the bootstrap.
	generateRound(b, db, nRounds, agents, 7)
	t0 = time.Now()
	fetch(b, hs.URL+"/leaderboard")
	afterScoring := time.Since(t0)
	for a, err := svc.Analysis(context.Background()); err != nil || a.ScoredRounds != nRounds+1; a, err = svc.Analysis(context.Background()) {
		if err != nil {
			b.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond) // until the background computation is done
	}
	fetch(b, hs.URL+"/leaderboard?window=90d&category=sports") // computes that view once
	base := latencies(b, hs.URL+"/healthz", 200)
	mid := strconv.Itoa(nRounds / 2)
	cid := strconv.FormatInt(cohort, 10)
	for _, c := range []struct{ name, path string }{
		{"leaderboard", "/leaderboard"}, {"leaderboard_json", "/api/v1/pages/leaderboard"}, {"leaderboard_api", "/api/v1/leaderboard"},
		{"leaderboard_filtered", "/leaderboard?window=90d&category=sports"}, {"leaderboard_filtered_json", "/api/v1/pages/leaderboard?window=90d&category=sports"},
		{"agent", "/agents/" + top}, {"agent_json", "/api/v1/pages/agents/" + top},
		{"round", "/rounds/" + mid}, {"round_json", "/api/v1/pages/rounds/" + mid},
		{"cohort", "/cohorts/" + cid}, {"cohort_json", "/api/v1/pages/cohorts/" + cid},
		{"markets", "/markets"}, {"markets_filtered_json", "/api/v1/pages/markets?category=sports&status=open&cursor=" + strconv.Itoa(nRounds*7/2)},
		{"market", "/markets/" + strconv.Itoa(nRounds*7/2)}, {"compare", "/compare?agents=" + benchAgent(0) + "," + benchAgent(1)},
	} {
		b.Run(c.name, func(b *testing.B) {
			ds := latencies(b, hs.URL+c.path, b.N)
			p50, p99 := quantile(ds, 0.5), quantile(ds, 0.99)
			b.ReportMetric(ms(p50), "p50_ms")
			b.ReportMetric(ms(p99), "p99_ms")
			b.ReportMetric(float64(p99)/float64(quantile(base, 0.99)), "p99_x_healthz")
			if c.name == "leaderboard" {
				b.ReportMetric(ms(cold), "cold_ms")
				b.ReportMetric(ms(afterScoring), "after_scoring_ms")
			}
		})
	}
}

// generateCohorts runs n weekly trading cohorts of agents agents, each
// betting on the first market it is shown and snapshotted hourly for a
// day, and returns the engine and the middle cohort's id.
func generateCohorts(b testing.TB, db *store.DB, n, agents int) (*trading.Engine, int64) {
	ctx := context.Background()
	var lineup []arena.LineupEntry
	for a := range agents {
		lineup = append(lineup, arena.LineupEntry{AgentID: fmt.Sprintf("trader-%02d", a), Name: fmt.Sprintf("Trader %02d", a), Kind: "llm", Provider: "p", Model: "m"})
	}
	var now time.Time
	eng := &trading.Engine{Store: db, Lineup: lineup, Logger: quiet, Now: func() time.Time { return now }}
	var mid int64
	for w := range n {
		week := arena.WeekStart(time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC).AddDate(0, 0, 7*w))
		now = week.Add(5 * time.Minute)
		c, _, err := eng.StartCohort(ctx, week)
		if err != nil {
			b.Fatal(err)
		}
		if w == n/2 {
			mid = c.ID
		}
		deciders := map[string]trading.Decider{}
		for a, l := range lineup {
			amount := arena.Micros(100+10*a) * arena.Dollar
			deciders[l.AgentID] = trading.DeciderFunc(func(_ context.Context, s trading.Snapshot) (trading.Decision, error) {
				if len(s.Markets) == 0 {
					return trading.Decision{Action: trading.Hold("no market")}, nil
				}
				side := []string{arena.Yes, arena.No}[a%2]
				return trading.Decision{Action: trading.Action{Kind: trading.ActionBet, Reasoning: "bench",
					Bets: []trading.Bet{{MarketID: s.Markets[a%len(s.Markets)].ID, Side: side, Amount: amount}}}, Cost: 2000}, nil
			})
		}
		if _, err := eng.Run(ctx, c.ID, now, deciders); err != nil {
			b.Fatal(err)
		}
		for h := range 24 {
			if _, err := eng.Snapshot(ctx, now.Add(time.Duration(h)*time.Hour)); err != nil {
				b.Fatal(err)
			}
		}
	}
	return eng, mid
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

func quantile(ds []time.Duration, q float64) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[min(len(s)-1, int(math.Ceil(q*float64(len(s))))-1)]
}

func fetch(b *testing.B, url string) {
	resp, err := http.Get(url)
	if err != nil {
		b.Fatal(err)
	}
	n, _ := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || n == 0 {
		b.Fatalf("GET %s: %d, %d bytes", url, resp.StatusCode, n)
	}
}

func latencies(b *testing.B, url string, n int) []time.Duration {
	ds := make([]time.Duration, 0, n)
	for range n {
		t := time.Now()
		fetch(b, url)
		ds = append(ds, time.Since(t))
	}
	return ds
}

// generate stores rounds scored rounds of k markets each, forecast by
// agents agents of graded skill, and returns the best agent's address.
func generate(b testing.TB, db *store.DB, agents, rounds, k int) string {
	ctx := context.Background()
	for a := range agents {
		if err := db.SetAgent(ctx, arena.AgentInfo{Address: benchAgent(a), Name: fmt.Sprintf("agent-%03d", a), Kind: "sim"}); err != nil {
			b.Fatal(err)
		}
	}
	for r := range rounds {
		generateRound(b, db, r, agents, k)
	}
	return benchAgent(0)
}

func benchAgent(a int) string { return fmt.Sprintf("0x%040x", a+1) }

// generateRound stores the r-th daily round (from 2026-01-01) of k new
// markets, scored, with every agent's forecasts.
func generateRound(b testing.TB, db *store.DB, r, agents, k int) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(1, uint64(r)))
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var ms []*arena.Market
	for i := range k {
		n := r*k + i
		ms = append(ms, &arena.Market{Source: arena.SourceSim, Kind: arena.KindMarket, SourceID: fmt.Sprintf("bench-%d", n), Question: fmt.Sprintf("Will benchmark event %d happen?", n),
			Category: []string{"politics", "sports", "crypto", "science"}[n%4], EventID: fmt.Sprintf("e%d", n), Type: arena.Binary,
			Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.5, arena.No: 0.5}, Volume: 1e5,
			CloseTime: t0.Add(time.Duration(r+2) * 24 * time.Hour), Status: arena.StatusOpen})
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		b.Fatal(err)
	}
	at := t0.Add(time.Duration(r) * 24 * time.Hour)
	rd := &arena.Round{CommitDeadline: at.Add(time.Hour), RevealStart: at.Add(2 * time.Hour), RevealDeadline: at.Add(3 * time.Hour), CreatedAt: at}
	truth := make([]float64, k)
	outcomes := make([]int8, k)
	bench := make([]float64, k)
	for i := range k {
		truth[i] = 0.05 + 0.9*rng.Float64()
		if rng.Float64() < truth[i] {
			outcomes[i] = 1
		}
		bench[i] = math.Round(math.Min(0.99, math.Max(0.01, truth[i]+0.1*rng.NormFloat64()))*1e4) / 1e4
		bp := bench[i]
		rd.Markets = append(rd.Markets, arena.RoundMarket{Index: i, MarketID: ms[i].ID, Benchmark: &bp, BenchmarkBps: int32(bp * 1e4),
			BenchmarkTime: at.Add(time.Hour), BenchmarkSource: arena.PriceSim})
	}
	if err := db.CreateRound(ctx, rd); err != nil {
		b.Fatal(err)
	}
	if err := db.SetBenchmarks(ctx, rd.ID, rd.Markets, at.Add(time.Hour)); err != nil {
		b.Fatal(err)
	}
	var scores []arena.RoundScore
	var rows []arena.ScoredForecast
	var base float64
	for i := range k {
		base += (bench[i] - float64(outcomes[i])) * (bench[i] - float64(outcomes[i]))
	}
	base /= float64(k)
	for a := range agents {
		noise := 0.02 + 0.3*float64(a)/float64(agents) // agent 0 is the sharpest
		var brier float64
		for i := range k {
			p := math.Round(math.Min(0.99, math.Max(0.01, truth[i]+noise*rng.NormFloat64()))*1e4) / 1e4
			brier += (p - float64(outcomes[i])) * (p - float64(outcomes[i]))
			bp := bench[i]
			rows = append(rows, arena.ScoredForecast{RoundID: rd.ID, Agent: benchAgent(a), MarketID: ms[i].ID, Category: ms[i].Category,
				Event: ms[i].EventID, Forecast: p, Benchmark: &bp, Outcome: outcomes[i]})
		}
		brier /= float64(k)
		alpha := base - brier
		ab := int64(alpha * 1e8)
		scores = append(scores, arena.RoundScore{RoundID: rd.ID, Agent: benchAgent(a), Brier: brier, Alpha: &alpha, BrierBps2: int64(brier * 1e8),
			AlphaBps2: &ab, Scored: k, Benchmarked: k})
	}
	if err := db.SaveRoundResult(ctx, rd.ID, outcomes, scores, rows, at.Add(8*24*time.Hour)); err != nil {
		b.Fatal(err)
	}
}
