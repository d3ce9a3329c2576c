package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/forecast-arena/arena"
)

var _ arena.LogTileStore = (*DB)(nil)

// logTileBytes is the size of a full tile: 256 hashes of 32 bytes.
const logTileBytes = arena.LogTileWidth * 32

// SaveLogTiles implements arena.LogTileStore in one transaction. Servers
// that store the same tile at once each keep going: the first stored is
// kept, and the others, computed from the same entries, are the same.
func (d *DB) SaveLogTiles(ctx context.Context, tiles []arena.LogTile) error {
	for _, t := range tiles {
		switch {
		case t.Level < 0 || t.Level > 63 || t.N > 1<<63-1:
			return arena.Errorf(arena.EINVALID, "store: no log tile %d of level %d", t.N, t.Level)
		case len(t.Hashes) != logTileBytes:
			return arena.Errorf(arena.EINVALID, "store: log tile %d of level %d: %d bytes, want %d", t.N, t.Level, len(t.Hashes), logTileBytes)
		}
	}
	if len(tiles) == 0 {
		return nil
	}
	now := d.Now().UnixMicro()
	err := d.tx(ctx, func(tx *sql.Tx) error {
		for _, t := range tiles {
			if _, err := d.execPrepared(ctx, tx, `INSERT INTO log_tiles (level, n, hashes, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (level, n) DO NOTHING`,
				t.Level, int64(t.N), t.Hashes, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: save %d log tiles from tile %d of level %d: %w", len(tiles), tiles[0].N, tiles[0].Level, err)
	}
	return nil
}

// LogTiles implements arena.LogTileStore.
func (d *DB) LogTiles(ctx context.Context, level int, from, to uint64) ([]arena.LogTile, error) {
	from, to = min(from, 1<<63-1), min(to, 1<<63-1)
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT n, hashes FROM log_tiles WHERE level = ? AND n >= ? AND n < ? ORDER BY n`),
		[]any{level, int64(from), int64(to)}, func(sc scanner) (arena.LogTile, error) {
			t := arena.LogTile{Level: level}
			var n int64
			if err := sc.Scan(&n, &t.Hashes); err != nil {
				return t, err
			}
			t.N = uint64(n)
			return t, nil
		})
	if err != nil {
		return nil, fmt.Errorf("store: log tiles [%d, %d) of level %d: %w", from, to, level, err)
	}
	return out, nil
}
