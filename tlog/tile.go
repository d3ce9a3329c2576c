package tlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"sync"

	sumdb "golang.org/x/mod/sumdb/tlog"

	"github.com/forecast-arena/arena"
)

// C2SP tlog-tiles (https://c2sp.org/tlog-tiles) are golang.org/x/mod's
// sumdb tiles of height 8 (256 hashes wide), with the height left out of
// the path and "entries" in place of "data".
const tileHeight = 8

// maxEntrySize is the largest leaf an entry bundle can carry: each entry
// is prefixed by its length as a big-endian uint16.
const maxEntrySize = 1<<16 - 1

// hashTree keeps the stored hashes of the log's Merkle tree in
// golang.org/x/mod/sumdb/tlog's layout (every complete subtree's hash, in
// the order a log appends them), so tiles, root hashes and consistency
// proofs take O(log n) hashes instead of rehashing the leaves.
type hashTree struct {
	mu     sync.RWMutex
	hashes []sumdb.Hash
	size   int64 // leaves the hashes cover
}

// extend adds the stored hashes of the leaves past the tree's size.
func (t *hashTree) extend(leaves [][]byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for ; t.size < int64(len(leaves)); t.size++ {
		leaf := leaves[t.size]
		if len(leaf) != sumdb.HashSize {
			return fmt.Errorf("tlog: leaf hash %d has %d bytes", t.size, len(leaf))
		}
		hs, err := sumdb.StoredHashesForRecordHash(t.size, sumdb.Hash(leaf), sumdb.HashReaderFunc(t.read))
		if err != nil {
			return fmt.Errorf("tlog: hash leaf %d: %w", t.size, err)
		}
		t.hashes = append(t.hashes, hs...)
	}
	return nil
}

// read is ReadHashes for a caller holding t.mu.
func (t *hashTree) read(indexes []int64) ([]sumdb.Hash, error) {
	out := make([]sumdb.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(t.hashes)) {
			return nil, fmt.Errorf("tlog: stored hash %d of %d", x, len(t.hashes))
		}
		out[i] = t.hashes[x]
	}
	return out, nil
}

// ReadHashes implements sumdb.HashReader.
func (t *hashTree) ReadHashes(indexes []int64) ([]sumdb.Hash, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.read(indexes)
}

// sync brings the stored hashes up to the log's current size and returns
// that size.
func (l *Log) sync(ctx context.Context) (int64, error) {
	leaves, err := l.leaves(ctx)
	if err != nil {
		return 0, err
	}
	if err := l.tree.extend(leaves); err != nil {
		return 0, err
	}
	return int64(len(leaves)), nil
}

// treeHash is the root hash of the first size leaves; the caller has
// synced at least that many.
func (l *Log) treeHash(size int64) ([]byte, error) {
	h, err := sumdb.TreeHash(size, &l.tree)
	if err != nil {
		return nil, fmt.Errorf("tlog: root of size %d: %w", size, err)
	}
	return h[:], nil
}

// RootAt is the root hash of the log's first size entries: ErrRange
// beyond the log.
func (l *Log) RootAt(ctx context.Context, size uint64) ([]byte, error) {
	n, err := l.sync(ctx)
	if err != nil {
		return nil, err
	}
	if size > uint64(n) {
		return nil, ErrRange
	}
	return l.treeHash(int64(size))
}

// proveTree is the RFC 6962 consistency proof from size old to size
// (empty when old is 0 or size: nothing to prove); the caller has synced
// at least size leaves.
func (l *Log) proveTree(old, size int64) ([][]byte, error) {
	if old == 0 || old == size {
		return nil, nil
	}
	p, err := sumdb.ProveTree(size, old, &l.tree)
	if err != nil {
		return nil, fmt.Errorf("tlog: consistency proof %d → %d: %w", old, size, err)
	}
	out := make([][]byte, len(p))
	for i := range p {
		out[i] = p[i][:]
	}
	return out, nil
}

