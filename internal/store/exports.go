package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

var _ arena.ExportStore = (*DB)(nil)

// SaveExportPart implements arena.ExportStore.
func (d *DB) SaveExportPart(ctx context.Context, hash string, data []byte) error {
	if _, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO export_parts (hash, data, created_at) VALUES (?, ?, ?)
		ON CONFLICT (hash) DO UPDATE SET created_at = excluded.created_at`), hash, data, d.Now().UnixMicro()); err != nil {
		return fmt.Errorf("store: save export part %s: %w", hash, err)
	}
	return nil
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

// ExportManifests implements arena.ExportStore.
func (d *DB) ExportManifests(ctx context.Context) ([]arena.StoredExport, error) {
	out, err := queryAll(ctx, d.r(), `SELECT tree_size, created_at FROM export_manifests ORDER BY tree_size`, nil,
		func(sc scanner) (arena.StoredExport, error) {
			var size, at int64
			err := sc.Scan(&size, &at)
			return arena.StoredExport{Size: uint64(size), CreatedAt: time.UnixMicro(at).UTC()}, err
		})
	if err != nil {
		return nil, fmt.Errorf("store: export manifests: %w", err)
	}
	return out, nil
}

// DeleteExportManifests implements arena.ExportStore.
func (d *DB) DeleteExportManifests(ctx context.Context, sizes []uint64) error {
	for chunk := range slices.Chunk(sizes, 500) {
		args := make([]any, len(chunk))
		for i, s := range chunk {
			args[i] = int64(s)
		}
		if _, err := d.db.ExecContext(ctx, d.rebind(`DELETE FROM export_manifests WHERE tree_size IN (`+placeholderList(len(chunk))+`)`), args...); err != nil {
			return fmt.Errorf("store: delete export manifests: %w", err)
		}
	}
	return nil
}

// ExportPartsBefore implements arena.ExportStore.
func (d *DB) ExportPartsBefore(ctx context.Context, t time.Time) ([]string, error) {
	out, err := queryAll(ctx, d.r(), d.rebind(`SELECT hash FROM export_parts WHERE created_at < ?`), []any{t.UnixMicro()},
		func(sc scanner) (h string, err error) { return h, sc.Scan(&h) })
	if err != nil {
		return nil, fmt.Errorf("store: export parts: %w", err)
	}
	return out, nil
}

// DeleteExportParts implements arena.ExportStore.
func (d *DB) DeleteExportParts(ctx context.Context, hashes []string) error {
	for chunk := range slices.Chunk(hashes, 500) {
		args := make([]any, len(chunk))
		for i, h := range chunk {
			args[i] = h
		}
		if _, err := d.db.ExecContext(ctx, d.rebind(`DELETE FROM export_parts WHERE hash IN (`+placeholderList(len(chunk))+`)`), args...); err != nil {
			return fmt.Errorf("store: delete export parts: %w", err)
		}
	}
	return nil
}

// placeholderList is n comma-separated placeholders.
func placeholderList(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}
