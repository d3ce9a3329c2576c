package store

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

// Restore checks the whole backup (SQLite's integrity check, and every
// table, column, index and foreign key against what its migrations
// create) before it replaces anything: a spoiled backup is refused, naming
// what is wrong, and the target database stays as it was, byte for byte.
// A backup that predates a migration is whole; restoring applies it.
func TestRestoreChecksTheWholeBackup(t *testing.T) {
	ctx := context.Background()
	names, err := migrationNames()
	if err != nil {
		t.Fatal(err)
	}
	last := strings.TrimPrefix(names[len(names)-1], "migrations/")
	for _, c := range []struct {
		name  string
		spoil []string // statements run on the backup
		skip  string   // a migration the backup lacks
		want  string   // in the error; "" when the restore succeeds
		// quickMisses: SQLite's quick check finds nothing wrong.
		quickMisses bool
	}{
		{name: "table dropped", spoil: []string{`DROP TABLE submissions`}, want: "missing table submissions"},
		{name: "column dropped", spoil: []string{`ALTER TABLE rounds DROP COLUMN grace_micros`}, want: "missing column rounds.grace_micros"},
		{name: "column added", spoil: []string{`ALTER TABLE agents ADD COLUMN note TEXT`}, want: "unexpected column agents.note"},
		{name: "index dropped", spoil: []string{`DROP INDEX rounds_by_commit`}, want: "missing index rounds_by_commit"},
		{name: "index on other columns", spoil: []string{`DROP INDEX rounds_by_commit`, `CREATE INDEX rounds_by_commit ON rounds (created_at)`},
			want: "index rounds_by_commit is an index on rounds (created_at), want an index on rounds (commit_deadline)"},
		{name: "table added", spoil: []string{`CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)`}, want: "migrations create: unexpected table notes"},
		{name: "trigger added", spoil: []string{`CREATE TRIGGER no_commits BEFORE INSERT ON submissions BEGIN SELECT RAISE(ABORT, 'no'); END`},
			want: "unexpected trigger no_commits"},
		// Each index's pages hold the other's entries: only the full
		// integrity check compares an index with its table.
		{name: "index out of step with its table", spoil: []string{
			`PRAGMA writable_schema = ON`,
			`CREATE TEMP TABLE roots AS SELECT name, rootpage FROM sqlite_master WHERE name IN ('rate_buckets_updated', 'agents_by_created')`,
			`UPDATE sqlite_master SET rootpage = (SELECT r.rootpage FROM roots r WHERE r.name != sqlite_master.name) WHERE name IN (SELECT name FROM roots)`,
		}, quickMisses: true, want: "is damaged: row 1 missing from index"},
		{name: "backup predating a migration", skip: last},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			bk := filepath.Join(dir, "backup.db")
			makeBackup(t, bk, c.skip, c.spoil)
			if _, err := checkFile(ctx, bk, "quick_check"); c.quickMisses && err != nil {
				t.Fatalf("the quick check found %v", err)
			}
			target := filepath.Join(dir, "arena.db")
			db, err := Open(ctx, "sqlite:"+target)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.db.ExecContext(ctx, `INSERT INTO settings (key, value, updated_at) VALUES ('kept', 'yes', 1)`); err != nil {
				t.Fatal(err)
			}
			db.Close()
			before, _ := os.ReadFile(target)
			h, err := Restore(ctx, bk, "sqlite:"+target, true)
			if c.want == "" {
				if err != nil || len(h.Pending) > 0 || h.Applied != len(names) {
					t.Fatalf("restore: %+v, %v; want every migration applied", h, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("restore: %v, want %q", err, c.want)
			}
			if after, _ := os.ReadFile(target); !bytes.Equal(before, after) {
				t.Error("a refused restore changed the target database")
			}
			if _, err := os.Stat(target + ".restore"); !os.IsNotExist(err) {
				t.Errorf("a refused restore left its copy behind: %v", err)
			}
		})
	}
}

// makeBackup writes a migrated database with a few rows to path, without
// the migration skip, and runs spoil on it.
func makeBackup(t *testing.T, path, skip string, spoil []string) {
	t.Helper()
	ctx := context.Background()
	raw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	raw.SetMaxOpenConns(1) // writable_schema holds for its connection
	d := &DB{db: raw, dialect: sqlite, Now: time.Now}
	if err := d.migrate(ctx, map[string]bool{skip: true}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO agents (address, created_at) VALUES ('0xa1', 30), ('0xa2', 10), ('0xa3', 20)`,
		`INSERT INTO rate_buckets (key, tokens, granted, updated_at) VALUES ('k1', 1, 1, 300), ('k2', 1, 1, 100), ('k3', 1, 1, 200)`,
	} {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := CheckBackup(ctx, path); err != nil {
		t.Fatalf("the unspoiled backup: %v", err)
	}
	for _, q := range spoil {
		if _, err := raw.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// Open refuses a SQLite database while restore replaces it, and opens it
// once restore is done.
func TestOpenRefusedDuringRestore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "arena.db")
	l, err := lockReplace(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Open(context.Background(), "sqlite:"+path); arena.ErrorKind(err) != arena.ECONFLICT || !strings.Contains(err.Error(), "is being replaced by 'arena restore'") {
		t.Fatalf("open during a restore: %v", err)
	}
	l.Close()
	db, err := Open(context.Background(), "sqlite:"+path)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()
}
