package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/store"
)

func init() {
	register("version", "print the version, commit, database schema and scoring method of this binary", runVersion)
}

// runVersion prints what identifies this build: the module version (a
// tagged release, or "(devel)" for a build from a checkout), the commit
// it was built from (with "+dirty" when the checkout had changes), the
// newest database migration it applies and the scoring method it scores
// with.
func runVersion(_ context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "version", "")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	version, commit := "(unknown)", "(not recorded: go run, a build outside a git checkout or -buildvcs=false; go build or go install in a checkout records it)"
	if bi, ok := debug.ReadBuildInfo(); ok {
		version = bi.Main.Version
		if version == "(devel)" {
			version += ", built from source rather than a tagged release"
		}
		var rev, dirty string
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.modified":
				if s.Value == "true" {
					dirty = "+dirty"
				}
			}
		}
		if rev != "" {
			commit = rev + dirty
		}
	}
	fmt.Fprintf(env.Stdout, "arena %s\ncommit %s\nschema %s\nscoring method %s\n", version, commit, store.SchemaVersion(), scoring.MethodVersion)
	return nil
}
