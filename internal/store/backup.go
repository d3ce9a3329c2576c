package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/forecast-arena/arena"
)

// pgDumpHint is how a PostgreSQL deployment is backed up and restored.
const pgDumpHint = "back up PostgreSQL with its own tools: pg_dump --format=custom --file=arena.dump DBURL, and restore with pg_restore --dbname=DBURL arena.dump"

// Backup writes a consistent copy of the SQLite database at dbURL to path
// with VACUUM INTO: one read transaction, so it is safe while `arena
// serve` writes (WAL readers do not block writers), and the copy is
// compacted and self-contained (no -wal file). The database is opened
// without Open's migration step, which takes the write lock: a busy
// server's writers would otherwise starve the backup. path must not exist.
func Backup(ctx context.Context, dbURL, path string) error {
	src, ok := strings.CutPrefix(dbURL, "sqlite:")
	if !ok {
		return arena.Errorf(arena.EINVALID, "backup: only SQLite databases are copied (--db sqlite:PATH); %s", pgDumpHint)
	}
	src = strings.TrimPrefix(src, "//")
	// The source's quick check reads less than the full one, which the
	// copy gets (see cmd/arena's backup).
	if _, err := checkFile(ctx, src, "quick_check"); err != nil {
		return fmt.Errorf("backup: %w", err)
	}
	if _, err := os.Stat(path); err == nil {
		return arena.Errorf(arena.ECONFLICT, "backup: %s already exists; choose a new file", path)
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("backup: %w", err)
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return arena.Errorf(arena.EINVALID, "backup: directory %s does not exist; create it first", filepath.Dir(path))
	}
	db, err := sql.Open("sqlite", "file:"+src+"?_pragma=busy_timeout(10000)")
	if err != nil {
		return fmt.Errorf("backup: open %s: %w", src, err)
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
		os.Remove(path)
		return fmt.Errorf("backup: vacuum into %s: %w", path, err)
	}
	return nil
}

// CheckBackup opens the SQLite file at path read-only and checks that it
// is an intact arena database that this binary can restore: SQLite's
// integrity check passes, every migration it has applied is known here,
// and its tables, columns, indexes and foreign keys are exactly those
// its migrations create.
func CheckBackup(ctx context.Context, path string) (arena.SchemaHealth, error) {
	return checkFile(ctx, path, "integrity_check")
}

// checkFile is CheckBackup with SQLite's check given: integrity_check, or
// quick_check, which skips matching each index against its table.
func checkFile(ctx context.Context, path, check string) (arena.SchemaHealth, error) {
	if st, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		return arena.SchemaHealth{}, arena.Errorf(arena.ENOTFOUND, "%s does not exist", path)
	} else if err != nil {
		return arena.SchemaHealth{}, arena.Errorf(arena.EINVALID, "%v", err)
	} else if st.IsDir() {
		return arena.SchemaHealth{}, arena.Errorf(arena.EINVALID, "%s is a directory, not a database file", path)
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro&_pragma=busy_timeout(10000)")
	if err != nil {
		return arena.SchemaHealth{}, fmt.Errorf("open %s: %w", path, err)
	}
	defer db.Close()
	found, err := queryAll(ctx, db, `PRAGMA `+check, nil, func(sc scanner) (string, error) {
		var s string
		return s, sc.Scan(&s)
	})
	if err != nil {
		return arena.SchemaHealth{}, arena.Errorf(arena.EINVALID, "%s is not a SQLite database: %v", path, err)
	}
	if len(found) != 1 || found[0] != "ok" {
		for i := range found {
			found[i] = strings.TrimPrefix(found[i], "*** in database main ***\n")
		}
		if len(found) > 5 {
			found = append(found[:5], fmt.Sprintf("and %d more", len(found)-5))
		}
		return arena.SchemaHealth{}, arena.Errorf(arena.EINVALID, "%s is damaged: %s", path, strings.Join(found, "; "))
	}
	h, err := schemaOf(ctx, db)
	if err != nil {
		return h, arena.Errorf(arena.EINVALID, "%s is not an arena database (no readable schema_migrations)", path)
	}
	if h.Applied == 0 {
		return h, arena.Errorf(arena.EINVALID, "%s is not an arena database (no migration applied)", path)
	}
	if len(h.Unknown) > 0 {
		return h, arena.Errorf(arena.EINVALID, "%s was written by a newer arena (migrations %s unknown here); restore it with that version", path, strings.Join(h.Unknown, ", "))
	}
	if err := sameSchema(ctx, db, h.Pending); err != nil {
		return h, arena.Errorf(arena.EINVALID, "%s is not a whole arena database: %v", path, err)
	}
	return h, nil
}

// Restore copies the backup at from into the SQLite database toURL,
// after CheckBackup, and nothing is replaced unless every check passes. A
// target that exists and is not empty is refused unless force is set, in
// which case it is replaced (with its -wal and -shm files); a target that
// any process has open (arena serve above all) is refused, force or not.
// Opening the result applies any migration the backup predates.
func Restore(ctx context.Context, from, toURL string, force bool) (arena.SchemaHealth, error) {
	path, ok := strings.CutPrefix(toURL, "sqlite:")
	if !ok {
		return arena.SchemaHealth{}, arena.Errorf(arena.EINVALID, "restore: only SQLite databases are written (--db sqlite:PATH); %s", pgDumpHint)
	}
	path = strings.TrimPrefix(path, "//")
	if st, err := os.Stat(path); err == nil && st.IsDir() {
		return arena.SchemaHealth{}, arena.Errorf(arena.EINVALID, "restore: %s is a directory; name the database file to restore into, such as --db sqlite:%s", path, filepath.Join(path, "arena.db"))
	}
	if st, err := os.Stat(filepath.Dir(path)); err != nil || !st.IsDir() {
		return arena.SchemaHealth{}, arena.Errorf(arena.EINVALID, "restore: directory %s does not exist; create it first", filepath.Dir(path))
	}
	h, err := CheckBackup(ctx, from)
	if err != nil {
		return h, fmt.Errorf("restore: %w", err)
	}
	// A symbolic link names the file it points to: that file is locked and
	// replaced, never the link.
	path = realPath(path)
	lock, err := lockReplace(path)
	if err != nil {
		return h, fmt.Errorf("restore: %w", err)
	}
	defer lock.Close()
	if st, err := os.Stat(path); err == nil && st.Size() > 0 {
		if !force {
			return h, arena.Errorf(arena.ECONFLICT, "restore: %s exists and is not empty; pass --force to replace it", path)
		}
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return h, fmt.Errorf("restore: %w", err)
	}
	// Copy into a temporary file next to the target, then rename it over
	// the target: an interrupted restore leaves the old database whole.
	tmp := path + ".restore"
	os.Remove(tmp)
	src, err := sql.Open("sqlite", "file:"+from+"?mode=ro")
	if err != nil {
		return h, fmt.Errorf("restore: open %s: %w", from, err)
	}
	_, err = src.ExecContext(ctx, `VACUUM INTO ?`, tmp)
	src.Close()
	if err != nil {
		os.Remove(tmp)
		return h, fmt.Errorf("restore: copy %s: %w", from, err)
	}
	for _, suffix := range []string{"-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !errors.Is(err, os.ErrNotExist) {
			os.Remove(tmp)
			return h, fmt.Errorf("restore: %w", err)
		}
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return h, fmt.Errorf("restore: %w", err)
	}
	// Open takes the lock shared: release it first.
	lock.Close()
	db, err := Open(ctx, toURL)
	if err != nil {
		return h, err
	}
	defer db.Close()
	return db.Schema(ctx)
}
