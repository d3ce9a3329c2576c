package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
)

// logKeyPath is where the tamper-evident log's key lives: the flag's path,
// else log.key in the data directory (ARENA_DATA_DIR, else the SQLite
// database's directory), else in the user's configuration directory
// (PostgreSQL without ARENA_DATA_DIR), so that it outlives restarts.
func logKeyPath(o config.Options, flagPath string) (string, error) {
	if flagPath != "" {
		return flagPath, nil
	}
	if dir, err := dataDir(o); err == nil {
		return filepath.Join(dir, "log.key"), nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no place for the log key: set ARENA_DATA_DIR or --log-key (%w)", err)
	}
	return filepath.Join(dir, "forecast-arena", "log.key"), nil
}

// openLog opens the tamper-evident log of the arena in db. A key is made
// only for a log that has signed nothing yet: a missing or different key
// for a log with signed heads is an error, not a silent new signer.
func openLog(ctx context.Context, o config.Options, flagPath string, db *store.DB, logger *slog.Logger) (*tlog.Log, error) {
	path, err := logKeyPath(o, flagPath)
	if err != nil {
		return nil, err
	}
	heads, err := db.Heads(ctx)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) && len(heads) > 0 {
		return nil, arena.Errorf(arena.EINVALID, "log key %s does not exist, but this database's log has %s: give the key that signed them with --log-key (or ARENA_DATA_DIR)", path, plural(len(heads), "signed tree head"))
	}
	key, err := tlog.LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	lg := &tlog.Log{Store: db, Key: key, Logger: logger}
	if err := lg.CheckKey(heads); err != nil {
		return nil, fmt.Errorf("log key %s: %w", path, err)
	}
	logger.Info("tamper-evident log", "key", path, "public_key", lg.PublicKeyHex())
	return lg, nil
}
