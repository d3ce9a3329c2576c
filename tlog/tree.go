package tlog

import (
	"context"
	"fmt"
	"sync"

	sumdb "golang.org/x/mod/sumdb/tlog"
)

// Tree is the log's RFC 6962 Merkle tree, cut into the hash tiles of
// C2SP tlog-tiles: tile N of level L holds hashes N·256 … N·256+255 of
// level 8·L of the tree. It is the package's only Merkle tree: the Log's
// roots, proofs and tiles come from it, and so do the verifier's. Its
// roots and proofs are golang.org/x/mod/sumdb/tlog's, computed from the
// hashes the tree reads from its tiles (ReadHashes).
//
// The tree keeps its right edge in memory: the rightmost tile of each
// level, the one still being filled (fewer than 256 hashes). Each full
// tile is handed to a tile source when it fills and read from it
// afterwards: the memory (NewTree: every tile kept, about 64 bytes per
// leaf, for a verifier that holds every leaf anyway) or a store with a
// bounded cache (the Log: see the package comment for its bound).
//
// Every tile, full or not, is kept with the hashes of the subtrees its
// row spans (at most 511 hashes, 16 KiB), so reading a hash is a lookup:
// appending a leaf hashes O(log n) nodes once, and a root or a proof then
// reads O(log n) hashes, from at most one tile per level and per side.
// It is safe for concurrent use.
type Tree struct {
	appendMu sync.Mutex // one append at a time
	mu       sync.RWMutex
	size     int64       // leaves the tree covers
	edge     []*hashTile // edge[L]: the rightmost tile of level L, never full; not changed once here
	full     fullTiles
}

// tileWidth is the number of hashes in a full tile, hashSize the size of
// one.
const (
	tileWidth = 1 << tileHeight
	hashSize  = sumdb.HashSize
)

// NewTree is the tree over the given leaf hashes (each 32 bytes), its
// every tile kept in memory.
func NewTree(leaves [][]byte) (*Tree, error) {
	t := &Tree{full: &memTiles{}}
	if err := t.Append(leaves...); err != nil {
		return nil, err
	}
	return t, nil
}

// Append adds leaves, given by their leaf hashes, to the right of the
// tree: all of them, or none when one is not a hash.
func (t *Tree) Append(leaves ...[]byte) error {
	return t.append(context.Background(), leaves)
}

// append adds leaves to the tree: the tiles they fill go to the tile
// source first, and only once it kept them does the tree grow, so a
// failure leaves the tree as it was.
func (t *Tree) append(ctx context.Context, leaves [][]byte) error {
	t.appendMu.Lock()
	defer t.appendMu.Unlock()
	t.mu.RLock()
	size, edge := t.size, t.edge
	t.mu.RUnlock()
	for i, leaf := range leaves {
		if len(leaf) != sumdb.HashSize {
			return fmt.Errorf("tlog: leaf hash %d has %d bytes", size+int64(i), len(leaf))
		}
	}
	// Edge tiles are shared with readers of the tree as it was: change
	// copies (which share their arrays of hashes, only ever appended to).
	edge = append([]*hashTile(nil), edge...)
	copied := make([]bool, len(edge))
	var filled []fullTile
	for _, leaf := range leaves {
		h := sumdb.Hash(leaf)
		// Each level's new hash goes into its edge tile; a tile it fills
		// leaves the edge, and its top hash goes one level up.
		for l, n := 0, size; ; l, n = l+1, n>>tileHeight {
			if l == len(edge) {
				edge, copied = append(edge, &hashTile{}), append(copied, true)
			}
			if !copied[l] {
				c := *edge[l]
				edge[l], copied[l] = &c, true
			}
			if err := edge[l].push(h); err != nil {
				return fmt.Errorf("tlog: hash leaf %d: %w", size, err)
			}
			if edge[l].w < tileWidth {
				break
			}
			filled = append(filled, fullTile{level: l, n: n >> tileHeight, tile: edge[l]})
			h = edge[l].top()
			edge[l] = &hashTile{}
		}
		size++
	}
	if len(filled) > 0 {
		if err := t.full.keep(ctx, filled); err != nil {
			return err
		}
	}
	t.mu.Lock()
	t.size, t.edge = size, edge
	t.mu.Unlock()
	return nil
}

// Size is the number of leaves in the tree.
func (t *Tree) Size() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return uint64(t.size)
}

