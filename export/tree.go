package export

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/forecast-arena/arena"
)

// A published file's parts are kept as a content-defined tree, so that
// consecutive exports, whose files share most of their parts, share the
// lists of them too. Level 0 is the file's parts in order; each level
// above cuts the hashes of the one below into nodes, after a hash whose
// first byte is 0 modulo nodeCut once a node holds minNode hashes (at
// maxNode at the latest), and stores each node as a part: the raw 32-byte
// hashes it lists. The top level is one hash, the file's root; depth is
// the number of levels of nodes above the parts (0: the root is the one
// part). A change at one place of a file stores the parts there and one
// node per level, however long the file.
const (
	minNode = 4
	nodeCut = 16
	maxNode = 256
)

// partTree is a file's tree: levels[0] are its parts; levels[i], for i
// from 1, the nodes listing levels[i-1], node j listing from
// starts[i][j]; the last level is one hash, the root.
type partTree struct {
	levels [][]string
	starts [][]int
}

// root is the tree's root and depth; "" and 0 for a file of no part.
func (t *partTree) root() (string, int) {
	if t == nil || len(t.levels) == 0 || len(t.levels[0]) == 0 {
		return "", 0
	}
	top := t.levels[len(t.levels)-1]
	return top[0], len(t.levels) - 1
}

// hashes lists every part and node of the tree.
func (t *partTree) hashes() map[string]bool {
	out := map[string]bool{}
	for _, l := range t.levels {
		for _, h := range l {
			out[h] = true
		}
	}
	return out
}

// buildTree is the tree over parts, storing each node it makes (put).
// When the first keep parts are prev's, the nodes of prev that list only
// those and were cut by content are kept unmade: a file changed at its
// end makes one node per level.
func buildTree(prev *partTree, parts []string, keep int, put func(hash string, data []byte) error) (*partTree, error) {
	t := &partTree{levels: [][]string{parts}, starts: [][]int{nil}}
	for lv := 1; len(t.levels[lv-1]) > 1; lv++ {
		below := t.levels[lv-1]
		var level []string
		var starts []int
		from := 0 // where the nodes to make start in below
		if prev != nil && lv < len(prev.levels) {
			pl, ps, pb := prev.levels[lv], prev.starts[lv], prev.levels[lv-1]
			for m := range pl {
				end := len(pb)
				if m+1 < len(ps) {
					end = ps[m+1]
				}
				if end > keep || !cutAfter(pb[ps[m]:end]) {
					break
				}
				level, starts, from = append(level, pl[m]), append(starts, ps[m]), end
			}
		}
		var node []byte
		start := from
		for i := from; i < len(below); i++ {
			raw, err := hex.DecodeString(below[i])
			if err != nil || len(raw) != sha256.Size {
				return nil, fmt.Errorf("export: part hash %q", below[i])
			}
			node = append(node, raw...)
			if i == len(below)-1 || cutAfterRaw(node) {
				sum := sha256.Sum256(node)
				nh := hex.EncodeToString(sum[:])
				if err := put(nh, node); err != nil {
					return nil, err
				}
				level, starts, node, start = append(level, nh), append(starts, start), nil, i+1
			}
		}
		t.levels, t.starts = append(t.levels, level), append(t.starts, starts)
		if prev != nil && lv < len(prev.levels) {
			keep = commonPrefix(level, prev.levels[lv])
		}
	}
	return t, nil
}

// cutAfterRaw reports whether a node of these raw hashes ends by content
// (or at its largest).
func cutAfterRaw(node []byte) bool {
	n := len(node) / sha256.Size
	return n >= maxNode || n >= minNode && node[len(node)-sha256.Size]%nodeCut == 0
}

// cutAfter is cutAfterRaw of hex hashes.
func cutAfter(hashes []string) bool {
	n := len(hashes)
	if n == 0 {
		return false
	}
	last, err := hex.DecodeString(hashes[n-1][:2])
	return err == nil && (n >= maxNode || n >= minNode && last[0]%nodeCut == 0)
}

// commonPrefix is how many first hashes a and b share.
func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// walkTree calls fn with the parts of the tree of root and depth, in
// order, reading its nodes from store.
func walkTree(ctx context.Context, store arena.ExportStore, root string, depth int, fn func(part string) error) error {
	if root == "" {
		return nil
	}
	if depth == 0 {
		return fn(root)
	}
	node, err := store.ExportPart(ctx, root)
	if err != nil {
		return err
	}
	if len(node) == 0 || len(node)%sha256.Size != 0 {
		return fmt.Errorf("export: node %s of %d bytes is not a list of hashes", root, len(node))
	}
	for i := 0; i < len(node); i += sha256.Size {
		if err := walkTree(ctx, store, hex.EncodeToString(node[i:i+sha256.Size]), depth-1, fn); err != nil {
			return err
		}
	}
	return nil
}

// treeNodes adds the nodes and parts of the tree of root and depth to set.
func treeNodes(ctx context.Context, store arena.ExportStore, root string, depth int, set map[string]bool) error {
	if root == "" || depth > 0 && set[root] {
		return nil // a node already walked lists what it did then
	}
	set[root] = true
	if depth == 0 {
		return nil
	}
	node, err := store.ExportPart(ctx, root)
	if err != nil {
		return err
	}
	for i := 0; i+sha256.Size <= len(node); i += sha256.Size {
		if err := treeNodes(ctx, store, hex.EncodeToString(node[i:i+sha256.Size]), depth-1, set); err != nil {
			return err
		}
	}
	return nil
}
