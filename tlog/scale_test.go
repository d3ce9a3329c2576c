package tlog_test

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	sumdb "golang.org/x/mod/sumdb/tlog"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
)

// scaleResult is what a child process of BenchmarkLogAtScale measured.
type scaleResult struct {
	Size       uint64
	OpenMs     float64 // the first sync (tiles) or reading every leaf hash (memory)
	RSS, HWM   int64   // VmRSS and VmHWM of the process, bytes
	HeapInuse  int64   // after a GC, the tree still in use
	TreeHeap   int64   // HeapInuse less the same before the tree was made
	Inclusion  []float64
	Consistent []float64
	Tiles      []float64 // µs per full tile of level 0 served (tiles only)
}

// BenchmarkLogAtScale appends ARENA_BENCH_LOG_ENTRIES entries (200,000
// unless set; docs/development.md gives the figures at 10,000,000) to a
// log in a real SQLite store, one transaction each as serve appends them,
// syncing the log every 10,000 as its publisher does, then measures in a
// fresh process each, as serve would open them:
//   - the log as it is: the right edge in memory, the rest in stored
//     tiles (its bound checked: the heap the tree keeps must stay within
//     it);
//   - the baseline: the log as it was, every stored hash in memory
//     (x/mod's layout, 64 bytes per entry), each proof after reading the
//     log's size as its sync did.
//
// With ARENA_BENCH_LOG_REBUILD=1 it then deletes every stored tile and
// times the first sync of a log that has none, which stores them all.
//
// Each proves ARENA_BENCH_LOG_PROOFS (2,000) inclusions and consistencies
// at random indices in the whole tree and reports RSS, heap and proof
// latency (p50/p99). Run it alone: go test -run '^$' -bench LogAtScale
// -benchtime 1x ./tlog/.
func BenchmarkLogAtScale(b *testing.B) {
	n := envInt(b, "ARENA_BENCH_LOG_ENTRIES", 200_000)
	proofs := envInt(b, "ARENA_BENCH_LOG_PROOFS", 2000)
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "arena.db")
	db, err := store.Open(ctx, "sqlite:"+path, store.Unsynced())
	if err != nil {
		b.Fatal(err)
	}
	l := &tlog.Log{Store: db}
	began := time.Now()
	for i := range n {
		if err := l.Append(ctx, tlog.KindScore, map[string]int{"round": i / 1000, "agent": i % 1000}); err != nil {
			b.Fatal(err)
		}
		if (i+1)%10_000 == 0 || i == n-1 {
			if _, err := l.Size(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	appendRate := float64(n) / time.Since(began).Seconds()
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	tiles := runScaleChild(b, "tiles", path, proofs)
	mem := runScaleChild(b, "memory", path, proofs)
	bound := tlog.MemoryBound(0, uint64(n))
	if os.Getenv("ARENA_BENCH_LOG_REBUILD") == "1" {
		// A log whose tiles were never stored (kept by a version that
		// held every hash in memory) gets them at its first sync.
		raw, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			b.Fatal(err)
		}
		_, err = raw.Exec(`DELETE FROM log_tiles`)
		raw.Close()
		if err != nil {
			b.Fatal(err)
		}
		rebuilt := runScaleChild(b, "tiles", path, 1)
		b.ReportMetric(float64(n)/rebuilt.OpenMs*1000, "rebuilt_entries/s")
		b.Logf("tiles of %d entries stored again from the entries in %.1f s", n, rebuilt.OpenMs/1000)
	}

	mib := func(x int64) float64 { return float64(x) / (1 << 20) }
	b.ReportMetric(appendRate, "appends/s")
	b.ReportMetric(mib(tiles.RSS), "tiles_RSS_MiB")
	b.ReportMetric(mib(tiles.HeapInuse), "tiles_heap_MiB")
	b.ReportMetric(mib(tiles.TreeHeap), "tiles_tree_MiB")
	b.ReportMetric(mib(bound), "bound_MiB")
	b.ReportMetric(mib(mem.RSS), "memory_RSS_MiB")
	b.ReportMetric(mib(mem.HeapInuse), "memory_heap_MiB")
	b.ReportMetric(float64(mem.RSS)/float64(tiles.RSS), "RSS_ratio")
	for _, m := range []struct {
		name       string
		tiles, mem []float64
	}{{"inclusion", tiles.Inclusion, mem.Inclusion}, {"consistency", tiles.Consistent, mem.Consistent}} {
		tp50, tp99 := percentile(m.tiles, 50), percentile(m.tiles, 99)
		mp50, mp99 := percentile(m.mem, 50), percentile(m.mem, 99)
		b.ReportMetric(tp50, m.name+"_p50_µs")
		b.ReportMetric(tp99, m.name+"_p99_µs")
		b.ReportMetric(mp50, m.name+"_memory_p50_µs")
		b.ReportMetric(mp99, m.name+"_memory_p99_µs")
		b.Logf("%s proofs: p50 %.0f µs, p99 %.0f µs from tiles; p50 %.0f µs, p99 %.0f µs from memory", m.name, tp50, tp99, mp50, mp99)
	}
	b.ReportMetric(percentile(tiles.Tiles, 50), "tile_p50_µs")
	b.ReportMetric(percentile(tiles.Tiles, 99), "tile_p99_µs")
	b.Logf("%d entries appended at %.0f/s", n, appendRate)
	b.Logf("from tiles: RSS %.1f MiB (peak %.1f), heap in use %.1f MiB, of which the tree %.2f MiB (bound %.2f MiB); opened in %.0f ms; full tiles served in p50 %.0f µs, p99 %.0f µs",
		mib(tiles.RSS), mib(tiles.HWM), mib(tiles.HeapInuse), mib(tiles.TreeHeap), mib(bound), tiles.OpenMs, percentile(tiles.Tiles, 50), percentile(tiles.Tiles, 99))
	b.Logf("every hash in memory: RSS %.1f MiB (peak %.1f), heap in use %.1f MiB, of which the tree %.1f MiB; leaf hashes read and hashed in %.0f ms",
		mib(mem.RSS), mib(mem.HWM), mib(mem.HeapInuse), mib(mem.TreeHeap), mem.OpenMs)
	if tiles.TreeHeap > bound {
		b.Fatalf("the log's tree keeps %d bytes in memory, beyond its bound of %d", tiles.TreeHeap, bound)
	}
}

// runScaleChild runs TestLogScaleChild in a process of its own and
// returns what it measured.
func runScaleChild(b *testing.B, mode, path string, proofs int) scaleResult {
	cmd := exec.Command(os.Args[0], "-test.run=^TestLogScaleChild$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), "ARENA_BENCH_LOG_CHILD="+mode, "ARENA_BENCH_LOG_DB="+path, "ARENA_BENCH_LOG_PROOFS="+strconv.Itoa(proofs))
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s child: %v\n%s", mode, err, out)
	}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		if line, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "RESULT "); ok {
			var r scaleResult
			if err := json.Unmarshal([]byte(line), &r); err != nil {
				b.Fatal(err)
			}
			return r
		}
	}
	b.Fatalf("%s child printed no result:\n%s", mode, out)
	return scaleResult{}
}

