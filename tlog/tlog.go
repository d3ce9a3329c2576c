// Package tlog is the tamper-evident log of the forecast track: every
// accepted commit, reveal, benchmark, resolution, outcome, score and
// signed agent profile is a leaf of an RFC 6962 Merkle tree, and the
// server publishes C2SP checkpoints of it (https://c2sp.org/tlog-checkpoint):
// signed notes under the log's ed25519 key, cosigned by witnesses when
// the arena has a witness policy, with the hash tiles and entry bundles of
// C2SP tlog-tiles. Checkpoints are the log's only signed statement.
// Anyone holding a checkpoint can check that an entry is in the log
// (inclusion proof) and that a later checkpoint extends an earlier one
// (consistency proof), so the operator cannot rewrite history without its
// signatures contradicting each other.
//
// One Merkle tree, Tree, answers every root, proof and tile, on the
// server and in the export verifier alike: x/mod's algorithms over the
// hashes of its C2SP hash tiles. It keeps its right edge in memory (the
// tile of each level still being filled) and reads its full tiles from a
// tile source: the export verifier keeps them all in memory (about 64
// bytes per entry, for an export that holds every entry anyway); a Log
// stores them in the database (arena.LogTileStore), shared by every
// server, and keeps the most recently used in a cache.
//
// A Log of n entries keeps at most
//
//	(TileCache + ⌈log₂₅₆(n+1)⌉) × 16.25 KiB + 512 KiB
//
// of memory for its tree, whatever n: with the default cache of 256
// tiles, 4.6 MiB up to 16.7 million entries (3 levels), against 64 bytes
// per entry (640 MiB at 10 million) when it kept every hash. Each tile is
// at most 512 hashes of 32 bytes with 256 bytes of bookkeeping; the 512
// KiB cover the rest (BenchmarkLogAtScale measures it). For a moment, a
// sync also holds the entries it reads (at most 10,000 at a time) and a
// process's first sync up to 255 stored tiles of a level (2 MiB).
//
// A full tile is stored when the entries that fill it are read by a
// sync, computed from their leaf hashes, so a stored tile is the hashes
// of its entries; a process that stopped in between leaves the tile to
// the next sync, which starts from the largest size whose tiles are all
// stored, and a tile missing among the others is computed again when it
// is read. Proofs are checked with transparency-dev's verifier, code
// independent of the Tree.
package tlog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/transparency-dev/merkle/proof"
	"github.com/transparency-dev/merkle/rfc6962"

	"github.com/forecast-arena/arena"
)

// Entry kinds.
const (
	KindCommit     = "commit"
	KindReveal     = "reveal"
	KindBenchmark  = "benchmark"
	KindResolution = "resolution"
	KindOutcome    = "outcome"
	KindScore      = "score"
	KindProfile    = "profile"
	KindDispute    = "dispute"
	KindDecision   = "decision"
)

var hasher = rfc6962.DefaultHasher

// Leaf is the JSON of one log leaf: the kind and the accepted item.
type Leaf struct {
	Kind string          `json:"kind"`
	Data json.RawMessage `json:"data"`
}

// LeafHash is the RFC 6962 leaf hash SHA-256(0x00 ‖ leaf).
func LeafHash(leaf []byte) []byte { return hasher.HashLeaf(leaf) }

// Log appends to and proves from a log kept in a store.
type Log struct {
	Store  Store
	Key    ed25519.PrivateKey
	Now    func() time.Time
	Logger *slog.Logger
	// Signed, when set, keeps the largest tree the key signed outside
	// the store: nothing is signed that contradicts it (CheckSigned).
	Signed SignedState
	// TileCache is how many full tiles of the tree the log keeps in
	// memory besides its right edge, 16 KiB each (DefaultTileCache when
	// zero).
	TileCache int

	mu   sync.Mutex // one sync at a time
	tree *Tree      // the tree of the entries read so far; nil before the first sync
}

func (l *Log) now() time.Time {
	return arena.Clock(l.Now)().UTC()
}

// Append adds an entry of the given kind whose data is v's JSON.
func (l *Log) Append(ctx context.Context, kind string, v any) error {
	leaf, err := Encode(kind, v)
	if err != nil {
		return err
	}
	if _, err := l.Store.AppendLog(ctx, kind, leaf.Data, leaf.Hash, l.now()); err != nil {
		return fmt.Errorf("tlog: %w", err)
	}
	return nil
}

// Encode is the leaf Append would store for v: for a caller that appends
// it in its own transaction (arena.LogLeaf).
func Encode(kind string, v any) (*arena.LogLeaf, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("tlog: encode %s: %w", kind, err)
	}
	leaf, err := json.Marshal(Leaf{Kind: kind, Data: data})
	if err != nil {
		return nil, fmt.Errorf("tlog: encode %s: %w", kind, err)
	}
	return &arena.LogLeaf{Kind: kind, Data: leaf, Hash: LeafHash(leaf)}, nil
}

// syncBatch is how many entries a sync reads at a time.
const syncBatch = 10000

