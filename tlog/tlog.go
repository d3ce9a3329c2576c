// Package tlog is the tamper-evident log of the forecast track: every
// accepted commit, reveal, benchmark, resolution, outcome, score and
// signed agent profile is a leaf of an RFC 6962 Merkle tree
// (github.com/transparency-dev/merkle), and the server signs tree heads
// with an ed25519 key. Anyone holding a signed head can check that an
// entry is in the log (inclusion proof) and that a later head extends an
// earlier one (consistency proof), so the operator cannot rewrite history
// without its signatures contradicting each other.
package tlog

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/bits"
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
	Store  arena.LogStore
	Key    ed25519.PrivateKey
	Now    func() time.Time
	Logger *slog.Logger
	// Signed, when set, keeps the largest tree the key signed outside
	// the store: nothing is signed that contradicts it (CheckSigned).
	Signed SignedState

	mu     sync.Mutex
	hashes [][]byte // leaf hashes of entries [0, len), loaded lazily
	tree   hashTree // the stored hashes over them, for tiles and checkpoints
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

// leaves returns the leaf hashes of the whole log (at least size entries
// when size > 0), loading the entries appended since the last call.
func (l *Log) leaves(ctx context.Context) ([][]byte, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	size, err := l.Store.LogSize(ctx)
	if err != nil {
		return nil, err
	}
	for uint64(len(l.hashes)) < size {
		from := uint64(len(l.hashes))
		to := min(size, from+10000)
		es, err := l.Store.LogEntries(ctx, from, to)
		if err != nil {
			return nil, err
		}
		if len(es) == 0 {
			return nil, fmt.Errorf("tlog: log has %d entries but none from %d", size, from)
		}
		for _, e := range es {
			if e.Index != uint64(len(l.hashes)) {
				return nil, fmt.Errorf("tlog: entry %d where %d was expected", e.Index, len(l.hashes))
			}
			l.hashes = append(l.hashes, e.LeafHash)
		}
	}
	return l.hashes[:size:size], nil
}

// Head is a signed tree head as the API and exports carry it.
type Head struct {
	TreeSize  uint64 `json:"tree_size"`
	RootHash  string `json:"root_hash"`        // hex
	Timestamp int64  `json:"timestamp_micros"` // Unix microseconds
	Signature string `json:"signature"`        // hex ed25519 signature of Message
	PublicKey string `json:"public_key"`       // hex ed25519 key that signed it
}

// Message is the byte string a tree head's signature covers.
func Message(size uint64, root []byte, timestampMicros int64) []byte {
	return fmt.Appendf(nil, "forecast-arena tree head v1\n%d\n%x\n%d\n", size, root, timestampMicros)
}

// HeadOf is the API form of a stored head.
func HeadOf(h arena.SignedHead, pub ed25519.PublicKey) Head {
	return Head{TreeSize: h.TreeSize, RootHash: hex.EncodeToString(h.RootHash), Timestamp: h.Timestamp.UnixMicro(),
		Signature: hex.EncodeToString(h.Signature), PublicKey: hex.EncodeToString(pub)}
}

// Verify checks h's signature with pub (the log key the verifier trusts;
// h.PublicKey must name the same key) and returns its root hash. Its
// errors say what is wrong; the caller names the head.
func (h Head) Verify(pub ed25519.PublicKey) ([]byte, error) {
	if h.PublicKey != hex.EncodeToString(pub) {
		return nil, fmt.Errorf("signed by key %s, not by the log key %x", h.PublicKey, []byte(pub))
	}
	root, err := hex.DecodeString(h.RootHash)
	if err != nil || len(root) != sha256.Size {
		return nil, fmt.Errorf("root hash %q is not 32 hex bytes", h.RootHash)
	}
	sig, err := hex.DecodeString(h.Signature)
	if err != nil || !ed25519.Verify(pub, Message(h.TreeSize, root, h.Timestamp), sig) {
		return nil, errors.New("bad signature")
	}
	return root, nil
}

// PublicKey is the log's public key.
func (l *Log) PublicKey() ed25519.PublicKey { return l.Key.Public().(ed25519.PublicKey) }

