package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"text/tabwriter"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"gonum.org/v1/gonum/floats"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/stats"
	"github.com/forecast-arena/arena/stats/scoreio"
)

func init() {
	register("bench", "measure throughput against baselines measured in the same run", runBench)
}

// benchResult is one measured figure and, where it has one, its ratio to
// a baseline timed in the same run.
type benchResult struct {
	Name       string  `json:"name"`
	Throughput float64 `json:"throughput"`
	Unit       string  `json:"unit"`
	Baseline   string  `json:"baseline,omitempty"`
	Ratio      float64 `json:"ratio,omitempty"` // time of this over time of the baseline (≥ 1 is slower)
}

func runBench(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "bench", "[--rows N] [--format table|json]")
	rows := fs.Int("rows", 1_000_000, "rows of the generated forecasts CSV for the end-to-end scoring run")
	format := fs.String("format", "table", "output format: table or json")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if err := checkFormat(*format, "table", "json"); err != nil {
		return err
	}
	if *rows < 1000 || *rows > 50_000_000 {
		return fmt.Errorf("--rows %d: want 1000..50000000", *rows)
	}
	score, err := benchScore(ctx, env, *rows)
	if err != nil {
		return err
	}
	kernel := benchKernel()
	sig, err := benchCommitVerification()
	if err != nil {
		return err
	}
	out := []benchResult{score, kernel, sig}
	if *format == "json" {
		return writeJSON(env.Stdout, out)
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "BENCHMARK\tTHROUGHPUT\tBASELINE\tTIME vs BASELINE")
	for _, o := range out {
		ratio := "-"
		if o.Baseline != "" {
			ratio = fmt.Sprintf("%.2f×", o.Ratio)
		}
		fmt.Fprintf(tw, "%s\t%.4g %s\t%s\t%s\n", o.Name, o.Throughput, o.Unit, o.Baseline, ratio)
	}
	tw.Flush()
	fmt.Fprintf(env.Stdout, "\nTIME vs BASELINE: this benchmark's time over the baseline's on the same work; 2.00× takes twice as long, below 1× is faster.\n")
	fmt.Fprintf(env.Stdout, "%d rows, GOMAXPROCS %d. The HTTP commit path and the decision run are measured by `go test -bench` in web and trading.\n", *rows/10*10, runtime.GOMAXPROCS(0))
	return nil
}

// benchScore times `arena score --in FILE` (the command: the streamed
// read, the analysis, the table written to nowhere) on a generated file of
// about rows rows, against a bare encoding/csv read of the same file; best
// of five each, alternated so load hits both alike.
func benchScore(ctx context.Context, env *Env, rows int) (benchResult, error) {
	dir, err := os.MkdirTemp("", "arena-bench-")
	if err != nil {
		return benchResult{}, err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "forecasts.csv")
	if err := writeBenchCSV(path, rows/10); err != nil {
		return benchResult{}, err
	}
	// The file is our own: its size may pass the bound on a user's file
	// (--rows may exceed it).
	if st, err := os.Stat(path); err == nil && st.Size() > scoreio.MaxFileBytes {
		defer func(b int64) { scoreio.MaxFileBytes = b }(scoreio.MaxFileBytes)
		scoreio.MaxFileBytes = st.Size()
	}
	quiet := &Env{Stdout: io.Discard, Stderr: io.Discard, Environ: env.Environ, Getwd: env.Getwd}
	var bare, scored time.Duration = math.MaxInt64, math.MaxInt64
	for range 5 {
		runtime.GC()
		start := time.Now()
		if _, err := bareCSVRead(path); err != nil {
			return benchResult{}, err
		}
		bare = min(bare, time.Since(start))
		runtime.GC()
		start = time.Now()
		if err := runScore(ctx, quiet, []string{"--in", path}); err != nil {
			return benchResult{}, err
		}
		scored = min(scored, time.Since(start))
	}
	n := float64(rows / 10 * 10)
	return benchResult{Name: "arena score end to end", Throughput: n / scored.Seconds(), Unit: "rows/s",
		Baseline: "encoding/csv read", Ratio: float64(scored) / float64(bare)}, nil
}

