package store

import (
	"context"
	"database/sql"
	"embed"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strings"
)

// Migrations are SQL files applied in name order, each once, recorded in
// schema_migrations. Later issues add files; numbers are never reused.
//
//go:embed migrations/*.sql
var migrationFS embed.FS

// migrationSteps are the parts of migrations that SQL cannot do, each run
// right after its file, in the same transaction.
var migrationSteps = map[string]func(ctx context.Context, d *DB, tx *sql.Tx) error{
	"0785_agent_name_skeletons.sql":     rekeyAgentNames,
	"0799_agent_name_keys_refolded.sql": rekeyAgentNames,
}

// The few spots where the two engines' SQL differs.
var placeholders = map[dialect]*strings.Replacer{
	sqlite:   strings.NewReplacer("{{serial}}", "INTEGER PRIMARY KEY AUTOINCREMENT", "{{blob}}", "BLOB"),
	postgres: strings.NewReplacer("{{serial}}", "BIGSERIAL PRIMARY KEY", "{{blob}}", "BYTEA"),
}

func migrationNames() ([]string, error) {
	names, err := fs.Glob(migrationFS, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	sort.Strings(names)
	return names, nil
}

// migrate applies the pending migrations but those in skip (given to
// rebuild the schema of a database that lacks them).
func (d *DB) migrate(ctx context.Context, skip map[string]bool) error {
	names, err := migrationNames()
	if err != nil {
		return fmt.Errorf("store: list migrations: %w", err)
	}
	return d.tx(ctx, func(tx *sql.Tx) error {
		if d.dialect == postgres {
			// Serialise concurrent starters (several replicas) on one database.
			if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(7262013)`); err != nil {
				return fmt.Errorf("store: migration lock: %w", err)
			}
		}
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("store: create schema_migrations: %w", err)
		}
		applied := map[string]bool{}
		rows, err := tx.QueryContext(ctx, `SELECT name FROM schema_migrations`)
		if err != nil {
			return fmt.Errorf("store: read schema_migrations: %w", err)
		}
		for rows.Next() {
			var n string
			if err := rows.Scan(&n); err != nil {
				rows.Close()
				return err
			}
			applied[n] = true
		}
		rows.Close()
		for _, name := range names {
			base := strings.TrimPrefix(name, "migrations/")
			if applied[base] || skip[base] {
				continue
			}
			body, err := migrationFS.ReadFile(name)
			if err != nil {
				return err
			}
			for _, stmt := range splitSQL(placeholders[d.dialect].Replace(string(body))) {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("store: migration %s: %w", base, err)
				}
			}
			if step := migrationSteps[base]; step != nil {
				if err := step(ctx, d, tx); err != nil {
					return fmt.Errorf("store: migration %s: %w", base, err)
				}
			}
			if _, err := tx.ExecContext(ctx, d.rebind(`INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)`), base, d.Now().UnixMicro()); err != nil {
				return fmt.Errorf("store: record migration %s: %w", base, err)
			}
		}
		return nil
	})
}

// splitSQL splits a migration into statements on semicolons at line ends,
// dropping comment-only lines. Migrations keep one statement per ';'.
func splitSQL(s string) []string {
	var out []string
	var cur strings.Builder
	for _, line := range strings.Split(s, "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "--") || t == "" {
			continue
		}
		cur.WriteString(line)
		cur.WriteByte('\n')
		if strings.HasSuffix(t, ";") {
			out = append(out, strings.TrimSpace(cur.String()))
			cur.Reset()
		}
	}
	if strings.TrimSpace(cur.String()) != "" {
		out = append(out, strings.TrimSpace(cur.String()))
	}
	return out
}

// SchemaVersion is the newest migration this binary applies (the name of
// its file without the extension, e.g. "0750_agent_profiles").
func SchemaVersion() string {
	names, err := migrationNames()
	if err != nil || len(names) == 0 {
		return "" // the embedded migrations are part of the binary: not reached
	}
	return strings.TrimSuffix(path.Base(names[len(names)-1]), ".sql")
}
