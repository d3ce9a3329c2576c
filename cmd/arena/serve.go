package main

import (
	"context"
	"fmt"
	"net"

	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/store"
)

func init() {
	register("serve", "run the API, dashboard and scheduler", runServe)
}

// serveKeys are the settings `arena serve` takes as flags.
var serveKeys = []string{"ARENA_ADDR", "ARENA_ADMIN_TOKEN", "ARENA_ADMIN_TOKEN_NEXT", "ARENA_ALLOW_SHORT_ADMIN_TOKEN",
	"ARENA_SYNC_EVERY", "ARENA_SYNC_VENUES", "ARENA_NO_SYNC", "ARENA_AGENTS", "ARENA_FORECAST_LEAD_TIME", "ARENA_LOG_KEY", "ARENA_NEW_LOG_RECORD",
	"ARENA_NO_ROUNDS", "ARENA_ROUND_EVERY", "ARENA_ROUND_COMMIT_IN", "ARENA_ROUND_REVEAL_DELAY", "ARENA_ROUND_REVEAL_WINDOW",
	"ARENA_ROUND_K", "ARENA_ROUND_GRACE", "ARENA_ROUND_RETRY_EVERY", "ARENA_ROUND_RULES"}

func runServe(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "serve", "[--db URL] [--create] [--addr HOST:PORT] [--admin-token T] [--admin-token-next T] [--sync-every D] [--sync-venues V,…] [--no-sync] [--no-rounds] [--round-every D] [--commit-in D] [--reveal-delay D] [--reveal-window D] [--round-k N]")
	cf := addConfigFlags(fs, true, serveKeys...)
	cf.level = "info" // a server's log is its record of what it did
	create := fs.Bool("create", false, "start a new, empty arena when the --db SQLite file does not exist (without it, serve refuses a file that does not exist)")
	if err := parseAll(fs, args); err != nil {
		return err
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	if err := refuseNew(o.DB, *create); err != nil {
		return err
	}
	logger := newLogger(env, o.LogLevel)
	db, err := store.Open(ctx, o.DB)
	if err != nil {
		return err
	}
	// One server per SQLite file, for its lifetime: a second would split
	// the jobs, and restore must not replace the file under it.
	if err := db.ClaimServer(); err != nil {
		db.Close()
		return err
	}
	// Listening first: a start refused there reads, makes and binds no
	// log key.
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		db.Close()
		return fmt.Errorf("listen on %s: %w (another arena serve or demo there? stop it, or choose another address with --addr)", o.Addr, err)
	}
	defer ln.Close()
	a, err := app.New(ctx, o, app.Deps{Environ: env.Environ, Logger: logger, DB: db, Log: app.LogWrite})
	if err != nil {
		db.Close()
		return err
	}
	defer a.Close()
	js, err := a.Jobs(ctx, "http://"+ln.Addr().String())
	if err != nil {
		return err
	}
	pub, err := a.Publisher()
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "serving on http://%s/; log verifier key %s\n", ln.Addr(), pub.VerifierKey())
	logger.Info("serving", "addr", ln.Addr().String(), "db", redact.String(o.DB), "engine", db.Engine(), "log_vkey", pub.VerifierKey())
	err = a.Serve(ctx, ln, js)
	logger.Info("stopped")
	return err
}
