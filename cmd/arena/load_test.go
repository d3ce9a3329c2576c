package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
)

// loadAgent is one synthetic participant of a load test: its key, its
// predictions and salt, and the signed commit and reveal it sends.
type loadAgent struct {
	key    *forecast.Key
	preds  []uint16
	salt   common.Hash
	commit forecast.CommitRequest
	reveal forecast.RevealRequest
}

// loadAgents prepares n agents for round, signing outside the measured part.
func loadAgents(t *testing.T, d forecast.Domain, round uint64, k, n int, tag string) []*loadAgent {
	t.Helper()
	out := make([]*loadAgent, n)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < n; i += 4 {
				key := fcKey(fmt.Sprintf("load %s %d", tag, i))
				preds := make([]uint16, k)
				for j := range preds {
					preds[j] = uint16((i*37 + j*1013) % 10001)
				}
				salt := crypto.Keccak256Hash([]byte(tag), []byte(fmt.Sprint(i)))
				dl := uint64(time.Now().Add(20 * time.Hour).Unix())
				c := forecast.Commit{RoundID: round, CommitHash: forecast.CommitHash(round, key.Address(), preds, salt), Agent: key.Address(), Nonce: 0, Deadline: dl}
				csig, err := key.SignCommit(d, c)
				if err != nil {
					panic(err)
				}
				r := forecast.Reveal{RoundID: round, Predictions: preds, Salt: salt, Agent: key.Address(), Nonce: 1, Deadline: dl}
				rsig, err := key.SignReveal(d, r)
				if err != nil {
					panic(err)
				}
				out[i] = &loadAgent{key: key, preds: preds, salt: salt,
					commit: forecast.CommitRequest{Agent: key.Address().Hex(), CommitHash: c.CommitHash.Hex(), Nonce: 0, Deadline: dl, Signature: forecast.EncodeSignature(csig)},
					reveal: forecast.RevealRequest{Agent: key.Address().Hex(), Predictions: preds, Salt: salt.Hex(), Nonce: 1, Deadline: dl, Signature: forecast.EncodeSignature(rsig)}}
			}
		}()
	}
	wg.Wait()
	return out
}

// percentile of sorted durations.
func percentile(sorted []time.Duration, p float64) time.Duration {
	return sorted[min(len(sorted)-1, int(p*float64(len(sorted))))]
}

// blast POSTs one body per agent to path from conc concurrent clients and
// returns the latencies of the 2xx answers and the other answers by status.
func blast(t *testing.T, base string, conc int, path string, bodies []any) ([]time.Duration, map[int]int) {
	t.Helper()
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}, Timeout: 30 * time.Second}
	lat := make([]time.Duration, len(bodies))
	codes := make([]int, len(bodies))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(bodies); i = int(next.Add(1) - 1) {
				b, _ := json.Marshal(bodies[i])
				t0 := time.Now()
				resp, err := client.Post(base+path, "application/json", bytes.NewReader(b))
				if err != nil {
					codes[i] = -1
					continue
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				lat[i], codes[i] = time.Since(t0), resp.StatusCode
			}
		}()
	}
	wg.Wait()
	var ok []time.Duration
	bad := map[int]int{}
	for i, c := range codes {
		if c/100 == 2 {
			ok = append(ok, lat[i])
		} else {
			bad[c]++
		}
	}
	slices.Sort(ok)
	return ok, bad
}

