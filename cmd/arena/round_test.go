package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// fcMarkets stores n open binary markets (source "test"), one per event,
// closing in 30 days, and returns their ids.
func fcMarkets(t *testing.T, dbURL string, n int) []int64 {
	t.Helper()
	var ms []*arena.Market
	for i := 0; i < n; i++ {
		p := 0.2 + 0.1*float64(i%7)
		ms = append(ms, &arena.Market{Source: "test", SourceID: fmt.Sprint(i), Kind: arena.KindMarket, Question: fmt.Sprintf("Will %d happen?", i),
			Category: []string{"politics", "sports", "crypto"}[i%3], EventID: fmt.Sprint(i), Type: arena.Binary,
			Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: p, arena.No: 1 - p},
			Volume: float64(1_000_000 - 1000*i), Liquidity: 50_000, CloseTime: time.Now().Add(30 * 24 * time.Hour), Status: arena.StatusOpen})
	}
	return saveMarkets(t, dbURL, ms)
}

func TestRoundCLI(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	ids := fcMarkets(t, dbURL, 5)
	before := time.Now()
	out, _, err := cli(t, nil, "round", "create", "--db", dbURL, "--markets", fmt.Sprintf("%d,%d", ids[0], ids[1]), "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var r roundDetail
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cd := r.CommitDeadline
	if r.ID != 1 || r.Status != "open" || len(r.Markets) != 2 || cd.Before(before.Add(time.Hour-time.Second)) || cd.After(time.Now().Add(time.Hour)) ||
		!r.RevealStart.Equal(cd.Add(time.Hour)) || !r.RevealDeadline.Equal(cd.Add(2*time.Hour)) || len(r.Scores) != 0 {
		t.Fatalf("created %+v", r)
	}
	// By rules from a file, k = 3: the three highest-volume markets.
	rules := filepath.Join(t.TempDir(), "rules.json")
	os.WriteFile(rules, []byte(`{"min_volume":1000,"sources":["test"],"min_close_after":"1h"}`), 0o600)
	out, _, err = cli(t, nil, "round", "create", "--db", dbURL, "--k", "3", "--rules", rules, "--commit-deadline",
		time.Now().Add(2*time.Hour).UTC().Format(time.RFC3339), "--reveal-delay", "30m", "--reveal-window", "2h", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatal(err)
	}
	if r.ID != 2 || len(r.Markets) != 3 || r.Markets[0].MarketID != ids[0] || !r.RevealDeadline.Equal(r.CommitDeadline.Add(150*time.Minute)) {
		t.Fatalf("round by rules %+v", r)
	}
	out, _, err = cli(t, nil, "round", "list", "--db", dbURL)
	if err != nil || !strings.Contains(out, "COMMIT DEADLINE") || strings.Count(out, "open") != 2 {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, _, err = cli(t, nil, "round", "list", "--db", dbURL, "--status", "scored", "--format", "json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Fatalf("list scored: %v %q", err, out)
	}
	out, _, err = cli(t, nil, "round", "show", "2", "--db", dbURL)
	if err != nil || !strings.Contains(out, "Round 2 (open)") || !strings.Contains(out, "Will 0 happen?") || strings.Count(out, "\n") < 7 {
		t.Fatalf("show: %v\n%s", err, out)
	}
	_, _, err = cli(t, nil, "round", "trigger", "--db", dbURL, "1")
	if arena.ErrorCode(err) != "trigger_not_allowed" {
		t.Fatalf("trigger of an open round: %v", err)
	}

	// A round past its reveal deadline (created on a clock in the past),
	// one market resolved: trigger scores it.
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	past := time.Now().Add(-10 * time.Hour)
	svc := &rounds.Service{Store: db, Now: func() time.Time { return past }, Logger: slog.New(slog.DiscardHandler)}
	old, err := svc.CreateRound(context.Background(), rounds.CreateRoundRequest{MarketIDs: ids[2:4],
		CommitDeadline: past.Add(time.Hour), RevealStart: past.Add(2 * time.Hour), RevealDeadline: past.Add(3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(context.Background(), ids[2], arena.Yes, time.Now()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, _, err = cli(t, nil, "round", "trigger", fmt.Sprint(old.ID), "--db", dbURL)
	if err != nil || !strings.Contains(out, "(scored)") || !strings.Contains(out, "Random (uniform) (random)") || !strings.Contains(out, "unresolved") {
		t.Fatalf("trigger: %v\n%s", err, out)
	}
	out, _, err = cli(t, nil, "round", "trigger", "--due", "--db", dbURL)
	if err != nil || out != "scored 0 round(s)\n" {
		t.Fatalf("trigger --due: %v %q", err, out)
	}
	out, _, err = cli(t, nil, "round", "show", fmt.Sprint(old.ID), "--db", dbURL, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var shown roundDetail
	if err := json.Unmarshal([]byte(out), &shown); err != nil || shown.Status != "scored" || len(shown.Scores) != 1 || shown.Scores[0].Agent != "random" ||
		*shown.Outcomes[0] != "YES" || shown.Outcomes[1] != nil {
		t.Fatalf("show scored: %v %+v", err, shown)
	}
	// The leaderboard names agents by their display name; its JSON keeps
	// the address beside the name.
	out, _, err = cli(t, nil, "report", "leaderboard", "--db", dbURL, "--bootstrap", "0")
	if err != nil || !strings.Contains(out, " Random (uniform) ") {
		t.Fatalf("leaderboard: %v\n%s", err, out)
	}
	out, _, err = cli(t, nil, "report", "leaderboard", "--db", dbURL, "--bootstrap", "0", "--format", "json")
	if err != nil || !strings.Contains(out, `"agent": "random"`) || !strings.Contains(out, `"name": "Random (uniform)"`) {
		t.Fatalf("leaderboard json: %v\n%s", err, out)
	}
	if db, err = store.Open(context.Background(), dbURL); err != nil {
		t.Fatal(err)
	}
	if err := db.SetAgent(context.Background(), arena.AgentInfo{Address: "random", Name: "Coin", Kind: "builtin"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	out, _, err = cli(t, nil, "report", "leaderboard", "--db", dbURL, "--bootstrap", "0", "--adjusted")
	if err != nil || !strings.Contains(out, " Coin (random) ") {
		t.Fatalf("adjusted leaderboard: %v\n%s", err, out)
	}
}

// 'arena sync --source sim' is enough for 'round create', as for serve:
// the default rules take the simulated markets of a database that holds a
// simulated world.
func TestRoundCreateOnSimWorld(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	if _, _, err := cli(t, nil, "sync", "--source", "sim", "--db", dbURL); err != nil {
		t.Fatal(err)
	}
	out, _, err := cli(t, nil, "round", "create", "--db", dbURL, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var r roundDetail
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if len(r.Markets) != rounds.DefaultK {
		t.Fatalf("round of %d markets, want %d", len(r.Markets), rounds.DefaultK)
	}
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, rm := range r.Markets {
		m, err := db.Market(context.Background(), rm.MarketID)
		if err != nil || m.Source != arena.SourceSim {
			t.Fatalf("market %d: %v %+v", rm.MarketID, err, m)
		}
	}
}

func TestRoundCLIErrors(t *testing.T) {
	t.Parallel()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	ids := fcMarkets(t, dbURL, 2)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"round"}, "usage"}, // errUsage: the usage text went to stderr
		{[]string{"round", "launch"}, "unknown subcommand"},
		{[]string{"round", "show"}, "want one round id"},
		{[]string{"round", "show", "x"}, "positive integer"},
		{[]string{"round", "show", "1", "2"}, "want one round id"},
		{[]string{"round", "show", "7"}, "not found"},
		{[]string{"round", "trigger"}, "want one round id or --due"},
		{[]string{"round", "trigger", "--due", "3"}, "not both"},
		{[]string{"round", "list", "--status", "pending"}, "status"},
		{[]string{"round", "list", "--format", "xml"}, "format"},
		{[]string{"round", "create", "--markets", "a,b"}, "not a market id"},
		{[]string{"round", "create", "--markets", fmt.Sprint(ids[0]), "--commit-deadline", "tomorrow"}, "commit-deadline"},
		{[]string{"round", "create", "--markets", fmt.Sprint(ids[0]), "--commit-deadline", "2020-01-01T00:00:00Z"}, "not in the future"},
		{[]string{"round", "create", "--commit-in", "-1h"}, "negative"},
		{[]string{"round", "create", "--rules", "/nonexistent/rules.json"}, "rules"},
		{[]string{"round", "create"}, "eligible markets"},
	} {
		args := c.args
		if len(args) > 1 {
			args = append(args, "--db", dbURL)
		}
		_, _, err := cli(t, nil, args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want an error containing %q", c.args, err, c.want)
		}
	}
	// The command is not named twice ("round: round 7 not found").
	if _, _, err := cli(t, nil, "round", "show", "7", "--db", dbURL); err == nil || !strings.HasPrefix(err.Error(), "round 7 not found in database ") {
		t.Errorf("round show 7: %v", err)
	}
	db, _ := store.Open(context.Background(), dbURL)
	defer db.Close()
	if rs, _ := db.Rounds(context.Background(), arena.RoundFilter{}); len(rs) != 0 {
		t.Fatalf("%d rounds after refused commands", len(rs))
	}
}

// serveProc is an `arena serve` child process (the test binary with
// ARENA_TEST_EXEC=1).
type serveProc struct {
	cmd  *exec.Cmd
	addr string
	logs *lockedBuffer
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}
func (l *lockedBuffer) String() string { l.mu.Lock(); defer l.mu.Unlock(); return l.b.String() }

func startServe(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return startServeArgs(t, append([]string{"serve", "--addr", "127.0.0.1:0", "--no-sync"}, args...)...)
}

func startServeArgs(t *testing.T, args ...string) *serveProc {
	t.Helper()
	return startServeEnv(t, nil, args...)
}

// configHomes are the tests' user configuration directories.
var configHomes sync.Map // *testing.T → string

// testConfigHome is the user configuration directory of the servers a
// test starts: where a PostgreSQL arena without ARENA_DATA_DIR keeps its
// log key and the key's record of what it signed. One per test, shared by
// its replicas: a key shared by two tests' databases would be refused as
// one key signing two logs, and the user's own directory stays untouched.
func testConfigHome(t *testing.T) string {
	if dir, ok := configHomes.Load(t); ok {
		return dir.(string)
	}
	dir := t.TempDir()
	configHomes.Store(t, dir)
	t.Cleanup(func() { configHomes.Delete(t) })
	return dir
}

// startServeEnv starts the command of args with env added to the test's
// environment, and waits until it serves.
func startServeEnv(t *testing.T, env []string, args ...string) *serveProc {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "ARENA_TEST_EXEC=1", "XDG_CONFIG_HOME="+testConfigHome(t)), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p := &serveProc{cmd: cmd, logs: &lockedBuffer{}}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stderr)
		re := regexp.MustCompile(`msg=serving addr=(\S+)`)
		for sc.Scan() {
			fmt.Fprintln(p.logs, sc.Text())
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	select {
	case p.addr = <-addr:
	case <-time.After(20 * time.Second):
		t.Fatalf("serve did not start: %s", p.logs)
	}
	return p
}

// api calls the server and decodes the answer into v; it returns the status.
func (p *serveProc) api(t *testing.T, method, path string, body any, token string, v any) int {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, "http://"+p.addr+path, rd)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if v != nil {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, b)
		}
	}
	if resp.StatusCode >= 300 {
		t.Logf("%s %s: %d %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode
}

func fcKey(name string) *forecast.Key {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("cmd test"), []byte(name)))
	if err != nil {
		panic(err)
	}
	return forecast.NewKey(k)
}

const fcToken = "crash-test-token-0123456789abcdef"

// kill -9 of `arena serve` between commit and reveal, on every engine: the
// accepted commit survives the restart (nonce and row) and the reveal goes
// through; the round then scores the agent, not as a forfeit.
func TestServeKill9BetweenCommitAndReveal(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			dbURL := storetest.URL(t, engine)
			ids := fcMarkets(t, dbURL, 3)
			p := startServe(t, "--db", dbURL, "--admin-token", fcToken, "--no-rounds")
			var dom forecast.DomainJSON
			p.api(t, "GET", "/api/v1/domain", nil, "", &dom)
			d := forecast.Domain{ChainID: dom.ChainID, Contract: common.HexToAddress(dom.VerifyingContract)}
			cd := time.Now().Add(2 * time.Second).Truncate(time.Millisecond)
			rs, rd := cd.Add(time.Second), cd.Add(5*time.Second)
			var round forecast.RoundJSON
			if st := p.api(t, "POST", "/api/v1/admin/rounds", map[string]any{"market_ids": ids, "commit_deadline": cd,
				"reveal_start": rs, "reveal_deadline": rd}, fcToken, &round); st != 201 {
				t.Fatalf("create round: %d", st)
			}
			k := fcKey("kill9 " + engine)
			preds := []uint16{9000, 100, 5000}
			salt := crypto.Keccak256Hash([]byte(engine))
			c := forecast.Commit{RoundID: round.ID, CommitHash: forecast.CommitHash(round.ID, k.Address(), preds, salt), Agent: k.Address(),
				Nonce: 0, Deadline: uint64(time.Now().Add(time.Hour).Unix())}
			sig, _ := k.SignCommit(d, c)
			var ack forecast.SubmissionJSON
			if st := p.api(t, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", round.ID), forecast.CommitRequest{Agent: k.Address().Hex(),
				CommitHash: c.CommitHash.Hex(), Nonce: 0, Deadline: c.Deadline, Signature: forecast.EncodeSignature(sig)}, "", &ack); st != 201 {
				t.Fatalf("commit: %d", st)
			}
			// The commit was acknowledged: kill -9 at once.
			if err := p.cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
			if err := p.cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
				t.Fatalf("serve exit: %v", err)
			}
			p = startServe(t, "--db", dbURL, "--admin-token", fcToken, "--no-rounds")
			var n forecast.NonceJSON
			p.api(t, "GET", "/api/v1/agents/"+k.Address().Hex()+"/nonce", nil, "", &n)
			if n.Nonce != 1 {
				t.Fatalf("nonce %d after restart: the accepted commit was lost", n.Nonce)
			}
			// The same commit again is refused as already committed, not
			// accepted a second time.
			c.Nonce = 1
			sig, _ = k.SignCommit(d, c)
			var e struct{ Error struct{ Code string } }
			if time.Now().Before(cd) {
				if st := p.api(t, "POST", fmt.Sprintf("/api/v1/rounds/%d/commits", round.ID), forecast.CommitRequest{Agent: k.Address().Hex(),
					CommitHash: c.CommitHash.Hex(), Nonce: 1, Deadline: c.Deadline, Signature: forecast.EncodeSignature(sig)}, "", &e); st != 409 || e.Error.Code != "already_committed" {
					t.Fatalf("second commit after restart: %d %+v", st, e)
				}
			}
			time.Sleep(time.Until(rs) + 20*time.Millisecond)
			rv := forecast.Reveal{RoundID: round.ID, Predictions: preds, Salt: salt, Agent: k.Address(), Nonce: 1, Deadline: uint64(time.Now().Add(time.Hour).Unix())}
			sig, _ = k.SignReveal(d, rv)
			if st := p.api(t, "POST", fmt.Sprintf("/api/v1/rounds/%d/reveals", round.ID), forecast.RevealRequest{Agent: k.Address().Hex(),
				Predictions: preds, Salt: salt.Hex(), Nonce: 1, Deadline: rv.Deadline, Signature: forecast.EncodeSignature(sig)}, "", &ack); st != 201 {
				t.Fatalf("reveal after restart: %d", st)
			}
			// Outcomes are published after the reveal deadline (before it
			// the server refuses: market_in_open_round).
			time.Sleep(time.Until(rd) + 20*time.Millisecond)
			for i, o := range []string{"YES", "NO", "VOID"} {
				if st := p.api(t, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ids[i]), map[string]string{"outcome": o}, fcToken, nil); st != 200 {
					t.Fatalf("resolve: %d", st)
				}
			}
			var scores []forecast.ScoreJSON
			if st := p.api(t, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", round.ID), nil, fcToken, &scores); st != 200 {
				t.Fatalf("trigger: %d", st)
			}
			found := false
			for _, s := range scores {
				if s.Agent == k.Address().Hex() {
					found = true
					// (0.9 − 1)² and (0.01 − 0)² over the two resolved markets.
					if s.Forfeit || s.ScoredMarkets != 2 || s.BrierBps2 != (1000*1000+100*100)/2 {
						t.Fatalf("score after the crash: %+v", s)
					}
				}
			}
			if !found {
				t.Fatalf("agent missing from scores %+v", scores)
			}
		})
	}
}

