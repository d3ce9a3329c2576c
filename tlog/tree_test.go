package tlog_test

import (
	"fmt"
	"testing"

	"github.com/forecast-arena/arena/tlog"
)

func leafHashes(n int) [][]byte {
	hs := make([][]byte, n)
	for i := range hs {
		hs[i] = tlog.LeafHash([]byte(fmt.Sprint(i)))
	}
	return hs
}

// One Tree answers every proof of its leaves, as many times as asked: each
// verifies against the root, and a proof for another index does not.
func TestTreeProofs(t *testing.T) {
	for _, n := range []int{1, 2, 3, 7, 8, 9, 33} {
		hs := leafHashes(n)
		root, err := tlog.Root(hs)
		if err != nil {
			t.Fatal(err)
		}
		tree := tlog.NewTree(hs)
		for pass := range 2 {
			for i := range n {
				p, err := tree.InclusionProof(uint64(i))
				if err != nil {
					t.Fatal(err)
				}
				if err := tlog.VerifyInclusion(uint64(i), uint64(n), hs[i], p, root); err != nil {
					t.Fatalf("n %d pass %d: inclusion of %d: %v", n, pass, i, err)
				}
				if n > 1 && tlog.VerifyInclusion(uint64((i+1)%n), uint64(n), hs[i], p, root) == nil {
					t.Fatalf("n %d: the proof of %d verified for index %d", n, i, (i+1)%n)
				}
			}
			for size := 1; size <= n; size++ {
				old, _ := tlog.Root(hs[:size])
				p, err := tree.ConsistencyProof(uint64(size))
				if err != nil {
					t.Fatal(err)
				}
				if err := tlog.VerifyConsistency(uint64(size), uint64(n), p, old, root); err != nil {
					t.Fatalf("n %d pass %d: consistency %d → %d: %v", n, pass, size, n, err)
				}
			}
		}
		if _, err := tree.InclusionProof(uint64(n)); err == nil {
			t.Fatalf("n %d: inclusion proof beyond the tree", n)
		}
	}
}

// BenchmarkProveEveryLeaf proves each leaf of a 1,024-leaf log, as verify
// does for an export: through one Tree, against a new tree for every proof
// (the baseline, what tlog.InclusionProof costs each call).
func BenchmarkProveEveryLeaf(b *testing.B) {
	hs := leafHashes(1024)
	for _, c := range []struct {
		name string
		tree func() *tlog.Tree
	}{
		{"baseline-tree-per-proof", nil},
		{"one-tree", func() *tlog.Tree { return tlog.NewTree(hs) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				var tree *tlog.Tree
				if c.tree != nil {
					tree = c.tree()
				}
				for i := range hs {
					var err error
					if tree != nil {
						_, err = tree.InclusionProof(uint64(i))
					} else {
						_, err = tlog.InclusionProof(hs, uint64(i))
					}
					if err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(len(hs)*b.N)/b.Elapsed().Seconds(), "proofs/s")
		})
	}
}
