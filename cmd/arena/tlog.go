package main

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

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

// openLog opens the tamper-evident log of the arena in db.
func openLog(o config.Options, flagPath string, db *store.DB, logger *slog.Logger) (*tlog.Log, error) {
	path, err := logKeyPath(o, flagPath)
	if err != nil {
		return nil, err
	}
	key, err := tlog.LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	lg := &tlog.Log{Store: db, Key: key, Logger: logger}
	logger.Info("tamper-evident log", "key", path, "public_key", lg.PublicKeyHex())
	return lg, nil
}