// reader is a sumdb.HashReader of the tree as it is now: later appends do
// not change what it reads.
func (t *Tree) reader(ctx context.Context) *treeReader {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return &treeReader{ctx: ctx, size: t.size, edge: t.edge, full: t.full}
}

// treeReader reads the stored hashes (in x/mod's layout) of a tree of
// size leaves from its tiles.
type treeReader struct {
	ctx  context.Context
	size int64
	edge []*hashTile
	full fullTiles
	// read are the full tiles read so far: a proof reads a few hashes
	// of each.
	read map[[2]int64]*hashTile
}

// ReadHashes implements sumdb.HashReader.
func (r *treeReader) ReadHashes(indexes []int64) ([]sumdb.Hash, error) {
	out := make([]sumdb.Hash, len(indexes))
	for i, x := range indexes {
		// Hash n of level k spans leaves n·2^k … (n+1)·2^k − 1; it is in
		// tile n>>(8−k%8) of level k/8, at index n within it of its row's
		// level k%8.
		k, n := sumdb.SplitStoredHashIndex(x)
		if k > 62 || n >= r.size>>k {
			return nil, fmt.Errorf("tlog: stored hash %d is beyond the tree of %d leaves", x, r.size)
		}
		l, in := k/tileHeight, k%tileHeight
		tn := n >> (tileHeight - in)
		tile, err := r.tile(l, tn)
		if err != nil {
			return nil, err
		}
		h, ok := tile.at(in, n-tn<<(tileHeight-in))
		if !ok {
			return nil, fmt.Errorf("tlog: stored hash %d is not in tile %d of level %d", x, tn, l)
		}
		out[i] = h
	}
	return out, nil
}

// tile is tile n of level l: from the edge, else a full one.
func (r *treeReader) tile(l int, n int64) (*hashTile, error) {
	if n == (r.size>>(tileHeight*l))>>tileHeight {
		return r.edge[l], nil
	}
	key := [2]int64{int64(l), n}
	if t := r.read[key]; t != nil {
		return t, nil
	}
	t, err := r.full.tile(r.ctx, l, n)
	if err != nil {
		return nil, err
	}
	if r.read == nil {
		r.read = map[[2]int64]*hashTile{}
	}
	r.read[key] = t
	return t, nil
}

// check returns ErrRange unless size is at most the tree's size.
func (t *Tree) check(size uint64) error {
	if size > t.Size() {
		return ErrRange
	}
	return nil
}

// Root is the RFC 6962 root hash of the first size leaves (the hash of
// the empty string for none); ErrRange beyond the tree.
func (t *Tree) Root(size uint64) ([]byte, error) { return t.root(context.Background(), size) }

func (t *Tree) root(ctx context.Context, size uint64) ([]byte, error) {
	if err := t.check(size); err != nil {
		return nil, err
	}
	h, err := sumdb.TreeHash(int64(size), t.reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("tlog: root of size %d: %w", size, err)
	}
	return h[:], nil
}

// InclusionProof is the RFC 6962 inclusion proof of leaf index in the
// tree of the first size leaves, leaf end first; ErrRange unless
// index < size ≤ the tree's size.
func (t *Tree) InclusionProof(index, size uint64) ([][]byte, error) {
	return t.inclusionProof(context.Background(), index, size)
}

func (t *Tree) inclusionProof(ctx context.Context, index, size uint64) ([][]byte, error) {
	if err := t.check(size); err != nil || index >= size {
		return nil, ErrRange
	}
	p, err := sumdb.ProveRecord(int64(size), int64(index), t.reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("tlog: inclusion proof of %d in %d: %w", index, size, err)
	}
	return unhash(p), nil
}

// ConsistencyProof is the RFC 6962 consistency proof that the tree of
// the first old leaves is a prefix of the tree of the first size leaves
// (empty when old is 0 or size: there is nothing to prove); ErrRange
// unless old ≤ size ≤ the tree's size.
func (t *Tree) ConsistencyProof(old, size uint64) ([][]byte, error) {
	return t.consistencyProof(context.Background(), old, size)
}

func (t *Tree) consistencyProof(ctx context.Context, old, size uint64) ([][]byte, error) {
	if err := t.check(size); err != nil || old > size {
		return nil, ErrRange
	}
	if old == 0 || old == size {
		return [][]byte{}, nil
	}
	p, err := sumdb.ProveTree(int64(size), int64(old), t.reader(ctx))
	if err != nil {
		return nil, fmt.Errorf("tlog: consistency proof %d → %d: %w", old, size, err)
	}
	return unhash(p), nil
}