// parseTilePath parses a tile path relative to the log's prefix,
// "tile/<L>/<N>[.p/<W>]" or "tile/entries/<N>[.p/<W>]", into an x/mod
// tile of height 8 (level -1 for an entry bundle).
func parseTilePath(path string) (sumdb.Tile, error) {
	rest, ok := strings.CutPrefix(path, "tile/")
	level, _, _ := strings.Cut(rest, "/")
	if !ok || level == "data" || strings.HasPrefix(level, "+") {
		return sumdb.Tile{}, fmt.Errorf("malformed tile path %q", path)
	}
	if level == "entries" {
		rest = "data" + strings.TrimPrefix(rest, "entries")
	} else if l, err := strconv.Atoi(level); err != nil || l > 63 {
		return sumdb.Tile{}, fmt.Errorf("malformed tile path %q", path)
	}
	// x/mod parses the rest and accepts only the canonical form.
	t, err := sumdb.ParseTilePath("tile/" + strconv.Itoa(tileHeight) + "/" + rest)
	if err != nil {
		return sumdb.Tile{}, fmt.Errorf("malformed tile path %q", path)
	}
	return t, nil
}

// Tile returns the hash tile or entry bundle at path ("tile/<L>/<N>" or
// "tile/entries/<N>", with ".p/<W>" for a partial one) and whether it is
// full (256 wide), hence immutable. A path not in canonical form is
// EINVALID; a tile beyond the log, ENOTFOUND. sealed, when not nil, says
// whether any of a bundle's entries must not be published yet: such a
// bundle is ENOTFOUND until then (its hashes are in the hash tiles).
func (l *Log) Tile(ctx context.Context, path string, sealed func(context.Context, []arena.LogEntry) (bool, error)) (data []byte, full bool, err error) {
	t, err := parseTilePath(path)
	if err != nil {
		return nil, false, arena.Errorf(arena.EINVALID, "tlog: %v", err)
	}
	size, err := l.sync(ctx)
	if err != nil {
		return nil, false, err
	}
	// The tile holds hashes N·256 … N·256+W-1 of its level, each over
	// 256^L leaves: it exists once the log has that many subtrees.
	avail := size >> (tileHeight * max(t.L, 0))
	if t.N < 0 || t.N > avail>>tileHeight || t.N<<tileHeight+int64(t.W) > avail {
		return nil, false, arena.Errorf(arena.ENOTFOUND, "tlog: %s is beyond the log's %d entries", path, size)
	}
	full = t.W == 1<<tileHeight
	if t.L >= 0 {
		data, err := sumdb.ReadTileData(t, &l.tree)
		if err != nil {
			return nil, false, fmt.Errorf("tlog: %s: %w", path, err)
		}
		return data, full, nil
	}
	data, err = l.bundle(ctx, t, sealed)
	return data, full, err
}

// bundle is the entry bundle of tile t: each leaf prefixed by its length.
func (l *Log) bundle(ctx context.Context, t sumdb.Tile, sealed func(context.Context, []arena.LogEntry) (bool, error)) ([]byte, error) {
	start := uint64(t.N) << tileHeight
	es, err := l.Entries(ctx, start, start+uint64(t.W))
	if err != nil {
		return nil, err
	}
	if len(es) != t.W {
		return nil, fmt.Errorf("tlog: %d entries from %d, want %d", len(es), start, t.W)
	}
	if sealed != nil {
		hide, err := sealed(ctx, es)
		if err != nil {
			return nil, err
		}
		if hide {
			return nil, arena.Errorf(arena.ENOTFOUND, "tlog: entries %d to %d are published by their hashes only for now", start, start+uint64(t.W)-1)
		}
	}
	hashes, err := l.tree.ReadHashes(levelZero(start, t.W))
	if err != nil {
		return nil, err
	}
	var out []byte
	for i, e := range es {
		// Clients hash the bundle's entries against the level-0 tile:
		// serve nothing a client would find inconsistent.
		if e.Index != start+uint64(i) || sumdb.RecordHash(e.Data) != hashes[i] {
			return nil, fmt.Errorf("tlog: entry %d does not hash to leaf %d of the tree", e.Index, start+uint64(i))
		}
		if len(e.Data) > maxEntrySize {
			return nil, fmt.Errorf("tlog: entry %d has %d bytes, more than an entry bundle can carry (%d)", e.Index, len(e.Data), maxEntrySize)
		}
		out = binary.BigEndian.AppendUint16(out, uint16(len(e.Data)))
		out = append(out, e.Data...)
	}
	return out, nil
}

// levelZero lists the stored-hash indexes of leaves [start, start+n).
func levelZero(start uint64, n int) []int64 {
	xs := make([]int64, n)
	for i := range xs {
		xs[i] = sumdb.StoredHashIndex(0, int64(start)+int64(i))
	}
	return xs
}
