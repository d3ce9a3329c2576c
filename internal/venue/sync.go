package venue

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/forecast-arena/arena"
)

// concurrency is how many single-market reads a sync has in flight; the
// client's rate limit paces them.
const concurrency = 4

// Sync lists the venue's open binary markets, keeps the `limit` most
// traded (by Volume; ties keep the venue's listing order), re-reads
// every open or closed market of the venue the store knows that is not
// among them (so closures and resolutions are recorded), and writes it
// all with ONE st.SaveMarkets call. Everything is fetched before
// anything is written, so a venue that fails part way changes nothing.
// An object that cannot become a market is skipped, logged and counted
// by reason, never fatal.
func Sync(ctx context.Context, st arena.MarketStore, src Source, limit int, log *slog.Logger) (Report, error) {
	name := src.Name()
	rep := Report{Venue: name}
	log = arena.Logger(log)
	if limit <= 0 {
		return rep, arena.Errorf(arena.EINVALID, "%s: sync limit %d must be positive", name, limit)
	}
	known, err := knownMarkets(ctx, st, name)
	if err != nil {
		return rep, err
	}
	listed, err := src.List(ctx, &rep)
	if err != nil {
		return rep, unavailable(ctx, name, err)
	}
	kept := top(listed, limit, &rep)
	byID := make(map[string]*arena.Market, len(known))
	for _, k := range known {
		byID[k.SourceID] = k
	}
	if p, ok := src.(Partial); ok && p.ListsPartial() {
		if err := complete(ctx, src, kept, byID, log); err != nil {
			return rep, unavailable(ctx, name, err)
		}
	}
	inKept := make(map[string]bool, len(kept))
	for _, m := range kept {
		inKept[m.SourceID] = true
	}
	var stale []*arena.Market
	for _, k := range known {
		if !inKept[k.SourceID] {
			stale = append(stale, k)
		}
	}
	refreshed, err := refresh(ctx, src, stale, &rep, log)
	if err != nil {
		return rep, unavailable(ctx, name, err)
	}
	for _, m := range kept {
		if prev := byID[m.SourceID]; prev != nil {
			keep(m, prev)
		}
	}
	all := append(kept, refreshed...)
	for _, m := range all {
		prev := byID[m.SourceID]
		// A closed or resolved market's last prices are recorded once,
		// when its status changes, not again on every sync after.
		if m.Status != arena.StatusOpen && prev != nil && prev.Status == m.Status {
			m.History = nil
		}
		if m.Status == arena.StatusOpen {
			if len(m.Prices) > 0 {
				rep.Priced++
			} else {
				rep.Unpriced++
			}
		}
	}
	if len(all) == 0 {
		return rep, nil
	}
	res, err := st.SaveMarkets(ctx, all)
	if err != nil {
		return rep, fmt.Errorf("%s: save %d markets: %w", name, len(all), err)
	}
	rep.Inserted, rep.Updated, rep.Unchanged, rep.PricePoints = res.Inserted, res.Updated, res.Unchanged, res.Prices
	return rep, nil
}

// top drops repeated ids and keeps the limit markets of most volume, in
// the listing's order among equals.
func top(listed []*arena.Market, limit int, rep *Report) []*arena.Market {
	seen := make(map[string]bool, len(listed))
	ms := make([]*arena.Market, 0, len(listed))
	for _, m := range listed {
		if seen[m.SourceID] {
			rep.Duplicates++
			continue
		}
		seen[m.SourceID] = true
		ms = append(ms, m)
	}
	sort.SliceStable(ms, func(i, j int) bool { return ms[i].Volume > ms[j].Volume })
	if len(ms) > limit {
		ms = ms[:limit]
	}
	rep.Kept = len(ms)
	return ms
}

// unavailable marks a venue's failure as arena.EUNAVAILABLE, keeping the
// cause in the chain; cancellation is passed through as is.
func unavailable(ctx context.Context, name string, err error) error {
	if ctx.Err() != nil {
		return err
	}
	return fmt.Errorf("%w: %w", arena.Errorf(arena.EUNAVAILABLE, "%s unavailable", name), err)
}