// sync brings the tree up to the log's current size, reading the entries
// appended since the last call and storing the tiles they fill, and
// returns the tree and that size. The first call opens the tree from the
// stored tiles.
func (l *Log) sync(ctx context.Context) (*Tree, uint64, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	size, err := l.Store.LogSize(ctx)
	if err != nil {
		return nil, 0, err
	}
	if l.tree == nil {
		tree, err := openStoredTree(ctx, l.Store, size, l.TileCache)
		if err != nil {
			return nil, 0, err
		}
		if behind := size - tree.Size(); behind >= 100*syncBatch {
			arena.Logger(l.Logger).InfoContext(ctx, "tamper-evident log: storing the hash tiles of entries appended without them", "entries", behind, "from", tree.Size())
		}
		l.tree = tree
	}
	for have := l.tree.Size(); have < size; have = l.tree.Size() {
		es, err := l.Store.LogEntries(ctx, have, min(size, have+syncBatch))
		if err != nil {
			return nil, 0, err
		}
		if len(es) == 0 {
			return nil, 0, fmt.Errorf("tlog: log has %d entries but none from %d", size, have)
		}
		hashes := make([][]byte, len(es))
		for i, e := range es {
			if e.Index != have+uint64(i) {
				return nil, 0, fmt.Errorf("tlog: entry %d where %d was expected", e.Index, have+uint64(i))
			}
			hashes[i] = e.LeafHash
		}
		if err := l.tree.append(ctx, hashes); err != nil {
			return nil, 0, err
		}
	}
	return l.tree, size, nil
}

// PublicKey is the log's public key.
func (l *Log) PublicKey() ed25519.PublicKey { return l.Key.Public().(ed25519.PublicKey) }

// CheckKey reports whether the log's key signed checkpoint, the note of
// the log's latest published checkpoint (nil when there is none), so that
// a lost or swapped key file is found before a checkpoint is signed that
// no verifier of the earlier ones would accept.
func (l *Log) CheckKey(checkpoint []byte) error {
	if checkpoint == nil {
		return nil
	}
	c, err := ParseCheckpoint([]byte(NoteText(checkpoint)))
	if err != nil {
		return arena.Errorf(arena.ECONFLICT, "tlog: the published checkpoint: %v", err)
	}
	vkey, err := VerifierKey(c.Origin, l.PublicKey())
	if err != nil {
		return err
	}
	if _, err := OpenCheckpoint(checkpoint, vkey); err != nil {
		return arena.Errorf(arena.ECONFLICT, "tlog: checkpoint %d was not signed by the log key %s: use the key that signed this log", c.Size, l.PublicKeyHex())
	}
	return nil
}

// ErrRange is returned for roots and proofs about sizes or indices the
// log does not have.
var ErrRange = arena.Rejectf(arena.EINVALID, "log_range", "index or tree size out of range")

// Size is the number of entries in the log.
func (l *Log) Size(ctx context.Context) (uint64, error) {
	_, size, err := l.sync(ctx)
	return size, err
}

// RootAt is the root hash of the log's first size entries: ErrRange
// beyond the log.
func (l *Log) RootAt(ctx context.Context, size uint64) ([]byte, error) {
	tree, _, err := l.sync(ctx)
	if err != nil {
		return nil, err
	}
	return tree.root(ctx, size)
}

// Inclusion returns the proof that entry index is in the tree of the given size.
func (l *Log) Inclusion(ctx context.Context, index, size uint64) ([][]byte, error) {
	tree, _, err := l.sync(ctx)
	if err != nil {
		return nil, err
	}
	return tree.inclusionProof(ctx, index, size)
}

// Consistency returns the proof that the tree of size1 is a prefix of the
// tree of size2.
func (l *Log) Consistency(ctx context.Context, size1, size2 uint64) ([][]byte, error) {
	tree, _, err := l.sync(ctx)
	if err != nil {
		return nil, err
	}
	return tree.consistencyProof(ctx, size1, size2)
}

// Entries returns entries [from, to) of the log.
func (l *Log) Entries(ctx context.Context, from, to uint64) ([]arena.LogEntry, error) {
	return l.Store.LogEntries(ctx, from, to)
}

// VerifyInclusion checks an inclusion proof against a root, with
// transparency-dev's verifier: code independent of the Tree that proves.
func VerifyInclusion(index, size uint64, leafHash []byte, p [][]byte, root []byte) error {
	return proof.VerifyInclusion(hasher, index, size, leafHash, p, root)
}

// VerifyConsistency checks a consistency proof between two roots, with
// transparency-dev's verifier.
func VerifyConsistency(size1, size2 uint64, p [][]byte, root1, root2 []byte) error {
	return proof.VerifyConsistency(hasher, size1, size2, p, root1, root2)
}

// Equal reports whether two hashes are equal.
func Equal(a, b []byte) bool { return bytes.Equal(a, b) }

// errNoKey is returned by LoadOrCreateKey for an unreadable key file.
var errNoKey = errors.New("not an ed25519 seed (64 hex digits)")

// PublicKeyHex is the log's public key in hex.
func (l *Log) PublicKeyHex() string { return hex.EncodeToString(l.PublicKey()) }