// TestLogScaleChild is BenchmarkLogAtScale's measuring process; it runs
// only when the benchmark starts it.
func TestLogScaleChild(t *testing.T) {
	mode := os.Getenv("ARENA_BENCH_LOG_CHILD")
	if mode == "" {
		t.Skip("run by BenchmarkLogAtScale")
	}
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+os.Getenv("ARENA_BENCH_LOG_DB"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	proofs := envInt(t, "ARENA_BENCH_LOG_PROOFS", 2000)
	size, err := db.LogSize(ctx)
	if err != nil || size < 2 {
		t.Fatalf("log of %d entries: %v", size, err)
	}
	// The store's connection and statements are warm before the heap is
	// measured, so that the difference is the tree's.
	if _, err := db.LogEntries(ctx, 0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := db.LogTiles(ctx, 0, 0, 1); err != nil {
		t.Fatal(err)
	}
	before := heapInuse()
	leaf := func(i uint64) []byte {
		es, err := db.LogEntries(ctx, i, i+1)
		if err != nil || len(es) != 1 {
			t.Fatalf("entry %d: %v", i, err)
		}
		return es[0].LeafHash
	}
	var (
		r        scaleResult
		root     func(size uint64) []byte
		prove    func(i, size uint64) ([][]byte, error)
		consists func(old, size uint64) ([][]byte, error)
		tile     func(path string) error
		keep     any
	)
	began := time.Now()
	switch mode {
	case "tiles":
		l := &tlog.Log{Store: db}
		if _, err := l.Size(ctx); err != nil {
			t.Fatal(err)
		}
		root = func(s uint64) []byte { return must(l.RootAt(ctx, s)) }
		prove = func(i, s uint64) ([][]byte, error) { return l.Inclusion(ctx, i, s) }
		consists = func(old, s uint64) ([][]byte, error) { return l.Consistency(ctx, old, s) }
		tile = func(path string) error {
			_, _, err := l.Tile(ctx, path, nil)
			return err
		}
		keep = l
	case "memory":
		ref := reference{hashes: make([]sumdb.Hash, 0, sumdb.StoredHashCount(int64(size)))}
		for from := uint64(0); from < size; from += 10_000 {
			es, err := db.LogEntries(ctx, from, min(size, from+10_000))
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range es {
				hs, err := sumdb.StoredHashesForRecordHash(int64(e.Index), sumdb.Hash(e.LeafHash), &ref)
				if err != nil {
					t.Fatal(err)
				}
				ref.hashes = append(ref.hashes, hs...)
			}
		}
		// As the log did: its sync read the log's size before each proof.
		synced := func() {
			if _, err := db.LogSize(ctx); err != nil {
				t.Fatal(err)
			}
		}
		root = func(s uint64) []byte { return ref.root(t, s) }
		prove = func(i, s uint64) ([][]byte, error) {
			synced()
			p, err := sumdb.ProveRecord(int64(s), int64(i), &ref)
			return unhash(p), err
		}
		consists = func(old, s uint64) ([][]byte, error) {
			synced()
			p, err := sumdb.ProveTree(int64(s), int64(old), &ref)
			return unhash(p), err
		}
		keep = &ref
	default:
		t.Fatalf("mode %q", mode)
	}
	r.Size, r.OpenMs = size, float64(time.Since(began).Microseconds())/1000
	rng := rand.New(rand.NewPCG(5, 6))
	top := root(size)
	for range proofs {
		i := rng.Uint64N(size)
		t0 := time.Now()
		p, err := prove(i, size)
		r.Inclusion = append(r.Inclusion, micros(time.Since(t0)))
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.VerifyInclusion(i, size, leaf(i), p, top); err != nil {
			t.Fatalf("inclusion of %d: %v", i, err)
		}
		old := 1 + rng.Uint64N(size-1)
		t0 = time.Now()
		p, err = consists(old, size)
		r.Consistent = append(r.Consistent, micros(time.Since(t0)))
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.VerifyConsistency(old, size, p, root(old), top); err != nil {
			t.Fatalf("consistency %d → %d: %v", old, size, err)
		}
	}
	if tile != nil {
		// Full tiles of level 0 at random, as clients fetch them.
		for range proofs {
			path := tilePath(sumdb.Tile{H: 8, N: rng.Int64N(int64(size / 256)), W: 256})
			t0 := time.Now()
			if err := tile(path); err != nil {
				t.Fatal(err)
			}
			r.Tiles = append(r.Tiles, micros(time.Since(t0)))
		}
	}
	r.HeapInuse = heapInuse()
	r.TreeHeap = r.HeapInuse - before
	r.RSS, r.HWM = procStatus(t, "VmRSS"), procStatus(t, "VmHWM")
	runtime.KeepAlive(keep)
	out, _ := json.Marshal(r)
	fmt.Printf("RESULT %s\n", out)
}

func heapInuse() int64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return int64(m.HeapInuse)
}

// procStatus reads a size in kB from /proc/self/status, in bytes.
func procStatus(t *testing.T, field string) int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatalf("no %s in /proc/self/status", field)
	return 0
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1000 }

// percentile is the p-th percentile of xs (nearest rank).
func percentile(xs []float64, p float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	return s[min(len(s)-1, int(float64(len(s))*p/100))]
}

func envInt(tb testing.TB, name string, def int) int {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(strings.ReplaceAll(v, "_", ""))
	if err != nil || n < 2 {
		tb.Fatalf("%s=%q: want a number of at least 2", name, v)
	}
	return n
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func unhash(p []sumdb.Hash) [][]byte {
	out := make([][]byte, len(p))
	for i := range p {
		out[i] = p[i][:]
	}
	return out
}
