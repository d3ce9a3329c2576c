package arena

import (
	"context"
	"time"
)

// LogEntry is one leaf of the tamper-evident log: Data is the leaf itself
// (canonical JSON of an accepted commit, reveal, benchmark, resolution,
// outcome or score) and LeafHash its RFC 6962 leaf hash.
type LogEntry struct {
	Index     uint64
	Kind      string
	Data      []byte
	LeafHash  []byte
	CreatedAt time.Time
}

// LogLeaf is a log entry to append together with another write: the
// store appends it in the same transaction, so the write and its entry are
// stored both or neither.
type LogLeaf struct {
	Kind string
	Data []byte // the leaf (tlog.Encode)
	Hash []byte // its RFC 6962 leaf hash
}

// SignedHead is a signed tree head: the log's size and root hash at a time,
// signed by the server's log key.
type SignedHead struct {
	TreeSize  uint64
	RootHash  []byte
	Timestamp time.Time
	Signature []byte
}

// LogStore persists the log. Entries get consecutive indices from 0 in
// append order; they are never changed or deleted.
type LogStore interface {
	// AppendLog stores an entry at the next index and returns that index.
	AppendLog(ctx context.Context, kind string, data, leafHash []byte, at time.Time) (uint64, error)
	// LogEntries returns the entries with from ≤ index < to, in order.
	LogEntries(ctx context.Context, from, to uint64) ([]LogEntry, error)
	LogSize(ctx context.Context) (uint64, error)
	// SaveHead records a signed tree head (once per size).
	SaveHead(ctx context.Context, h SignedHead) error
	// Heads returns every recorded head, by increasing size.
	Heads(ctx context.Context) ([]SignedHead, error)
}
