package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/polymarket"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store"
)

func init() {
	register("sync", "fetch markets from a source (polymarket, kalshi, manifold, metaculus or sim) into the store", runSync)
}

// Flags that belong to some sources only; giving them to another is a
// mistake worth reporting rather than ignoring.
var sourceFlags = map[string][]string{
	arena.SourcePolymarket: {"limit", "gamma-url", "clob-url"},
	arena.SourceKalshi:     {"limit", "kalshi-url"},
	arena.SourceManifold:   {"limit", "manifold-url"},
	arena.SourceMetaculus:  {"limit", "metaculus-url"},
	arena.SourceSim:        {"seed", "markets", "start", "now", "venues"},
}

// tuneSyncClient lets tests shorten retry backoff; production leaves the
// client's defaults alone.
var tuneSyncClient = func(*polymarket.Client) {}

func runSync(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "sync", "--source polymarket|kalshi|manifold|metaculus [--limit N] | --source sim [--seed N] [--markets N] [--start T] [--now T] [--venues V,…]")
	cf := addConfigFlags(fs, true)
	source := fs.String("source", arena.SourcePolymarket, "market source: polymarket, kalshi, manifold, metaculus or sim")
	limit := fs.Int("limit", 0, "a venue: markets kept, the most traded first (default ARENA_SYNC_LIMIT or 500)")
	sf := simSyncFlags{
		seed:     fs.Int64("seed", 1, "sim: world seed (same seed, same world)"),
		nMarkets: fs.Int("markets", 0, fmt.Sprintf("sim: number of markets (default %d)", sim.DefaultMarkets)),
		startStr: fs.String("start", "", "sim: start of the world's horizon, RFC 3339 (default: the world already in the database, else today 00:00 UTC, so that its markets are open now)"),
		nowStr:   fs.String("now", "", "sim: the instant the world is observed at, RFC 3339 (default: the wall clock)"),
		venues:   fs.String("venues", "", "sim: name the world's markets after these venues, comma-separated (e.g. polymarket,kalshi,manifold): each event takes the next in turn"),
	}
	if err := parseAll(fs, args); err != nil {
		return err
	}
	set, err := checkSourceFlags(fs, *source)
	if err != nil {
		return err
	}
	o, err := cf.options(env)
	if err != nil {
		return err
	}
	log := newLogger(env, o.LogLevel)

	// Everything that can be checked without the store is checked first, so
	// a bad invocation never opens (or creates) a database.
	var run func(ctx context.Context, db *store.DB) (string, error)
	switch *source {
	case arena.SourcePolymarket, arena.SourceKalshi, arena.SourceManifold, arena.SourceMetaculus:
		n := o.SyncLimit
		if set["limit"] {
			n = *limit
		}
		if n <= 0 {
			return fmt.Errorf("--limit %d: must be positive", n)
		}
		var sync app.Syncer
		if *source == arena.SourcePolymarket {
			client := app.Polymarket(o, log)
			tuneSyncClient(client)
			sync = app.PolymarketSyncer(client)
		} else if sync, err = app.VenueSyncer(o, log, *source); err != nil {
			return err
		}
		run = func(ctx context.Context, db *store.DB) (string, error) { return sync(ctx, db, n) }
	case arena.SourceSim:
		w, err := sf.check(set)
		if err != nil {
			return err
		}
		run = w.sync
	default:
		return fmt.Errorf("unknown source %q (want polymarket, kalshi, manifold, metaculus or sim)", *source)
	}

	db, undo, err := openOrUndo(ctx, o.DB)
	if err != nil {
		return err
	}
	summary, err := run(ctx, db)
	if err != nil {
		undo()
		return err
	}
	defer db.Close()
	fmt.Fprintln(env.Stdout, summary)
	return nil
}

