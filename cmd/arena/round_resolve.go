package main

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/app"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store"
)

// roundResolve resolves a round's simulated markets with the simulator's
// outcomes, as if they closed now. The simulator fixes every outcome by
// its seed, so the resolution is the one the market would reach at its
// close; only its time is early. That is an operator's action, taken
// after the round's reveal deadline (no agent can still change its
// forecast), recorded in the tamper-evident log as an admin resolution
// is, and refused for markets of any other source.
func roundResolve(ctx context.Context, env *Env, args []string) error {
	fs := newFlagSet(env, "round resolve", "ID --from-sim [--db URL] [--log-key FILE]")
	cf := addConfigFlags(fs, false, "ARENA_LOG_KEY")
	fromSim := fs.Bool("from-sim", false, "resolve the round's markets with the outcomes of the simulated world this database records (arena sync --source sim)")
	id, err := roundIDArg(fs, args)
	if err != nil {
		return err
	}
	if !*fromSim {
		return arena.Errorf(arena.EINVALID, "want --from-sim: only simulated markets resolve by command (Polymarket's resolve upstream; others by POST /api/v1/admin/markets/{id}/resolve)")
	}
	a, err := loggedApp(ctx, env, cf)
	if err != nil {
		return err
	}
	defer a.Close()
	r, err := roundIn(ctx, a, id)
	if err != nil {
		return err
	}
	now := a.Rounds.Clock()
	if err := checkRoundResolvable(r, now); err != nil {
		return err
	}
	world, err := recordedWorld(ctx, a.DB)
	if err != nil {
		return err
	}
	// Check every market before resolving any, so that a refusal changes
	// nothing.
	ids, ms, last, err := roundSimMarkets(ctx, a.DB, r)
	if err != nil {
		return err
	}
	if err := checkNoOpenRoundShares(ctx, a.DB, r, ids, now); err != nil {
		return err
	}
	// The world as it stands once every one of these markets has resolved.
	at := last.Add(world.Config().ResolveDelay)
	outcome := map[string]string{}
	for _, m := range world.MarketsSince(at, at) {
		outcome[m.SourceID] = m.Resolution
	}
	return resolveFromSim(ctx, env, a, r, ids, ms, outcome)
}

// checkRoundResolvable refuses a round whose agents can still change
// their forecasts, and one that is scored or never will be.
func checkRoundResolvable(r *arena.Round, now time.Time) error {
	switch st := r.Status(now); st {
	case arena.RoundOpen, arena.RoundRevealing:
		return arena.Errorf(arena.ECONFLICT, "round %d is %s: its reveals close at %s (in %s); resolve it after that",
			r.ID, st, rfc3339(r.RevealDeadline), r.RevealDeadline.Sub(now).Round(time.Second))
	case arena.RoundScored:
		return arena.Errorf(arena.ECONFLICT, "round %d is scored: its outcomes are frozen", r.ID)
	case arena.RoundInvalidated:
		return arena.Errorf(arena.ECONFLICT, "round %d is invalidated: it is never scored", r.ID)
	}
	return nil
}

// recordedWorld rebuilds the simulated world db records.
func recordedWorld(ctx context.Context, db *store.DB) (*sim.World, error) {
	cfg, ok, err := sim.Recorded(ctx, db)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, arena.Errorf(arena.EINVALID, "this database records no simulated world (arena sync --source sim records one)")
	}
	world, err := sim.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("recorded sim world: %w", err)
	}
	return world, nil
}

// roundSimMarkets reads the round's markets, in its order, refusing any
// that is not the simulator's, and returns the latest close among them.
func roundSimMarkets(ctx context.Context, db *store.DB, r *arena.Round) ([]int64, map[int64]*arena.Market, time.Time, error) {
	ids := make([]int64, len(r.Markets))
	for i, rm := range r.Markets {
		ids[i] = rm.MarketID
	}
	ms, err := db.MarketsByID(ctx, ids)
	if err != nil {
		return nil, nil, time.Time{}, err
	}
	var last time.Time
	for _, id := range ids {
		m := ms[id]
		if m == nil {
			return nil, nil, time.Time{}, arena.Errorf(arena.ENOTFOUND, "market %d not found", id)
		}
		if m.Source != arena.SourceSim {
			return nil, nil, time.Time{}, arena.Errorf(arena.EINVALID, "market %d is from %s, not the simulator: only simulated markets resolve from it", id, m.Source)
		}
		if m.CloseTime.After(last) {
			last = m.CloseTime
		}
	}
	return ids, ms, last, nil
}

// checkNoOpenRoundShares refuses to resolve a market (of ids) also in a
// round whose reveals are still open: the resolution itself would refuse
// it (that round's agents would see the outcome), so it is found first.
func checkNoOpenRoundShares(ctx context.Context, db *store.DB, r *arena.Round, ids []int64, now time.Time) error {
	rounds, err := db.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		return err
	}
	for _, o := range rounds {
		if o.ID == r.ID || !o.TriggeredAt.IsZero() || o.Invalidated || now.After(o.RevealDeadline) {
			continue
		}
		for _, rm := range o.Markets {
			if slices.Contains(ids, rm.MarketID) {
				return arena.Errorf(arena.ECONFLICT, "market %d is also in round %d, whose reveals close at %s; resolve round %d after that",
					rm.MarketID, o.ID, rfc3339(o.RevealDeadline), r.ID)
			}
		}
	}
	return nil
}

// resolveFromSim resolves each unresolved market of the round (ids, read
// into ms) with the world's outcome (by source id), and prints them all.
func resolveFromSim(ctx context.Context, env *Env, a *app.App, r *arena.Round, ids []int64, ms map[int64]*arena.Market, outcome map[string]string) error {
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(env.Stdout, "round %d: its simulated markets resolved now with the simulator's outcomes (an operator's resolution, in the tamper-evident log)\n\n", r.ID)
	fmt.Fprintln(tw, "#\tMARKET\tCLOSES\tOUTCOME\tQUESTION")
	resolved := 0
	for i, id := range ids {
		m := ms[id]
		res, note := m.Resolution, " (already resolved)"
		if res == "" {
			if res, note = outcome[m.SourceID], ""; res == "" {
				return fmt.Errorf("market %d: the recorded world has no market %s", id, m.SourceID)
			}
			if _, err := a.Rounds.ResolveMarket(ctx, id, res); err != nil {
				return err
			}
			a.Logger.Info("market resolved from the simulator before its close", "market", id, "round", r.ID, "resolution", res, "closes", m.CloseTime)
			resolved++
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s%s\t%s\n", i, id, m.CloseTime.UTC().Format("2006-01-02 15:04"), res, note, truncate(m.Question, 60))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\n%d resolved now. Score the round: arena round trigger %d (arena serve also scores it within minutes)\n", resolved, r.ID)
	return nil
}