func unhash(p []sumdb.Hash) [][]byte {
	out := make([][]byte, len(p))
	for i := range p {
		out[i] = p[i][:]
	}
	return out
}

// hashTile is one hash tile with the hashes of the subtrees its row
// spans. Its row, w hashes of one level of the log's tree, is taken as
// the leaves of a tree of its own, kept in x/mod's stored-hash layout:
// the hash of its subtree j of 2^i row hashes (i ≤ 8) is stored[StoredHashIndex(i, j)].
type hashTile struct {
	w      int
	stored []sumdb.Hash
}

// push appends h to the tile's row, and the hashes of the subtrees it
// completes. stored is only ever appended to, so a copy of the tile made
// before sees the hashes it had.
func (h *hashTile) push(x sumdb.Hash) error {
	if h.w == tileWidth {
		return fmt.Errorf("tlog: a hash pushed onto a full tile")
	}
	hs, err := sumdb.StoredHashesForRecordHash(int64(h.w), x, h)
	if err != nil {
		return err
	}
	h.stored = append(h.stored, hs...)
	h.w++
	return nil
}

// ReadHashes implements sumdb.HashReader over the tile's own hashes.
func (h *hashTile) ReadHashes(indexes []int64) ([]sumdb.Hash, error) {
	out := make([]sumdb.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(h.stored)) {
			return nil, fmt.Errorf("tlog: tile hash %d of %d", x, len(h.stored))
		}
		out[i] = h.stored[x]
	}
	return out, nil
}

// at returns the hash of the tile's subtree j of 2^i row hashes, if its
// row spans it.
func (h *hashTile) at(i int, j int64) (sumdb.Hash, bool) {
	if j < 0 || (j+1)<<i > int64(h.w) {
		return sumdb.Hash{}, false
	}
	return h.stored[sumdb.StoredHashIndex(i, j)], true
}

// top is the hash of a full tile's whole row: a hash of the level above.
func (h *hashTile) top() sumdb.Hash { return h.stored[len(h.stored)-1] }

// row is the tile's row of hashes, as C2SP tlog-tiles serves it.
func (h *hashTile) row() []byte {
	out := make([]byte, 0, h.w*sumdb.HashSize)
	for j := range h.w {
		x, _ := h.at(0, int64(j))
		out = append(out, x[:]...)
	}
	return out
}

// tileOfRow is the tile whose row is data, a whole number of hashes.
func tileOfRow(data []byte) (*hashTile, error) {
	if len(data)%sumdb.HashSize != 0 || len(data) > tileWidth*sumdb.HashSize {
		return nil, fmt.Errorf("tlog: a tile of %d bytes", len(data))
	}
	t := &hashTile{stored: make([]sumdb.Hash, 0, 2*len(data)/sumdb.HashSize)}
	for i := 0; i < len(data); i += sumdb.HashSize {
		if err := t.push(sumdb.Hash(data[i : i+sumdb.HashSize])); err != nil {
			return nil, err
		}
	}
	return t, nil
}

// A fullTile is a tile that an append filled: tile n of level.
type fullTile struct {
	level int
	n     int64
	tile  *hashTile
}

// fullTiles keeps a tree's full tiles: in memory (memTiles) or in a
// store (storedTiles). The tree asks only for tiles it filled.
type fullTiles interface {
	// tile returns full tile n of level l.
	tile(ctx context.Context, l int, n int64) (*hashTile, error)
	// keep keeps the tiles an append filled, in the order it filled them.
	keep(ctx context.Context, ts []fullTile) error
}

// memTiles keeps every full tile in memory.
type memTiles struct {
	mu     sync.RWMutex
	levels [][]*hashTile
}

func (m *memTiles) tile(_ context.Context, l int, n int64) (*hashTile, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if l >= len(m.levels) || n >= int64(len(m.levels[l])) {
		return nil, fmt.Errorf("tlog: no full tile %d of level %d", n, l)
	}
	return m.levels[l][n], nil
}

func (m *memTiles) keep(_ context.Context, ts []fullTile) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, t := range ts {
		if t.level == len(m.levels) {
			m.levels = append(m.levels, nil)
		}
		if t.n != int64(len(m.levels[t.level])) {
			return fmt.Errorf("tlog: full tile %d of level %d kept after %d", t.n, t.level, len(m.levels[t.level]))
		}
		m.levels[t.level] = append(m.levels[t.level], t.tile)
	}
	return nil
}
