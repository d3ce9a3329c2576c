package tlog_test

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"testing"

	"github.com/transparency-dev/merkle/compact"
	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"
	sumdb "golang.org/x/mod/sumdb/tlog"

	"github.com/forecast-arena/arena/tlog"
)

func leafHashes(n int) [][]byte {
	hs := make([][]byte, n)
	for i := range hs {
		hs[i] = tlog.LeafHash([]byte(fmt.Sprint(i)))
	}
	return hs
}

// referenceRoots are the root hashes of every prefix of leaves, computed
// by transparency-dev's compact ranges: Merkle code independent of Tree.
func referenceRoots(t *testing.T, leaves [][]byte) [][]byte {
	t.Helper()
	rf := compact.RangeFactory{Hash: rfc6962.DefaultHasher.HashChildren}
	r := rf.NewEmptyRange(0)
	roots := [][]byte{rfc6962.DefaultHasher.EmptyRoot()}
	for _, h := range leaves {
		if err := r.Append(h, nil); err != nil {
			t.Fatal(err)
		}
		root, err := r.GetRootHash(nil)
		if err != nil {
			t.Fatal(err)
		}
		roots = append(roots, root)
	}
	return roots
}

// sizes are the tree sizes the tree tests check: every size up to 70,
// then sizes around tile and power-of-two boundaries.
func sizes() []uint64 {
	var out []uint64
	for n := range uint64(71) {
		out = append(out, n)
	}
	return append(out, 127, 128, 129, 255, 256, 257, 300, 511, 512, 513, 600)
}

// The Tree's roots and proofs are those of RFC 6962 at every size: its
// roots equal transparency-dev's compact-range roots, and its inclusion
// and consistency proofs verify under both transparency-dev's verifier
// and golang.org/x/mod/sumdb/tlog's, two implementations independent of
// each other and of the Tree. A proof of a changed leaf, another index
// or another size fails.
func TestTreeAgreesWithIndependentVerifiers(t *testing.T) {
	const n = 600
	leaves := leafHashes(n)
	want := referenceRoots(t, leaves)
	tree, err := tlog.NewTree(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Grow the tree a few leaves at a time, checking every size on the way.
	grown := uint64(0)
	for _, size := range sizes() {
		if err := tree.Append(leaves[grown:size]...); err != nil {
			t.Fatal(err)
		}
		grown = size
		if tree.Size() != size {
			t.Fatalf("size %d after appending %d leaves", tree.Size(), size)
		}
		root, err := tree.Root(size)
		if err != nil || !tlog.Equal(root, want[size]) {
			t.Fatalf("root of %d: %x, %v; want %x", size, root, err, want[size])
		}
		step := uint64(1)
		if size > 70 {
			step = 37 // the large sizes: a sample of their leaves and prefixes
		}
		for i := uint64(0); i < size; i += step {
			p, err := tree.InclusionProof(i, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyInclusion(rfc6962.DefaultHasher, i, size, leaves[i], p, root); err != nil {
				t.Fatalf("inclusion of %d in %d (transparency-dev): %v", i, size, err)
			}
			if err := sumdb.CheckRecord(hashes(p), int64(size), sumdb.Hash(root), int64(i), sumdb.Hash(leaves[i])); err != nil {
				t.Fatalf("inclusion of %d in %d (x/mod): %v", i, size, err)
			}
			if size > 1 && tlog.VerifyInclusion((i+1)%size, size, leaves[i], p, root) == nil {
				t.Fatalf("the proof of %d in %d verified for index %d", i, size, (i+1)%size)
			}
			if tlog.VerifyInclusion(i, size, tlog.LeafHash([]byte("changed")), p, root) == nil {
				t.Fatalf("a changed leaf %d verified in %d", i, size)
			}
		}
		for old := uint64(0); old <= size; old = min(old+step, max(size, old+1)) {
			p, err := tree.ConsistencyProof(old, size)
			if err != nil {
				t.Fatal(err)
			}
			if err := proof.VerifyConsistency(rfc6962.DefaultHasher, old, size, p, want[old], root); err != nil {
				t.Fatalf("consistency %d → %d (transparency-dev): %v", old, size, err)
			}
			if old > 0 {
				if err := sumdb.CheckTree(hashes(p), int64(size), sumdb.Hash(root), int64(old), sumdb.Hash(want[old])); err != nil {
					t.Fatalf("consistency %d → %d (x/mod): %v", old, size, err)
				}
			}
			if old > 0 && old < size && tlog.VerifyConsistency(old, size, p, want[old-1], root) == nil {
				t.Fatalf("consistency %d → %d verified from the root of %d", old, size, old-1)
			}
		}
	}
	// The same tree built in one go from the leaves.
	whole, err := tlog.NewTree(leaves)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range sizes() {
		if r, err := whole.Root(size); err != nil || !tlog.Equal(r, want[size]) {
			t.Fatalf("root of %d from NewTree: %x, %v", size, r, err)
		}
	}
	if sha := sha256.Sum256(nil); !tlog.Equal(want[0], sha[:]) {
		t.Fatal("the empty tree's root is not SHA-256 of nothing")
	}
}

func hashes(p [][]byte) []sumdb.Hash {
	out := make([]sumdb.Hash, len(p))
	for i := range p {
		out[i] = sumdb.Hash(p[i])
	}
	return out
}

// Roots and proofs beyond the tree are ErrRange; a leaf hash that is not
// 32 bytes is refused.
func TestTreeRange(t *testing.T) {
	tree, err := tlog.NewTree(leafHashes(9))
	if err != nil {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"root 10":           second(tree.Root(10)),
		"inclusion 9 in 9":  second(tree.InclusionProof(9, 9)),
		"inclusion 0 in 10": second(tree.InclusionProof(0, 10)),
		"inclusion 0 in 0":  second(tree.InclusionProof(0, 0)),
		"consistency 3→10":  second(tree.ConsistencyProof(3, 10)),
		"consistency 5→4":   second(tree.ConsistencyProof(5, 4)),
	} {
		if !errors.Is(err, tlog.ErrRange) {
			t.Errorf("%s: %v, want ErrRange", name, err)
		}
	}
	before := tree.Size()
	if err := tree.Append(make([]byte, 32), make([]byte, 31)); err == nil || tree.Size() != before {
		t.Fatalf("a leaf hash of 31 bytes after a good one: %v, size %d → %d; want an error and nothing appended", err, before, tree.Size())
	}
	if _, err := tlog.NewTree([][]byte{make([]byte, 33)}); err == nil {
		t.Fatal("a leaf hash of 33 bytes was taken")
	}
}

func second[T any](_ T, err error) error { return err }

// BenchmarkProveEveryLeaf proves each leaf of a 4,096-leaf log, as verify
// does for an export: the tree built once from the leaf hashes, then a
// proof per leaf from its stored hashes.
func BenchmarkProveEveryLeaf(b *testing.B) {
	hs := leafHashes(4096)
	for b.Loop() {
		tree, err := tlog.NewTree(hs)
		if err != nil {
			b.Fatal(err)
		}
		for i := range hs {
			if _, err := tree.InclusionProof(uint64(i), uint64(len(hs))); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(hs)*b.N)/b.Elapsed().Seconds(), "proofs/s")
}
