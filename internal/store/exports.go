package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/forecast-arena/arena"
)

var _ arena.ExportStore = (*DB)(nil)

// SaveExportPart implements arena.ExportStore.
func (d *DB) SaveExportPart(ctx context.Context, hash string, data []byte) error {
	if _, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO export_parts (hash, data, created_at) VALUES (?, ?, ?) ON CONFLICT (hash) DO NOTHING`),
		hash, data, d.Now().UnixMicro()); err != nil {
		return fmt.Errorf("store: save export part %s: %w", hash, err)
	}
	return nil
}

// ExportPartHashes implements arena.ExportStore.
func (d *DB) ExportPartHashes(ctx context.Context) ([]string, error) {
	rows, err := d.r().QueryContext(ctx, `SELECT hash FROM export_parts`)
	if err != nil {
		return nil, fmt.Errorf("store: export parts: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var h string
		if err := rows.Scan(&h); err != nil {
			return nil, fmt.Errorf("store: export parts: %w", err)
		}
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: export parts: %w", err)
	}
	return out, nil
}

// ExportPart implements arena.ExportStore.
func (d *DB) ExportPart(ctx context.Context, hash string) ([]byte, error) {
	var data []byte
	err := d.r().QueryRowContext(ctx, d.rebind(`SELECT data FROM export_parts WHERE hash = ?`), hash).Scan(&data)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return nil, arena.Errorf(arena.ENOTFOUND, "store: no export part %s", hash)
	case err != nil:
		return nil, fmt.Errorf("store: export part %s: %w", hash, err)
	}
	return data, nil
}

// SaveExportManifest implements arena.ExportStore in one statement, so
// that of two servers exporting one checkpoint at once the first keeps
// its manifest and the second learns it lost.
func (d *DB) SaveExportManifest(ctx context.Context, size uint64, manifest []byte) (bool, error) {
	if size > 1<<63-1 {
		return false, arena.Errorf(arena.EINVALID, "store: export size %d out of range", size)
	}
	res, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO export_manifests (tree_size, manifest, created_at) VALUES (?, ?, ?) ON CONFLICT (tree_size) DO NOTHING`),
		int64(size), string(manifest), d.Now().UnixMicro())
	if err != nil {
		return false, fmt.Errorf("store: save export manifest %d: %w", size, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("store: save export manifest %d: %w", size, err)
	}
	return n == 1, nil
}

// ExportManifest implements arena.ExportStore.
func (d *DB) ExportManifest(ctx context.Context, size uint64, latest bool) (uint64, []byte, error) {
	var (
		got int64
		m   string
		err error
	)
	if latest {
		err = d.r().QueryRowContext(ctx, `SELECT tree_size, manifest FROM export_manifests ORDER BY tree_size DESC LIMIT 1`).Scan(&got, &m)
	} else if size <= 1<<63-1 {
		err = d.r().QueryRowContext(ctx, d.rebind(`SELECT tree_size, manifest FROM export_manifests WHERE tree_size = ?`), int64(size)).Scan(&got, &m)
	} else {
		err = sql.ErrNoRows
	}
	switch {
	case errors.Is(err, sql.ErrNoRows):
		if latest {
			return 0, nil, arena.Errorf(arena.ENOTFOUND, "store: no export published yet")
		}
		return 0, nil, arena.Errorf(arena.ENOTFOUND, "store: no export of the checkpoint of %d entries", size)
	case err != nil:
		return 0, nil, fmt.Errorf("store: export manifest: %w", err)
	}
	return uint64(got), []byte(m), nil
}
