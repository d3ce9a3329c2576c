package main

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/internal/store"
)

// panelServer answers three resolvers from the truth of each question:
// alpha is right with probability 0.85, beta 0.8 (and mostly wrong where
// alpha is), gamma 0.75 with some abstentions; the draw is a hash of the
// question, so every run answers the same.
type panelServer struct {
	*llmtest.Server
	truth map[string]bool // question text → YES
	mu    sync.Mutex
	count map[string]int // request body hash → times seen
	reqs  atomic.Int64
}

var oracleQuestionRE = regexp.MustCompile(`(?m)^Question: (.*)$`)

func unit(parts ...string) float64 {
	h := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
	return float64(binary.BigEndian.Uint64(h[:8])>>11) / (1 << 53)
}

func newPanelServer(t testing.TB, truth map[string]bool, delay time.Duration) *panelServer {
	ps := &panelServer{Server: llmtest.New(t), truth: truth, count: map[string]int{}}
	acc := map[string]float64{"alpha": 0.85, "beta": 0.8, "gamma": 0.75}
	for model, p := range acc {
		ps.Handle(model, func(req llmtest.ChatRequest) llmtest.Reply {
			ps.reqs.Add(1)
			raw, _ := json.Marshal(req)
			h := sha256.Sum256(raw)
			ps.mu.Lock()
			ps.count[string(h[:])]++
			ps.mu.Unlock()
			user := req.Messages[1].Text()
			m := oracleQuestionRE.FindStringSubmatch(user)
			if m == nil {
				return llmtest.Fail(400, "no question")
			}
			yes, ok := ps.truth[m[1]]
			if !ok {
				return llmtest.Fail(400, "unknown question "+m[1])
			}
			u := unit("draw", m[1])
			if model == "beta" && unit("draw", m[1]) < 0.15 {
				u = 0.99 // beta errs with alpha
			} else if model != "alpha" {
				u = unit(model, m[1])
			}
			right := u < p
			if model == "gamma" && unit("abstain", m[1]) < 0.08 {
				return withDelay(llmtest.OK(`{"decision":"TOO_EARLY","confidence":0.5,"reasoning":"not reported yet"}`, 800, 40), delay)
			}
			if strings.Contains(user, "Other resolvers answered") && unit("r2", model, m[1]) < 0.3 {
				right = !right // round 2 sways some resolvers
			}
			dec := "NO"
			if yes == right {
				dec = "YES"
			}
			conf := 0.55 + 0.4*unit("conf", model, m[1])
			return withDelay(llmtest.OK(fmt.Sprintf(`{"decision":%q,"confidence":%.2f,"reasoning":"from the packet"}`, dec, conf), 800, 40), delay)
		})
	}
	return ps
}

func withDelay(r llmtest.Reply, d time.Duration) llmtest.Reply { r.Delay = d; return r }

func (ps *panelServer) repeated() int {
	ps.mu.Lock()
	defer ps.mu.Unlock()
	n := 0
	for _, c := range ps.count {
		n += c - 1
	}
	return n
}