// CheckKey reports whether the log's key is the one that signed the newest
// of its recorded heads, so that a lost or swapped key file is found before
// a head is signed that no verifier of the earlier heads would accept.
func (l *Log) CheckKey(heads []arena.SignedHead) error {
	if len(heads) == 0 {
		return nil
	}
	last := heads[len(heads)-1]
	if _, err := HeadOf(last, l.PublicKey()).Verify(l.PublicKey()); err != nil {
		return arena.Errorf(arena.ECONFLICT, "tlog: tree head %d was not signed by the log key %s: use the key that signed this log", last.TreeSize, l.PublicKeyHex())
	}
	return nil
}

// SignedHead returns a signed head of the log's current size, signing and
// recording a new one when the log grew since the last.
func (l *Log) SignedHead(ctx context.Context) (Head, error) {
	hs, err := l.leaves(ctx)
	if err != nil {
		return Head{}, err
	}
	heads, err := l.Store.Heads(ctx)
	if err != nil {
		return Head{}, err
	}
	size := uint64(len(hs))
	if n := len(heads); n > 0 && heads[n-1].TreeSize == size {
		return HeadOf(heads[n-1], l.PublicKey()), nil
	}
	root, err := Root(hs)
	if err != nil {
		return Head{}, err
	}
	if err := l.beforeSigning(ctx, SignedTree{Size: size, Root: root}); err != nil {
		return Head{}, err
	}
	ts := l.now().Truncate(time.Microsecond)
	h := arena.SignedHead{TreeSize: size, RootHash: root, Timestamp: ts, Signature: ed25519.Sign(l.Key, Message(size, root, ts.UnixMicro()))}
	if err := l.Store.SaveHead(ctx, h); err != nil {
		return Head{}, err
	}
	// Another replica may have recorded this size first: serve what is stored.
	if heads, err = l.Store.Heads(ctx); err != nil {
		return Head{}, err
	}
	for _, s := range heads {
		if s.TreeSize == size {
			return HeadOf(s, l.PublicKey()), nil
		}
	}
	return HeadOf(h, l.PublicKey()), nil
}

// Heads returns every head the server has signed, oldest first.
func (l *Log) Heads(ctx context.Context) ([]Head, error) {
	hs, err := l.Store.Heads(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Head, len(hs))
	for i, h := range hs {
		out[i] = HeadOf(h, l.PublicKey())
	}
	return out, nil
}

// ErrRange is returned for proofs about sizes or indices the log does not have.
var ErrRange = arena.Rejectf(arena.EINVALID, "log_range", "index or tree size out of range")

// Inclusion returns the proof that entry index is in the tree of the given size.
func (l *Log) Inclusion(ctx context.Context, index, size uint64) ([][]byte, error) {
	hs, err := l.leaves(ctx)
	if err != nil {
		return nil, err
	}
	if size > uint64(len(hs)) || index >= size {
		return nil, ErrRange
	}
	return InclusionProof(hs[:size], index)
}

// Consistency returns the proof that the tree of size1 is a prefix of the
// tree of size2.
func (l *Log) Consistency(ctx context.Context, size1, size2 uint64) ([][]byte, error) {
	hs, err := l.leaves(ctx)
	if err != nil {
		return nil, err
	}
	if size2 > uint64(len(hs)) || size1 > size2 {
		return nil, ErrRange
	}
	return ConsistencyProof(hs[:size2], size1)
}

// Entries returns entries [from, to) of the log.
func (l *Log) Entries(ctx context.Context, from, to uint64) ([]arena.LogEntry, error) {
	return l.Store.LogEntries(ctx, from, to)
}

// Root is the RFC 6962 root hash of a tree with the given leaf hashes.
func Root(leaves [][]byte) ([]byte, error) {
	if len(leaves) == 0 {
		return hasher.EmptyRoot(), nil
	}
	return (&Tree{leaves: leaves}).subtree(0, uint64(len(leaves)))
}

