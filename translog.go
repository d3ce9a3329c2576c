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

// LogStore persists the log. Entries get consecutive indices from 0 in
// append order; they are never changed or deleted.
type LogStore interface {
	// AppendLog stores an entry at the next index and returns that index.
	AppendLog(ctx context.Context, kind string, data, leafHash []byte, at time.Time) (uint64, error)
	// LogEntries returns the entries with from ≤ index < to, in order.
	LogEntries(ctx context.Context, from, to uint64) ([]LogEntry, error)
	LogSize(ctx context.Context) (uint64, error)
}

// LogTileWidth is the number of hashes in a full tile of the log's tree.
const LogTileWidth = 256

// LogTile is a full hash tile of the log's Merkle tree (C2SP tlog-tiles,
// height 8): hashes N·256 … N·256+255 of level 8·Level of the tree, each
// the hash of a complete subtree of 256^Level entries, 32 bytes each in
// order (8 KiB).
type LogTile struct {
	Level  int
	N      uint64
	Hashes []byte
}

// LogTileStore keeps the full hash tiles of the log's tree, so that a
// server keeps only the tree's right edge in memory and reads the rest
// from the tiles, which every server of the arena shares. A tile is a
// function of the log's entries: any server may store it, and storing
// one that is stored already keeps the stored one.
type LogTileStore interface {
	// SaveLogTiles stores tiles, all of them or none; a tile already
	// stored is left as it is. A tile that is not 256 hashes is EINVALID.
	SaveLogTiles(ctx context.Context, tiles []LogTile) error
	// LogTiles returns the stored tiles of level with from ≤ N < to, in
	// order of N; the tiles not stored are left out.
	LogTiles(ctx context.Context, level int, from, to uint64) ([]LogTile, error)
}

// SignedCheckpoint is a checkpoint of the log as published, the log's
// only signed statement of its tree: its tree
// size, its signed text (the C2SP checkpoint body), and the whole signed
// note, the log's signature and any witnesses' cosignatures included.
type SignedCheckpoint struct {
	Size uint64
	Text string
	Note []byte
}

// CheckpointStore keeps the log's published checkpoint, so that every
// server of the arena serves the same one and none signs a checkpoint
// that contradicts it.
type CheckpointStore interface {
	// LatestCheckpoint returns the note last saved, nil when there is none.
	LatestCheckpoint(ctx context.Context) ([]byte, error)
	// SaveCheckpoint saves c as the latest. It fails with ECONFLICT,
	// saving nothing, when a larger checkpoint is saved already (another
	// server published further) or one of the same size with another text
	// (a fork). One of the saved size and text replaces it: the same
	// checkpoint with more cosignatures.
	SaveCheckpoint(ctx context.Context, c SignedCheckpoint) error
}

// ExportStore keeps the exports the arena publishes: content-addressed
// parts, each stored once and shared by the exports that contain it, and
// per checkpoint size a manifest naming an export's files and their parts.
// A part or a manifest never changes; exports a retention policy no
// longer keeps are deleted, and then the parts no export names.
type ExportStore interface {
	// SaveExportPart stores data under hash (its SHA-256 in lowercase
	// hex); storing a hash already stored keeps its data and stamps it
	// stored now (see ExportPartsBefore).
	SaveExportPart(ctx context.Context, hash string, data []byte) error
	// ExportPart returns the part stored under hash; ENOTFOUND without one.
	ExportPart(ctx context.Context, hash string) ([]byte, error)
	// SaveExportManifest stores the manifest of the export of the
	// checkpoint of size entries, unless one is stored for that size
	// already (another server's, kept): it reports whether it stored it.
	SaveExportManifest(ctx context.Context, size uint64, manifest []byte) (bool, error)
	// ExportManifest returns the manifest stored for size, or the largest
	// size's when latest; ENOTFOUND without one.
	ExportManifest(ctx context.Context, size uint64, latest bool) (uint64, []byte, error)
	// ExportManifests lists the exports stored, by size.
	ExportManifests(ctx context.Context) ([]StoredExport, error)
	// DeleteExportManifests deletes the manifests of the given sizes.
	DeleteExportManifests(ctx context.Context, sizes []uint64) error
	// ExportPartsBefore lists the parts last stored before t.
	ExportPartsBefore(ctx context.Context, t time.Time) ([]string, error)
	// DeleteExportParts deletes the given parts.
	DeleteExportParts(ctx context.Context, hashes []string) error
}

// StoredExport is one export stored: its checkpoint's size and when it
// was stored.
type StoredExport struct {
	Size      uint64
	CreatedAt time.Time
}