func writeOracleRegistry(t testing.TB, base string, models ...string) string {
	var agents []string
	for _, m := range models {
		agents = append(agents, fmt.Sprintf(`{"id":%q,"provider":"local","model":%q,"base_url":%q,"timeout":"10s","input_usd_per_mtok":1,"output_usd_per_mtok":4}`, m, m, base))
	}
	p := filepath.Join(t.TempDir(), "agents.json")
	if err := os.WriteFile(p, []byte(`{"agents":[`+strings.Join(agents, ",")+`]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func writeQuestions(t testing.TB, n int) (string, map[string]bool) {
	var b strings.Builder
	b.WriteString("id,question,description,category,close_time,ground_truth,series_ticker\n")
	truth := map[string]bool{}
	cats := []string{"Sports", "Politics", "Crypto", "Entertainment"}
	for i := range n {
		q := fmt.Sprintf("Will event %d happen?", i)
		yes := unit("truth", q) < 0.4
		truth[q] = yes
		gt := "no"
		if yes {
			gt = "Yes"
		}
		fmt.Fprintf(&b, "K%03d,%s,Resolves Yes if event %d happens.,%s,2025-07-%02d,%s,SER%d\n", i, q, i, cats[i%4], 1+i%28, gt, i/4)
	}
	p := filepath.Join(t.TempDir(), "q.csv")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p, truth
}

func TestOracleEvalCacheOnlyReplay(t *testing.T) {
	t.Parallel()
	qfile, truth := writeQuestions(t, 40)
	ps := newPanelServer(t, truth, 0)
	reg := writeOracleRegistry(t, ps.BaseURL, "alpha", "beta", "gamma")
	cache := t.TempDir()
	plot := filepath.Join(t.TempDir(), "curve.svg")
	args := []string{"oracle", "eval", "--questions", qfile, "--agents", reg, "--cache-dir", cache, "--format", "json", "--workers", "6", "--retry-base", "1ms"}
	out1, errOut, err := cli(t, nil, append(args, "--plot", plot)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	n1 := ps.reqs.Load()
	// 40 questions × 3 round-1 calls + one round-2 call per answering resolver.
	if n1 != 240 {
		t.Errorf("%d requests, want 240", n1)
	}
	out2, errOut2, err := cli(t, nil, append(args, "--cache-only")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut2)
	}
	if ps.reqs.Load() != n1 {
		t.Fatalf("cache-only made %d requests", ps.reqs.Load()-n1)
	}
	if out1 != out2 {
		t.Fatalf("replay differs")
	}
	if !strings.Contains(errOut2, "240 calls (240 from cache, 0 not)") {
		t.Errorf("summary: %s", errOut2)
	}
	var rep map[string]any
	if err := json.Unmarshal([]byte(out1), &rep); err != nil || rep["questions"].(float64) != 40 {
		t.Fatalf("report %v %s", err, out1)
	}
	if len(rep["systems"].([]any)) != 6 {
		t.Errorf("systems %v", rep["systems"])
	}
	svg, err := os.ReadFile(plot)
	if err != nil || !strings.Contains(string(svg), "<polyline") {
		t.Errorf("plot %v", err)
	}
	// Table and CSV render the same run from the cache.
	for _, f := range []string{"table", "csv"} {
		out, _, err := cli(t, nil, "oracle", "eval", "--questions", qfile, "--agents", reg, "--cache-dir", cache, "--cache-only", "--format", f)
		if err != nil || !strings.Contains(out, "majority") {
			t.Errorf("%s: %v\n%s", f, err, out)
		}
	}
	if ps.reqs.Load() != n1 || ps.repeated() != 0 {
		t.Errorf("requests %d, repeated %d", ps.reqs.Load(), ps.repeated())
	}
	// A cache-only run over a panel never run is all failures, no request:
	// the report shows it, and the run fails.
	reg2 := writeOracleRegistry(t, ps.BaseURL, "alpha", "beta", "delta")
	out3, errOut3, err := cli(t, nil, "oracle", "eval", "--questions", qfile, "--agents", reg2, "--cache-dir", cache, "--cache-only", "--arch", "single:delta", "--format", "csv")
	if err == nil || !strings.Contains(err.Error(), "resolver delta answered nothing (all 40 votes failed; the first: llm delta: request") ||
		ps.reqs.Load() != n1 || !strings.Contains(out3, "single:delta,40,0,,0,") || !strings.Contains(errOut3, "40 failed votes") {
		t.Errorf("uncached panel: %v %s %s", err, out3, errOut3)
	}
}

// Failed calls are loud: the summary names the first error and counts the
// failures, accuracy is over answered questions only with the coverage
// beside it, a resolver that answered nothing fails the run, and an
// unusable cache directory is refused before any call.
func TestOracleEvalFailuresAreLoud(t *testing.T) {
	t.Parallel()
	qfile, truth := writeQuestions(t, 3)
	ps := newPanelServer(t, truth, 0)
	dead := writeOracleRegistry(t, "http://127.0.0.1:1/v1", "alpha", "beta")
	half := filepath.Join(t.TempDir(), "half.json")
	os.WriteFile(half, []byte(fmt.Sprintf(`{"agents":[{"id":"alpha","provider":"local","model":"alpha","base_url":%q,"input_usd_per_mtok":0,"output_usd_per_mtok":0},
		{"id":"down","provider":"local","model":"m","base_url":"http://127.0.0.1:1/v1","input_usd_per_mtok":0,"output_usd_per_mtok":0}]}`, ps.BaseURL)), 0o644)
	file := filepath.Join(t.TempDir(), "not-a-dir")
	os.WriteFile(file, nil, 0o644)
	for _, c := range []struct {
		name    string
		args    []string
		want    string
		summary string
		table   string
	}{
		{"model server down", []string{"--agents", dead},
			"resolver alpha answered nothing (all 3 votes failed; the first: llm alpha (alpha): ", "resolver alpha: 3 of 3 votes failed; the first, on K000: llm alpha", "majority 0/3 (0.0%) 0/0 –"},
		{"cache dir is a file", []string{"--agents", dead, "--cache-dir", file}, "--cache-dir " + file + " is not a directory", "", ""},
		{"cache-only dir missing", []string{"--agents", dead, "--cache-dir", file + "-none", "--cache-only"}, "does not exist (--cache-only answers from it alone)", "", ""},
		{"one resolver down", []string{"--agents", half},
			"resolver down answered nothing", "resolver down: 3 of 3 votes failed", "single:down 0/3 (0.0%) 0/0 –"},
	} {
		out, errOut, err := cli(t, nil, append([]string{"oracle", "eval", "--questions", qfile, "--retry-base", "1ms", "--arch", "single,majority"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(errOut, c.summary) || !strings.Contains(strings.Join(strings.Fields(out), " "), c.table) {
			t.Errorf("%s: %v\nstderr %s\nstdout %s", c.name, err, errOut, out)
		}
	}
	if _, err := os.Stat(file + "-none"); err == nil {
		t.Error("a cache-only run made its cache directory")
	}
}

func TestOracleEvalBadInput(t *testing.T) {
	t.Parallel()
	qfile, truth := writeQuestions(t, 3)
	ps := newPanelServer(t, truth, 0)
	reg := writeOracleRegistry(t, ps.BaseURL, "alpha")
	dir := t.TempDir()
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("id,question,description,category,close_time,ground_truth,series_ticker\na,Q?,,c,,yes,s\na,Q2?,,c,,no,s\n"), 0o644)
	bad2 := filepath.Join(dir, "bad2.csv")
	os.WriteFile(bad2, []byte("id,question,description,category,close_time,ground_truth,series_ticker\na,Q?,,c,,perhaps,s\n"), 0o644)
	keyed := filepath.Join(dir, "keyed.json")
	os.WriteFile(keyed, []byte(`{"agents":[{"id":"k","provider":"openrouter","model":"m","api_key_env":"NO_SUCH_KEY_SET","input_usd_per_mtok":1,"output_usd_per_mtok":1}]}`), 0o644)
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"--questions", bad, "--agents", reg}, `line 3: duplicate id "a" (first on line 2)`},
		{[]string{"--questions", bad2, "--agents", reg}, `line 2: ground_truth "perhaps"`},
		{[]string{"--questions", qfile, "--agents", reg, "--arch", "single:nobody"}, `unknown agent "nobody"`},
		{[]string{"--questions", qfile, "--agents", reg, "--arch", "vibes"}, `unknown architecture "vibes"`},
		{[]string{"--questions", qfile, "--agents", keyed}, "NO_SUCH_KEY_SET is not set"},
		{[]string{"--questions", qfile, "--agents", reg, "--cache-only"}, "--cache-only needs --cache-dir"},
		{[]string{"--questions", qfile, "--agents", reg, "--evidence", "bing"}, `unknown evidence provider "bing"`},
		{[]string{"--questions", qfile, "--agents", reg, "--source", "forecastbench"}, "exactly one of"},
		{[]string{"--questions", qfile}, "--agents FILE is required"},
		{[]string{"--questions", qfile, "--agents", reg, "--workers", "0"}, "--workers 0"},
		{[]string{"--questions", qfile, "--agents", reg, "--format", "xml"}, `format "xml"`},
	}
	for _, c := range cases {
		_, _, err := cli(t, nil, append([]string{"oracle", "eval"}, c.args...)...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %q", c.args, err, c.want)
		}
	}
	if ps.reqs.Load() != 0 {
		t.Errorf("bad input made %d requests", ps.reqs.Load())
	}
}

// A run killed with SIGKILL mid-way and run again repeats no completed call.
func TestOracleEvalKilledAndResumed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("multi-process test")
	}
	qfile, truth := writeQuestions(t, 60)
	ps := newPanelServer(t, truth, 20*time.Millisecond)
	reg := writeOracleRegistry(t, ps.BaseURL, "alpha", "beta", "gamma")
	cache := t.TempDir()
	args := []string{"oracle", "eval", "--questions", qfile, "--agents", reg, "--cache-dir", cache, "--workers", "4", "--format", "json"}
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), "ARENA_TEST_EXEC=1")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for end := time.Now().Add(20 * time.Second); ps.reqs.Load() < 100; time.Sleep(2 * time.Millisecond) {
		if time.Now().After(end) {
			cmd.Process.Kill()
			t.Fatal("no progress")
		}
	}
	cmd.Process.Kill()
	if err := cmd.Wait(); err == nil || !strings.Contains(err.Error(), "killed") {
		t.Fatalf("exit: %v", err)
	}
	atKill := ps.reqs.Load()
	if atKill >= 360 {
		t.Fatalf("the run finished before the kill (%d requests)", atKill)
	}
	out, errOut, err := cli(t, nil, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	// Calls in flight at the kill were never answered to the client and
	// are made again; each of them at most once more (one per worker).
	if r := ps.repeated(); r > 4 {
		t.Errorf("%d calls repeated after the kill, want ≤ 4 (the calls in flight)", r)
	}
	total := ps.reqs.Load()
	t.Logf("killed after %d requests; resumed run made %d more (repeated %d); total %d", atKill, total-atKill, ps.repeated(), total)
	if total-int64(ps.repeated()) != 360 {
		t.Errorf("distinct calls %d, want 360", total-int64(ps.repeated()))
	}
	var rep map[string]any
	if json.Unmarshal([]byte(out), &rep) != nil {
		t.Fatal(out)
	}
}

// forecastBenchTruth is a copy of the imported ForecastBench sets and
// their resolved market questions.
func forecastBenchTruth(t *testing.T) (string, map[string]bool, int) {
	url, _, _ := forecastBenchStore(t)
	ctx := context.Background()
	db, err := store.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench, Status: arena.StatusResolved, Kind: arena.KindMarket})
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]bool{}
	n := 0
	for _, m := range ms {
		if m.Resolution == arena.Yes || m.Resolution == arena.No {
			truth[m.Question] = m.Resolution == arena.Yes
			n++
		}
	}
	return url, truth, n
}

func TestOracleEvalForecastBench(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("imports the shared ForecastBench sets")
	}
	url, truth, n := forecastBenchTruth(t)
	ps := newPanelServer(t, truth, 0)
	reg := writeOracleRegistry(t, ps.BaseURL, "alpha", "beta", "gamma")
	cache := t.TempDir()
	args := []string{"oracle", "eval", "--source", "forecastbench", "--db", url, "--agents", reg, "--cache-dir", cache,
		"--arch", "single,majority,weighted", "--workers", "16", "--format", "json"}
	start := time.Now()
	out1, errOut, err := cli(t, nil, args...)
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	first := time.Since(start)
	n1 := ps.reqs.Load()
	out2, errOut2, err := cli(t, nil, append(args, "--cache-only")...)
	if err != nil || ps.reqs.Load() != n1 || out1 != out2 {
		t.Fatalf("cache-only replay: err %v, %d new requests, same bytes %v\n%s", err, ps.reqs.Load()-n1, out1 == out2, errOut2)
	}
	var rep struct {
		Questions int `json:"questions"`
		Systems   []struct {
			System   string   `json:"system"`
			Accuracy *float64 `json:"accuracy"`
		} `json:"systems"`
	}
	json.Unmarshal([]byte(out1), &rep)
	if rep.Questions != n || n1 != int64(3*n) {
		t.Fatalf("%d questions (store has %d resolved Yes/No), %d requests", rep.Questions, n, n1)
	}
	t.Logf("%d resolved ForecastBench market questions; first run %v (%s), replay made 0 requests, same %d bytes", n, first.Round(time.Millisecond), strings.TrimSpace(errOut), len(out1))
	for _, s := range rep.Systems {
		t.Logf("%s: accuracy %.4f", s.System, *s.Accuracy)
	}
	if p := os.Getenv("ARENA_ORACLE_PLOT"); p != "" {
		if _, _, err := cli(t, nil, "oracle", "eval", "--source", "forecastbench", "--db", url, "--agents", reg, "--cache-dir", cache, "--cache-only", "--plot", p, "--format", "table"); err != nil {
			t.Fatal(err)
		}
	}
}

// Evidence from a directory of packets and from a (fake) Exa endpoint
// reaches every resolver verbatim, and is cached for the replay.
func TestOracleEvalEvidence(t *testing.T) {
	t.Parallel()
	qfile, truth := writeQuestions(t, 3)
	ps := newPanelServer(t, truth, 0)
	reg := writeOracleRegistry(t, ps.BaseURL, "alpha", "beta")
	dir := t.TempDir()
	for i := range 3 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("K%03d.json", i)), []byte(fmt.Sprintf(`{"question":"","criteria":"","retrieved_at":"2025-07-01T00:00:00Z","query":"q",
			"sources":[{"title":"packet %d","url":"https://e.example/%d","published":"2025-06-01T00:00:00Z","highlights":["it happened"]}]}`, i, i)), 0o644)
	}
	if _, errOut, err := cli(t, nil, "oracle", "eval", "--questions", qfile, "--agents", reg, "--evidence", "dir:"+dir, "--arch", "majority"); err != nil {
		t.Fatalf("%v %s", err, errOut)
	}
	for _, r := range ps.Requests("alpha") {
		if u := r.Body.Messages[1].Text(); !strings.Contains(u, `"title": "packet `) || !strings.Contains(u, "it happened") {
			t.Fatalf("prompt without the packet: %s", u)
		}
	}
	var exaCalls atomic.Int64
	exa := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		exaCalls.Add(1)
		if r.URL.Path != "/search" || r.Header.Get("x-api-key") != "ek" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		fmt.Fprint(w, `{"results":[{"title":"Exa says","url":"https://x.example","publishedDate":"2025-06-02T00:00:00Z","highlights":["from the web"]},
			{"title":"too late","url":"https://y.example","publishedDate":"2026-01-01T00:00:00Z","highlights":["later"]}]}`)
	}))
	defer exa.Close()
	cache := t.TempDir()
	args := []string{"oracle", "eval", "--questions", qfile, "--agents", reg, "--evidence", "exa", "--exa-url", exa.URL, "--cache-dir", cache, "--arch", "majority", "--format", "json"}
	out1, errOut, err := cli(t, []string{"EXA_API_KEY=ek"}, args...)
	if err != nil || exaCalls.Load() != 3 {
		t.Fatalf("%v %s, %d searches", err, errOut, exaCalls.Load())
	}
	last := ps.Requests("beta")
	if u := last[len(last)-1].Body.Messages[1].Text(); !strings.Contains(u, "Exa says") || strings.Contains(u, "too late") {
		t.Fatalf("exa packet in prompt: %s", u)
	}
	out2, _, err := cli(t, nil, append(args, "--cache-only")...)
	if err != nil || out1 != out2 || exaCalls.Load() != 3 {
		t.Fatalf("replay: %v same %v, %d searches", err, out1 == out2, exaCalls.Load())
	}
}
