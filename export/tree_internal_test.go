package export

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// A tree made from the previous one over a list of parts changed after
// its first keep parts (appended to, or cut and continued) is the tree
// made from scratch, and it makes (stores) only the nodes not over the
// unchanged parts: at most a few per level for a change at the end.
func TestBuildTreeFromPrevious(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	hash := func() string {
		var b [32]byte
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		return hex.EncodeToString(b[:])
	}
	var parts []string
	var prev *partTree
	for step := range 300 {
		keep := len(parts)
		if step%7 == 3 && len(parts) > 10 {
			keep = rng.IntN(len(parts)) // a change in the middle
		}
		next := slices.Clone(parts[:keep])
		for range 1 + rng.IntN(40) {
			next = append(next, hash())
		}
		made := 0
		got, err := buildTree(prev, next, keep, func(h string, data []byte) error {
			if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != h {
				return fmt.Errorf("node %s is not its data's hash", h)
			}
			made++
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		full, err := buildTree(nil, next, 0, func(string, []byte) error { return nil })
		if err != nil {
			t.Fatal(err)
		}
		for lv := range full.levels {
			if lv >= len(got.levels) || !slices.Equal(got.levels[lv], full.levels[lv]) || lv > 0 && !slices.Equal(got.starts[lv], full.starts[lv]) {
				t.Fatalf("step %d: level %d of the tree made from the previous one differs from the tree made from scratch", step, lv)
			}
		}
		if len(got.levels) != len(full.levels) {
			t.Fatalf("step %d: %d levels, want %d", step, len(got.levels), len(full.levels))
		}
		if keep == len(parts) && len(parts) > 1000 && made > 3*len(full.levels)+40/minNode {
			t.Fatalf("step %d: an append made %d nodes over %d levels", step, made, len(full.levels))
		}
		parts, prev = next, got
	}
	if r, d := prev.root(); r == "" || d < 2 {
		t.Fatalf("a tree of %d parts: root %q, depth %d", len(parts), r, d)
	}
}
