package tlog

import (
	"fmt"
	"sync"

	sumdb "golang.org/x/mod/sumdb/tlog"
)

// Tree is the log's RFC 6962 Merkle tree kept as stored hashes, in
// golang.org/x/mod/sumdb/tlog's layout: the hash of every complete
// subtree, in the order a log appends them. It is the package's only
// Merkle tree: the Log's roots, proofs and tiles come from it, and so do
// the verifier's, built once from an export's leaf hashes.
//
// Appending a leaf hashes O(log n) nodes once (O(n) for a tree of n
// leaves); a root or a proof then reads O(log n) stored hashes and
// hashes O(log n) of them, whatever the number of proofs asked.
//
// A tree of n leaves keeps 2n − popcount(n) hashes of 32 bytes, about 64
// bytes per leaf, in memory. That is the bound of this package's memory
// per leaf: about 64 MiB for a million entries, a log the size of years
// of rounds. It is safe for concurrent use.
type Tree struct {
	mu     sync.RWMutex
	hashes []sumdb.Hash
	size   int64 // leaves the hashes cover
}

// NewTree is the tree over the given leaf hashes (each 32 bytes).
func NewTree(leaves [][]byte) (*Tree, error) {
	t := &Tree{hashes: make([]sumdb.Hash, 0, sumdb.StoredHashCount(int64(len(leaves))))}
	if err := t.Append(leaves...); err != nil {
		return nil, err
	}
	return t, nil
}

// Append adds leaves, given by their leaf hashes, to the right of the
// tree: all of them, or none when one is not a hash.
func (t *Tree) Append(leaves ...[]byte) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	for i, leaf := range leaves {
		if len(leaf) != sumdb.HashSize {
			return fmt.Errorf("tlog: leaf hash %d has %d bytes", t.size+int64(i), len(leaf))
		}
	}
	for _, leaf := range leaves {
		hs, err := sumdb.StoredHashesForRecordHash(t.size, sumdb.Hash(leaf), sumdb.HashReaderFunc(t.read))
		if err != nil {
			return fmt.Errorf("tlog: hash leaf %d: %w", t.size, err)
		}
		t.hashes = append(t.hashes, hs...)
		t.size++
	}
	return nil
}

// Size is the number of leaves in the tree.
func (t *Tree) Size() uint64 {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return uint64(t.size)
}

// read is ReadHashes for a caller holding t.mu.
func (t *Tree) read(indexes []int64) ([]sumdb.Hash, error) {
	out := make([]sumdb.Hash, len(indexes))
	for i, x := range indexes {
		if x < 0 || x >= int64(len(t.hashes)) {
			return nil, fmt.Errorf("tlog: stored hash %d of %d", x, len(t.hashes))
		}
		out[i] = t.hashes[x]
	}
	return out, nil
}

// ReadHashes implements sumdb.HashReader, for x/mod's tiles and proofs.
func (t *Tree) ReadHashes(indexes []int64) ([]sumdb.Hash, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.read(indexes)
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
func (t *Tree) Root(size uint64) ([]byte, error) {
	if err := t.check(size); err != nil {
		return nil, err
	}
	h, err := sumdb.TreeHash(int64(size), t)
	if err != nil {
		return nil, fmt.Errorf("tlog: root of size %d: %w", size, err)
	}
	return h[:], nil
}

// InclusionProof is the RFC 6962 inclusion proof of leaf index in the
// tree of the first size leaves, leaf end first; ErrRange unless
// index < size ≤ the tree's size.
func (t *Tree) InclusionProof(index, size uint64) ([][]byte, error) {
	if err := t.check(size); err != nil || index >= size {
		return nil, ErrRange
	}
	p, err := sumdb.ProveRecord(int64(size), int64(index), t)
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
	if err := t.check(size); err != nil || old > size {
		return nil, ErrRange
	}
	if old == 0 || old == size {
		return [][]byte{}, nil
	}
	p, err := sumdb.ProveTree(int64(size), int64(old), t)
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
