package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/forecast-arena/arena/internal/store"
)

// openOrUndo opens the store for a command that may fail after opening it
// (e.g. on an unreachable source). When the SQLite file did not exist
// before, undo removes it again, so a failed command leaves nothing
// behind, not even an empty database.
func openOrUndo(ctx context.Context, url string) (db *store.DB, undo func(), err error) {
	path, isSQLite := strings.CutPrefix(url, "sqlite:")
	_, statErr := os.Stat(path)
	fresh := isSQLite && errors.Is(statErr, os.ErrNotExist)
	if db, err = store.Open(ctx, url); err != nil {
		return nil, nil, err
	}
	return db, func() {
		db.Close()
		if fresh {
			for _, suffix := range append([]string{"", "-wal", "-shm"}, store.LockSuffixes...) {
				os.Remove(path + suffix)
			}
		}
	}, nil
}

// openExisting opens the store for a command that reads what earlier
// commands wrote: a SQLite file that does not exist is an error, not a new
// empty database that would answer every query with nothing.
func openExisting(ctx context.Context, url string) (*store.DB, error) {
	if path, isSQLite := strings.CutPrefix(url, "sqlite:"); isSQLite {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("database %s does not exist: create it with 'arena sync' or 'arena import', or point --db (or ARENA_DB) at an existing one", path)
		}
	}
	return store.Open(ctx, url)
}

// refuseNew refuses a SQLite database that does not exist unless create:
// a mistyped --db would otherwise create, and serve, a new empty arena.
func refuseNew(url string, create bool) error {
	path, isSQLite := strings.CutPrefix(url, "sqlite:")
	if !isSQLite || create {
		return nil
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("database %s does not exist: to start a new arena in it, add --create; to serve an existing one, point --db (or ARENA_DB) at it", path)
	}
	return nil
}
