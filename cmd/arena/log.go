package main

import (
	"log/slog"

	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/web"
)

func newLogger(env *Env, level string) *slog.Logger {
	var l slog.Level
	l.UnmarshalText([]byte(level)) // validated by config.Validate
	// Lines logged with a request's context carry its request id.
	return slog.New(web.LogHandler(redact.Handler(slog.NewTextHandler(env.Stderr, &slog.HandlerOptions{Level: l}))))
}
