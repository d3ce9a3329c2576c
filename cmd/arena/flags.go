package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"slices"
	"sync"

	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/store"
)

// newFlagSet returns a FlagSet that reports errors instead of exiting, with
// usage that lists the flags.
func newFlagSet(env *Env, name, args string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	// The flag package calls Usage on every parse error; only -h should print it.
	fs.Usage = func() {}
	usages.Store(fs, func() {
		fmt.Fprintf(env.Stderr, "Usage: arena %s %s\n\nFlags:\n", name, args)
		fs.SetOutput(env.Stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	})
	return fs
}

// usages holds each FlagSet's usage printer: the flag package calls
// fs.Usage on every parse error, and only -h should print. Commands run
// concurrently in one process (the tests), hence a sync.Map.
var usages sync.Map // *flag.FlagSet → func()

// parse parses flags; a bad flag becomes a one-line error naming the command.
func parse(fs *flag.FlagSet, args []string) error {
	usage, _ := usages.Load(fs)
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			if usage != nil {
				usage.(func())()
			}
			return err
		}
		return fmt.Errorf("%v (run 'arena %s -h')", err, fs.Name())
	}
	return nil
}

// parseAll parses flags and refuses positional arguments.
func parseAll(fs *flag.FlagSet, args []string) error {
	if err := parse(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	return nil
}

// configFlags are the settings a command takes on its command line (see
// config.Bind): flags set on the command line win over ARENA_*
// environment variables, which win over the config file.
type configFlags struct {
	fs      *flag.FlagSet
	verbose *bool
	// level is the log level when none is configured: a command run by
	// hand prints its results and, on stderr, only warnings and errors.
	level string
}

// netKeys are the settings of the commands that reach the venues.
var netKeys = []string{"ARENA_GAMMA_URL", "ARENA_CLOB_URL", "ARENA_KALSHI_URL", "ARENA_MANIFOLD_URL", "ARENA_METACULUS_URL"}

// addConfigFlags binds --config, --db, --log-level and -v, with net the
// venues' URLs, and the flags of the settings keys name.
func addConfigFlags(fs *flag.FlagSet, net bool, keys ...string) *configFlags {
	keys = append([]string{"ARENA_DB", "ARENA_LOG_LEVEL"}, keys...)
	if net {
		keys = append(keys, netKeys...)
	}
	slices.Sort(keys)
	config.Bind(fs, slices.Compact(keys)...)
	v := fs.Bool("v", false, "verbose: also log informational lines (as --log-level info)")
	return &configFlags{fs: fs, verbose: v, level: "warn"}
}

// options resolves the effective configuration after parsing, with the
// command's log level when none is configured; -v lowers the threshold
// to info.
func (c *configFlags) options(env *Env) (config.Options, error) {
	o, err := config.Load(config.File(c.fs, env.Environ), env.Environ, c.fs)
	if o.LogLevel == "" {
		o.LogLevel = c.level
	}
	if *c.verbose && (o.LogLevel == "warn" || o.LogLevel == "error") {
		o.LogLevel = "info"
	}
	return o, err
}

// openExisting resolves the configuration and opens the store that earlier
// commands wrote (see the package-level openExisting).
func (c *configFlags) openExisting(ctx context.Context, env *Env) (config.Options, *store.DB, error) {
	o, err := c.options(env)
	if err != nil {
		return o, nil, err
	}
	db, err := openExisting(ctx, o.DB)
	return o, db, err
}

// newApp builds the arena's services (see app.New) on the store that
// earlier commands wrote, with the process's API keys and a logger on
// stderr.
func newApp(ctx context.Context, env *Env, o config.Options, d app.Deps) (*app.App, error) {
	db, err := openExisting(ctx, o.DB)
	if err != nil {
		return nil, err
	}
	d.DB, d.Environ, d.Logger = db, env.Environ, newLogger(env, o.LogLevel)
	a, err := app.New(ctx, o, d)
	if err != nil {
		db.Close()
		return nil, err
	}
	return a, nil
}
