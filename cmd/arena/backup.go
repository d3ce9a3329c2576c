package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/forecast-arena/arena/internal/store"
)

func init() {
	register("backup", "write a consistent copy of a SQLite database (safe while serve runs)", runBackup)
}

func runBackup(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "backup", "--out FILE [--db URL]")
	cf := addConfigFlags(fs, false)
	out := fs.String("out", "", "file to write the copy to (must not exist)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	if *out == "" {
		return fmt.Errorf("--out is required")
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	if err := store.Backup(ctx, o.DB, *out); err != nil {
		return err
	}
	sh, err := store.CheckBackup(ctx, *out)
	if err != nil {
		return err
	}
	abs, _ := filepath.Abs(*out)
	fmt.Fprintf(env.Stdout, "Backed up to %s (%d migrations applied). Restore with: arena restore --in %s --db sqlite:PATH\n", abs, sh.Applied, abs)
	return nil
}
