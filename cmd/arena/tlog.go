package main

import (
	"log/slog"
	"path/filepath"

	"github.com/forecast-arena/arena/config"
	"github.com/forecast-arena/arena/store"
	"github.com/forecast-arena/arena/tlog"
)

// logKeyPath is where the tamper-evident log's key lives: the flag's path,
// else log.key in the data directory (ARENA_DATA_DIR, else the SQLite
// database's directory), else arena-log.key in the working directory.
func logKeyPath(o config.Options, flagPath string) string {
	if flagPath != "" {
		return flagPath
	}
	if dir, err := dataDir(o); err == nil {
		return filepath.Join(dir, "log.key")
	}
	return "arena-log.key"
}

// openLog opens the tamper-evident log of the arena in db.
func openLog(o config.Options, flagPath string, db *store.DB, logger *slog.Logger) (*tlog.Log, error) {
	path := logKeyPath(o, flagPath)
	key, err := tlog.LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	lg := &tlog.Log{Store: db, Key: key, Logger: logger}
	logger.Info("tamper-evident log", "key", path, "public_key", lg.PublicKeyHex())
	return lg, nil
}