// Tree proves inclusion and consistency over a fixed list of leaf hashes.
// It keeps every node it hashes, so proving each of n leaves costs
// O(n log n) hashes instead of O(n) for every proof.
type Tree struct {
	leaves [][]byte
	nodes  map[[2]uint64][]byte
}

// NewTree is the tree over leaves; it holds the slice, which must not change.
func NewTree(leaves [][]byte) *Tree {
	return &Tree{leaves: leaves, nodes: map[[2]uint64][]byte{}}
}

// subtree is RFC 6962's MTH over leaves [begin, end): the node hash of a
// perfect subtree, or of the right edge of a tree.
func (t *Tree) subtree(begin, end uint64) ([]byte, error) {
	if end <= begin || end > uint64(len(t.leaves)) {
		return nil, fmt.Errorf("tlog: subtree [%d, %d) of %d leaves", begin, end, len(t.leaves))
	}
	if end-begin == 1 {
		return t.leaves[begin], nil
	}
	if h, ok := t.nodes[[2]uint64{begin, end}]; ok { // a nil map (Root) keeps nothing
		return h, nil
	}
	k := uint64(1) << (bits.Len64(end-begin-1) - 1) // largest power of two < end-begin
	l, err := t.subtree(begin, begin+k)
	if err != nil {
		return nil, err
	}
	r, err := t.subtree(begin+k, end)
	if err != nil {
		return nil, err
	}
	h := hasher.HashChildren(l, r)
	if t.nodes != nil {
		t.nodes[[2]uint64{begin, end}] = h
	}
	return h, nil
}

func (t *Tree) rehash(nodes proof.Nodes) ([][]byte, error) {
	hs := make([][]byte, len(nodes.IDs))
	for i, id := range nodes.IDs {
		b, e := id.Coverage()
		var err error
		if hs[i], err = t.subtree(b, min(e, uint64(len(t.leaves)))); err != nil {
			return nil, err
		}
	}
	return nodes.Rehash(hs, hasher.HashChildren)
}

// InclusionProof proves leaf index in the tree.
func (t *Tree) InclusionProof(index uint64) ([][]byte, error) {
	nodes, err := proof.Inclusion(index, uint64(len(t.leaves)))
	if err != nil {
		return nil, err
	}
	return t.rehash(nodes)
}

// ConsistencyProof proves that the tree over the first size1 leaves is a
// prefix of the tree.
func (t *Tree) ConsistencyProof(size1 uint64) ([][]byte, error) {
	nodes, err := proof.Consistency(size1, uint64(len(t.leaves)))
	if err != nil {
		return nil, err
	}
	return t.rehash(nodes)
}

// InclusionProof proves leaf index in the tree over leaves. A single
// proof reuses no node, so the tree keeps none (as for Root).
func InclusionProof(leaves [][]byte, index uint64) ([][]byte, error) {
	return (&Tree{leaves: leaves}).InclusionProof(index)
}

// ConsistencyProof proves that the tree over leaves[:size1] is a prefix of
// the tree over leaves, keeping no node.
func ConsistencyProof(leaves [][]byte, size1 uint64) ([][]byte, error) {
	return (&Tree{leaves: leaves}).ConsistencyProof(size1)
}

// VerifyInclusion checks an inclusion proof against a root.
func VerifyInclusion(index, size uint64, leafHash []byte, p [][]byte, root []byte) error {
	return proof.VerifyInclusion(hasher, index, size, leafHash, p, root)
}

// VerifyConsistency checks a consistency proof between two roots.
func VerifyConsistency(size1, size2 uint64, p [][]byte, root1, root2 []byte) error {
	return proof.VerifyConsistency(hasher, size1, size2, p, root1, root2)
}

// Equal reports whether two hashes are equal.
func Equal(a, b []byte) bool { return bytes.Equal(a, b) }

// errNoKey is returned by LoadOrCreateKey for an unreadable key file.
var errNoKey = errors.New("not an ed25519 seed (64 hex digits)")

// PublicKeyHex is the log's public key in hex, as heads name it.
func (l *Log) PublicKeyHex() string { return hex.EncodeToString(l.PublicKey()) }
