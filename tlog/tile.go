package tlog

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"

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
	tree, n, err := l.sync(ctx)
	if err != nil {
		return nil, false, err
	}
	size := int64(n)
	// The tile holds hashes N·256 … N·256+W-1 of its level, each over
	// 256^L leaves: it exists once the log has that many subtrees.
	avail := size >> (tileHeight * max(t.L, 0))
	if t.N < 0 || t.N > avail>>tileHeight || t.N<<tileHeight+int64(t.W) > avail {
		return nil, false, arena.Errorf(arena.ENOTFOUND, "tlog: %s is beyond the log's %d entries", path, size)
	}
	full = t.W == 1<<tileHeight
	if t.L >= 0 {
		data, err := sumdb.ReadTileData(t, tree.reader(ctx))
		if err != nil {
			return nil, false, fmt.Errorf("tlog: %s: %w", path, err)
		}
		return data, full, nil
	}
	data, err = l.bundle(ctx, tree, t, sealed)
	return data, full, err
}

// bundle is the entry bundle of tile t: each leaf prefixed by its length.
func (l *Log) bundle(ctx context.Context, tree *Tree, t sumdb.Tile, sealed func(context.Context, []arena.LogEntry) (bool, error)) ([]byte, error) {
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
	hashes, err := tree.reader(ctx).ReadHashes(levelZero(start, t.W))
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
