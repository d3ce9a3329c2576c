package export

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strconv"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/tlog"
)

// checkLog checks the log's entries against the export's checkpoint, its
// signed head, and decodes them into the model every table is then
// compared with.
func (v *verifier) checkLog(dir string) {
	const lt = "log_entries"
	t := v.t[lt]
	c := v.readCheckpoint(dir)
	var root []byte // nil when the checkpoint does not check out
	var size uint64 // the entries the export's log holds
	if c != nil {
		root, size = c.Hash, c.Size
		v.rep.LogSize, v.rep.LogRoot = c.Size, hex.EncodeToString(c.Hash)
	} else {
		// Nothing signed says how long the log is: check what is exported.
		for _, r := range t.rows {
			if r.ok("idx") {
				size = max(size, r.u("idx")+1)
			}
		}
	}
	rows := v.logEntries(size)
	exported, own := v.leafHashes(rows, size)
	tree, ownRoot, ok := v.logTree(exported, own, root)
	if !ok {
		return
	}
	hashes := exported
	if ownRoot {
		hashes = own
	}
	leaves := v.readLeaves(rows, exported, own, ownRoot)
	v.rep.LogEntries = len(rows)
	if root != nil {
		v.proveIncluded(tree, hashes, size, root)
		v.checkKnown(tree, c)
	}
	v.decodeLog(rows, leaves)
}

// logEntries are the exported log entries by index, nil where one is
// missing, for the size entries the log holds. A checkpoint (even a
// forged one) claiming far more entries than exported is reported once,
// not entry by entry: the entries are then bounded.
func (v *verifier) logEntries(size uint64) []*row {
	const lt = "log_entries"
	t := v.t[lt]
	n := size
	if limit := uint64(len(t.rows)) + 1024; n > limit {
		v.add(lt, "", "", "%d entries exported, the checkpoint covers %d", len(t.rows), size)
		n = limit
	}
	rows := make([]*row, n)
	for _, r := range t.rows {
		switch i := r.u("idx"); {
		case !r.ok("idx"):
		case i >= size:
			v.add(lt, r.key, "idx", "beyond the checkpoint, which covers %d entries", size)
		case i < n:
			rows[i] = r
		}
	}
	return rows
}

// leafHashes are the entries' exported leaf hashes (zero where missing or
// malformed) and their own: the hash of their leaf where it is exported,
// the exported hash otherwise.
func (v *verifier) leafHashes(rows []*row, size uint64) (exported, own [][]byte) {
	const lt = "log_entries"
	t := v.t[lt]
	exported, own = make([][]byte, len(rows)), make([][]byte, len(rows))
	for i, r := range rows {
		exported[i] = make([]byte, 32)
		if r == nil {
			v.add(lt, kv(t.spec, strconv.Itoa(i)), "", "missing: the checkpoint covers %d entries", size)
		} else if h, err := hex.DecodeString(r.s("leaf_hash")); err == nil && len(h) == 32 {
			exported[i] = h
		}
		own[i] = exported[i]
		if r != nil && !r.b("sealed") && r.has("leaf") {
			own[i] = tlog.LeafHash([]byte(r.s("leaf")))
		}
	}
	return exported, own
}

// logTree is the tree over the authentic leaf hashes: the exported ones
// if their root is the signed one (then a leaf that hashes otherwise was
// changed), else the leaves' own if theirs is (then a leaf_hash that
// differs was); ownRoot says it is over their own. Built once, it gives
// every root and proof of the check. False when no tree can be built.
func (v *verifier) logTree(exported, own [][]byte, root []byte) (tree *tlog.Tree, ownRoot, ok bool) {
	const lt = "log_entries"
	n := uint64(len(exported))
	tree, err := tlog.NewTree(exported)
	if err != nil {
		v.add(lt, "", "leaf_hash", "%v", err)
		return nil, false, false
	}
	if rx, _ := tree.Root(n); root != nil && !tlog.Equal(rx, root) {
		ot, err := tlog.NewTree(own)
		if err != nil {
			v.add(lt, "", "leaf", "%v", err)
			return nil, false, false
		}
		if ro, _ := ot.Root(n); tlog.Equal(ro, root) {
			tree, ownRoot = ot, true
		} else {
			v.add(lt, "", "leaf_hash", "the exported entries' root is %x, the checkpoint's %x", rx, root)
		}
	}
	return tree, ownRoot, true
}

