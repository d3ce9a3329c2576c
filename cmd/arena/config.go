package main

import (
	"context"
	"fmt"

	"github.com/forecast-arena/arena/internal/config"
)

func init() {
	register("config", "print the effective configuration (secrets redacted)", runConfig)
}

func runConfig(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "config", "[--config FILE] [--db URL]")
	addConfigFlags(fs, false, config.Flagged()...)
	if err := parseAll(fs, args); err != nil {
		return err
	}
	// As configured: the log level stays unset when it is, since each
	// command has its own default.
	o, err := config.Load(config.File(fs, env.Environ), env.Environ, fs)
	if err != nil {
		return err
	}
	for _, l := range o.Lines() {
		fmt.Fprintln(env.Stdout, l)
	}
	return nil
}
