package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/forecast-arena/arena"
)

var _ arena.SettingStore = (*DB)(nil)

// Setting implements arena.SettingStore.
func (d *DB) Setting(ctx context.Context, key string) (string, bool, error) {
	var v string
	err := d.r().QueryRowContext(ctx, d.rebind(`SELECT value FROM settings WHERE key = ?`), key).Scan(&v)
	switch {
	case errors.Is(err, sql.ErrNoRows):
		return "", false, nil
	case err != nil:
		return "", false, fmt.Errorf("store: load setting %s: %w", key, err)
	}
	return v, true, nil
}

// PutSetting implements arena.SettingStore.
func (d *DB) PutSetting(ctx context.Context, key, value string) error {
	_, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`), key, value, d.Now().UnixMicro())
	if err != nil {
		return fmt.Errorf("store: save setting %s: %w", key, err)
	}
	return nil
}

// InitSetting implements arena.SettingStore: the first value stored under
// key wins, on either engine, however many processes race to store one.
func (d *DB) InitSetting(ctx context.Context, key, value string) (string, error) {
	if _, err := d.db.ExecContext(ctx, d.rebind(`INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?)
		ON CONFLICT (key) DO NOTHING`), key, value, d.Now().UnixMicro()); err != nil {
		return "", fmt.Errorf("store: init setting %s: %w", key, err)
	}
	v, ok, err := d.Setting(ctx, key)
	if err == nil && !ok {
		err = fmt.Errorf("store: setting %s vanished after it was stored", key)
	}
	return v, err
}