// TestLoad1000AgentsHTTP: 1,000 agents commit and then reveal in one round
// of a real `arena serve`, over HTTP from 200 concurrent loopback clients.
// No submission may be refused, lost or stored twice; p50/p99 are logged.
// The round's commit phase is a minute long, so that a loaded machine
// fits every commit in it, and the test waits it out: with the commits of
// 1,000 agents it takes two to three minutes for both engines, so it runs
// only with ARENA_LOAD=1.
func TestLoad1000AgentsHTTP(t *testing.T) {
	if testing.Short() || os.Getenv("ARENA_LOAD") != "1" {
		t.Skip("set ARENA_LOAD=1 to run the 1,000-agent load test")
	}
	const n, conc, k = 1000, 200, 3
	// The load generator is one loopback address standing for 1,000
	// agents: the per-address limit would refuse it as the flood it
	// resembles. The per-agent limit stays on.
	t.Setenv("ARENA_RATE_IP_PER_MIN", "0")
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			dbURL := storetest.URL(t, engine)
			ids := fcMarkets(t, dbURL, k)
			p := startServe(t, "--db", dbURL, "--admin-token", fcToken, "--no-rounds")
			var dom forecast.DomainJSON
			p.api(t, "GET", "/api/v1/domain", nil, "", &dom)
			d := forecast.Domain{ChainID: dom.ChainID, Contract: common.HexToAddress(dom.VerifyingContract)}
			// Signing 2,000 messages takes seconds on a loaded machine, so
			// it is done before the round opens, for the round a fresh
			// database creates first; the commit phase then leaves time to
			// send 1,000 commits, and the reveal phase starts right after.
			agents := loadAgents(t, d, 1, k, n, engine)
			cd := time.Now().Add(time.Minute).Truncate(time.Millisecond)
			var round forecast.RoundJSON
			if st := p.api(t, "POST", "/api/v1/admin/rounds", map[string]any{"market_ids": ids, "commit_deadline": cd,
				"reveal_start": cd.Add(time.Second), "reveal_deadline": cd.Add(time.Hour)}, fcToken, &round); st != 201 || round.ID != 1 {
				t.Fatalf("create round: %d, round %d", st, round.ID)
			}
			base := "http://" + p.addr
			path := fmt.Sprintf("/api/v1/rounds/%d/", round.ID)
			bodies := make([]any, n)
			for i, a := range agents {
				bodies[i] = a.commit
			}
			t0 := time.Now()
			commitLat, bad := blast(t, base, conc, path+"commits", bodies)
			commitWall := time.Since(t0)
			if len(bad) > 0 || time.Now().After(cd) {
				t.Fatalf("commits: %d accepted, refused by status %v (the commit phase ended: %v)", len(commitLat), bad, time.Now().After(cd))
			}
			time.Sleep(time.Until(cd.Add(time.Second)) + 20*time.Millisecond)
			for i, a := range agents {
				bodies[i] = a.reveal
			}
			t0 = time.Now()
			revealLat, bad := blast(t, base, conc, path+"reveals", bodies)
			revealWall := time.Since(t0)
			if len(bad) > 0 {
				t.Fatalf("reveals: %d accepted, refused by status %v", len(revealLat), bad)
			}

			db, err := store.Open(context.Background(), dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			subs, err := db.Submissions(context.Background(), round.ID)
			if err != nil {
				t.Fatal(err)
			}
			byAgent := map[string]*arena.Submission{}
			for _, s := range subs {
				if byAgent[s.Agent] != nil {
					t.Fatalf("agent %s stored twice", s.Agent)
				}
				byAgent[s.Agent] = s
			}
			for _, a := range agents {
				s := byAgent[a.commit.Agent]
				if s == nil || s.CommitHash != a.commit.CommitHash || !slices.Equal(s.Predictions, a.preds) {
					t.Fatalf("agent %s: stored %+v", a.commit.Agent, s)
				}
			}
			if len(subs) != n {
				t.Fatalf("%d submissions stored for %d agents", len(subs), n)
			}
			t.Logf("%s: %d agents, %d concurrent clients: commits p50 %s p99 %s (%.0f/s), reveals p50 %s p99 %s (%.0f/s); %d stored, 0 lost, 0 duplicated, 0 refused",
				engine, n, conc, percentile(commitLat, 0.5), percentile(commitLat, 0.99), float64(n)/commitWall.Seconds(),
				percentile(revealLat, 0.5), percentile(revealLat, 0.99), float64(n)/revealWall.Seconds(), len(subs))
		})
	}
}

