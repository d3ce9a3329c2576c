package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/ratelimit"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
)

// Signed-commit throughput through the HTTP API on loopback: signature
// recovery, validation and durable storage included. Commits
// are pre-signed across many agents and rounds before the timer starts;
// the result is reported next to bare go-ethereum crypto.Ecrecover
// throughput measured in the same run, as ratios to the rate of all cores
// (x_ecrecover) and of one core (x_ecrecover_1core).
//
//	go test ./internal/web -run '^$' -bench BenchmarkCommit -benchtime 3s
//
// ARENA_TEST_POSTGRES_URL adds PostgreSQL sub-benchmarks.

// benchAgents is how many agents the pre-signed commits are spread over;
// each agent's commits go out in nonce order from one client goroutine.
const benchAgents = 256

// benchServer starts the API on db (with limits, when any are set) and
// creates nRounds rounds of k markets, open for a day.
func benchServer(b *testing.B, db *store.DB, nRounds, k int, limits ratelimit.Limits) (url string, ids []uint64, stop func()) {
	b.Helper()
	svc := &rounds.Service{Store: db, Logger: quiet}
	p := web.Parts{Markets: db, DB: db, AdminToken: adminToken, Logger: quiet, Forecast: svc}
	if limits.PerIP.Burst > 0 || limits.PerAgent.Burst > 0 {
		p.Rates, p.Limits = db, limits
	}
	srv := web.New(p)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- web.Serve(ctx, ln, srv.Handler()) }()
	ms := seedMarkets(b, db, k, time.Now().Add(30*24*time.Hour))
	now := time.Now()
	for i := 0; i < nRounds; i++ {
		r, err := svc.CreateRound(context.Background(), rounds.CreateRoundRequest{MarketIDs: marketIDs(ms),
			CommitDeadline: now.Add(24 * time.Hour), RevealStart: now.Add(25 * time.Hour), RevealDeadline: now.Add(26 * time.Hour)})
		if err != nil {
			b.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	return "http://" + ln.Addr().String(), ids, func() { cancel(); <-done }
}

type signedCommit struct {
	path string
	body []byte
}

// presign signs n commits: commit j goes to agent j mod benchAgents, in
// round j / benchAgents with that agent's nonce j / benchAgents, so each
// agent's commits are in nonce order.
func presign(b *testing.B, n int, rounds []uint64, keys []*forecast.Key) [][]signedCommit {
	b.Helper()
	per := make([][]signedCommit, len(keys))
	deadline := uint64(time.Now().Add(time.Hour).Unix())
	var wg sync.WaitGroup
	for a := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			k := keys[a]
			for j := a; j < n; j += len(keys) {
				nonce := uint64(j / len(keys))
				round := rounds[nonce]
				preds := []uint16{uint16(j % 10001), 5000, 2500, 7500, 100, 9900, 4200}
				salt := crypto.Keccak256Hash(k.Address().Bytes(), []byte(strconv.Itoa(j)))
				c := forecast.Commit{RoundID: round, CommitHash: forecast.CommitHash(round, k.Address(), preds, salt), Agent: k.Address(),
					Nonce: nonce, Deadline: deadline}
				sig, err := k.SignCommit(forecast.Domain{}, c)
				if err != nil {
					panic(err)
				}
				body, _ := json.Marshal(forecast.CommitRequest{Agent: k.Address().Hex(), CommitHash: c.CommitHash.Hex(), Nonce: nonce,
					Deadline: deadline, Signature: forecast.EncodeSignature(sig)})
				per[a] = append(per[a], signedCommit{fmt.Sprintf("/api/v1/rounds/%d/commits", round), body})
			}
		}()
	}
	wg.Wait()
	return per
}

func benchKeys(n int) []*forecast.Key {
	keys := make([]*forecast.Key, n)
	for i := range keys {
		keys[i] = newKey(fmt.Sprintf("bench agent %d", i))
	}
	return keys
}

func benchClient(conns int) *http.Client {
	return &http.Client{Transport: &http.Transport{MaxIdleConns: conns, MaxIdleConnsPerHost: conns, MaxConnsPerHost: conns}, Timeout: time.Minute}
}

func post(c *http.Client, url string, body []byte) (int, error) {
	resp, err := c.Post(url, "application/json", bytes.NewReader(body))
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// ecrecoverRate is bare crypto.Ecrecover throughput (ops/s) with procs
// goroutines, over d.
func ecrecoverRate(procs int, d time.Duration) float64 {
	k := newKey("ecrecover baseline")
	digest := crypto.Keccak256Hash([]byte("baseline"))
	sig, _ := crypto.Sign(digest[:], k.PrivateKey())
	var ops atomic.Int64
	var wg sync.WaitGroup
	start := time.Now()
	for g := 0; g < procs; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			n := int64(0)
			for time.Since(start) < d {
				for i := 0; i < 50; i++ {
					if _, err := crypto.Ecrecover(digest[:], sig); err != nil {
						panic(err)
					}
				}
				n += 50
			}
			ops.Add(n)
		}()
	}
	wg.Wait()
	return float64(ops.Load()) / time.Since(start).Seconds()
}

func benchEngines(b *testing.B, fn func(b *testing.B, url func() string)) {
	for _, engine := range storetest.Engines() {
		b.Run(engine, func(b *testing.B) {
			fn(b, func() string { return storetest.URL(b, engine) })
		})
	}
}

