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

// buildTree stores the nodes over hashes that known lacks (put) and
// returns the root and depth; no hash at all is the empty root "".
func buildTree(hashes []string, put func(hash string, data []byte) error) (root string, depth int, err error) {
	if len(hashes) == 0 {
		return "", 0, nil
	}
	level := hashes
	for len(level) > 1 {
		var up []string
		var node []byte
		for i, h := range level {
			raw, err := hex.DecodeString(h)
			if err != nil || len(raw) != sha256.Size {
				return "", 0, fmt.Errorf("export: part hash %q", h)
			}
			node = append(node, raw...)
			n := len(node) / sha256.Size
			if i == len(level)-1 || n >= maxNode || n >= minNode && raw[0]%nodeCut == 0 {
				sum := sha256.Sum256(node)
				nh := hex.EncodeToString(sum[:])
				if err := put(nh, node); err != nil {
					return "", 0, err
				}
				up, node = append(up, nh), nil
			}
		}
		level = up
		depth++
	}
	return level[0], depth, nil
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
