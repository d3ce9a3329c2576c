package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strings"

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
	usages[fs] = func() {
		fmt.Fprintf(env.Stderr, "Usage: arena %s %s\n\nFlags:\n", name, args)
		fs.SetOutput(env.Stderr)
		fs.PrintDefaults()
		fs.SetOutput(io.Discard)
	}
	return fs
}

var usages = map[*flag.FlagSet]func(){}

// parse parses flags; a bad flag becomes a one-line error naming the command.
func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			usages[fs]()
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

// configFlags are the configuration flags shared by commands that touch the
// store or the network. Flags set on the command line win over ARENA_*
// environment variables, which win over the config file.
type configFlags struct {
	fs       *flag.FlagSet
	file     string
	db       string
	gammaURL string
	clobURL  string
	addr     string
	token    string
	// tokenNext is --admin-token-next.
	tokenNext  string
	allowShort bool
}

func addConfigFlags(fs *flag.FlagSet, net bool) *configFlags {
	c := &configFlags{fs: fs}
	fs.StringVar(&c.file, "config", "", "config file of ARENA_*=VALUE lines")
	fs.StringVar(&c.db, "db", "", "database: sqlite:PATH or postgres://… (default sqlite:arena.db)")
	if net {
		fs.StringVar(&c.gammaURL, "gamma-url", "", "Polymarket Gamma API base URL")
		fs.StringVar(&c.clobURL, "clob-url", "", "Polymarket CLOB API base URL")
	}
	return c
}

func (c *configFlags) addServe() {
	c.fs.StringVar(&c.addr, "addr", "", "HTTP listen address (default 127.0.0.1:8080)")
	c.fs.StringVar(&c.token, "admin-token", "", "bearer token for admin endpoints")
	c.fs.StringVar(&c.tokenNext, "admin-token-next", "", "a second accepted admin token, for rotation without downtime")
	c.fs.BoolVar(&c.allowShort, "allow-short-admin-token", false, "accept admin tokens shorter than 32 bytes (tests and demos on a private machine)")
}

// options resolves the effective configuration after parsing.
func (c *configFlags) options(env *Env) (config.Options, error) {
	file := c.file
	if file == "" {
		for _, e := range env.Environ {
			if v, ok := strings.CutPrefix(e, "ARENA_CONFIG="); ok {
				file = v
			}
		}
	}
	o, err := config.Load(file, env.Environ)
	if err != nil {
		return o, err
	}
	set := map[string]bool{}
	c.fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	override := func(name string, dst *string, v string) {
		if set[name] {
			*dst = v
		}
	}
	override("db", &o.DB, c.db)
	override("gamma-url", &o.GammaURL, c.gammaURL)
	override("clob-url", &o.CLOBURL, c.clobURL)
	override("addr", &o.Addr, c.addr)
	override("admin-token", &o.AdminToken, c.token)
	override("admin-token-next", &o.AdminTokenNext, c.tokenNext)
	if set["allow-short-admin-token"] {
		o.AllowShortAdminToken = c.allowShort
	}
	return o, o.Validate()
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