// benchKernel times the per-round Brier/Alpha kernel on one core against
// the same three figures from gonum's floats.Distance, one pass per
// distance.
func benchKernel() benchResult {
	p, b, x := make([]float64, 7), make([]float64, 7), make([]float64, 7)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range p {
		p[i], b[i], x[i] = r.Float64(), r.Float64(), float64(r.IntN(2))
	}
	var sink float64 // the figures are summed so that no call is optimised away
	iters, el := timeLoop(func() {
		brier, base, alpha := stats.RoundBrierAlpha(p, b, x)
		sink += brier + base + alpha
	})
	giters, gel := timeLoop(func() {
		n := float64(len(p))
		da, db := floats.Distance(p, x, 2), floats.Distance(b, x, 2)
		brier, base := da*da/n, db*db/n
		sink += brier + base + (base - brier)
	})
	kRate, gRate := float64(iters*7)/el.Seconds(), float64(giters*7)/gel.Seconds()
	return benchResult{Name: "round Brier/Alpha kernel", Throughput: kRate, Unit: "forecasts/s",
		Baseline: "gonum floats.Distance", Ratio: gRate / kRate}
}

// benchCommitVerification times a signed commit's verification (EIP-712
// digest, recovery, checks) against bare go-ethereum Ecrecover.
func benchCommitVerification() (benchResult, error) {
	key, _ := crypto.GenerateKey()
	d := forecast.Domain{}
	msg := forecast.Commit{RoundID: 1, CommitHash: common.Hash{1}, Agent: crypto.PubkeyToAddress(key.PublicKey), Nonce: 0, Deadline: 1 << 40}
	sig, err := forecast.Sign(key, d.CommitDigest(msg))
	if err != nil {
		return benchResult{}, err
	}
	digest := d.CommitDigest(msg)
	ecIters, ecEl := timeLoop(func() { crypto.Ecrecover(digest[:], toRecoverable(sig)) })
	vIters, vEl := timeLoop(func() {
		if err := d.VerifyCommit(msg, sig); err != nil {
			panic(err)
		}
	})
	ecRate, vRate := float64(ecIters)/ecEl.Seconds(), float64(vIters)/vEl.Seconds()
	return benchResult{Name: "signed commit verification", Throughput: vRate, Unit: "commits/s",
		Baseline: "go-ethereum Ecrecover", Ratio: ecRate / vRate}, nil
}

// toRecoverable turns our v ∈ {27,28} signature into Ecrecover's v ∈ {0,1}.
func toRecoverable(sig []byte) []byte {
	s := append([]byte(nil), sig...)
	s[64] -= 27
	return s
}

// timeLoop runs f for about half a second and returns the iterations and
// the time they took.
func timeLoop(f func()) (int, time.Duration) {
	start := time.Now()
	n := 0
	for time.Since(start) < 500*time.Millisecond {
		for range 64 {
			f()
		}
		n += 64
	}
	return n, time.Since(start)
}

// writeBenchCSV writes a deterministic score-file forecasts file: 10 agents of
// graded skill on each of markets markets, 7 a round.
func writeBenchCSV(path string, markets int) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString("agent,round,market,category,forecast,benchmark,outcome,event\n")
	r := rand.New(rand.NewPCG(42, 42))
	cats := []string{"politics", "crypto", "sports", "economics", "geopolitics"}
	const agents, k = 10, 7
	for m := range markets {
		q := r.Float64()
		bmk := math.Round(min(max(q+r.NormFloat64()*0.1, 0.01), 0.99)*1000) / 1000
		x := 0
		if r.Float64() < q {
			x = 1
		}
		for a := range agents {
			p := math.Round(min(max(q+r.NormFloat64()*0.05*float64(a+1), 0), 1)*10000) / 10000
			fmt.Fprintf(w, "agent-%02d,%d,mkt-%06d,%s,%g,%g,%d,ev-%d\n", a, m/k, m, cats[m%5], p, bmk, x, m/3)
		}
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// bareCSVRead is the baseline: encoding/csv reading every record of the
// file (reusing the record slice, its fastest mode), doing nothing else.
func bareCSVRead(path string) (int, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	cr := csv.NewReader(bufio.NewReaderSize(f, 1<<20))
	cr.ReuseRecord = true
	n := 0
	for {
		_, err := cr.Read()
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n++
	}
}
