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

// LogMode is what a program does with the tamper-evident log.
type LogMode int

const (
	// LogRead reads the log as the database holds it, without its key:
	// no key is read, made or bound and nothing is signed, so the HTTP
	// API serves neither checkpoints nor exports and serve's jobs are
	// refused. For the commands that sign nothing.
	LogRead LogMode = iota
	// LogWrite opens the log with its key (see openLog) on the app's
	// clock, with its checkpoint publisher: for serve and the commands
	// whose results are logged, signed or exported.
	LogWrite
)

// initLog gives the app its log as a.deps.Log says.
func (a *App) initLog(ctx context.Context) error {
	if a.deps.Log != LogWrite {
		a.TLog = &tlog.Log{Store: a.DB, Now: a.deps.Now, Logger: a.Logger}
		return nil
	}
	lg, err := openLog(ctx, a.Config, a.DB, a.Logger)
	if err != nil {
		return err
	}
	lg.Now = a.deps.Now
	a.TLog = lg
	a.pub, err = a.newPublisher(ctx)
	return err
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
// signer. Beside the key, its record of the largest tree it signed
// (tlog.StateFile) must hold a tree this log holds; the record is made by
// the first start of a log that has signed nothing, and a missing one is
// refused otherwise unless o.NewLogRecord. Every check runs before
// anything is written, so a refused start leaves no key file, no record
// and no key bound to the database.
func openLog(ctx context.Context, o config.Options, db *store.DB, logger *slog.Logger) (*tlog.Log, error) {
	// Replicas started at once on one host: another may make the key, then
	// the record, after this start looked; each is made once, so a third
	// look finds both.
	lg, err := openLogOnce(ctx, o, db, logger)
	for i := 0; i < 2 && errors.Is(err, errRaced); i++ {
		lg, err = openLogOnce(ctx, o, db, logger)
	}
	return lg, err
}

// errRaced is wrapped by openLogOnce's error when another start made the
// key or its record between its checks and its writes.
var errRaced = errors.New("made meanwhile by another start")

func openLogOnce(ctx context.Context, o config.Options, db *store.DB, logger *slog.Logger) (*tlog.Log, error) {
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
	key, err := tlog.LoadKey(path)
	newKey := errors.Is(err, fs.ErrNotExist)
	switch {
	case newKey && checkpoint != nil:
		return nil, arena.Errorf(arena.EINVALID, "log key %s does not exist, but this database's log has a published checkpoint: give the key that signed it with --log-key (or ARENA_DATA_DIR)", path)
	case newKey && bound != "":
		return nil, arena.Errorf(arena.EINVALID, "log key %s does not exist, but this database's log belongs to the key with public half %s: give that key with --log-key (or ARENA_DATA_DIR)", path, bound)
	case newKey:
		key, err = tlog.GenerateKey()
	}
	if err != nil {
		return nil, err
	}
	// The largest tree the key signed is kept beside the key, out of the
	// database, so that a restored backup or another database given this
	// key cannot make it sign a second root for a size it published.
	record := tlog.StateFile{Path: tlog.StatePath(path)}
	lg := &tlog.Log{Store: db, Key: key, Logger: logger, Signed: record}
	if err := lg.CheckKey(checkpoint); err != nil {
		return nil, fmt.Errorf("log key %s: %w", path, err)
	}
	if err := tlog.CheckBound(bound, lg.PublicKey()); err != nil {
		return nil, fmt.Errorf("log key %s: %w", path, err)
	}
	create, err := checkRecord(ctx, o, lg, record, path, checkpoint, bound)
	if err != nil {
		return nil, err
	}
	// Everything is checked: write the new key, make the record, bind.
	if newKey {
		if err := tlog.CreateKey(path, key); errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %w", errRaced, err)
		} else if err != nil {
			return nil, err
		}
	}
	if create != nil {
		err := record.Create(*create)
		if errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("%w: %w", errRaced, err)
		}
		if err != nil {
			return nil, fmt.Errorf("log key %s: %w (the key's directory must be writable by the arena)", path, err)
		}
		if create.Size > 0 {
			logger.Warn("tamper-evident log: made the log key's record of the trees it signed from this database's latest checkpoint (--new-log-record)", "key", path, "record", record.Path, "size", create.Size)
		}
	}
	// Bound last: a database bound to a key whose record is missing is
	// refused, so a replica starting meanwhile must find the record first.
	if err := tlog.BindKey(ctx, db, lg.PublicKey()); err != nil {
		return nil, fmt.Errorf("log key %s: %w", path, err)
	}
	logger.Info("tamper-evident log", "key", path, "public_key", lg.PublicKeyHex())
	return lg, nil
}

// Where the errors of a start refused by the log key's record point.
const (
	docsRestore = `See "Restoring a backup" in docs/operations.md.`
	docsOwnKey  = `See "The log key belongs to its database" in docs/operations.md.`
)

