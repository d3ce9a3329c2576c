package tlog

import (
	"container/list"
	"context"
	"fmt"
	"sync"

	"github.com/forecast-arena/arena"
)

// Store is what a Log is kept in: its entries, and the full hash tiles of
// its tree.
type Store interface {
	arena.LogStore
	arena.LogTileStore
}

// DefaultTileCache is how many full tiles a Log keeps in memory besides
// its tree's right edge, by default: 256 tiles of 16 KiB, 4 MiB.
const DefaultTileCache = 256

// storedTiles keeps a tree's full tiles in a Store, the most recently
// used of them in memory. A tile the store lacks is computed again from
// the log's entries (or the tiles below it) and stored.
type storedTiles struct {
	store Store
	cache *tileCache
}

var _ fullTiles = (*storedTiles)(nil)

func (s *storedTiles) tile(ctx context.Context, l int, n int64) (*hashTile, error) {
	key := [2]int64{int64(l), n}
	if t := s.cache.get(key); t != nil {
		return t, nil
	}
	ts, err := s.store.LogTiles(ctx, l, uint64(n), uint64(n)+1)
	if err != nil {
		return nil, fmt.Errorf("tlog: %w", err)
	}
	var t *hashTile
	if len(ts) == 1 {
		t, err = fullTileOfRow(ts[0].Hashes)
		if err != nil {
			return nil, fmt.Errorf("tlog: stored tile %d of level %d: %w", n, l, err)
		}
	} else if t, err = s.rebuild(ctx, l, n); err != nil {
		return nil, err
	}
	s.cache.add(key, t)
	return t, nil
}

// rebuild computes full tile n of level l from the level below and
// stores it: for a tile a server did not store (it stopped between the
// appends that filled the tile and storing it) or the store lost.
func (s *storedTiles) rebuild(ctx context.Context, l int, n int64) (*hashTile, error) {
	row, err := s.row(ctx, l, n<<tileHeight, tileWidth)
	if err != nil {
		return nil, err
	}
	t, err := fullTileOfRow(row)
	if err != nil {
		return nil, err
	}
	if err := s.save(ctx, []fullTile{{level: l, n: n, tile: t}}); err != nil {
		return nil, err
	}
	return t, nil
}

// row reads w hashes of level 8·l of the tree from index start: the
// entries' leaf hashes for level 0, the tops of the full tiles of level
// l−1 above it.
func (s *storedTiles) row(ctx context.Context, l int, start int64, w int) ([]byte, error) {
	out := make([]byte, 0, w*hashSize)
	if w == 0 {
		return out, nil
	}
	if l == 0 {
		es, err := s.store.LogEntries(ctx, uint64(start), uint64(start)+uint64(w))
		if err != nil {
			return nil, fmt.Errorf("tlog: %w", err)
		}
		if len(es) != w {
			return nil, fmt.Errorf("tlog: %d entries from %d, want %d", len(es), start, w)
		}
		for i, e := range es {
			if e.Index != uint64(start)+uint64(i) || len(e.LeafHash) != hashSize {
				return nil, fmt.Errorf("tlog: entry %d where %d was expected, or its leaf hash is not 32 bytes", e.Index, uint64(start)+uint64(i))
			}
			out = append(out, e.LeafHash...)
		}
		return out, nil
	}
	stored, err := s.store.LogTiles(ctx, l-1, uint64(start), uint64(start)+uint64(w))
	if err != nil {
		return nil, fmt.Errorf("tlog: %w", err)
	}
	for i := range int64(w) {
		var t *hashTile
		if len(stored) > 0 && stored[0].N == uint64(start+i) {
			if t, err = fullTileOfRow(stored[0].Hashes); err != nil {
				return nil, fmt.Errorf("tlog: stored tile %d of level %d: %w", start+i, l-1, err)
			}
			stored = stored[1:]
		} else if t, err = s.tile(ctx, l-1, start+i); err != nil {
			return nil, err
		}
		top := t.top()
		out = append(out, top[:]...)
	}
	return out, nil
}

func (s *storedTiles) keep(ctx context.Context, ts []fullTile) error {
	if err := s.save(ctx, ts); err != nil {
		return err
	}
	// The newest tiles are the likeliest to be asked for: the entries
	// clients look up are mostly recent ones.
	for _, t := range ts {
		s.cache.add([2]int64{int64(t.level), t.n}, t.tile)
	}
	return nil
}

func (s *storedTiles) save(ctx context.Context, ts []fullTile) error {
	tiles := make([]arena.LogTile, len(ts))
	for i, t := range ts {
		tiles[i] = arena.LogTile{Level: t.level, N: uint64(t.n), Hashes: t.tile.row()}
	}
	if err := s.store.SaveLogTiles(ctx, tiles); err != nil {
		return fmt.Errorf("tlog: %w", err)
	}
	return nil
}

// fullTileOfRow is the full tile whose row is data.
func fullTileOfRow(data []byte) (*hashTile, error) {
	if len(data) != tileWidth*hashSize {
		return nil, fmt.Errorf("%d bytes, want %d", len(data), tileWidth*hashSize)
	}
	return tileOfRow(data)
}

