// Package store persists Forecast Arena's data in SQLite (the embedded
// default, pure Go) or PostgreSQL with one schema and identical behaviour.
package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gofrs/flock"
	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers "pgx"
	_ "modernc.org/sqlite"             // registers "sqlite"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/redact"
)

// Compile-time checks that DB implements the domain interfaces.
var (
	_ arena.MarketStore = (*DB)(nil)
	_ arena.JobStore    = (*DB)(nil)
)

type dialect int

const (
	sqlite dialect = iota
	postgres
)

// DB is the store on one engine.
type DB struct {
	db      *sql.DB
	dialect dialect
	// Now is the clock used for bookkeeping timestamps; tests may replace it.
	Now func() time.Time

	// The submission path's batching group and its prepared statements
	// (query → *sql.Stmt): preparing once saves SQLite from re-parsing the
	// SQL and PostgreSQL from re-planning it on every request.
	submits submitGroup
	stmts   sync.Map
	pending sync.Map // queries to prepare once their transaction ends (see prepared)

	// changes are the domains the open write transactions changed (see
	// touch); snap, in a view made by Snapshot, is the read-only
	// transaction every read goes through.
	changes changes
	snap    *sql.Tx

	// path is a SQLite database's file; openLock and serveLock are the
	// locks held on it (see lock.go).
	path                string
	openLock, serveLock *flock.Flock
}

// An Option changes how Open opens a database.
type Option func(*options)

type options struct {
	unsynced bool
}

// Unsynced opens a SQLite database whose commits are not flushed to disk
// one by one (synchronous=NORMAL): a power loss may lose the latest
// commits, though never corrupt the database. Only for a throwaway
// database that says it is one (the demo's); an arena's own database
// keeps every acknowledged commit.
func Unsynced() Option { return func(o *options) { o.unsynced = true } }

// Open connects to url ("sqlite:PATH" or "postgres://…"), and applies
// pending migrations. A SQLite database is refused while 'arena restore'
// replaces it.
func Open(ctx context.Context, rawURL string, opts ...Option) (*DB, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	d := &DB{Now: func() time.Time { return time.Now().UTC() }}
	switch {
	case strings.HasPrefix(rawURL, "sqlite:"):
		path := strings.TrimPrefix(rawURL, "sqlite:")
		path = strings.TrimPrefix(path, "//")
		if path == "" {
			return nil, arena.Errorf(arena.EINVALID, "store: empty sqlite path in %q (want sqlite:PATH)", rawURL)
		}
		if strings.Contains(path, "?") {
			return nil, arena.Errorf(arena.EINVALID, "store: sqlite path %q must not contain '?'", path)
		}
		// WAL lets readers proceed during writes; IMMEDIATE transactions take
		// the write lock up front so concurrent writers wait instead of failing.
		// synchronous(FULL) fsyncs the WAL at every commit, so an acknowledged
		// commit (an agent's only proof it committed) survives power loss, not
		// only kill -9 as with NORMAL. Measured with BenchmarkCommit (web, 2
		// shared cores, 4 runs each): FULL costs about 20% of commit
		// throughput (~11k → ~8.8k commits/s; 0.27 → 0.215 of ecrecover) and
		// raises p50 latency at 200 req/s from 1.15 to 1.46 ms; the group
		// commit shares one fsync per batch, which keeps the cost modest.
		sync := "FULL"
		if o.unsynced {
			sync = "NORMAL"
		}
		dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=foreign_keys(1)&_pragma=synchronous(" + sync + ")&_txlock=immediate"
		db, err := sql.Open("sqlite", dsn)
		if err != nil {
			return nil, fmt.Errorf("store: open sqlite %s: %w", path, err)
		}
		d.db, d.dialect, d.path = db, sqlite, realPath(path)
	case strings.HasPrefix(rawURL, "postgres://") || strings.HasPrefix(rawURL, "postgresql://"):
		// The parsers' errors quote the URL, password included, so they
		// are replaced, not wrapped; the URL is shown redacted.
		if _, err := url.Parse(rawURL); err != nil {
			return nil, arena.Errorf(arena.EINVALID, "store: bad postgres URL %s: not a valid URL (percent-encode '%%', '@', ':' and spaces in the user and password)", redact.String(rawURL))
		}
		// A password holding a raw '@', or a '/', '?' or '#' followed by
		// an '@', is read by pgx as ending early: it would dial the rest
		// of the password as a host (a DNS query carrying it) and show
		// it in its error. The authority ends at the first '/', '?' or
		// '#'; one '@' ends the userinfo, and none may follow.
		_, rest, _ := strings.Cut(rawURL, "://")
		end := strings.IndexAny(rest, "/?#")
		if end < 0 {
			end = len(rest)
		}
		if strings.Count(rest[:end], "@") > 1 || strings.Contains(rest[end:], "@") {
			return nil, arena.Errorf(arena.EINVALID, "store: bad postgres URL %s: an '@' where a URL cannot have one (in a password, percent-encode '@' as %%40, '/' as %%2F, '?' as %%3F, '#' as %%23, '%%' as %%25)", redact.String(rawURL))
		}
		db, err := sql.Open("pgx", rawURL)
		if err != nil {
			return nil, arena.Errorf(arena.EINVALID, "store: bad postgres URL %s: the driver refused it", redact.String(rawURL))
		}
		db.SetMaxOpenConns(16)
		d.db, d.dialect = db, postgres
	default:
		return nil, arena.Errorf(arena.EINVALID, "store: unsupported database URL %q (want sqlite:PATH or postgres://…)", redact.String(rawURL))
	}
	pingCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if err := d.db.PingContext(pingCtx); err != nil {
		d.db.Close()
		return nil, fmt.Errorf("store: connect %s: %w", redact.String(rawURL), connectError(err))
	}
	if d.dialect == sqlite {
		var err error
		if d.openLock, err = lockOpen(d.path); err != nil {
			d.db.Close()
			return nil, err
		}
	}
	if err := d.migrate(ctx, nil); err != nil {
		d.Close()
		return nil, err
	}
	return d, nil
}