// checkSourceFlags refuses an unknown --source and the flags set on the
// command line that belong to another source; it returns the flags set.
func checkSourceFlags(fs *flag.FlagSet, source string) (map[string]bool, error) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if _, ok := sourceFlags[source]; !ok {
		return nil, fmt.Errorf("unknown source %q (want polymarket, kalshi, manifold, metaculus or sim)", source)
	}
	for _, names := range sourceFlags {
		for _, n := range names {
			if set[n] && !slices.Contains(sourceFlags[source], n) {
				return nil, fmt.Errorf("--%s does not apply to --source %s", n, source)
			}
		}
	}
	return set, nil
}

// simSyncFlags are the flags of `arena sync --source sim`.
type simSyncFlags struct {
	seed                     *int64
	nMarkets                 *int
	startStr, nowStr, venues *string
}

// simSync is a simulated world's sync as its flags describe it, checked.
type simSync struct {
	set        map[string]bool // the flags set on the command line
	seed       int64
	markets    int
	start, now time.Time
	venues     string
}

// check checks the sim flags (set are those given on the command line)
// before the store is opened and returns the sync they describe.
func (f simSyncFlags) check(set map[string]bool) (*simSync, error) {
	if set["markets"] && *f.nMarkets <= 0 {
		return nil, fmt.Errorf("--markets %d: must be positive", *f.nMarkets)
	}
	venues, err := sim.ParseVenues(*f.venues)
	if err != nil {
		return nil, err
	}
	w := &simSync{set: set, seed: *f.seed, markets: *f.nMarkets, venues: venues}
	if *f.startStr != "" {
		if w.start, err = syncTimeFlag("start", *f.startStr); err != nil {
			return nil, err
		}
	}
	w.now = time.Now().UTC()
	if *f.nowStr != "" {
		if w.now, err = syncTimeFlag("now", *f.nowStr); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// sync records the world in db, refusing a second one, saves its markets
// as they are at w.now and returns the summary line.
func (w *simSync) sync(ctx context.Context, db *store.DB) (string, error) {
	cfg, err := simWorldConfig(ctx, db, w.set, w.seed, w.markets, w.start, w.now, w.venues)
	if err != nil {
		return "", err
	}
	world, err := sim.New(cfg)
	if err != nil {
		return "", err
	}
	// Refuse a second world before writing any of its markets.
	if err := sim.Record(ctx, db, world); err != nil {
		return "", err
	}
	ms := world.MarketsAt(w.now)
	res, err := db.SaveMarkets(ctx, ms)
	if err != nil {
		return "", fmt.Errorf("save %d sim markets: %w", len(ms), err)
	}
	open := 0
	for _, m := range ms {
		if m.Status == arena.StatusOpen {
			open++
		}
	}
	named := ""
	if cfg.Venues != "" {
		named = ", named after " + cfg.Venues
	}
	return fmt.Sprintf("sim: seed %d, world from %s, %d markets at %s (%d open)%s; saved %d new, %d updated, %d unchanged, %d price points",
		cfg.Seed, world.Config().Start.Format(time.RFC3339), len(ms), w.now.Format(time.RFC3339), open, named,
		res.Inserted, res.Updated, res.Unchanged, res.Prices), nil
}

func syncTimeFlag(name, v string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, fmt.Errorf("--%s %q: want an RFC 3339 time such as 2026-01-05T00:00:00Z", name, v)
	}
	return t.UTC(), nil
}

// simWorldConfig is the world a sim sync observes: the one the database
// already holds (flags may repeat its settings but not change them), or a
// new one that starts today, so that its markets are open now and
// `arena serve` can run rounds on them.
func simWorldConfig(ctx context.Context, db *store.DB, set map[string]bool, seed int64, markets int, start, now time.Time, venues string) (sim.Config, error) {
	cfg, ok, err := sim.Recorded(ctx, db)
	if err != nil {
		return sim.Config{}, err
	}
	if !ok {
		cfg = sim.Config{Start: now.Truncate(24 * time.Hour)}
	}
	if set["seed"] || !ok {
		cfg.Seed = seed
	}
	if set["markets"] {
		cfg.Markets = markets
	}
	if set["venues"] {
		cfg.Venues = venues
	}
	if !start.IsZero() {
		cfg.Start = start
	}
	return cfg, nil
}
