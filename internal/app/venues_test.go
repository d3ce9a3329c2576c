package app

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/config"
	"github.com/forecast-arena/arena/internal/kalshi/kalshitest"
	"github.com/forecast-arena/arena/internal/manifold/manifoldtest"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// A round over two venues, as serve runs it with ARENA_SYNC_VENUES
// kalshi,manifold: both syncs over HTTP, the built-in rules give each
// venue half of the round, and each market's benchmark at the commit
// deadline is its own venue's price then: Kalshi's candle midpoint,
// Manifold's probability after the last bet.
func TestRoundOverVenues(t *testing.T) {
	t.Parallel()
	now := time.Now().UTC().Truncate(time.Minute)
	commit := now.Add(2 * time.Hour) // far from the syncs' own points: the benchmark comes from the venues' histories
	closes := commit.Add(3 * 24 * time.Hour)
	raw := func(v any) json.RawMessage {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	k, m := kalshitest.New(t), manifoldtest.New(t)
	for i := range 3 {
		series := fmt.Sprintf("KXAPP%d", i)
		ticker := series + "-26DEC31-Y"
		k.Markets = append(k.Markets, raw(map[string]any{"ticker": ticker, "event_ticker": series + "-26DEC31", "market_type": "binary",
			"title": fmt.Sprintf("Kalshi question %d?", i), "status": "active", "close_time": closes.Format(time.RFC3339),
			"yes_bid_dollars": "0.4000", "yes_ask_dollars": "0.4200", "volume_fp": fmt.Sprintf("%d.00", 5000+i), "rules_primary": "Yes if it does."}))
		k.Candles[series+"/"+ticker] = raw(map[string]any{"ticker": ticker, "candlesticks": []any{
			map[string]any{"end_period_ts": commit.Add(-time.Minute).Unix(), "yes_bid": map[string]any{"close_dollars": "0.5000"}, "yes_ask": map[string]any{"close_dollars": "0.5200"}},
			map[string]any{"end_period_ts": commit.Unix(), "yes_bid": map[string]any{"close_dollars": "0.5500"}, "yes_ask": map[string]any{"close_dollars": "0.5700"}},
		}})
		id := fmt.Sprintf("AppManifold%d", i)
		m.Markets = append(m.Markets, raw(map[string]any{"id": id, "question": fmt.Sprintf("Manifold question %d?", i), "outcomeType": "BINARY",
			"probability": 0.27, "createdTime": now.Add(-24 * time.Hour).UnixMilli(), "closeTime": closes.UnixMilli(), "isResolved": false,
			"volume": 5000 + i, "textDescription": "Resolves YES if it does."}))
		m.Single[id] = m.Markets[i]
		m.Bets[id] = []json.RawMessage{
			raw(map[string]any{"createdTime": commit.Add(time.Minute).UnixMilli(), "probAfter": 0.9}), // after the deadline: not the benchmark
			raw(map[string]any{"createdTime": commit.Add(-90 * time.Second).UnixMilli(), "probAfter": 0.33}),
		}
	}
	quiet := slog.New(slog.DiscardHandler)
	o := config.Defaults()
	o.KalshiURL, o.ManifoldURL, o.SyncVenues = k.URL, m.URL, "kalshi,manifold"
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		for _, v := range []string{arena.SourceKalshi, arena.SourceManifold} {
			sync, err := VenueSyncer(o, quiet, v)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := sync(ctx, db, 10); err != nil {
				t.Fatalf("%s sync: %v", v, err)
			}
		}
		rules, err := SelectionRules(ctx, db, o, "", "--rules")
		if err != nil {
			t.Fatal(err)
		}
		clock := now
		svc := &rounds.Service{Store: db, Logger: quiet, Now: func() time.Time { return clock }, K: 4, Rules: rules,
			Lookup: BenchmarkLookup(o, quiet, Polymarket(o, quiet))}
		r, err := svc.CreateRound(ctx, rounds.CreateRoundRequest{CommitDeadline: commit, RevealStart: commit.Add(time.Minute), RevealDeadline: commit.Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		clock = commit.Add(30 * time.Minute)
		if n, err := svc.CaptureBenchmarks(ctx); n != 1 || err != nil {
			t.Fatalf("captured %d rounds: %v", n, err)
		}
		r, err = db.Round(ctx, r.ID)
		if err != nil {
			t.Fatal(err)
		}
		want := map[string]struct {
			p   float64
			src arena.PriceSource
		}{arena.SourceKalshi: {0.56, arena.PriceCandleMid}, arena.SourceManifold: {0.33, arena.PriceAMMHistory}}
		venues := map[string]int{}
		for _, rm := range r.Markets {
			mk, err := db.Market(ctx, rm.MarketID)
			if err != nil {
				t.Fatal(err)
			}
			venues[mk.Venue()]++
			w := want[mk.Venue()]
			if rm.Benchmark == nil || *rm.Benchmark != w.p || rm.BenchmarkSource != w.src || !rm.BenchmarkTime.Equal(commit) {
				t.Errorf("%s market %s: benchmark %v from %q at %s, want %v from %q at the commit deadline", mk.Venue(), mk.SourceID,
					rm.Benchmark, rm.BenchmarkSource, rm.BenchmarkTime, w.p, w.src)
			}
		}
		if venues[arena.SourceKalshi] != 2 || venues[arena.SourceManifold] != 2 {
			t.Errorf("round of %d markets by venue: %v, want 2 each", len(r.Markets), venues)
		}
	})
}

// The built-in rules over a simulated world whose markets are named after
// venues share every round equally among those and the synced venues;
// without named venues they pool the simulated markets.
func TestSelectionRulesSimVenues(t *testing.T) {
	ctx := context.Background()
	o := config.Defaults() // syncs polymarket
	for _, c := range []struct {
		venues string
		shares []string
	}{{"", nil}, {"kalshi,manifold", []string{arena.SourceKalshi, arena.SourceManifold, arena.SourcePolymarket}}} {
		db := storetest.Open(t, "sqlite")
		w, err := sim.New(sim.Config{Seed: 1, Markets: 10, Venues: c.venues})
		if err != nil {
			t.Fatal(err)
		}
		if err := sim.Record(ctx, db, w); err != nil {
			t.Fatal(err)
		}
		rules, err := SelectionRules(ctx, db, o, "", "--rules")
		if err != nil {
			t.Fatal(err)
		}
		var shared []string
		for _, v := range slices.Sorted(maps.Keys(rules.Venues)) {
			if rules.Venues[v].Share > 0 {
				shared = append(shared, v)
			}
		}
		if !slices.Equal(shared, c.shares) || !slices.Contains(rules.Sources, arena.SourceSim) {
			t.Errorf("venues %q: shares for %v (want %v), sources %v", c.venues, shared, c.shares, rules.Sources)
		}
	}
}
