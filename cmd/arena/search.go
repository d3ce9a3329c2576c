package main

import (
	"log/slog"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/config"
)

// searchRetriever is the searchWeb provider of a command that takes no
// configuration flags (see app.Search): its Exa key comes from the
// environment and ARENA_CONFIG.
func searchRetriever(env *Env, spec, cacheDir string, cacheOnly bool, logger *slog.Logger) (arena.Retriever, error) {
	if spec == "" {
		return nil, nil
	}
	o, err := config.Load(config.File(nil, env.Environ), env.Environ, nil)
	if err != nil {
		return nil, err
	}
	return app.Search(o, spec, cacheDir, cacheOnly, logger)
}