// knownMarkets returns the store's markets of the venue that may still
// change upstream: open ones and closed-but-unresolved ones.
func knownMarkets(ctx context.Context, st arena.MarketStore, name string) ([]*arena.Market, error) {
	var out []*arena.Market
	for _, s := range []arena.MarketStatus{arena.StatusOpen, arena.StatusClosed} {
		ms, err := st.Markets(ctx, arena.MarketFilter{Source: name, Status: s, Kind: arena.KindMarket})
		if err != nil {
			return nil, fmt.Errorf("%s: list known %s markets: %w", name, s, err)
		}
		out = append(out, ms...)
	}
	return out, nil
}

// each runs fn on every index of n with at most concurrency in flight
// and returns the first error.
func each(ctx context.Context, n int, fn func(ctx context.Context, i int) error) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(concurrency)
	for i := range n {
		g.Go(func() error { return fn(ctx, i) })
	}
	return g.Wait()
}

// complete replaces each kept market the store does not hold yet with
// the venue's single-market answer, which a partial listing lacks parts
// of. A market the venue no longer serves, or whose answer does not
// decode, keeps its listing's form.
func complete(ctx context.Context, src Source, kept []*arena.Market, known map[string]*arena.Market, log *slog.Logger) error {
	var fresh []int
	for i, m := range kept {
		if known[m.SourceID] == nil {
			fresh = append(fresh, i)
		}
	}
	return each(ctx, len(fresh), func(ctx context.Context, j int) error {
		i := fresh[j]
		m, err := src.Market(ctx, kept[i].SourceID)
		var se *SkipError
		switch {
		case arena.ErrorKind(err) == arena.ENOTFOUND || errors.As(err, &se):
			log.Warn(src.Name()+": keeping the listing's form of a market", "market", kept[i].SourceID, "err", err)
			return nil
		case err != nil:
			return err
		}
		keep(m, kept[i])
		kept[i] = m
		return nil
	})
}

// refresh re-reads known markets. Markets that vanished upstream or now
// decode badly are logged, counted and left as stored; any other failure
// aborts the sync, so a flaky venue cannot half-update the store.
func refresh(ctx context.Context, src Source, known []*arena.Market, rep *Report, log *slog.Logger) ([]*arena.Market, error) {
	out := make([]*arena.Market, len(known))
	var mu sync.Mutex
	err := each(ctx, len(known), func(ctx context.Context, i int) error {
		k := known[i]
		m, err := src.Market(ctx, k.SourceID)
		var se *SkipError
		switch {
		case arena.ErrorKind(err) == arena.ENOTFOUND:
			log.Warn(src.Name()+": known market gone upstream", "market", k.SourceID)
			mu.Lock()
			rep.RefreshMissing++
			mu.Unlock()
			return nil
		case errors.As(err, &se):
			log.Warn(src.Name()+": skipping re-read market", "market", k.SourceID, "reason", se.Reason, "err", err)
			mu.Lock()
			rep.Skip(se.Reason)
			mu.Unlock()
			return nil
		case err != nil:
			return err
		}
		keep(m, k)
		out[i] = m
		mu.Lock()
		defer mu.Unlock()
		rep.Count(m, k)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(out, func(m *arena.Market) bool { return m == nil }), nil
}

// keep fills what a venue's answer lacks and an earlier one gave from
// the stored market: a listing's form of a market the sync read whole
// before (Manifold's description and topics), a single-market answer of
// a market listed in its event (Kalshi's category).
func keep(m, stored *arena.Market) {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&m.Category, stored.Category}, {&m.EventID, stored.EventID}, {&m.EventSlug, stored.EventSlug},
		{&m.URL, stored.URL}, {&m.Criteria, stored.Criteria}, {&m.Background, stored.Background},
	} {
		if *f.dst == "" {
			*f.dst = f.src
		}
	}
}