// `arena serve` runs the forecast jobs: with the fake Polymarket it syncs,
// creates a round by the rules at start-up (retrying until the first sync
// has stored markets) and serves it on the API.
func TestServeSchedulesRounds(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	fake := polymarkettest.New(t)
	// The fixtures close on 2026-06-30; move them a month ahead of now.
	end := time.Now().Add(30 * 24 * time.Hour).UTC().Format(time.RFC3339)
	fake.Update(func(s *polymarkettest.Server) {
		for i, m := range s.Markets {
			s.Markets[i] = json.RawMessage(strings.ReplaceAll(string(m), "2026-06-30T12:00:00Z", end))
		}
		for i, e := range s.Events {
			s.Events[i] = json.RawMessage(strings.ReplaceAll(string(e), "2026-06-30T12:00:00Z", end))
		}
	})
	rules := filepath.Join(t.TempDir(), "rules.json")
	os.WriteFile(rules, []byte(`{"min_volume":10000,"min_liquidity":1000,"min_price":0.03,"max_price":0.97,
		"min_close_after":"1h","max_close_after":"1000h","sources":["polymarket"]}`), 0o600)
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	p := startServeArgs(t, "serve", "--create", "--addr", "127.0.0.1:0", "--db", dbURL, "--gamma-url", fake.GammaURL, "--clob-url", fake.CLOBURL,
		"--sync-every", "1h", "--round-k", "3", "--round-rules", rules, "--round-retry-every", "100ms", "--commit-in", "90m")
	var listed []forecast.RoundJSON
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		p.api(t, "GET", "/api/v1/rounds?status=open", nil, "", &listed)
		if len(listed) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no round after 20 s; logs:\n%s", p.logs)
		}
	}
	r := listed[0]
	if len(r.Markets) != 3 || r.CommitDeadline.Before(time.Now().Add(80*time.Minute)) || !r.RevealStart.Equal(r.CommitDeadline.Add(time.Hour)) ||
		!r.RevealDeadline.Equal(r.CommitDeadline.Add(2*time.Hour)) || r.Markets[0].Price == nil {
		t.Fatalf("scheduled round %+v", r)
	}
	if err := p.cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Wait(); err != nil {
		t.Fatalf("serve did not stop cleanly: %v\n%s", err, p.logs)
	}
	db := openStore(t, dbURL)
	runs, err := db.JobRuns(context.Background(), rounds.JobCreateRound)
	if err != nil || len(runs) != 1 || runs[0].Error != "" {
		t.Fatalf("round creation runs %+v, %v", runs, err)
	}
}
