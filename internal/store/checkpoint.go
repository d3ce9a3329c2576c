package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/forecast-arena/arena"
)

var _ arena.CheckpointStore = (*DB)(nil)

// LatestCheckpoint implements arena.CheckpointStore.
func (d *DB) LatestCheckpoint(ctx context.Context) ([]byte, error) {
	var note string
	err := d.r().QueryRowContext(ctx, `SELECT note FROM log_checkpoints WHERE id = 1`).Scan(&note)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("store: latest checkpoint: %w", err)
	}
	return []byte(note), nil
}

// SaveCheckpoint implements arena.CheckpointStore in one statement, so two
// servers saving at once cannot both pass the check: the row is replaced
// only by a larger checkpoint, or by one of its size with the same text
// (more cosignatures). Anything else is refused with ECONFLICT.
func (d *DB) SaveCheckpoint(ctx context.Context, c arena.SignedCheckpoint) error {
	size, text, note := c.Size, c.Text, c.Note
	if size > 1<<63-1 {
		return arena.Errorf(arena.EINVALID, "store: checkpoint size %d out of range", size)
	}
	res, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO log_checkpoints (id, tree_size, text, note, updated_at) VALUES (1, ?, ?, ?, ?)
		ON CONFLICT (id) DO UPDATE SET tree_size = excluded.tree_size, text = excluded.text, note = excluded.note, updated_at = excluded.updated_at
		WHERE log_checkpoints.tree_size < excluded.tree_size OR (log_checkpoints.tree_size = excluded.tree_size AND log_checkpoints.text = excluded.text)`),
		int64(size), text, string(note), d.Now().UnixMicro())
	if err != nil {
		return fmt.Errorf("store: save checkpoint %d: %w", size, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("store: save checkpoint %d: %w", size, err)
	} else if n == 1 {
		return nil
	}
	var saved int64
	if err := d.r().QueryRowContext(ctx, `SELECT tree_size FROM log_checkpoints WHERE id = 1`).Scan(&saved); err != nil {
		return fmt.Errorf("store: save checkpoint %d: %w", size, err)
	}
	if uint64(saved) == size {
		return arena.Errorf(arena.ECONFLICT, "store: another checkpoint of size %d is saved", size)
	}
	return arena.Errorf(arena.ECONFLICT, "store: checkpoint %d is older than the saved %d", size, saved)
}
