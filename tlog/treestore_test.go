package tlog_test

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	sumdb "golang.org/x/mod/sumdb/tlog"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/testscale"
	"github.com/forecast-arena/arena/tlog"
)

// reference is the log's tree as the log kept it before it stored tiles:
// every stored hash of x/mod's layout in memory, appended by x/mod. Its
// tiles are what the log published then, and must publish still.
type reference struct {
	leaves [][]byte
	hashes []sumdb.Hash
}

func (r *reference) append(t testing.TB, leaf []byte) {
	hs, err := sumdb.StoredHashesForRecordHash(int64(len(r.leaves)), sumdb.Hash(leaf), r)
	if err != nil {
		t.Fatal(err)
	}
	r.leaves, r.hashes = append(r.leaves, leaf), append(r.hashes, hs...)
}

func (r *reference) ReadHashes(indexes []int64) ([]sumdb.Hash, error) {
	out := make([]sumdb.Hash, len(indexes))
	for i, x := range indexes {
		out[i] = r.hashes[x]
	}
	return out, nil
}

func (r *reference) root(t testing.TB, size uint64) []byte {
	h, err := sumdb.TreeHash(int64(size), r)
	if err != nil {
		t.Fatal(err)
	}
	return h[:]
}

// tilePath is the C2SP path of a hash tile.
func tilePath(tile sumdb.Tile) string {
	return "tile/" + strings.TrimPrefix(tile.Path(), "tile/8/")
}

// check compares the log at its current size with the reference: the
// roots of every size sampled, every hash tile of the size byte for
// byte, and inclusion and consistency proofs at sampled indices and
// sizes, verified against the reference's roots.
func (r *reference) check(t *testing.T, l *tlog.Log, rng *rand.Rand) {
	t.Helper()
	ctx := context.Background()
	size, err := l.Size(ctx)
	if err != nil || size != uint64(len(r.leaves)) {
		t.Fatalf("log size %d, %v; want %d", size, err, len(r.leaves))
	}
	for _, tile := range sumdb.NewTiles(8, 0, int64(size)) {
		got, full, err := l.Tile(ctx, tilePath(tile), nil)
		if err != nil {
			t.Fatalf("%s at size %d: %v", tilePath(tile), size, err)
		}
		want, err := sumdb.ReadTileData(tile, r)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) || full != (tile.W == 256) {
			t.Fatalf("%s at size %d differs from the tile published before tiles were stored (full %v)", tilePath(tile), size, full)
		}
	}
	root := r.root(t, size)
	if got, err := l.RootAt(ctx, size); err != nil || !bytes.Equal(got, root) {
		t.Fatalf("root of %d: %x, %v; want %x", size, got, err, root)
	}
	for range min(size, 20) {
		s := 1 + rng.Uint64N(size)
		i := rng.Uint64N(s)
		p, err := l.Inclusion(ctx, i, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := tlog.VerifyInclusion(i, s, r.leaves[i], p, r.root(t, s)); err != nil {
			t.Fatalf("inclusion of %d in %d: %v", i, s, err)
		}
		old := rng.Uint64N(s + 1)
		if p, err = l.Consistency(ctx, old, s); err != nil {
			t.Fatal(err)
		}
		if err := tlog.VerifyConsistency(old, s, p, r.root(t, old), r.root(t, s)); err != nil {
			t.Fatalf("consistency %d → %d: %v", old, s, err)
		}
	}
}

// storedTiles checks that the store holds every full tile of the log at
// its size, each as the reference has it.
func (r *reference) storedTiles(t *testing.T, db *store.DB) {
	t.Helper()
	n := int64(len(r.leaves))
	for level := 0; n>>(8*(level+1)) > 0; level++ {
		want := n >> (8 * (level + 1))
		ts, err := db.LogTiles(context.Background(), level, 0, 1<<62)
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(ts)) != want {
			t.Fatalf("%d tiles of level %d stored, want %d", len(ts), level, want)
		}
		for _, s := range ts {
			data, err := sumdb.ReadTileData(sumdb.Tile{H: 8, L: level, N: int64(s.N), W: 256}, r)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(s.Hashes, data) {
				t.Fatalf("stored tile %d of level %d is not the hashes of its entries", s.N, level)
			}
		}
	}
}

// eachEngine runs fn once per engine, as storetest.Each does, for tests
// that open their stores themselves.
func eachEngine(t *testing.T, fn func(t *testing.T, engine string)) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) { fn(t, engine) })
	}
}

// openFast opens a fresh store of engine; SQLite without flushing each
// commit, for the tens of thousands of appends below.
func openFast(t *testing.T, engine string) (*store.DB, string) {
	t.Helper()
	url := storetest.URL(t, engine)
	db, err := store.Open(context.Background(), url, store.Unsynced())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, url
}

// appendEntries appends n entries to the store directly, as the
// submission path does in its own transactions, and to the reference.
func appendEntries(t *testing.T, db *store.DB, r *reference, n int) {
	t.Helper()
	at := time.Unix(1700000000, 0)
	for range n {
		data := fmt.Appendf(nil, `{"kind":"score","data":{"i":%d}}`, len(r.leaves))
		leaf := tlog.LeafHash(data)
		if _, err := db.AppendLog(context.Background(), tlog.KindScore, data, leaf, at); err != nil {
			t.Fatal(err)
		}
		r.append(t, leaf)
	}
}

