package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/forecast-arena/arena"
)

// A SQLite database is guarded by two advisory locks on files beside it.
// The kernel releases a process's locks when it ends, however it ends, so
// a crash never leaves a stale lock behind.
//
//   - PATH.lock: every open handle holds it shared; restore takes it
//     exclusive, so it never replaces a file that a process has open (that
//     process would go on writing to the replaced file, and lose it).
//   - PATH.serve.lock: the one process that serves the database holds it
//     exclusive: two servers on one file would split the jobs between them.
//
// PostgreSQL has neither: replicas share one database by design.
const (
	openLockSuffix  = ".lock"
	serveLockSuffix = ".serve.lock"
)

// realPath is the path a SQLite database is locked and replaced under: its
// symbolic links resolved (of the file, or of its directory while the file
// does not exist yet), so that two names of one file share its locks. A
// hard link is another name the kernel gives no way back from: a server on
// one hard link does not see a server on another.
func realPath(path string) string {
	if p, err := filepath.EvalSymlinks(path); err == nil {
		return p
	}
	if dir, err := filepath.EvalSymlinks(filepath.Dir(path)); err == nil {
		return filepath.Join(dir, filepath.Base(path))
	}
	return path
}

// LockSuffixes are the suffixes of the lock files beside a SQLite
// database, for commands that remove a database they created.
var LockSuffixes = []string{openLockSuffix, serveLockSuffix}

// lockOpen takes the shared lock that every handle on the SQLite database
// at path holds while it is open.
func lockOpen(path string) (*flock.Flock, error) {
	l := flock.New(path + openLockSuffix)
	ok, err := l.TryRLock()
	if err != nil {
		return nil, fmt.Errorf("store: lock %s: %w", l.Path(), err)
	}
	if !ok {
		return nil, arena.Errorf(arena.ECONFLICT, "store: %s is being replaced by 'arena restore' in another process; run this again when it has finished", path)
	}
	return l, nil
}

// ClaimServer reserves the database for this process as its one server,
// until Close: a second server on the same SQLite file is refused
// (ECONFLICT). On PostgreSQL it does nothing: replicas share a database.
func (d *DB) ClaimServer() error {
	if d.dialect != sqlite {
		return nil
	}
	l := flock.New(d.path + serveLockSuffix)
	ok, err := l.TryLock()
	if err != nil {
		return fmt.Errorf("store: lock %s: %w", l.Path(), err)
	}
	if !ok {
		return arena.Errorf(arena.ECONFLICT, "store: %s is already served by another process (arena serve or arena demo): stop that one first; to run several servers on one database, use PostgreSQL", d.path)
	}
	d.serveLock = l
	return nil
}

// lockReplace takes the SQLite database at path for replacing it: refused
// while any process has it open, naming a server when one holds it.
func lockReplace(path string) (*flock.Flock, error) {
	l := flock.New(path + openLockSuffix)
	ok, err := l.TryLock()
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", l.Path(), err)
	}
	if ok {
		return l, nil
	}
	if served(path) {
		return nil, arena.Errorf(arena.ECONFLICT, "%s is in use by a running server (arena serve or arena demo): stop it first; replacing the file under it would lose what it writes", path)
	}
	return nil, arena.Errorf(arena.ECONFLICT, "%s is open in another arena process: let it finish (or stop it) and run restore again", path)
}

// served reports whether a process serves the SQLite database at path.
func served(path string) bool {
	if _, err := os.Stat(path + serveLockSuffix); errors.Is(err, fs.ErrNotExist) {
		return false
	}
	l := flock.New(path + serveLockSuffix)
	ok, err := l.TryLock()
	if ok {
		l.Unlock()
	}
	return err == nil && !ok
}
