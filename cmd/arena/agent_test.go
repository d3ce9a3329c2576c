package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/web"
)

func TestAgentKeygen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "agent.key")
	out, _, err := cli(t, nil, "agent", "keygen", "--out", path)
	if err != nil {
		t.Fatal(err)
	}
	k, err := forecast.LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(out) != k.Address().Hex() {
		t.Fatalf("printed %q, key is %s", out, k.Address().Hex())
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v", fi.Mode().Perm())
	}
	before, _ := os.ReadFile(path)
	if _, _, err := cli(t, nil, "agent", "keygen", "--out", path); err == nil || !strings.Contains(err.Error(), "refusing to overwrite") {
		t.Fatalf("second keygen: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Fatal("key overwritten")
	}
	for _, args := range [][]string{
		{"agent"}, {"agent", "dance"}, {"agent", "keygen"},
		{"agent", "run"}, {"agent", "run", "--server", "ftp://x", "--key", path},
		{"agent", "run", "--server", "http://127.0.0.1:1", "--key", path, "--strategy", "psychic"},
		{"agent", "run", "--server", "http://127.0.0.1:1", "--key", "/nonexistent"},
		{"agent", "run", "--server", "http://127.0.0.1:1", "--key", path, "--every", "-1s"},
	} {
		if _, _, err := cli(t, nil, args...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}

// arena agent profile registers and updates the key's profile; names are
// printed as given (markup and quotes are text to a terminal), and what
// the server refuses is an error that changes nothing.
func TestAgentProfile(t *testing.T) {
	t.Parallel()
	s := newFCServer(t, nil)
	key := filepath.Join(t.TempDir(), "agent.key")
	addr, _, err := cli(t, nil, "agent", "keygen", "--out", key)
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	name := `<b>"Quoted" Bot</b>`
	out, _, err := cli(t, nil, "agent", "profile", "--server", s.url, "--key", key, "--name", "  "+name, "--organisation", "Lab",
		"--model", "gpt-x", "--homepage", "https://bot.example", "--description", "Forecasts  politics.")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent         " + addr, "version       1", "name          " + name, "description   Forecasts politics.",
		"page          " + s.url + "/agents/" + addr} {
		if !strings.Contains(out, want+"\n") {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, err = cli(t, nil, "agent", "profile", "--server", s.url, "--key", key, "--name", "Bot", "--format", "json")
	var got forecast.ProfileJSON
	if err != nil || json.Unmarshal([]byte(out), &got) != nil || got.Version != 2 || got.Name != "Bot" || got.Model != "" {
		t.Fatalf("update: %v %+v\n%s", err, got, out)
	}
	for _, args := range [][]string{
		{"--server", s.url, "--key", key},
		{"--server", "ftp://x", "--key", key, "--name", "A"},
		{"--server", s.url, "--key", key, "--name", "A", "--homepage", "javascript:alert(1)"},
		{"--server", s.url, "--key", key, "--name", strings.Repeat("n", 41)},
	} {
		if _, _, err := cli(t, nil, append([]string{"agent", "profile"}, args...)...); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
	a, err := s.db.Agent(context.Background(), addr)
	if err != nil || a.Name != "Bot" || a.ProfileVersion != 2 {
		t.Fatalf("stored %+v %v", a, err)
	}
}

// A terminal shows a server's text as data: a character that would drive
// it comes out escaped.
func TestPrintable(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{"Bot": "Bot", `<b>"x"</b> é😀`: `<b>"x"</b> é😀`, "a\x1b[31mred": `"a\x1b[31mred"`,
		"tab\there": `"tab\there"`, "rtl\u202eoverride": `"rtl\u202eoverride"`} {
		if got := printable(in); got != want {
			t.Errorf("printable(%q) = %s, want %s", in, got, want)
		}
	}
}

// fcServer is the forecast API of a fresh SQLite store on loopback, on the
// real clock.
type fcServer struct {
	db  *store.DB
	svc *rounds.Service
	url string
}

func newFCServer(t *testing.T, wrap func(http.Handler) http.Handler) *fcServer {
	t.Helper()
	dbURL := "sqlite:" + filepath.Join(t.TempDir(), "a.db")
	db, err := store.Open(context.Background(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	quiet := slog.New(slog.DiscardHandler)
	svc := &rounds.Service{Store: db, Logger: quiet, Domain: forecast.Domain{ChainID: 10}}
	srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc, Forecasters: db})
	var h http.Handler = srv.Handler()
	if wrap != nil {
		h = wrap(h)
	}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	return &fcServer{db: db, svc: svc, url: hs.URL}
}

func (s *fcServer) round(t *testing.T, ids []int64, cd, rs, rd time.Time) *arena.Round {
	t.Helper()
	r, err := s.svc.CreateRound(context.Background(), rounds.CreateRoundRequest{MarketIDs: ids, CommitDeadline: cd, RevealStart: rs, RevealDeadline: rd})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (s *fcServer) sub(t *testing.T, round uint64, agent string) *arena.Submission {
	t.Helper()
	subs, err := s.db.Submissions(context.Background(), round)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range subs {
		if x.Agent == agent {
			return x
		}
	}
	return nil
}

func (s *fcServer) markets(t *testing.T, n int) []int64 {
	t.Helper()
	var ms []*arena.Market
	for i := 0; i < n; i++ {
		p := 0.25 + 0.2*float64(i)
		ms = append(ms, &arena.Market{Source: "test", SourceID: fmt.Sprint(i), Kind: arena.KindMarket, Question: fmt.Sprintf("Q%d", i),
			EventID: fmt.Sprint(i), Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: p, arena.No: 1 - p},
			CloseTime: time.Now().Add(30 * 24 * time.Hour), Status: arena.StatusOpen})
	}
	if _, err := s.db.SaveMarkets(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, m := range ms {
		ids = append(ids, m.ID)
	}
	return ids
}

var agentLine = regexp.MustCompile(`committed (\d+), revealed (\d+), reasoning (\d+), abandoned (\d+)`)

func agentCounts(t *testing.T, out string) string {
	t.Helper()
	m := agentLine.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no report line in %q", out)
	}
	return strings.Join(m[1:], " ")
}

// A commit produced by `arena agent` verifies in the server, and its hash
// recomputes from the values the agent reveals.
func TestAgentRunRoundTrip(t *testing.T) {
	t.Parallel()
	s := newFCServer(t, nil)
	ids := s.markets(t, 3)
	cd := time.Now().Add(1500 * time.Millisecond)
	r := s.round(t, ids, cd, cd.Add(300*time.Millisecond), cd.Add(4*time.Second))
	dir := t.TempDir()
	keyFile := filepath.Join(dir, "k")
	addr, _, err := cli(t, nil, "agent", "keygen", "--out", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	run := func() string {
		t.Helper()
		out, _, err := cli(t, nil, "agent", "run", "--server", s.url, "--key", keyFile, "--strategy", "market", "--log-level", "error")
		if err != nil {
			t.Fatalf("agent run: %v\n%s", err, out)
		}
		return agentCounts(t, out)
	}
	if got := run(); got != "1 0 0 0" {
		t.Fatalf("first run: %s", got)
	}
	sub := s.sub(t, r.ID, addr)
	if sub == nil || sub.Revealed() || sub.ReasoningHash == "" {
		t.Fatalf("server after the commit: %+v", sub)
	}
	if _, err := os.Stat(keyFile + ".state"); err != nil {
		t.Fatalf("default state dir: %v", err)
	}
	if got := run(); got != "0 0 0 0" {
		t.Fatalf("second run before the reveal window: %s", got)
	}
	time.Sleep(time.Until(r.RevealStart) + 20*time.Millisecond)
	if got := run(); got != "0 1 1 0" {
		t.Fatalf("run in the reveal window: %s", got)
	}
	sub = s.sub(t, r.ID, addr)
	if !slices.Equal(sub.Predictions, []uint16{2500, 4500, 6500}) || sub.Reasoning == "" {
		t.Fatalf("revealed %+v", sub)
	}
	if h := forecast.CommitHash(r.ID, common.HexToAddress(addr), sub.Predictions, common.HexToHash(sub.Salt)); h.Hex() != sub.CommitHash {
		t.Fatalf("the agent's commit %s does not recompute from its reveal (%s)", sub.CommitHash, h.Hex())
	}
	if got := run(); got != "0 0 0 0" {
		t.Fatalf("run after everything: %s", got)
	}
}

// --strategy sim forecasts as the simulator's informed agent on the world
// of the given seed, seen through the server's market ids.
func TestAgentRunSim(t *testing.T) {
	t.Parallel()
	s := newFCServer(t, nil)
	start := time.Now().UTC().Add(-48 * time.Hour).Truncate(time.Hour)
	world, err := sim.New(sim.Config{Seed: 7, Markets: 40, Start: start})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	ms := world.MarketsAt(now)
	if _, err := s.db.SaveMarkets(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	cd := now.Add(time.Hour)
	var ids []int64
	events := map[string]bool{}
	for _, m := range ms {
		if m.Status == arena.StatusOpen && m.CloseTime.After(cd.Add(3*time.Hour)) && !events[m.EventID] && len(ids) < 3 {
			ids, events[m.EventID] = append(ids, m.ID), true
		}
	}
	r := s.round(t, ids, cd, cd.Add(time.Hour), cd.Add(2*time.Hour))
	keyFile := filepath.Join(t.TempDir(), "k")
	out, _, err := cli(t, nil, "agent", "keygen", "--out", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(out)
	before := time.Now()
	out, _, err = cli(t, nil, "agent", "run", "--server", s.url, "--key", keyFile, "--strategy", "sim", "--seed", "7",
		"--sim-markets", "40", "--sim-start", start.Format(time.RFC3339), "--log-level", "error")
	after := time.Now()
	if err != nil || agentCounts(t, out) != "1 0 0 0" || !strings.Contains(out, "sim:informed-0.05") {
		t.Fatalf("sim run: %v %s", err, out)
	}
	// The forecast is the world's at the last grid point before the run:
	// recomputed here from the seed (the run's start and end fall on the
	// same 10-minute step but at a boundary).
	st := readAgentState(t, keyFile+".state", r.ID)
	for i, id := range ids {
		var sid string
		for _, m := range ms {
			if m.ID == id {
				sid = m.SourceID
			}
		}
		step := world.Config().Step
		a, _ := world.ForecastBPS("informed-0.05", sid, before.Truncate(step))
		b, _ := world.ForecastBPS("informed-0.05", sid, after.Truncate(step))
		if st.Predictions[i] != a && st.Predictions[i] != b {
			t.Fatalf("market %d: predicted %d, the world says %d/%d", i, st.Predictions[i], a, b)
		}
	}
	if s.sub(t, r.ID, addr) == nil {
		t.Fatal("no commit on the server")
	}
}

type agentState struct {
	Predictions []uint16 `json:"predictions"`
	Salt        string   `json:"salt"`
	CommitHash  string   `json:"commit_hash"`
	Committed   bool     `json:"committed"`
	Revealed    bool     `json:"revealed"`
}

func readAgentState(t *testing.T, dir string, round uint64) agentState {
	t.Helper()
	// Round files live in a per-server subdirectory of the state dir.
	files, _ := filepath.Glob(filepath.Join(dir, "server-*", fmt.Sprintf("round-%d.json", round)))
	if len(files) != 1 {
		t.Fatalf("state files of round %d: %v", round, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	var st agentState
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatal(err)
	}
	return st
}

// kill -9 of `arena agent run` while it waits for the answer to a commit
// the server accepted: the rerun reveals, once.
func TestAgentKill9WhileBlocked(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	var hold, accepted atomic.Bool
	hold.Store(true)
	s := newFCServer(t, func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method == "POST" && strings.HasSuffix(r.URL.Path, "/commits") && hold.Load() {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				accepted.Store(rec.Code == http.StatusCreated)
				<-r.Context().Done() // the answer never leaves: the agent blocks until killed
				return
			}
			h.ServeHTTP(w, r)
		})
	})
	ids := s.markets(t, 3)
	cd := time.Now().Add(3 * time.Second)
	r := s.round(t, ids, cd, cd.Add(200*time.Millisecond), cd.Add(6*time.Second))
	keyFile := filepath.Join(t.TempDir(), "k")
	out, _, err := cli(t, nil, "agent", "keygen", "--out", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr := strings.TrimSpace(out)
	agent := func() *exec.Cmd {
		cmd := exec.Command(os.Args[0], "agent", "run", "--server", s.url, "--key", keyFile, "--strategy", "random", "--log-level", "error")
		cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1")
		return cmd
	}
	cmd := agent()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(10 * time.Second); !accepted.Load(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(end) {
			cmd.Process.Kill()
			t.Fatal("the agent's commit never arrived")
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("agent exit: %v", err)
	}
	hold.Store(false)
	st := readAgentState(t, keyFile+".state", r.ID)
	if st.Committed || st.Salt == "" || len(st.Predictions) != 3 {
		t.Fatalf("state at the kill: %+v (salt durable, commit unacknowledged)", st)
	}
	if sub := s.sub(t, r.ID, addr); sub == nil || sub.CommitHash != st.CommitHash {
		t.Fatalf("server commit %+v, state %+v", sub, st)
	}
	time.Sleep(time.Until(r.RevealStart) + 20*time.Millisecond)
	for i, want := range []string{"0 1 0 0", "0 0 0 0"} {
		cmd := agent()
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("rerun %d: %v\n%s", i, err, out)
		}
		if got := agentCounts(t, string(out)); got != want {
			t.Fatalf("rerun %d: %s, want %s", i, got, want)
		}
	}
	sub := s.sub(t, r.ID, addr)
	st = readAgentState(t, keyFile+".state", r.ID)
	if !sub.Revealed() || !slices.Equal(sub.Predictions, st.Predictions) || sub.Salt != st.Salt || !st.Committed || !st.Revealed {
		t.Fatalf("after the rerun: server %+v, state %+v", sub, st)
	}
	if n, _ := s.db.Nonce(context.Background(), addr); n != 2 {
		t.Fatalf("nonce %d: want one commit and one reveal", n)
	}
}

// --strategy llm: a registry model forecasts through the round tools over
// HTTP, commits, keeps its trace under the state directory, and a rerun
// asks the model nothing again.
func TestAgentRunLLM(t *testing.T) {
	t.Parallel()
	s := newFCServer(t, nil)
	ids := s.markets(t, 3)
	cd := time.Now().Add(2 * time.Minute)
	r := s.round(t, ids, cd, cd.Add(time.Minute), cd.Add(2*time.Minute))
	srv := llmtest.New(t)
	srv.Script("m",
		llmtest.Reply{PromptTokens: 10, OutputTokens: 5, ToolCalls: []llmtest.ToolCall{{Name: "getMarketDetails", Arguments: `{"index":2}`}}},
		llmtest.Reply{PromptTokens: 10, OutputTokens: 5, ToolCalls: []llmtest.ToolCall{{Name: "submitPredictions",
			Arguments: `{"predictions":[100,200,6500],"reasoning":["a","b","c"]}`}}})
	dir := t.TempDir()
	reg := filepath.Join(dir, "agents.json")
	os.WriteFile(reg, []byte(`{"agents":[{"id":"m","provider":"local","model":"m","base_url":"`+srv.BaseURL+
		`","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`), 0o600)
	keyFile := filepath.Join(dir, "k")
	addr, _, err := cli(t, nil, "agent", "keygen", "--out", keyFile)
	if err != nil {
		t.Fatal(err)
	}
	addr = strings.TrimSpace(addr)
	args := []string{"agent", "run", "--server", s.url, "--key", keyFile, "--strategy", "llm", "--model", "m", "--agents", reg, "--log-level", "error"}
	for i, want := range []string{"1 0 0 0", "0 0 0 0"} {
		out, _, err := cli(t, nil, args...)
		if err != nil {
			t.Fatalf("run %d: %v\n%s", i, err, out)
		}
		if got := agentCounts(t, out); got != want {
			t.Fatalf("run %d: %s, want %s", i, got, want)
		}
		// 2 calls × (10 input + 5 output tokens) at 1 USD/Mtok = 30 µ$.
		if i == 0 && !strings.Contains(out, "model calls: 2 (20 tokens in, 10 out, $0.00003 estimated, billed by the provider: —), 0 answered from the cache") {
			t.Errorf("accounting line missing:\n%s", out)
		}
	}
	if n := len(srv.Requests("m")); n != 2 {
		t.Errorf("%d model requests, want 2", n)
	}
	if sub := s.sub(t, r.ID, addr); sub == nil || sub.ReasoningHash == "" {
		t.Fatalf("no commit: %+v", sub)
	}
	b, err := os.ReadFile(filepath.Join(keyFile+".state", "traces", "m", fmt.Sprintf("round-%d.json", r.ID)))
	if err != nil || !strings.Contains(string(b), `price\":0.65`) || !strings.Contains(string(b), `"predictions":[100,200,6500]`) {
		t.Fatalf("trace %s %v", b, err)
	}
	for _, bad := range [][]string{
		{"agent", "run", "--server", s.url, "--key", keyFile, "--strategy", "llm", "--agents", reg},
		{"agent", "run", "--server", s.url, "--key", keyFile, "--strategy", "llm", "--model", "zz", "--agents", reg},
		{"agent", "run", "--server", s.url, "--key", keyFile, "--strategy", "llm", "--model", "m", "--agents", reg, "--search", "nope"},
	} {
		if _, _, err := cli(t, nil, bad...); err == nil {
			t.Errorf("%v: no error", bad)
		}
	}
}