// The log reads its tree from stored tiles and keeps only its right edge
// and a few tiles in memory, yet publishes the tiles, roots and proofs it
// published when it kept every hash in memory, at every size on the way:
// around tile boundaries and, under ARENA_TEST_FULL, past the first full
// tile of level 1 (65,536 entries). Each tile it fills is stored once,
// the hashes of its entries.
func TestStoredTreeAsBefore(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		db, _ := openFast(t, engine)
		rng := rand.New(rand.NewPCG(1, 2))
		l := &tlog.Log{Store: db, TileCache: 2}
		var r reference
		for _, size := range []int{0, 1, 255, 256, 257, 511, 512, 513, 1300, fullSize(engine, 1300, 65536+300)} {
			appendEntries(t, db, &r, size-len(r.leaves))
			r.check(t, l, rng)
		}
		r.storedTiles(t, db)
		// Another server of the same store reads what this one stored.
		r.check(t, &tlog.Log{Store: db, TileCache: 1}, rng)
	})
}

// fullSize is full on SQLite under ARENA_TEST_FULL, else small: the tiles
// of level 1 work alike on both engines (the store's conformance suite
// checks the engines keep tiles alike), and PostgreSQL appends 65,536
// entries a commit each in about a minute.
func fullSize(engine string, small, full int) int {
	if engine == "sqlite" {
		return testscale.Size(small, full)
	}
	return small
}

// rawDB opens the database behind a store, to do what the store never
// does: lose or damage a tile.
func rawDB(t *testing.T, url string) *sql.DB {
	t.Helper()
	driver, dsn := "pgx", url
	if p, ok := strings.CutPrefix(url, "sqlite:"); ok {
		driver, dsn = "sqlite", "file:"+p+"?_pragma=busy_timeout(10000)"
	}
	raw, err := sql.Open(driver, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { raw.Close() })
	return raw
}

// Tiles not stored heal: entries appended by a server that stopped before
// it stored the tiles they fill (here: appended with no log reading them)
// get their tiles from the next server that opens the log, and so does a
// log kept before tiles were stored. A tile the store lost in the middle
// of the others is computed again from the entries when it is read, and
// stored. A stored tile of the wrong size is an error, not a tile served.
func TestStoredTreeHeals(t *testing.T) {
	eachEngine(t, func(t *testing.T, engine string) {
		ctx := context.Background()
		db, url := openFast(t, engine)
		rng := rand.New(rand.NewPCG(3, 4))
		var r reference
		appendEntries(t, db, &r, 700)
		r.check(t, &tlog.Log{Store: db, TileCache: 2}, rng)
		r.storedTiles(t, db)
		// A server stopped after appending: 3 more full tiles unstored.
		appendEntries(t, db, &r, fullSize(engine, 3*256+10, 65536+3*256+10-700))
		r.check(t, &tlog.Log{Store: db, TileCache: 2}, rng)
		r.storedTiles(t, db)

		raw := rawDB(t, url)
		exec := func(q string) {
			t.Helper()
			if _, err := raw.Exec(q); err != nil {
				t.Fatal(err)
			}
		}
		// Tiles lost in the middle: computed again when read.
		exec(`DELETE FROM log_tiles WHERE (level = 0 AND n IN (1, 2)) OR level = 1`)
		r.check(t, &tlog.Log{Store: db, TileCache: 1}, rng)
		r.storedTiles(t, db)
		// A log whose tiles were never stored, as before they were.
		exec(`DELETE FROM log_tiles`)
		l := &tlog.Log{Store: db}
		r.check(t, l, rng)
		r.storedTiles(t, db)

		// A damaged tile: refused, for every reader that needs it.
		exec(`UPDATE log_tiles SET hashes = ` + map[string]string{"sqlite": "x'00'", "postgres": `'\x00'::bytea`}[engine] + ` WHERE level = 0 AND n = 1`)
		if _, _, err := (&tlog.Log{Store: db, TileCache: 1}).Tile(ctx, "tile/0/001", nil); err == nil || !strings.Contains(err.Error(), "stored tile 1 of level 0") {
			t.Fatalf("a stored tile of 1 byte: %v", err)
		}
	})
}

// Appends, proofs and tiles at once: every proof verifies against the
// root of its size, and every tile is the reference's (run with -race).
func TestStoredTreeConcurrent(t *testing.T) {
	ctx := context.Background()
	db, _ := openFast(t, "sqlite")
	l := &tlog.Log{Store: db, TileCache: 4}
	var r reference
	const n = 1100
	data := make([][]byte, n)
	for i := range data {
		data[i] = fmt.Appendf(nil, `{"kind":"score","data":{"i":%d}}`, i)
		r.append(t, tlog.LeafHash(data[i]))
	}
	var wg sync.WaitGroup
	var appended sync.WaitGroup
	appended.Add(1)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer appended.Done()
		for i := range data {
			if _, err := db.AppendLog(ctx, tlog.KindScore, data[i], r.leaves[i], time.Unix(1700000000, 0)); err != nil {
				t.Error(err)
				return
			}
			if i%50 == 0 {
				if _, err := l.Size(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}
	}()
	done := make(chan struct{})
	go func() { appended.Wait(); close(done) }()
	for g := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 9))
			for {
				select {
				case <-done:
					return
				default:
				}
				size, err := l.Size(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				if size == 0 {
					continue
				}
				s := 1 + rng.Uint64N(size)
				i := rng.Uint64N(s)
				p, err := l.Inclusion(ctx, i, s)
				if err == nil {
					err = tlog.VerifyInclusion(i, s, r.leaves[i], p, r.root(t, s))
				}
				if err != nil {
					t.Errorf("inclusion of %d in %d: %v", i, s, err)
					return
				}
				tile := sumdb.Tile{H: 8, L: 0, N: int64(i / 256), W: int(min(256, s-i/256*256))}
				got, _, err := l.Tile(ctx, tilePath(tile), nil)
				want, _ := sumdb.ReadTileData(tile, &r)
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: %v, or not the reference's", tilePath(tile), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	r.check(t, l, rand.New(rand.NewPCG(5, 6)))
}
