package main

import (
	"context"
	"fmt"
	"slices"
	"text/tabwriter"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/sim"
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
	svc, db := a.Rounds, a.DB
	r, err := roundIn(ctx, a, id)
	if err != nil {
		return err
	}
	now := svc.Clock()
	switch st := r.Status(now); st {
	case arena.RoundOpen, arena.RoundRevealing:
		return arena.Errorf(arena.ECONFLICT, "round %d is %s: its reveals close at %s (in %s); resolve it after that",
			id, st, rfc3339(r.RevealDeadline), r.RevealDeadline.Sub(now).Round(time.Second))
	case arena.RoundScored:
		return arena.Errorf(arena.ECONFLICT, "round %d is scored: its outcomes are frozen", id)
	case arena.RoundInvalidated:
		return arena.Errorf(arena.ECONFLICT, "round %d is invalidated: it is never scored", id)
	}
	cfg, ok, err := sim.Recorded(ctx, db)
	if err != nil {
		return err
	}
	if !ok {
		return arena.Errorf(arena.EINVALID, "this database records no simulated world (arena sync --source sim records one)")
	}
	world, err := sim.New(cfg)
	if err != nil {
		return fmt.Errorf("recorded sim world: %w", err)
	}
	// Check every market before resolving any, so that a refusal changes
	// nothing.
	ids := make([]int64, len(r.Markets))
	for i, rm := range r.Markets {
		ids[i] = rm.MarketID
	}
	ms, err := db.MarketsByID(ctx, ids)
	if err != nil {
		return err
	}
	var last time.Time
	for _, id := range ids {
		m := ms[id]
		if m == nil {
			return arena.Errorf(arena.ENOTFOUND, "market %d not found", id)
		}
		if m.Source != arena.SourceSim {
			return arena.Errorf(arena.EINVALID, "market %d is from %s, not the simulator: only simulated markets resolve from it", id, m.Source)
		}
		if m.CloseTime.After(last) {
			last = m.CloseTime
		}
	}
	// A market also in a round whose reveals are still open is refused by
	// the resolution itself (its agents would see the outcome): find it
	// first.
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
	// The world as it stands once every one of these markets has resolved.
	at := last.Add(world.Config().ResolveDelay)
	outcome := map[string]string{}
	for _, m := range world.MarketsSince(at, at) {
		outcome[m.SourceID] = m.Resolution
	}
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
			if _, err := svc.ResolveMarket(ctx, id, res); err != nil {
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
