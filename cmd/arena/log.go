package main

import (
	"log/slog"
)

func newLogger(env *Env, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level)) // validated by config.Validate
	return slog.New(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: l}))
}
