package app

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
)

// OpenLog opens the arena's tamper-evident log (see openLog) on the app's
// clock, and has the forecast track and the HTTP API use it. Every
// command that signs or logs opens it here.
func (a *App) OpenLog(ctx context.Context) (*tlog.Log, error) {
	lg, err := openLog(ctx, a.Config, a.DB, a.Logger)
	if err != nil {
		return nil, err
	}
	lg.Now = a.deps.Now
	a.Log = lg
	if a.pub, err = a.newPublisher(ctx); err != nil {
		return nil, err
	}
	return lg, nil
}

// logKeyPath is where the tamper-evident log's key lives: ARENA_LOG_KEY
// (--log-key), else in the data directory (ARENA_DATA_DIR, else the
// SQLite database's directory), named after a SQLite database
// (tlog.KeyFile) and log.key for PostgreSQL, else in the user's
// configuration directory (PostgreSQL without ARENA_DATA_DIR), so that it
// outlives restarts. legacy is the log.key that a SQLite database's log
// was signed with before keys were named after their database ("" when
// there is none to look for).
func logKeyPath(o config.Options) (path, legacy string, err error) {
	if o.LogKey != "" {
		return o.LogKey, "", nil
	}
	if dir, ok := o.DataDirectory(); ok {
		if db, ok := strings.CutPrefix(o.DB, "sqlite:"); ok {
			return filepath.Join(dir, tlog.KeyFile(db)), filepath.Join(dir, "log.key"), nil
		}
		return filepath.Join(dir, "log.key"), "", nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", "", fmt.Errorf("no place for the log key: set ARENA_DATA_DIR or --log-key (%w)", err)
	}
	return filepath.Join(dir, "forecast-arena", "log.key"), "", nil
}

// openLog opens the tamper-evident log of the arena in db. The key is
// bound to the database the first time (its public half is recorded in
// it) and refused after that unless it is that key; a database whose log
// has a published checkpoint and records no key yet records the one that
// signed it. A key is made only for a log that has signed nothing and
// records no key: a missing key is otherwise an error, not a silent new
// signer.
func openLog(ctx context.Context, o config.Options, db *store.DB, logger *slog.Logger) (*tlog.Log, error) {
	path, legacy, err := logKeyPath(o)
	if err != nil {
		return nil, err
	}
	checkpoint, err := db.LatestCheckpoint(ctx)
	if err != nil {
		return nil, err
	}
	bound, _, err := db.Setting(ctx, tlog.KeySetting)
	if err != nil {
		return nil, err
	}
	if !exists(path) && exists(legacy) && signedBy(legacy, checkpoint, bound) {
		logger.Info("tamper-evident log: reading the key from its former file; rename it to keep it to this database", "key", legacy, "rename_to", path)
		path = legacy
	}
	if !exists(path) {
		switch {
		case checkpoint != nil:
			return nil, arena.Errorf(arena.EINVALID, "log key %s does not exist, but this database's log has a published checkpoint: give the key that signed it with --log-key (or ARENA_DATA_DIR)", path)
		case bound != "":
			return nil, arena.Errorf(arena.EINVALID, "log key %s does not exist, but this database's log belongs to the key with public half %s: give that key with --log-key (or ARENA_DATA_DIR)", path, bound)
		}
	}
	key, err := tlog.LoadOrCreateKey(path)
	if err != nil {
		return nil, err
	}
	// The largest tree the key signed is kept beside the key, out of the
	// database, so that a restored backup or another database given this
	// key cannot make it sign a second root for a size it published.
	lg := &tlog.Log{Store: db, Key: key, Logger: logger, Signed: tlog.StateFile{Path: tlog.StatePath(path)}}
	if err := lg.CheckKey(checkpoint); err != nil {
		return nil, fmt.Errorf("log key %s: %w", path, err)
	}
	if err := tlog.BindKey(ctx, db, lg.PublicKey()); err != nil {
		return nil, fmt.Errorf("log key %s: %w", path, err)
	}
	switch err := lg.CheckSigned(ctx); {
	case errors.Is(err, tlog.ErrFork):
		return nil, fmt.Errorf("%w; refusing to sign anything with log key %s (its record: %s). See \"Restoring a backup\" in docs/operations.md", err, path, tlog.StatePath(path))
	case err != nil:
		return nil, fmt.Errorf("log key %s: %w", path, err)
	}
	logger.Info("tamper-evident log", "key", path, "public_key", lg.PublicKeyHex())
	return lg, nil
}

// signedBy reports whether the key file at path is the key of a log with
// this latest checkpoint note (nil for none) and bound key: the recorded
// key, else the checkpoint's signer. A log with neither belongs to no key
// yet.
func signedBy(path string, checkpoint []byte, bound string) bool {
	key, err := tlog.LoadOrCreateKey(path)
	if err != nil {
		return false
	}
	lg := &tlog.Log{Key: key}
	if bound != "" {
		return lg.PublicKeyHex() == bound
	}
	return checkpoint != nil && lg.CheckKey(checkpoint) == nil
}

// exists reports whether there is a file at path; one that cannot be
// read counts, for reading it to say why.
func exists(path string) bool {
	if path == "" {
		return false
	}
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}
