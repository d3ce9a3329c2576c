package main

import (
	"log/slog"

	"github.com/forecast-arena/arena/internal/app"
)

// newLogger is the arena's logger on the command's stderr.
func newLogger(env *Env, level string) *slog.Logger {
	return app.NewLogger(env.Stderr, level)
}
