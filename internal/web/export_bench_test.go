package web_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
)

var (
	exportBenchOnce sync.Once
	exportBenchDir  string
	exportBenchErr  error
)

// The export serve publishes with each checkpoint, on a generated
// database of 100 agents × 500 scored rounds of 7 markets with three log
// entries per agent and round (150,000 entries) on SQLite. Each iteration
// is one checkpoint: a round's worth of entries appended (one per agent),
// a checkpoint signed, and the export of the log as it then stands
// published into the database, made from the previous one. Beside it, in
// the same run, the baseline: the whole export written as files.
// Reported: ms per checkpoint, the KiB it stored (parts, nodes and its
// manifest) and of those the KiB beyond the new rows (the appended
// entries' lines), the tables read, the export's size, and the ratios
// time_x_full (a checkpoint's publication over a full export's writing)
// and bytes_x_full (what a checkpoint stored over the export's bytes).
//
//	go test ./internal/web -run '^$' -bench BenchmarkExportPerCheckpoint -benchtime 20x
//
// ARENA_BENCH_AGENTS and ARENA_BENCH_ROUNDS change the size.
func BenchmarkExportPerCheckpoint(b *testing.B) {
	agents, nRounds := envInt("ARENA_BENCH_AGENTS", 100), envInt("ARENA_BENCH_ROUNDS", 500)
	ctx := context.Background()
	// Generated once per process: the framework runs the benchmark more
	// than once, and 5,000 rounds take minutes to generate.
	exportBenchOnce.Do(func() { exportBenchDir, exportBenchErr = os.MkdirTemp("", "arena-export-bench-") })
	if exportBenchErr != nil {
		b.Fatal(exportBenchErr)
	}
	path := filepath.Join(exportBenchDir, "bench.db")
	_, statErr := os.Stat(path)
	db, err := store.Open(ctx, "sqlite:"+path, store.Unsynced())
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	appendEntries := func(n, round int) {
		for a := range n {
			data := fmt.Appendf(nil, `{"kind":"score","data":{"round_id":%d,"agent":"%s","brier_bps2":%d,"alpha_bps2":%d}}`, round, benchAgent(a%agents), 1000000+a, a)
			if _, err := db.AppendLog(ctx, tlog.KindScore, data, tlog.LeafHash(data), at); err != nil {
				b.Fatal(err)
			}
		}
	}
	if os.IsNotExist(statErr) {
		start := time.Now()
		generate(b, db, agents, nRounds, 7)
		for r := range nRounds {
			appendEntries(3*agents, r+1)
		}
		b.Logf("generated %d agents × %d rounds, %d log entries in %s", agents, nRounds, 3*agents*nRounds, time.Since(start).Round(time.Millisecond))
	}
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	lg := &tlog.Log{Store: db, Key: key}
	svc := &rounds.Service{Store: db, Logger: quiet, Now: func() time.Time { return time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC) }}
	src := export.Source{Forecast: svc, Log: lg}
	pub, err := tlog.NewPublisher(lg, "bench.example/log", &tlog.MemCheckpoints{})
	if err != nil {
		b.Fatal(err)
	}
	checkpoint := func() []byte {
		if _, err := pub.Publish(ctx); err != nil {
			b.Fatal(err)
		}
		n, err := pub.Checkpoint(ctx)
		if err != nil {
			b.Fatal(err)
		}
		return n
	}
	// The leaderboard's analysis is computed once, as serve keeps it, so
	// that neither measure includes it.
	if _, _, err := svc.Leaderboard(ctx, rounds.Filter{}); err != nil {
		b.Fatal(err)
	}
	// The baseline: the whole export written as files.
	t0 := time.Now()
	dir := filepath.Join(b.TempDir(), "full")
	if _, err := export.Write(ctx, src, dir, export.Options{Format: export.JSONL, Checkpoint: checkpoint()}); err != nil {
		b.Fatal(err)
	}
	full := time.Since(t0)
	var fullBytes int64
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		if fi, err := e.Info(); err == nil {
			fullBytes += fi.Size()
		}
	}
	// The first publication reads and stores everything (of a size this
	// process has not published yet).
	p := &export.Publisher{Store: db}
	appendEntries(agents, 0)
	t0 = time.Now()
	checkpoint()
	first, err := p.Publish(ctx, src, pub.PublishAt)
	if err != nil || !first.Stored {
		b.Fatalf("first publication: %+v %v", first, err)
	}
	b.Logf("full export: %.1f MiB written in %s; first publication: %d parts, %.1f MiB stored in %s",
		float64(fullBytes)/(1<<20), full.Round(time.Millisecond), first.Parts, float64(first.NewBytes)/(1<<20), time.Since(t0).Round(time.Millisecond))
	var stored, rows, bytes, read int64
	var took time.Duration
	prev := first.Bytes
	b.ResetTimer()
	for i := range b.N {
		b.StopTimer()
		appendEntries(agents, nRounds+1+i)
		checkpoint()
		b.StartTimer()
		t0 := time.Now()
		st, err := p.Publish(ctx, src, pub.PublishAt)
		if err != nil || !st.Stored {
			b.Fatalf("publication %d: %+v %v", i, st, err)
		}
		took += time.Since(t0)
		stored += st.NewBytes + int64(st.Manifest)
		rows += st.Bytes - prev // the new rows (the files made anew every time, meta.json and the checkpoint, aside: they are about as large each time)
		prev = st.Bytes
		bytes += st.Bytes
		read += int64(st.Read)
	}
	b.StopTimer()
	per := took / time.Duration(b.N)
	b.ReportMetric(float64(per)/1e6, "ms/checkpoint")
	b.ReportMetric(float64(stored)/float64(b.N)/1024, "stored_KiB/checkpoint")
	b.ReportMetric(float64(stored-rows)/float64(b.N)/1024, "beyond_rows_KiB/checkpoint")
	b.ReportMetric(float64(read)/float64(b.N), "tables_read/checkpoint")
	b.ReportMetric(float64(bytes)/float64(b.N)/(1<<20), "export_MiB")
	b.ReportMetric(float64(per)/float64(full), "time_x_full")
	b.ReportMetric(float64(stored)/float64(bytes), "bytes_x_full")
}

// TestMain removes the database BenchmarkExportPerCheckpoint generated.
func TestMain(m *testing.M) {
	code := m.Run()
	if exportBenchDir != "" {
		os.RemoveAll(exportBenchDir)
	}
	os.Exit(code)
}