// BenchmarkCommitThroughput: accepted signed commits per second through the
// API, closed loop with 16 connections per core (ARENA_BENCH_CONNS
// overrides). The load generator (net/http client) runs on the same cores.
func BenchmarkCommitThroughput(b *testing.B) {
	benchEngines(b, func(b *testing.B, dbURL func() string) {
		rate := commitRate(b, dbURL(), b.N, ratelimit.Limits{}, true)
		// The baselines: bare recovery on every core (what the server's
		// cores could do if they did nothing else; the stricter ratio) and
		// on one core (one recovery loop, as BenchmarkEcrecover measures).
		bare := ecrecoverRate(runtime.GOMAXPROCS(0), 300*time.Millisecond)
		bare1 := ecrecoverRate(1, 300*time.Millisecond)
		b.ReportMetric(rate, "commits/s")
		b.ReportMetric(bare, "ecrecover/s")
		b.ReportMetric(rate/bare, "x_ecrecover")
		b.ReportMetric(rate/bare1, "x_ecrecover_1core")
	})
}

// BenchmarkRateLimitCost: the commit throughput of BenchmarkCommitThroughput
// with the API's rate limits on (per address and per agent, at the default
// bursts, refilled fast enough that no commit is refused), as a ratio to
// the same commits without limits measured in the same run (x_unlimited;
// 1 means the limits cost nothing).
func BenchmarkRateLimitCost(b *testing.B) {
	limits := ratelimit.Limits{
		PerIP:    arena.RateLimit{Burst: 6000, PerSecond: 1e6},
		PerAgent: arena.RateLimit{Burst: 600, PerSecond: 1e6},
	}
	benchEngines(b, func(b *testing.B, dbURL func() string) {
		base := commitRate(b, dbURL(), b.N, ratelimit.Limits{}, false)
		rate := commitRate(b, dbURL(), b.N, limits, true)
		b.ReportMetric(rate, "commits/s")
		b.ReportMetric(base, "unlimited_commits/s")
		b.ReportMetric(rate/base, "x_unlimited")
	})
}

// commitRate sends n pre-signed commits to a fresh server on dbURL with
// the given limits and returns the accepted commits per second; timed
// says whether the benchmark's timer runs while they are sent.
func commitRate(b *testing.B, dbURL string, n int, limits ratelimit.Limits, timed bool) float64 {
	b.Helper()
	b.StopTimer()
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	keys := benchKeys(benchAgents)
	rounds := (n + benchAgents - 1) / benchAgents
	url, ids, stop := benchServer(b, db, rounds, 7, limits)
	defer stop()
	per := presign(b, n, ids, keys)
	conns := 16 * runtime.GOMAXPROCS(0)
	if s := os.Getenv("ARENA_BENCH_CONNS"); s != "" {
		if conns, err = strconv.Atoi(s); err != nil || conns < 1 {
			b.Fatalf("ARENA_BENCH_CONNS=%q", s)
		}
	}
	client := benchClient(conns)
	// Warm the connection pool outside the timer.
	for i := 0; i < conns; i++ {
		resp, err := client.Get(url + "/healthz")
		if err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}
	var failed atomic.Int64
	var firstErr atomic.Value
	if timed {
		b.StartTimer()
	}
	start := time.Now()
	var wg sync.WaitGroup
	for g := 0; g < conns; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Goroutine g owns agents g, g+conns, …; it sends their
			// commits round by round, so each agent's nonces stay in order.
			for j := 0; ; j++ {
				sent := false
				for a := g; a < len(per); a += conns {
					if j >= len(per[a]) {
						continue
					}
					sent = true
					st, err := post(client, url+per[a][j].path, per[a][j].body)
					if err != nil || st != http.StatusCreated {
						failed.Add(1)
						firstErr.CompareAndSwap(nil, fmt.Sprintf("status %d, %v", st, err))
					}
				}
				if !sent {
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	if f := failed.Load(); f > 0 {
		b.Fatalf("%d of %d commits failed (first: %v)", f, n, firstErr.Load())
	}
	return float64(n) / elapsed.Seconds()
}

// BenchmarkCommitLatency: p50 and p99 latency of accepted commits at a
// fixed request rate (open loop, measured from each request's scheduled
// send time, so a stall counts against every request queued behind it).
// ARENA_BENCH_RATE sets the rate (default 200 requests/s).
func BenchmarkCommitLatency(b *testing.B) {
	rate := 200.0
	if s := os.Getenv("ARENA_BENCH_RATE"); s != "" {
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v <= 0 {
			b.Fatalf("ARENA_BENCH_RATE=%q", s)
		}
		rate = v
	}
	benchEngines(b, func(b *testing.B, dbURL func() string) {
		db, err := store.Open(context.Background(), dbURL())
		if err != nil {
			b.Fatal(err)
		}
		defer db.Close()
		// One agent per request (nonce 0), so requests are independent.
		keys := benchKeys(b.N)
		url, ids, stop := benchServer(b, db, 1, 7, ratelimit.Limits{})
		defer stop()
		per := presign(b, b.N, ids, keys)
		client := benchClient(256)
		lat := make([]time.Duration, b.N)
		var failed atomic.Int64
		interval := time.Duration(float64(time.Second) / rate)
		b.ResetTimer()
		start := time.Now()
		var wg sync.WaitGroup
		for i := 0; i < b.N; i++ {
			at := start.Add(time.Duration(i) * interval)
			time.Sleep(time.Until(at))
			wg.Add(1)
			go func() {
				defer wg.Done()
				st, err := post(client, url+per[i][0].path, per[i][0].body)
				lat[i] = time.Since(at)
				if err != nil || st != http.StatusCreated {
					failed.Add(1)
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
		if n := failed.Load(); n > 0 {
			b.Fatalf("%d of %d commits failed", n, b.N)
		}
		slices.Sort(lat)
		q := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
		b.ReportMetric(q(0.50), "p50_ms")
		b.ReportMetric(q(0.99), "p99_ms")
		b.ReportMetric(rate, "req/s")
	})
}