// Close releases the prepared statements, closes the database and then
// releases its locks.
func (d *DB) Close() error {
	d.stmts.Range(func(_, s any) bool {
		s.(*sql.Stmt).Close()
		return true
	})
	err := d.db.Close()
	for _, l := range []*flock.Flock{d.serveLock, d.openLock} {
		if l != nil {
			l.Close()
		}
	}
	return err
}

// Engine names the database engine ("sqlite" or "postgres").
func (d *DB) Engine() string {
	if d.dialect == postgres {
		return "postgres"
	}
	return "sqlite"
}

// rebind turns ? placeholders into $n for PostgreSQL. Queries in this
// package never contain a literal '?'.
func (d *DB) rebind(q string) string {
	if d.dialect != postgres {
		return q
	}
	var b strings.Builder
	n := 0
	for i := 0; i < len(q); i++ {
		if q[i] == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteByte(q[i])
	}
	return b.String()
}

// queryer is what both *sql.DB and *sql.Tx offer.
type queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// tx runs fn in a transaction, committing on success, and moves the
// versions of the domains fn changed (touch) in it.
func (d *DB) tx(ctx context.Context, fn func(tx *sql.Tx) error) error {
	if d.snap != nil {
		return errSnapshotWrite
	}
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("store: begin: %w", err)
	}
	err = fn(tx)
	if err == nil {
		err = d.moveVersions(ctx, tx)
	}
	if err != nil {
		d.forget(tx)
		tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	d.preparePending(ctx)
	return nil
}

// micros encodes a time as UTC unix microseconds, NULL for the zero time.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}

var errNoRows = sql.ErrNoRows

func isNoRows(err error) bool { return errors.Is(err, errNoRows) }

// connectError says each distinct reason a PostgreSQL connection failed
// once: pgx joins one error per attempt (one per address, and again
// without TLS), which repeat the same "connection refused".
func connectError(err error) error {
	var ce *pgconn.ConnectError
	var attempts interface{ Unwrap() []error }
	if !errors.As(err, &ce) || !errors.As(ce.Unwrap(), &attempts) {
		return err
	}
	var reasons []string
	for _, e := range attempts.Unwrap() {
		if m := e.Error(); !slices.Contains(reasons, m) {
			reasons = append(reasons, m)
		}
	}
	return &reasonError{msg: strings.Join(reasons, "; "), err: err}
}

// reasonError replaces an error's message and keeps it as the cause.
type reasonError struct {
	msg string
	err error
}

func (e *reasonError) Error() string { return e.msg }
func (e *reasonError) Unwrap() error { return e.err }

// Ping checks the connection.
func (d *DB) Ping(ctx context.Context) error { return d.db.PingContext(ctx) }

// scanner is a row being scanned: *sql.Row or *sql.Rows.
type scanner interface{ Scan(...any) error }

// lookup scans the one row a lookup by key returns: ENOTFOUND "<what> not
// found" when there is none, the error wrapped as "store: load <what>"
// otherwise.
func lookup[T any](row *sql.Row, scan func(scanner) (T, error), what string) (T, error) {
	v, err := scan(row)
	if isNoRows(err) {
		var zero T
		return zero, arena.Errorf(arena.ENOTFOUND, "%s not found", what)
	}
	if err != nil {
		var zero T
		return zero, fmt.Errorf("store: load %s: %w", what, err)
	}
	return v, nil
}

// queryAll runs a query and scans every row with scan.
func queryAll[T any](ctx context.Context, q queryer, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}
