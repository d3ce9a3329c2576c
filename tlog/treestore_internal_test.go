package tlog

import (
	"context"
	"fmt"
	"testing"

	"github.com/forecast-arena/arena/internal/store/storetest"
)

// A Log keeps no more tiles in memory than its cache and its edge, one
// tile per level, however many it reads: here every tile of 1,300
// entries and a proof of each, with a cache of 2.
func TestLogMemoryBound(t *testing.T) {
	ctx := context.Background()
	l := &Log{Store: storetest.Open(t, "sqlite"), TileCache: 2}
	const n = 1300
	for i := range n {
		if err := l.Append(ctx, KindScore, i); err != nil {
			t.Fatal(err)
		}
	}
	for i := range uint64(n) {
		if _, err := l.Inclusion(ctx, i, n); err != nil {
			t.Fatal(err)
		}
	}
	for i := range n / 256 {
		if _, _, err := l.Tile(ctx, fmt.Sprintf("tile/0/%03d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	tree, _, err := l.sync(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cache := tree.full.(*storedTiles).cache
	if got := cache.order.Len(); got != 2 || len(cache.byKey) != 2 {
		t.Fatalf("%d tiles cached (%d keys), want the cache's 2", got, len(cache.byKey))
	}
	if len(tree.edge) != 2 {
		t.Fatalf("an edge of %d tiles for %d entries, want 2", len(tree.edge), n)
	}
	held := int64(0)
	for e := cache.order.Front(); e != nil; e = e.Next() {
		held += int64(cap(e.Value.(*cachedTile).tile.stored)) * hashSize
	}
	for _, e := range tree.edge {
		held += int64(cap(e.stored)) * hashSize
	}
	if bound := memoryBound(2, n) - fixedMemory; held > bound {
		t.Fatalf("the tiles held have %d bytes of hashes, beyond the bound's %d", held, bound)
	}
}
