package main

import (
	"log/slog"

	"github.com/forecast-arena/arena/internal/redact"
)

func newLogger(env *Env, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level)) // validated by config.Validate
	return slog.New(redact.Handler(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: l})))
}
