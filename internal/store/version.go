package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"

	"github.com/forecast-arena/arena"
)

var (
	_ arena.VersionStore  = (*DB)(nil)
	_ arena.Snapshotter   = (*DB)(nil)
	_ arena.StoreSnapshot = (*DB)(nil)
)

// Versions implements arena.VersionStore.
func (d *DB) Versions(ctx context.Context) (arena.Versions, error) {
	out := make(arena.Versions, len(arena.Domains))
	rows, err := d.r().QueryContext(ctx, `SELECT domain, version FROM data_versions`)
	if err != nil {
		return nil, fmt.Errorf("store: data versions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return nil, fmt.Errorf("store: data versions: %w", err)
		}
		out[arena.Domain(name)] = uint64(v)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: data versions: %w", err)
	}
	return out, nil
}

// changes are the domains each open write transaction changed: touch
// records them, and tx moves their versions just before it commits.
// Moving them last, one domain at a time in the order of arena.Domains,
// means two transactions never lock version rows in opposite orders
// (PostgreSQL holds a row's lock to the commit) and hold them only for
// the commit itself.
type changes struct {
	mu sync.Mutex
	by map[*sql.Tx]map[arena.Domain]bool
}

// touch records that tx changed the data of ds: tx moves their versions
// when it commits. Every write that changes what a view shows calls it
// in the transaction that writes.
func (d *DB) touch(tx *sql.Tx, ds ...arena.Domain) {
	c := &d.changes
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.by == nil {
		c.by = map[*sql.Tx]map[arena.Domain]bool{}
	}
	set := c.by[tx]
	if set == nil {
		set = map[arena.Domain]bool{}
		c.by[tx] = set
	}
	for _, x := range ds {
		set[x] = true
	}
}

// touchIf is touch when a statement's result changed a row.
func (d *DB) touchIf(tx *sql.Tx, res sql.Result, ds ...arena.Domain) error {
	n, err := res.RowsAffected()
	if err != nil {
		return err
	}
	if n > 0 {
		d.touch(tx, ds...)
	}
	return nil
}

// moveVersions moves the versions of the domains tx changed, and forgets
// them.
func (d *DB) moveVersions(ctx context.Context, tx *sql.Tx) error {
	c := &d.changes
	c.mu.Lock()
	set := c.by[tx]
	delete(c.by, tx)
	c.mu.Unlock()
	for _, x := range arena.Domains {
		if !set[x] {
			continue
		}
		if _, err := d.execPrepared(ctx, tx, `UPDATE data_versions SET version = version + 1 WHERE domain = ?`, string(x)); err != nil {
			return fmt.Errorf("store: move the version of %s: %w", x, err)
		}
	}
	return nil
}

// forget drops what tx changed (it rolled back).
func (d *DB) forget(tx *sql.Tx) {
	c := &d.changes
	c.mu.Lock()
	delete(c.by, tx)
	c.mu.Unlock()
}

// exec runs one write statement in its own transaction and moves the
// versions of ds when it changed a row.
func (d *DB) exec(ctx context.Context, ds []arena.Domain, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := d.tx(ctx, func(tx *sql.Tx) (err error) {
		if res, err = tx.ExecContext(ctx, d.rebind(query), args...); err != nil {
			return err
		}
		return d.touchIf(tx, res, ds...)
	})
	return res, err
}

// errSnapshotWrite is the error of a write through a snapshot: a
// snapshot only reads.
var errSnapshotWrite = errors.New("store: a read snapshot cannot write")

// Snapshot calls fn with a view of the database that reads one state of
// it, as committed at fn's first read (a read-only transaction: REPEATABLE
// READ on PostgreSQL, a deferred transaction on SQLite, whose WAL snapshot
// the first read fixes): every read through it, the log's size and entries
// and the domains' versions included, sees the same commits, whatever is
// written meanwhile. The view does not write (errSnapshotWrite); it is
// valid only while fn runs.
func (d *DB) Snapshot(ctx context.Context, fn func(arena.StoreSnapshot) error) error {
	return d.readTx(ctx, func(tx *sql.Tx) error {
		return fn(&DB{dialect: d.dialect, Now: d.Now, path: d.path, snap: tx})
	})
}

// r is what reads go through: the snapshot's transaction in a snapshot,
// else the database.
func (d *DB) r() queryer {
	if d.snap != nil {
		return d.snap
	}
	return d.db
}