// openStoredTree opens the tree of a log of n entries kept in store, its
// full tiles read from the store and at most cache of them kept in
// memory. The tree it returns may be shorter than n: it starts at the
// largest size whose full tiles are all stored, reading the entries after
// its last full tile of level 0 (at most 255) and at most 255 stored
// tiles per level above for its right edge, and the caller appends the
// entries from there (storing the tiles they fill). That is how tiles a
// stopped server did not store are stored again, and how a log kept
// before tiles were stored gets them.
func openStoredTree(ctx context.Context, store Store, n uint64, cache int) (*Tree, error) {
	s := &storedTiles{store: store, cache: newTileCache(cache)}
	m, err := s.resumable(ctx, int64(n))
	if err != nil {
		return nil, err
	}
	var edge []*hashTile
	for l := 0; m>>(tileHeight*l) > 0; l++ {
		hashes := m >> (tileHeight * l)
		w := int(hashes % tileWidth)
		row, err := s.row(ctx, l, hashes-int64(w), w)
		if err != nil {
			return nil, err
		}
		t, err := tileOfRow(row)
		if err != nil {
			return nil, err
		}
		edge = append(edge, t)
	}
	return &Tree{size: m, edge: edge, full: s}, nil
}

// resumable is the largest size up to n whose full tiles are all stored.
// The log stores the tiles of each level in order, each only after those
// before it, so that the stored tiles of a level are a prefix of them.
func (s *storedTiles) resumable(ctx context.Context, n int64) (int64, error) {
	m := n
	for l := 0; n>>(tileHeight*(l+1)) > 0; l++ {
		want := n >> (tileHeight * (l + 1)) // the full tiles of level l
		have, err := s.storedPrefix(ctx, l, want)
		if err != nil {
			return 0, err
		}
		if have < want {
			// The tree of m has tiles 0 … have−1 of level l full.
			m = min(m, (have+1)<<(tileHeight*(l+1))-1)
		}
	}
	return m, nil
}

// storedPrefix is how many of the first want tiles of level l are stored,
// taking those stored to be a prefix: the last, else a binary search.
func (s *storedTiles) storedPrefix(ctx context.Context, l int, want int64) (int64, error) {
	stored := func(n int64) (bool, error) {
		ts, err := s.store.LogTiles(ctx, l, uint64(n), uint64(n)+1)
		if err != nil {
			return false, fmt.Errorf("tlog: %w", err)
		}
		return len(ts) == 1, nil
	}
	lo, hi := int64(0), want // tiles before lo are stored; tile hi is not (or hi = want)
	if ok, err := stored(want - 1); err != nil || ok {
		return want, err
	}
	hi = want - 1
	for lo < hi {
		mid := lo + (hi-lo)/2
		ok, err := stored(mid)
		if err != nil {
			return 0, err
		}
		if ok {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	return lo, nil
}

// tileCache is a least-recently-used cache of full tiles, of its own
// rather than a library's: tlog is imported by clients, which take no
// cache library with it.
type tileCache struct {
	mu    sync.Mutex
	max   int
	order *list.List // of *cachedTile, the most recently used first
	byKey map[[2]int64]*list.Element
}

type cachedTile struct {
	key  [2]int64
	tile *hashTile
}

// newTileCache keeps up to max tiles (DefaultTileCache when max ≤ 0).
func newTileCache(max int) *tileCache {
	if max <= 0 {
		max = DefaultTileCache
	}
	return &tileCache{max: max, order: list.New(), byKey: map[[2]int64]*list.Element{}}
}

func (c *tileCache) get(key [2]int64) *hashTile {
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.byKey[key]
	if e == nil {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*cachedTile).tile
}

func (c *tileCache) add(key [2]int64, t *hashTile) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.byKey[key]; e != nil {
		c.order.MoveToFront(e)
		return
	}
	c.byKey[key] = c.order.PushFront(&cachedTile{key: key, tile: t})
	for c.order.Len() > c.max {
		e := c.order.Back()
		c.order.Remove(e)
		delete(c.byKey, e.Value.(*cachedTile).key)
	}
}

// tileMemory bounds the memory of one tile kept by a Log: at most 512
// hashes (511 for a full tile, fewer at the edge, allocated in powers of
// two) and its bookkeeping (the tile, its cache entry and key).
const tileMemory = 512*hashSize + 256

// fixedMemory bounds what a Log keeps besides its tiles, whatever its
// size: its own fields and the statements and buffers of the store's
// connection its reads use (about 0.2 to 0.3 MiB measured by
// BenchmarkLogAtScale, allocator slack included).
const fixedMemory = 512 << 10

// memoryBound is the most memory a Log of n entries keeps for its tree,
// with a cache of up to cache full tiles: its edge, one tile per level
// (⌈log₂₅₆(n+1)⌉ of them), the cached tiles, and fixedMemory.
func memoryBound(cache int, n uint64) int64 {
	if cache <= 0 {
		cache = DefaultTileCache
	}
	levels := 0
	for ; levels < 8 && n>>(tileHeight*levels) > 0; levels++ {
	}
	return int64(cache+levels)*tileMemory + fixedMemory
}
