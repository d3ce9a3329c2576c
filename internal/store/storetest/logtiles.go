package storetest

import (
	"bytes"
	"context"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// The log's full hash tiles: none stored at first; saved tiles come back
// by level and range, in order, the missing ones left out; a tile saved
// again, even with other bytes, keeps its first (tiles are functions of
// the entries: a second copy is the same); 8 servers saving overlapping
// batches at once all succeed and store each tile once; a batch with a
// tile that is not 256 hashes, or of a level beyond 63, is EINVALID and
// stores nothing.
func testLogTiles(t *testing.T, db *store.DB) {
	ctx := context.Background()
	tile := func(level int, n uint64, b byte) arena.LogTile {
		h := bytes.Repeat([]byte{b}, arena.LogTileWidth*32)
		h[0], h[len(h)-1] = byte(level), byte(n) // bytes, not text: 0x00 and 0xff included
		return arena.LogTile{Level: level, N: n, Hashes: h}
	}
	read := func(level int, from, to uint64) []arena.LogTile {
		t.Helper()
		ts, err := db.LogTiles(ctx, level, from, to)
		if err != nil {
			t.Fatal(err)
		}
		return ts
	}
	same := func(got, want []arena.LogTile) bool {
		if len(got) != len(want) {
			return false
		}
		for i := range got {
			if got[i].Level != want[i].Level || got[i].N != want[i].N || !bytes.Equal(got[i].Hashes, want[i].Hashes) {
				return false
			}
		}
		return true
	}
	if ts := read(0, 0, 1<<40); len(ts) != 0 {
		t.Fatalf("%d tiles in an empty store", len(ts))
	}
	a0, a1, a3, b0 := tile(0, 0, 0xff), tile(0, 1, 0), tile(0, 3, 7), tile(1, 0, 9)
	if err := db.SaveLogTiles(ctx, []arena.LogTile{a0, a1, a3, b0}); err != nil {
		t.Fatal(err)
	}
	if err := db.SaveLogTiles(ctx, nil); err != nil {
		t.Fatalf("saving no tiles: %v", err)
	}
	for _, c := range []struct {
		level    int
		from, to uint64
		want     []arena.LogTile
	}{
		{0, 0, 10, []arena.LogTile{a0, a1, a3}},
		{0, 1, 3, []arena.LogTile{a1}},
		{0, 2, 3, nil},
		{0, 3, 1<<64 - 1, []arena.LogTile{a3}},
		{1, 0, 1, []arena.LogTile{b0}},
		{2, 0, 10, nil},
		{0, 5, 2, nil},
	} {
		if got := read(c.level, c.from, c.to); !same(got, c.want) {
			t.Errorf("tiles [%d, %d) of level %d: %d tiles, want %d", c.from, c.to, c.level, len(got), len(c.want))
		}
	}
	// A tile saved again keeps its first bytes, in a batch with a new one.
	a2 := tile(0, 2, 2)
	if err := db.SaveLogTiles(ctx, []arena.LogTile{tile(0, 1, 5), a2}); err != nil {
		t.Fatal(err)
	}
	if got := read(0, 0, 10); !same(got, []arena.LogTile{a0, a1, a2, a3}) {
		t.Fatalf("after saving tile 1 again: %d tiles, or tile 1 changed", len(got))
	}
	// Refused batches store nothing, not even their good tiles.
	for name, bad := range map[string]arena.LogTile{
		"a short tile":       {Level: 0, N: 5, Hashes: make([]byte, 32*255)},
		"a long tile":        {Level: 0, N: 5, Hashes: make([]byte, 32*257)},
		"level 64":           {Level: 64, N: 0, Hashes: make([]byte, 32*256)},
		"a negative level":   {Level: -1, N: 0, Hashes: make([]byte, 32*256)},
		"a number past 2^63": {Level: 0, N: 1 << 63, Hashes: make([]byte, 32*256)},
	} {
		if err := db.SaveLogTiles(ctx, []arena.LogTile{tile(0, 4, 4), bad}); arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("%s: %v, want EINVALID", name, err)
		}
		if got := read(0, 4, 6); len(got) != 0 {
			t.Fatalf("%s: a refused batch stored %d tiles", name, len(got))
		}
	}
	// Servers storing the tiles they filled at once, overlapping.
	var all []arena.LogTile
	for n := range uint64(40) {
		all = append(all, tile(3, n, byte(n)))
	}
	race(t, 8, func(i int) (bool, error) {
		return true, db.SaveLogTiles(ctx, all[i*4:i*4+8])
	})
	if got := read(3, 0, 100); !same(got, all[:36]) {
		t.Fatalf("after 8 concurrent batches: %d tiles of level 3, want 36 as saved", len(got))
	}
}
