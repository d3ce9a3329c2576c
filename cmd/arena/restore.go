package main

import (
	"context"
	"fmt"

	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/store"
)

func init() {
	register("restore", "restore a SQLite database from an 'arena backup' file", runRestore)
}

func runRestore(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "restore", "--in FILE --db sqlite:PATH [--force]")
	in := fs.String("in", "", "backup file written by 'arena backup'")
	db := fs.String("db", "", "database to restore into: sqlite:PATH (required; PostgreSQL is restored with pg_restore)")
	force := fs.Bool("force", false, "replace a target database that exists and is not empty")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if *in == "" || *db == "" {
		return fmt.Errorf("--in and --db are required")
	}
	sh, err := store.Restore(ctx, *in, *db, *force)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Restored %s into %s (%d migrations applied).\n", *in, redact.String(*db), sh.Applied)
	return nil
}
