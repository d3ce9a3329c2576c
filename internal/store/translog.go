package store

import (
	"context"
	"database/sql"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.LogStore = (*DB)(nil)

// AppendLog implements arena.LogStore.
func (d *DB) AppendLog(ctx context.Context, kind string, data, leafHash []byte, at time.Time) (uint64, error) {
	var idx uint64
	err := d.tx(ctx, func(tx *sql.Tx) (err error) {
		idx, err = d.appendLogIn(ctx, tx, []timedLeaf{{&arena.LogLeaf{Kind: kind, Data: data, Hash: leafHash}, at}})
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("store: append %s to the log: %w", kind, err)
	}
	return idx, nil
}

type timedLeaf struct {
	leaf *arena.LogLeaf
	at   time.Time
}

// appendLogIn stores leaves at the next indices in tx and returns the
// first. The indices follow the current size, taken under the write lock
// (SQLite's immediate transactions; an advisory lock on PostgreSQL), so
// concurrent appends get consecutive indices; the lock is held to the end
// of tx, which is how a submission and its entry commit together.
func (d *DB) appendLogIn(ctx context.Context, tx *sql.Tx, leaves []timedLeaf) (uint64, error) {
	if d.dialect == postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7262014)`); err != nil {
			return 0, err
		}
	}
	var idx int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(idx) + 1, 0) FROM log_entries`).Scan(&idx); err != nil {
		return 0, err
	}
	for i, l := range leaves {
		if _, err := d.execPrepared(ctx, tx, `INSERT INTO log_entries (idx, kind, data, leaf_hash, created_at) VALUES (?, ?, ?, ?, ?)`,
			idx+int64(i), l.leaf.Kind, string(l.leaf.Data), hex.EncodeToString(l.leaf.Hash), l.at.UnixMicro()); err != nil {
			return 0, err
		}
	}
	return uint64(idx), nil
}

// appendLeaves appends leaves, stamped at, in tx (nothing when there are
// none).
func (d *DB) appendLeaves(ctx context.Context, tx *sql.Tx, at time.Time, leaves []*arena.LogLeaf) error {
	if len(leaves) == 0 {
		return nil
	}
	ls := make([]timedLeaf, len(leaves))
	for i, l := range leaves {
		ls[i] = timedLeaf{l, at}
	}
	if _, err := d.appendLogIn(ctx, tx, ls); err != nil {
		return fmt.Errorf("store: append %d entries to the log: %w", len(ls), err)
	}
	return nil
}

// LogEntries implements arena.LogStore.
func (d *DB) LogEntries(ctx context.Context, from, to uint64) ([]arena.LogEntry, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT idx, kind, data, leaf_hash, created_at FROM log_entries WHERE idx >= ? AND idx < ? ORDER BY idx`),
		[]any{int64(from), int64(to)}, func(sc scanner) (arena.LogEntry, error) {
			var e arena.LogEntry
			var idx, at int64
			var data, leaf string
			if err := sc.Scan(&idx, &e.Kind, &data, &leaf, &at); err != nil {
				return e, err
			}
			h, err := hex.DecodeString(leaf)
			if err != nil {
				return e, fmt.Errorf("leaf hash of entry %d: %w", idx, err)
			}
			e.Index, e.Data, e.LeafHash, e.CreatedAt = uint64(idx), []byte(data), h, time.UnixMicro(at).UTC()
			return e, nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: log entries [%d, %d): %w", from, to, err)
	}
	return out, nil
}

// LogSize implements arena.LogStore. Entries have consecutive indices from
// 0, so the size is the largest index plus one: a read of the primary key
// index, where COUNT(*) would read every entry (each of the log's proofs
// and tiles asks for the size).
func (d *DB) LogSize(ctx context.Context) (uint64, error) {
	var n int64
	if err := d.r().QueryRowContext(ctx, `SELECT COALESCE(MAX(idx) + 1, 0) FROM log_entries`).Scan(&n); err != nil {
		return 0, fmt.Errorf("store: log size: %w", err)
	}
	return uint64(n), nil
}