// TestLoad10000AgentsTriggerAndLeaderboard: 10,000 agents commit and
// reveal in one round, written through the store's submission path (the
// group commit the API uses) without signatures, since what is measured is
// what comes after: the time to trigger and score the round and to answer
// GET /api/v1/leaderboard, bounded with generous limits for a loaded
// 2-core machine. It runs only with ARENA_LOAD=1.
func TestLoad10000AgentsTriggerAndLeaderboard(t *testing.T) {
	if testing.Short() || os.Getenv("ARENA_LOAD") != "1" {
		t.Skip("set ARENA_LOAD=1 to run the 10,000-agent load test")
	}
	const n, k = 10_000, 3
	const triggerLimit, leaderboardLimit = 60 * time.Second, 10 * time.Second
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			dbURL := storetest.URL(t, engine)
			ids := fcMarkets(t, dbURL, k)
			db, err := store.Open(ctx, dbURL)
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			clk := &clock.Manual{}
			t0 := time.Now().Truncate(time.Second)
			clk.Set(t0)
			quiet := slog.New(slog.DiscardHandler)
			svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, Domain: forecast.Domain{ChainID: 10}}
			cd := t0.Add(time.Hour)
			r, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{MarketIDs: ids, CommitDeadline: cd, RevealStart: cd.Add(time.Second), RevealDeadline: cd.Add(time.Hour)})
			if err != nil {
				t.Fatal(err)
			}
			sig := "0x" + strings.Repeat("ab", 65)
			agents := make([]*arena.Submission, n)
			for i := range agents {
				a := common.BytesToAddress(crypto.Keccak256([]byte(fmt.Sprintf("load 10k %d", i))))
				preds := make([]uint16, k)
				for j := range preds {
					preds[j] = uint16((i*37 + j*1013) % 10001)
				}
				salt := crypto.Keccak256Hash([]byte(fmt.Sprint(i)))
				agents[i] = &arena.Submission{RoundID: r.ID, Agent: a.Hex(), CommitHash: forecast.CommitHash(r.ID, a, preds, salt).Hex(),
					CommitSig: sig, Predictions: preds, Salt: salt.Hex(), RevealNonce: 1, RevealSig: sig}
			}
			submit := func(what string, fn func(a *arena.Submission) error) time.Duration {
				start := time.Now()
				var next atomic.Int64
				var wg sync.WaitGroup
				errs := make(chan error, 64)
				for range 64 {
					wg.Add(1)
					go func() {
						defer wg.Done()
						for i := int(next.Add(1) - 1); i < n; i = int(next.Add(1) - 1) {
							if err := fn(agents[i]); err != nil {
								select {
								case errs <- fmt.Errorf("%s %d: %w", what, i, err):
								default:
								}
								return
							}
						}
					}()
				}
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				return time.Since(start)
			}
			none := func(arena.SubmissionState) error { return nil }
			commitTime := submit("commit", func(a *arena.Submission) error {
				c := *a
				c.Predictions, c.Salt, c.RevealNonce, c.RevealSig = nil, "", 0, ""
				return db.Submit(ctx, arena.SubmitCommit, &c, clk.Now(), none)
			})
			clk.Set(cd.Add(time.Second))
			revealTime := submit("reveal", func(a *arena.Submission) error {
				rv := *a
				rv.CommitHash, rv.CommitSig = "", ""
				return db.Submit(ctx, arena.SubmitReveal, &rv, clk.Now(), none)
			})
			clk.Set(cd.Add(time.Hour + time.Second))
			for i, id := range ids {
				if _, err := svc.ResolveMarket(ctx, id, []string{"YES", "NO", "YES"}[i]); err != nil {
					t.Fatal(err)
				}
			}

			start := time.Now()
			if err := svc.Trigger(ctx, r.ID); err != nil {
				t.Fatal(err)
			}
			triggerTime := time.Since(start)
			scores, err := db.RoundScores(ctx, r.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(scores) < n {
				t.Fatalf("%d scores for %d agents", len(scores), n)
			}
			t.Logf("%s: %d agents: commits %s, reveals %s (store submission path, 64 at a time); trigger and scoring %s",
				engine, n, commitTime.Round(time.Millisecond), revealTime.Round(time.Millisecond), triggerTime.Round(time.Millisecond))
			if triggerTime > triggerLimit {
				t.Errorf("trigger took %s (limit %s)", triggerTime, triggerLimit)
			}

			srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc, Forecasters: db})
			// Not closed on failure: Close waits for the handler, which
			// goes on computing after the client gave up.
			hs := httptest.NewServer(srv.Handler())
			start = time.Now()
			resp, err := (&http.Client{Timeout: leaderboardLimit}).Get(hs.URL + "/api/v1/leaderboard")
			if err != nil {
				t.Fatalf("GET /api/v1/leaderboard at %d agents, cold: no answer within %s: %v", n, leaderboardLimit, err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			boardTime := time.Since(start)
			// The answer is the first page; the total counts every ranked
			// and preliminary agent the analysis covered.
			var board struct{ Rows []json.RawMessage }
			total, _ := strconv.Atoi(resp.Header.Get("X-Total-Count"))
			if resp.StatusCode != 200 || json.Unmarshal(body, &board) != nil || len(board.Rows) == 0 || total < n {
				t.Fatalf("leaderboard: %d, %d rows of %d", resp.StatusCode, len(board.Rows), total)
			}
			t.Logf("%s: GET /api/v1/leaderboard %s (%d agents, first page %d rows, %d KiB, cold)", engine, boardTime.Round(time.Millisecond), total, len(board.Rows), len(body)/1024)
			hs.Close()
		})
	}
}