// readLeaves checks each entry's leaf against its hashes and its sealing,
// and reads it; an entry that is sealed, missing or at fault has none.
func (v *verifier) readLeaves(rows []*row, exported, own [][]byte, ownRoot bool) []tlog.Leaf {
	const lt = "log_entries"
	leaves := make([]tlog.Leaf, len(rows))
	for i, r := range rows {
		switch {
		case r == nil:
		case r.b("sealed"):
			v.rep.SealedEntries++
			if k := r.s("kind"); r.has("leaf") || (k != tlog.KindCommit && k != tlog.KindReveal) {
				v.add(lt, r.key, "sealed", "true for a %s entry with a leaf: only commits and reveals are sealed, without their leaf", k)
			}
		case !r.has("leaf"):
			v.add(lt, r.key, "leaf", "empty, but the entry is not sealed")
		case ownRoot && !tlog.Equal(own[i], exported[i]):
			v.add(lt, r.key, "leaf_hash", "%s, but the leaf hashes to %x, which the signed root covers", r.s("leaf_hash"), own[i])
		case !tlog.Equal(own[i], exported[i]):
			v.add(lt, r.key, "leaf", "hashes to %x, not to its leaf_hash %s", own[i], r.s("leaf_hash"))
		case arena.CheckUniqueKeys([]byte(r.s("leaf"))) != nil || json.Unmarshal([]byte(r.s("leaf")), &leaves[i]) != nil:
			v.add(lt, r.key, "leaf", "not a JSON leaf with each key once")
			leaves[i] = tlog.Leaf{}
		case leaves[i].Kind != r.s("kind"):
			v.add(lt, r.key, "kind", "%s, but the leaf is a %q entry", r.s("kind"), leaves[i].Kind)
			leaves[i] = tlog.Leaf{}
		}
	}
	return leaves
}

// proveIncluded proves every entry, by its authentic hash, included in
// the checkpoint's tree of size entries and root.
func (v *verifier) proveIncluded(tree *tlog.Tree, hashes [][]byte, size uint64, root []byte) {
	const lt = "log_entries"
	t := v.t[lt]
	for i := range hashes {
		p, err := tree.InclusionProof(uint64(i), size)
		if err == nil {
			err = tlog.VerifyInclusion(uint64(i), size, hashes[i], p, root)
		}
		if err != nil {
			v.add(lt, kv(t.spec, strconv.Itoa(i)), "leaf_hash", "inclusion proof: %v", err)
			continue
		}
		v.rep.InclusionProofs++
	}
}

// maxCheckpointBytes bounds the checkpoint file: a note with the log's
// signature and a few dozen cosignatures.
const maxCheckpointBytes = 64 << 10

// readCheckpoint reads and checks the export's checkpoint, its signed
// head: signed by the log key (under VKey's origin, else its own) and
// cosigned by a quorum of Policy's witnesses when there is one. It
// returns nil, with the reason reported, when it does not check out.
// Its tree is the exported log: checkLog proves every exported entry
// included in it.
func (v *verifier) readCheckpoint(dir string) *tlog.Checkpoint {
	const cf = CheckpointFile
	b, err := readFileBounded(filepath.Join(dir, cf), maxCheckpointBytes)
	if errors.Is(err, fs.ErrNotExist) {
		v.add(cf, "", "", "missing: an export carries the log's checkpoint, the signed head its log is proved against")
		return nil
	}
	if err != nil {
		v.add(cf, "", "", "%v", err)
		return nil
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(b)))
	if err != nil {
		v.add(cf, "", "", "%v", err)
		return nil
	}
	vkey := v.o.VKey
	if vkey == "" {
		if vkey, err = tlog.VerifierKey(c.Origin, v.o.LogKey); err != nil {
			v.add(cf, "", "origin", "%v", err)
			return nil
		}
	}
	if _, err := tlog.OpenCheckpoint(b, vkey); err != nil {
		v.add(cf, "", "signature", "%v", err)
		return nil
	}
	if v.o.Policy != nil {
		lv, err := note.NewVerifier(vkey)
		if err == nil {
			_, err = v.o.Policy.Verify(b, lv)
		}
		if err != nil {
			v.add(cf, "", "cosignatures", "%v", err)
		} else {
			v.rep.Quorum = true
		}
	}
	v.rep.Checkpoint, v.rep.VKey = &c, vkey
	return &c
}

// checkKnown checks the checkpoints the verifier saw before against the
// export's, c, whose tree is tree: each signed by the log key under c's
// origin, none larger (the export would be rolled back), and each a
// prefix of c's tree (a consistency proof from tree each; a root that
// differs at a known size is a fork).
func (v *verifier) checkKnown(tree *tlog.Tree, c *tlog.Checkpoint) {
	for i, b := range v.o.KnownCheckpoints {
		name := fmt.Sprintf("known checkpoint %d", i+1)
		k, err := tlog.OpenCheckpoint(b, v.rep.VKey)
		if err != nil {
			v.add(CheckpointFile, name, "signature", "%v", err)
			continue
		}
		if k.Size > c.Size {
			v.add(CheckpointFile, "", "tree_size", "%d entries: rolled back from %s, seen before, of %d entries", c.Size, name, k.Size)
			continue
		}
		p, err := tree.ConsistencyProof(k.Size, c.Size)
		if err == nil {
			err = tlog.VerifyConsistency(k.Size, c.Size, p, k.Hash, c.Hash)
		}
		if err != nil {
			v.add(CheckpointFile, name, "root_hash", "the log forked: %s's tree of %d entries is not a prefix of the export's (its consistency proof fails)", name, k.Size)
			continue
		}
		v.rep.KnownCheckpoints++
	}
}
