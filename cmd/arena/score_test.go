package main

import (
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
	"github.com/forecast-arena/arena/stats/scoreio"
)

func writeFile(t testing.TB, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const handCSV = `agent,round,market,category,forecast,benchmark,outcome
A,r1,m1,pol,0.8,0.6,1
A,r1,m2,pol,0.3,0.5,0
B,r1,m1,"eco, misc",0.6,0.6,1
A,r2,m3,eco,0.4,0.7,0
B,r2,m3,eco,0.7,0.7,0
`

// scoreJSON is the S7 JSON of one agent, decoded with nulls kept as nil.
type scoreJSON struct {
	Agent    string   `json:"agent"`
	N        int      `json:"n"`
	Rounds   int      `json:"rounds"`
	Brier    float64  `json:"brier"`
	BrierSE  *float64 `json:"brier_se"`
	Alpha    *float64 `json:"alpha"`
	AlphaSE  *float64 `json:"alpha_se"`
	T        *float64 `json:"t"`
	P        *float64 `json:"p"`
	BeatPct  *float64 `json:"beat_pct"`
	Murphy   map[string]json.RawMessage
	CORP     map[string]float64 `json:"corp"`
	ECE      float64            `json:"ece"`
	LogScore float64            `json:"log_score"`
}

func runScoreJSON(t *testing.T, args ...string) map[string]scoreJSON {
	t.Helper()
	out, _, err := cli(t, nil, append([]string{"score", "--format", "json"}, args...)...)
	if err != nil {
		t.Fatal(err)
	}
	var res []scoreJSON
	dec := json.NewDecoder(strings.NewReader(out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	m := map[string]scoreJSON{}
	for _, r := range res {
		m[r.Agent] = r
	}
	return m
}

func TestScoreCSVAndJSONLAgree(t *testing.T) {
	t.Parallel()
	csvPath := writeFile(t, "in.csv", handCSV)
	jsonl := `{"agent":"A","round":"r1","market":"m1","category":"pol","forecast":0.8,"benchmark":0.6,"outcome":1}
{"agent":"A","round":"r1","market":"m2","category":"pol","forecast":0.3,"benchmark":0.5,"outcome":0}
{"agent":"B","round":"r1","market":"m1","category":"eco, misc","forecast":0.6,"benchmark":0.6,"outcome":1}

{"agent":"A","round":"r2","market":"m3","category":"eco","forecast":0.4,"benchmark":0.7,"outcome":0}
{"agent":"B","round":"r2","market":"m3","category":"eco","forecast":0.7,"benchmark":0.7,"outcome":0}
`
	a := runScoreJSON(t, "--in", csvPath)
	b := runScoreJSON(t, "--in", writeFile(t, "in.jsonl", jsonl))
	if len(a) != 3 || len(b) != 3 {
		t.Fatalf("agents: %d vs %d", len(a), len(b))
	}
	for name, ra := range a {
		ja, _ := json.Marshal(ra)
		jb, _ := json.Marshal(b[name])
		if string(ja) != string(jb) {
			t.Errorf("%s differs:\n%s\n%s", name, ja, jb)
		}
	}
	A := a["A"]
	if A.N != 3 || A.Rounds != 2 || math.Abs(A.Brier-0.1125) > 1e-15 || math.Abs(*A.Alpha-0.235) > 1e-15 || math.Abs(*A.AlphaSE-0.095) > 1e-15 {
		t.Errorf("A = %+v", A)
	}
	// Market baseline present; α = 0 exactly with t and p null.
	m, ok := a["market"]
	if !ok || m.Alpha == nil || *m.Alpha != 0 || m.T != nil || m.P != nil || *m.AlphaSE != 0 {
		t.Errorf("market = %+v", m)
	}
	for _, k := range []string{"unc", "rel", "res", "residual", "bins"} {
		if _, ok := A.Murphy[k]; !ok {
			t.Errorf("murphy.%s missing", k)
		}
	}
}

func TestScoreFormats(t *testing.T) {
	t.Parallel()
	p := writeFile(t, "in.csv", handCSV)
	out, _, err := cli(t, nil, "score", "--in", p, "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 4 || len(recs[0]) != len(scoreCSVHeader) {
		t.Fatalf("csv: %v %q", err, out)
	}
	if recs[3][0] != "market" || recs[3][7] != "" || recs[3][8] != "" || recs[1][5] != "0.23499999999999996" {
		t.Errorf("csv rows: %q", recs)
	}
	out, _, err = cli(t, nil, "score", "--in", p, "--bootstrap", "199", "--seed", "3")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"agent", "A*", "market*", "0.2350", "α 95% CI", "provisional", "BSS (vs market)", "3/0/0", "rounds→sig"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "NaN") || strings.Contains(out, "Inf") {
		t.Errorf("table shows NaN/Inf:\n%s", out)
	}
}

// Every bad input fails with a user error naming the line; nothing is dropped.
func TestScoreBadInput(t *testing.T) {
	t.Parallel()
	hdr := "agent,round,market,category,forecast,benchmark,outcome\n"
	for _, tc := range []struct {
		name, file, content string
		want                []string
	}{
		{"empty file", "e.csv", "", []string{"empty file"}},
		{"blank file", "e.csv", "\n\n  \n", []string{"empty file"}},
		{"header only", "h.csv", hdr, []string{"no data rows"}},
		{"unknown column", "u.csv", "agent,round,market,category,forecast,benchmark,outcome,confidence\nA,1,m,c,0.5,,1,9\n", []string{"line 1", `unknown column(s) "confidence"`}},
		{"missing column", "m.csv", "agent,round,market,forecast,outcome\nA,1,m,0.5,1\n", []string{"missing column(s) category, benchmark"}},
		{"duplicate column", "d.csv", "agent,agent,round,market,category,forecast,benchmark,outcome\n", []string{"duplicate column"}},
		{"forecast > 1", "f.csv", hdr + "A,1,m,c,0.5,,1\nA,1,n,c,1.2,,1\n", []string{"line 3: forecast 1.2 outside [0,1]"}},
		{"negative benchmark", "b.csv", hdr + "A,1,m,c,0.5,-0.1,1\n", []string{"line 2: benchmark -0.1 outside [0,1]"}},
		{"not a number", "n.csv", hdr + "A,1,m,c,abc,,1\n", []string{`line 2: forecast "abc" is not a number`}},
		{"NaN", "n.csv", hdr + "A,1,m,c,NaN,,1\n", []string{"line 2: forecast NaN outside [0,1]"}},
		{"outcome 2", "o.csv", hdr + "A,1,m,c,0.5,,2\n", []string{`line 2: outcome "2" is not 0 or 1`}},
		{"outcome yes", "o.csv", hdr + "A,1,m,c,0.5,,yes\n", []string{`line 2: outcome "yes" is not 0 or 1`}},
		{"outcome empty", "o.csv", hdr + "A,1,m,c,0.5,,\n", []string{`line 2: outcome "" is not 0 or 1`}},
		{"field count", "c.csv", hdr + "A,1,m,c,0.5,1\n", []string{"line 2: 6 fields, want 7"}},
		{"empty agent", "a.csv", hdr + ",1,m,c,0.5,,1\n", []string{"line 2: empty agent"}},
		{"bad quote", "q.csv", hdr + "A,1,m,\"c,0.5,,1\n", []string{"line 2: unterminated quoted field"}},
		{"benchmark on one agent's row only", "p.csv", hdr + "A,1,m,c,0.5,0.4,1\nB,1,m,c,0.5,,1\n", []string{"line 3: benchmark empty", "conflicts with line 2 (0.4)"}},
		{"conflicting outcomes", "x.csv", hdr + "A,1,m,c,0.5,,1\nB,1,m,c,0.5,,0\n", []string{"line 3: outcome 0"}},
		{"duplicate forecast", "x.csv", hdr + "A,1,m,c,0.5,,1\nA,1,m,c,0.6,,1\n", []string{"line 3: agent \"A\" forecasts market \"m\" in round \"1\" twice (also line 2)"}},
		{"several problems", "s.csv", hdr + "A,1,m,c,2,,1\nA,1,n,c,0.5,,1\nA,1,o,c,0.5,,7\n", []string{"2 invalid row(s)", "line 2", "line 4"}},
		{"jsonl unknown key", "u.jsonl", `{"agent":"A","round":1,"market":"m","forecast":0.5,"outcome":1,"confidence":3}` + "\n", []string{"line 1", `unknown field "confidence"`}},
		{"jsonl missing key", "u.jsonl", `{"agent":"A","round":1,"market":"m","outcome":1}` + "\n", []string{"line 1: missing key(s) forecast"}},
		{"jsonl bad json", "u.jsonl", `{"agent":"A","round":1,"market":"m","forecast":0.5,"outcome":1}` + "\n{\"agent\":\n", []string{"line 2"}},
		{"jsonl outcome", "u.jsonl", `{"agent":"A","round":1,"market":"m","forecast":0.5,"outcome":0.5}` + "\n", []string{"line 1: outcome 0.5 is not 0 or 1"}},
		{"jsonl empty", "u.jsonl", "\n", []string{"no data rows"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := cli(t, nil, "score", "--in", writeFile(t, tc.file, tc.content))
			if err == nil {
				t.Fatal("accepted")
			}
			if arena.ErrorKind(err) != arena.EINVALID {
				t.Errorf("kind %q, want invalid: %v", arena.ErrorKind(err), err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	_, _, err := cli(t, nil, "score")
	if err == nil || !strings.Contains(err.Error(), "--in FILE is required") {
		t.Errorf("no --in: %v", err)
	}
	_, _, err = cli(t, nil, "score", "--in", filepath.Join(t.TempDir(), "nope.csv"))
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	_, _, err = cli(t, nil, "score", "--in", writeFile(t, "x.csv", handCSV), "--format", "xml")
	if err == nil {
		t.Error("bad format accepted")
	}
}

// Edge cases that are valid: reported with undefined (null) figures, no crash.
func TestScoreValidEdgeCases(t *testing.T) {
	t.Parallel()
	hdr := "agent,round,market,category,forecast,benchmark,outcome,event\n"
	// One round with one market: SE, t, p null.
	r := runScoreJSON(t, "--in", writeFile(t, "one.csv", hdr+"A,1,m,c,0.7,0.5,1,\n"))
	if a := r["A"]; a.N != 1 || a.Rounds != 1 || a.BrierSE != nil || a.AlphaSE != nil || a.T != nil || a.P != nil || math.Abs(*a.Alpha-0.16) > 1e-15 {
		t.Errorf("one market: %+v", a)
	}
	// Benchmarks on some markets only: α over those, the rest Brier only.
	r = runScoreJSON(t, "--in", writeFile(t, "some.csv", hdr+"A,1,m,c,0.8,0.6,1,e1\nA,1,n,c,0.3,,0,e1\nA,2,o,c,0.4,,0,\n"))
	if a := r["A"]; a.N != 3 || a.Rounds != 2 || a.Alpha == nil || math.Abs(*a.Alpha-0.12) > 1e-15 || a.AlphaSE != nil {
		t.Errorf("partial benchmarks: %+v", a)
	}
	if m := r["market"]; m.N != 1 {
		t.Errorf("market baseline: %+v", m)
	}
	// No benchmark at all: alpha, beat% null; no market agent.
	r = runScoreJSON(t, "--in", writeFile(t, "nob.csv", hdr+"A,1,m,c,0.8,,1,\nA,2,n,c,0.3,,0,\n"))
	if _, ok := r["market"]; ok || r["A"].Alpha != nil || r["A"].BeatPct != nil || r["A"].BrierSE == nil {
		t.Errorf("no benchmarks: %+v", r)
	}
	// All-identical forecasts: DSC 0, one bin.
	var b strings.Builder
	b.WriteString(hdr)
	for i := range 40 {
		fmt.Fprintf(&b, "A,%d,m%d,c,0.25,0.25,%d,\n", i/4, i, i%2)
	}
	r = runScoreJSON(t, "--in", writeFile(t, "same.csv", b.String()))
	a := r["A"]
	var bins []stats.Bin
	json.Unmarshal(a.Murphy["bins"], &bins)
	if a.CORP["dsc"] != 0 || len(bins) != 1 || a.T != nil || *a.Alpha != 0 {
		t.Errorf("identical forecasts: %+v bins %v", a, bins)
	}
	// CRLF, BOM, quoted fields with newlines and doubled quotes, scientific notation.
	crlf := "\xef\xbb\xbfAgent,Round,Market,Category,Forecast,Benchmark,Outcome\r\n" +
		"A,1,m,\"multi\r\nline \"\"cat\"\"\",5e-1,,1\r\n" +
		"A,2,n,x,0.25,,0.0\r\n"
	r = runScoreJSON(t, "--in", writeFile(t, "crlf.txt", crlf))
	if a := r["A"]; a.N != 2 || math.Abs(a.Brier-(0.25+0.0625)/2) > 1e-15 {
		t.Errorf("crlf: %+v", a)
	}
}

// ---- benchmarks ----

// bigScoreCSV writes a 1,000,000-row S7 file: 10 agents × 100,000
// predictions in rounds of 7 markets, with benchmarks and events. It goes
// in the benchmark's temporary directory, removed when the benchmark ends
// (a file shared by the run's benchmarks was left behind, 57 MB a run).
func bigScoreCSV(b *testing.B) string {
	path := filepath.Join(b.TempDir(), "scores.csv")
	if err := writeBenchCSV(path, 100_000); err != nil {
		b.Fatal(err)
	}
	return path
}

// BenchmarkScoreEndToEnd runs `arena score --format json` on the
// 1,000,000-row CSV and reports its time as a ratio to a bare encoding/csv
// read of the same file (goal: ≤ 1.3). Each iteration times one bare read,
// one read of the scores file alone (scoreio, no analysis) and one scoring
// run back to back, so load from other processes hits them alike; ns/op
// counts the scoring run only.
func BenchmarkScoreEndToEnd(b *testing.B) {
	path := bigScoreCSV(b)
	env := &Env{Stdout: io.Discard, Stderr: io.Discard, Getwd: os.Getwd}
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	var bare, scored, bareCPU, scoredCPU, read, readCPU time.Duration
	minBare, minScored := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		runtime.GC() // each side starts from the same heap
		start, c0 := time.Now(), cpuTime()
		n, err := bareCSVRead(path)
		if err != nil || n != 1_000_001 {
			b.Fatalf("bare read: %d records, %v", n, err)
		}
		d := time.Since(start)
		bare, bareCPU = bare+d, bareCPU+cpuTime()-c0
		minBare = min(minBare, d)
		runtime.GC()
		restore := batchGC() // as the scoring run reads
		start, c0 = time.Now(), cpuTime()
		if _, err := readScores(context.Background(), path); err != nil {
			b.Fatal(err)
		}
		read, readCPU = read+time.Since(start), readCPU+cpuTime()-c0
		restore()
		runtime.GC()
		b.StartTimer()
		start, c0 = time.Now(), cpuTime()
		if err := Main(context.Background(), env, []string{"score", "--in", path, "--format", "json"}); err != nil {
			b.Fatal(err)
		}
		d = time.Since(start)
		scored, scoredCPU = scored+d, scoredCPU+cpuTime()-c0
		minScored = min(minScored, d)
	}
	b.ReportMetric(float64(bare.Milliseconds())/float64(b.N), "bare_csv_ms")
	// ratio_vs_csv: total wall time of scoring over that of the bare read;
	// ratio_best: the fastest run of each; ratio_cpu: process CPU time
	// (all threads) of each, which load from other processes barely moves.
	b.ReportMetric(float64(scored)/float64(bare), "ratio_vs_csv")
	b.ReportMetric(float64(minScored)/float64(minBare), "ratio_best")
	b.ReportMetric(float64(scoredCPU)/float64(bareCPU), "ratio_cpu")
	// read_ratio, read_ratio_cpu: the read alone, wall and CPU time, over
	// the bare read's; the rest of the scoring run is the analysis.
	b.ReportMetric(float64(read)/float64(bare), "read_ratio")
	b.ReportMetric(float64(readCPU)/float64(bareCPU), "read_ratio_cpu")
	b.ReportMetric(float64(b.N)*1e6/scored.Seconds(), "rows/s")
}

// cpuTime is the CPU time (user + system, all threads) used by this process.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkBareCSVRead is the baseline on its own.
func BenchmarkBareCSVRead(b *testing.B) {
	path := bigScoreCSV(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	for b.Loop() {
		if _, err := bareCSVRead(path); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScoreParse is the hand-rolled reader alone.
func BenchmarkScoreParse(b *testing.B) {
	path := bigScoreCSV(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	for b.Loop() {
		if _, err := scoreio.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	}
}

// pandasScore is the same file scored the way a pandas user would: the
// CSV read, squared errors, per-(agent, round) means, per-agent mean and
// standard deviation of the round Brier and Alpha. It is a subset of what
// `arena score` computes (no Murphy, CORP, clustering or power). It prints
// the seconds its read and arithmetic took, in wall and CPU time (the
// interpreter's start and the import of pandas left out), then each
// agent's Brier and Alpha.
const pandasScore = `
import sys, time
import pandas as pd
t0, c0 = time.perf_counter(), time.process_time()
ids = {c: str for c in ("agent", "round", "market", "category", "event")}
d = pd.read_csv(sys.argv[1], dtype=ids, keep_default_na=False, na_values={"benchmark": [""]})
d["se"] = (d["forecast"] - d["outcome"]) ** 2
d["be"] = (d["benchmark"] - d["outcome"]) ** 2
r = d.groupby(["agent", "round"], sort=False).agg(brier=("se", "mean"), base=("be", "mean"))
r["alpha"] = r["base"] - r["brier"]
a = r.groupby(level=0).agg(brier=("brier", "mean"), brier_sd=("brier", "std"), alpha=("alpha", "mean"), alpha_sd=("alpha", "std"), rounds=("brier", "size"))
print(time.perf_counter() - t0, time.process_time() - c0)
for agent, row in a.iterrows():
    print(agent, repr(row["brier"]), repr(row["alpha"]))
`

// BenchmarkScoreVsPandas times `arena score --format json` and the pandas
// pipeline above on the 1,000,000-row CSV, alternately, and reports the
// speed-up (goal: ≥ 4) on the fastest run of each. It checks that both
// find the same Brier and Alpha per agent. The interpreter is
// $ARENA_BENCH_PYTHON, python3 when unset; skipped when it lacks pandas.
func BenchmarkScoreVsPandas(b *testing.B) {
	python := cmp.Or(os.Getenv("ARENA_BENCH_PYTHON"), "python3")
	if err := exec.Command(python, "-c", "import pandas").Run(); err != nil {
		b.Skipf("%s with pandas: %v", python, err)
	}
	path := bigScoreCSV(b)
	st, _ := os.Stat(path)
	b.SetBytes(st.Size())
	var out strings.Builder
	env := &Env{Stdout: &out, Stderr: io.Discard, Getwd: os.Getwd}
	minPandas, minProcess, minScored := time.Duration(math.MaxInt64), time.Duration(math.MaxInt64), time.Duration(math.MaxInt64)
	var pandasCPU, scoredCPU time.Duration
	for b.Loop() {
		b.StopTimer()
		start := time.Now()
		py, err := exec.Command(python, "-c", pandasScore, path).Output()
		if err != nil {
			b.Fatalf("pandas: %v", err)
		}
		minProcess = min(minProcess, time.Since(start))
		lines := strings.Split(strings.TrimSpace(string(py)), "\n")
		var secs, cpuSecs float64
		if _, err := fmt.Sscan(lines[0], &secs, &cpuSecs); err != nil {
			b.Fatalf("pandas: %q: %v", py, err)
		}
		minPandas = min(minPandas, time.Duration(secs*float64(time.Second)))
		pandasCPU += time.Duration(cpuSecs * float64(time.Second))
		runtime.GC()
		out.Reset()
		b.StartTimer()
		start, c0 := time.Now(), cpuTime()
		if err := Main(context.Background(), env, []string{"score", "--in", path, "--format", "json"}); err != nil {
			b.Fatal(err)
		}
		minScored = min(minScored, time.Since(start))
		scoredCPU += cpuTime() - c0
		b.StopTimer()
		var res []scoreJSON
		if err := json.Unmarshal([]byte(out.String()), &res); err != nil {
			b.Fatal(err)
		}
		byAgent := map[string]scoreJSON{}
		for _, r := range res {
			byAgent[r.Agent] = r
		}
		for _, l := range lines[1:] {
			var name string
			var brier, alpha float64
			if _, err := fmt.Sscan(l, &name, &brier, &alpha); err != nil {
				b.Fatalf("pandas line %q: %v", l, err)
			}
			r, ok := byAgent[name]
			if !ok || r.Alpha == nil || math.Abs(r.Brier-brier) > 1e-12 || math.Abs(*r.Alpha-alpha) > 1e-12 {
				b.Fatalf("%s: pandas Brier %v Alpha %v, arena %+v", name, brier, alpha, r)
			}
		}
		b.StartTimer()
	}
	// x_pandas: the pandas read and arithmetic alone over the scoring run;
	// x_pandas_process: the whole Python process (start, import, read,
	// arithmetic), what a user of the script waits for; x_pandas_cpu: the
	// CPU time of the first over that of the second, which load from
	// other processes barely moves.
	b.ReportMetric(float64(minPandas.Milliseconds()), "pandas_ms")
	b.ReportMetric(float64(minPandas)/float64(minScored), "x_pandas")
	b.ReportMetric(float64(minProcess)/float64(minScored), "x_pandas_process")
	b.ReportMetric(float64(pandasCPU)/float64(scoredCPU), "x_pandas_cpu")
}