// checkRecord checks the log key's record of the trees it signed against
// the log lg, writing nothing. It returns the tree to make the record
// with when there is none and one may be made: the empty tree for the
// first start of a log that has signed nothing and belongs to no key yet,
// the database's latest checkpoint's tree when o.NewLogRecord says so.
func checkRecord(ctx context.Context, o config.Options, lg *tlog.Log, record tlog.StateFile, path string, checkpoint []byte, bound string) (*tlog.SignedTree, error) {
	last, err := record.LastSigned()
	switch {
	case errors.Is(err, tlog.ErrNoRecord) && errors.Is(err, fs.ErrNotExist):
		// Missing: see below.
	case errors.Is(err, tlog.ErrNoRecord):
		// Something that is not a file: a dangling link, a FIFO, a device.
		return nil, fmt.Errorf("log key %s: %w: move it away and put the record (a regular file) back, or start a new log. %s", path, err, docsRestore)
	case err != nil:
		// Unreadable (permission denied), malformed, or its lock refused.
		return nil, fmt.Errorf("log key %s: %w: the arena must read and replace this record of the trees the key signed. %s", path, err, docsRestore)
	case o.NewLogRecord:
		return nil, arena.Errorf(arena.EINVALID, "--new-log-record (ARENA_NEW_LOG_RECORD): the log key's record %s exists, and is never made again: start without it", record.Path)
	default:
		switch err := lg.CheckSigned(ctx); {
		case errors.Is(err, tlog.ErrFork) && bound == "":
			// This database never signed with the key: the key signed
			// another arena's log (two arenas given one key directory).
			return nil, arena.Errorf(arena.ECONFLICT, "log key %s signs another arena's log: its record %s holds a tree of %d entries, which this database never signed (%w). A key belongs to one database: give this one a key of its own with ARENA_DATA_DIR (a directory of its own) or --log-key (a new file). Nothing was changed. %s",
				path, record.Path, last.Size, tlog.ErrFork, docsOwnKey)
		case errors.Is(err, tlog.ErrFork):
			return nil, fmt.Errorf("%w; refusing to sign anything with log key %s (its record: %s). %s", err, path, record.Path, docsRestore)
		case err != nil:
			return nil, fmt.Errorf("log key %s: %w", path, err)
		}
		return nil, nil
	}
	size, err := lg.Size(ctx)
	if err != nil {
		return nil, err
	}
	if size == 0 && checkpoint == nil && bound == "" {
		return &tlog.SignedTree{}, nil // a new log: nothing signed yet
	}
	if !o.NewLogRecord {
		return nil, arena.Errorf(arena.EINVALID, "log key %s has no record of the trees it signed (%s is missing), but this database's log %s: the record was deleted, or the key was copied here without it, and the log could now sign a second root for a size it published. "+
			"Put the record back from where the key was (never an older copy); if it is lost and you know the key never signed beyond this database's latest checkpoint, start once with --new-log-record (ARENA_NEW_LOG_RECORD=true) to record that checkpoint; else start a new log. %s",
			path, record.Path, logState(size, checkpoint, bound), docsRestore)
	}
	if checkpoint == nil {
		return &tlog.SignedTree{}, nil
	}
	c, err := tlog.ParseCheckpoint([]byte(tlog.NoteText(checkpoint)))
	if err != nil {
		return nil, fmt.Errorf("log key %s: this database's latest checkpoint: %w", path, err)
	}
	t := tlog.SignedTree{Size: c.Size, Root: c.Hash}
	// The record is made from the database's word: its log must hold the
	// tree of its own latest checkpoint.
	held := &tlog.Log{Store: lg.Store, Signed: fixedRecord{t}}
	if err := held.CheckSigned(ctx); err != nil {
		return nil, fmt.Errorf("--new-log-record: this database's log does not hold its own latest checkpoint, so no record is made from it: %w. %s", err, docsRestore)
	}
	return &t, nil
}

// fixedRecord is a tlog.SignedState holding one tree, for checking a log
// against a tree before it is recorded.
type fixedRecord struct{ t tlog.SignedTree }

func (r fixedRecord) LastSigned() (tlog.SignedTree, error) { return r.t, nil }
func (r fixedRecord) RecordSigned(tlog.SignedTree) error   { return nil }

// logState says what a log holds that a record should cover.
func logState(size uint64, checkpoint []byte, bound string) string {
	switch {
	case checkpoint != nil:
		return fmt.Sprintf("has a published checkpoint (%d entries in the log)", size)
	case bound != "":
		return fmt.Sprintf("belongs to this key (%d entries in the log)", size)
	}
	return fmt.Sprintf("holds %d entries", size)
}

// signedBy reports whether the key file at path is the key of a log with
// this latest checkpoint note (nil for none) and bound key: the recorded
// key, else the checkpoint's signer. A log with neither belongs to no key
// yet.
func signedBy(path string, checkpoint []byte, bound string) bool {
	key, err := tlog.LoadKey(path)
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
