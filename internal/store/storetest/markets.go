package storetest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// Binary is an open binary market with two price points.
func Binary(id string, vol float64) *arena.Market {
	return &arena.Market{
		Source: arena.SourceSim, SourceID: id, Kind: arena.KindMarket, Question: "Will " + id + " happen?",
		Category: "politics", EventID: "ev-" + id, Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No},
		Prices: map[string]float64{arena.Yes: 0.6, arena.No: 0.4}, Volume: vol, CloseTime: t0.Add(48 * time.Hour),
		Status: arena.StatusOpen,
		History: []arena.PricePoint{
			{Outcome: arena.Yes, Time: t0, Price: 0.6, Source: arena.PriceSim},
			{Outcome: arena.Yes, Time: t0.Add(time.Hour), Price: 0.62, Source: arena.PriceSim},
		},
	}
}

func testSaveMarketsRoundTrip(t *testing.T, db *store.DB) {
	ctx := context.Background()
	fv := 0.37
	multi := &arena.Market{
		Source: arena.SourcePolymarket, SourceID: "123", Kind: arena.KindMarket, Question: "Who wins?",
		Type: arena.Multi, Outcomes: []string{"Lakers", "Celtics"}, Volume: 99.5, Liquidity: 12,
		Status: arena.StatusOpen, ConditionID: "0xabc", TokenIDs: []string{"1", "2"}, NegRisk: true,
		Slug: "who-wins", EventSlug: "nba", UMAStatus: "proposed", FreezeValue: &fv, FreezeTime: t0,
		OpenTime: t0.Add(-time.Hour), CloseTime: t0.Add(time.Hour),
	}
	res, err := db.SaveMarkets(ctx, []*arena.Market{Binary("a", 10), multi, Binary("b", 500)})
	if err != nil {
		t.Fatal(err)
	}
	if res != (arena.SaveResult{Inserted: 3, Prices: 4}) {
		t.Fatalf("first save: %+v", res)
	}
	got, err := db.Market(ctx, multi.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Question != "Who wins?" || got.Type != arena.Multi || len(got.TokenIDs) != 2 || !got.NegRisk ||
		got.FreezeValue == nil || *got.FreezeValue != 0.37 || !got.CloseTime.Equal(multi.CloseTime) ||
		got.Prices != nil || got.UMAStatus != "proposed" || got.Liquidity != 12 {
		t.Fatalf("round trip mismatch: %+v", got)
	}
	// Same batch again: nothing changes.
	res, err = db.SaveMarkets(ctx, []*arena.Market{Binary("a", 10), multi, Binary("b", 500)})
	if err != nil {
		t.Fatal(err)
	}
	if res != (arena.SaveResult{Unchanged: 3}) {
		t.Fatalf("idempotent save: %+v", res)
	}
	// A changed price updates one market.
	b := Binary("b", 500)
	b.Prices[arena.Yes] = 0.7
	if res, err = db.SaveMarkets(ctx, []*arena.Market{b}); err != nil || res != (arena.SaveResult{Updated: 1}) {
		t.Fatalf("update: %+v %v", res, err)
	}
	list, err := db.Markets(ctx, arena.MarketFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3 || list[0].SourceID != "b" || list[1].SourceID != "123" || list[2].SourceID != "a" {
		t.Fatalf("order by volume: %v %v %v", list[0].SourceID, list[1].SourceID, list[2].SourceID)
	}
	if list[0].Prices[arena.Yes] != 0.7 {
		t.Fatalf("updated price: %v", list[0].Prices)
	}
	if l, _ := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceSim, Limit: 1}); len(l) != 1 || l[0].SourceID != "b" {
		t.Fatalf("filter+limit: %v", l)
	}
	hist, err := db.PriceHistory(ctx, list[2].ID, arena.Yes, t0, t0.Add(time.Hour))
	if err != nil || len(hist) != 2 || hist[1].Price != 0.62 || !hist[1].Time.Equal(t0.Add(time.Hour)) {
		t.Fatalf("history: %+v %v", hist, err)
	}
}

// testMarketsByVenue: the trading track's filter leaves out the venues
// without a tradable price, live or simulated.
func testMarketsByVenue(t *testing.T, db *store.DB) {
	ctx := context.Background()
	var ms []*arena.Market
	for i, v := range [][2]string{{arena.SourceSim, ""}, {arena.SourceSim, arena.SourceMetaculus}, {arena.SourceSim, arena.SourceKalshi},
		{arena.SourceMetaculus, ""}, {arena.SourceKalshi, ""}, {arena.SourceManifold, ""}} {
		m := Binary(fmt.Sprint("m", i), float64(100-i))
		m.Source, m.Origin, m.History = v[0], v[1], nil
		ms = append(ms, m)
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	list, err := db.Markets(ctx, arena.MarketFilter{Status: arena.StatusOpen, Traded: true})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, m := range list {
		got = append(got, m.SourceID)
	}
	if want := []string{"m0", "m2", "m4", "m5"}; !slices.Equal(got, want) {
		t.Fatalf("traded markets: %v, want %v", got, want)
	}
	if all, _ := db.Markets(ctx, arena.MarketFilter{}); len(all) != len(ms) {
		t.Fatalf("unfiltered: %d markets, want %d", len(all), len(ms))
	}
	// The browser's venue filter and facets read the venue the same way.
	page, total, err := db.MarketList(ctx, arena.MarketListFilter{Venue: arena.SourceKalshi})
	if err != nil || total != 2 || len(page) != 2 || page[0].Market.SourceID != "m4" || page[1].Market.SourceID != "m2" {
		t.Fatalf("kalshi's markets: %d of %d, %v", len(page), total, err)
	}
	facets, err := db.MarketFacets(ctx)
	if want := []string{arena.SourceKalshi, arena.SourceManifold, arena.SourceMetaculus, arena.SourceSim}; err != nil || !slices.Equal(facets.Venues, want) {
		t.Fatalf("venues %v, want %v (%v)", facets.Venues, want, err)
	}
}

func testSaveMarketsAtomic(t *testing.T, db *store.DB) {
	ctx := context.Background()
	bad := Binary("bad", 1)
	bad.History = append(bad.History, arena.PricePoint{Outcome: arena.Yes, Time: t0, Price: 1.5, Source: arena.PriceSim})
	_, err := db.SaveMarkets(ctx, []*arena.Market{Binary("ok", 1), bad})
	if arena.ErrorKind(err) != arena.EINVALID {
		t.Fatalf("want invalid, got %v", err)
	}
	if l, _ := db.Markets(ctx, arena.MarketFilter{}); len(l) != 0 {
		t.Fatalf("store changed by a failed batch: %d markets", len(l))
	}
	dup := []*arena.Market{Binary("x", 1), Binary("x", 2)}
	if _, err := db.SaveMarkets(ctx, dup); arena.ErrorKind(err) != arena.EINVALID {
		t.Fatalf("duplicate in batch: %v", err)
	}
	invalid := Binary("y", 1)
	invalid.Type = arena.Multi
	if _, err := db.SaveMarkets(ctx, []*arena.Market{invalid}); arena.ErrorKind(err) != arena.EINVALID {
		t.Fatalf("type mismatch accepted: %v", err)
	}
}

func testResolveMarket(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := Binary("r", 1)
	if _, err := db.SaveMarkets(ctx, []*arena.Market{m}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, m.ID, "Maybe", t0); arena.ErrorKind(err) != arena.EINVALID {
		t.Fatalf("bad outcome: %v", err)
	}
	if _, err := db.ResolveMarket(ctx, 9999, arena.Yes, t0); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("unknown market: %v", err)
	}
	// The market's own outcome names, in any letter case.
	if _, err := db.ResolveMarket(ctx, m.ID, "yES", t0); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, m.ID, arena.Yes, t0); err != nil {
		t.Fatalf("same resolution twice should be a no-op: %v", err)
	}
	if _, err := db.ResolveMarket(ctx, m.ID, arena.No, t0); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("conflicting resolution: %v", err)
	}
	// A later sync that does not report the resolution keeps it.
	if _, err := db.SaveMarkets(ctx, []*arena.Market{Binary("r", 2)}); err != nil {
		t.Fatal(err)
	}
	got, _ := db.Market(ctx, m.ID)
	if got.Status != arena.StatusResolved || got.Resolution != arena.Yes || !got.ResolvedAt.Equal(t0) || got.Volume != 2 || got.ResolvedBy != arena.ResolvedByOperator {
		t.Fatalf("resolution or its provenance lost on resync: %+v", got)
	}
	// A market its source resolved carries no operator mark.
	up := Binary("upstream", 1)
	up.Status, up.Resolution, up.ResolvedAt = arena.StatusResolved, arena.No, t0
	if _, err := db.SaveMarkets(ctx, []*arena.Market{up}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Market(ctx, up.ID); got.Resolution != arena.No || got.ResolvedBy != "" {
		t.Fatalf("source's resolution: %+v", got)
	}
	if l, _ := db.Markets(ctx, arena.MarketFilter{Status: arena.StatusResolved}); len(l) != 2 {
		t.Fatalf("status filter: %d", len(l))
	}
}

func testClaimJobOnce(t *testing.T, db *store.DB) {
	ctx := context.Background()
	if wins := race(t, 8, func(i int) (bool, error) { return db.ClaimJob(ctx, "sync", t0, fmt.Sprint("r", i)) }); wins != 1 {
		t.Fatalf("%d claimants won one period", wins)
	}
	if err := db.FinishJob(ctx, "sync", t0, errors.New("boom")); err != nil {
		t.Fatal(err)
	}
	if ok, _ := db.ClaimJob(ctx, "sync", t0.Add(5*time.Minute), "r0"); !ok {
		t.Fatal("next period not claimable")
	}
	runs, err := db.JobRuns(ctx, "sync")
	if err != nil || len(runs) != 2 || !runs[0].Finished || runs[0].Error != "boom" || runs[1].Finished {
		t.Fatalf("runs: %+v %v", runs, err)
	}
}

// A NUL byte from upstream is stored the same way on both engines.
func testSaveMarketsNULBytes(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := Binary("nul", 1)
	m.Question = "Will\x00 it?"
	m.Category = "po\x00litics"
	if _, err := db.SaveMarkets(ctx, []*arena.Market{m}); err != nil {
		t.Fatal(err)
	}
	got, err := db.Market(ctx, m.ID)
	if err != nil || got.Question != "Will it?" || got.Category != "politics" {
		t.Fatalf("%q %q %v", got.Question, got.Category, err)
	}
}

// A claim left unfinished by a dead replica is taken over after the lease;
// a finished or live one is not.
func testClaimJobLease(t *testing.T, db *store.DB) {
	ctx := context.Background()
	now := t0
	db.Now = func() time.Time { return now }
	if ok, _ := db.ClaimJob(ctx, "weekly", t0, "dead"); !ok {
		t.Fatal("first claim failed")
	}
	now = t0.Add(store.JobLease - time.Minute)
	if ok, _ := db.ClaimJob(ctx, "weekly", t0, "b"); ok {
		t.Fatal("live claim taken over")
	}
	now = t0.Add(store.JobLease + time.Minute)
	if ok, err := db.ClaimJob(ctx, "weekly", t0, "b"); !ok || err != nil {
		t.Fatalf("stale claim not taken over: %v", err)
	}
	if ok, _ := db.ClaimJob(ctx, "weekly", t0, "c"); ok {
		t.Fatal("a fresh takeover was taken over again")
	}
	db.FinishJob(ctx, "weekly", t0, nil)
	now = now.Add(2 * store.JobLease)
	if ok, _ := db.ClaimJob(ctx, "weekly", t0, "c"); ok {
		t.Fatal("finished run claimed again")
	}
	runs, _ := db.JobRuns(ctx, "weekly")
	if len(runs) != 1 || runs[0].Owner != "b" || !runs[0].Finished {
		t.Fatalf("%+v", runs)
	}
}

func testMarketsByID(t *testing.T, db *store.DB) {
	ctx := context.Background()
	a, b := Binary("a", 1), Binary("b", 2)
	if _, err := db.SaveMarkets(ctx, []*arena.Market{a, b}); err != nil {
		t.Fatal(err)
	}
	got, err := db.MarketsByID(ctx, []int64{b.ID, a.ID})
	if err != nil || len(got) != 2 || got[a.ID].SourceID != "a" || got[b.ID].SourceID != "b" {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := db.MarketsByID(ctx, []int64{a.ID, 999}); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("missing id: %v", err)
	}
	if got, err := db.MarketsByID(ctx, nil); err != nil || len(got) != 0 {
		t.Fatalf("empty: %v %v", got, err)
	}
}

func testSettings(t *testing.T, db *store.DB) {
	// The first InitSetting wins, even among concurrent callers.
	var wg sync.WaitGroup
	got := make([]string, 8)
	for i := range got {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := db.InitSetting(context.Background(), "once", fmt.Sprint(i))
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		}()
	}
	wg.Wait()
	for _, v := range got {
		if v != got[0] || v == "" {
			t.Fatalf("InitSetting values %v: want one value for all", got)
		}
	}
	ctx := context.Background()
	if v, ok, err := db.Setting(ctx, "k"); err != nil || ok || v != "" {
		t.Fatalf("missing setting: %q %v %v", v, ok, err)
	}
	for _, v := range []string{"one", "two"} {
		if err := db.PutSetting(ctx, "k", v); err != nil {
			t.Fatal(err)
		}
		if got, ok, err := db.Setting(ctx, "k"); err != nil || !ok || got != v {
			t.Fatalf("after put %q: %q %v %v", v, got, ok, err)
		}
	}
}

// testManyPricePoints saves a price history of several full insert chunks
// and a partial one, twice: the second time, only the points not stored
// yet count, and the history holds each point once.
func testManyPricePoints(t *testing.T, db *store.DB) {
	ctx := context.Background()
	hist := func(from, n int) []arena.PricePoint {
		var pts []arena.PricePoint
		for i := from; i < from+n; i++ {
			pts = append(pts, arena.PricePoint{Outcome: arena.Yes, Time: t0.Add(time.Duration(i) * time.Minute), Price: float64(i%100) / 100, Source: arena.PriceSim})
		}
		return pts
	}
	for _, c := range []struct{ from, n, want int }{{0, 2500, 2500}, {1000, 2200, 700}, {0, 3200, 0}} {
		m := Binary("long-history", 1)
		m.History = hist(c.from, c.n)
		res, err := db.SaveMarkets(ctx, []*arena.Market{m})
		if err != nil {
			t.Fatal(err)
		}
		if res.Prices != c.want {
			t.Fatalf("saving points %d to %d: %d new, want %d", c.from, c.from+c.n, res.Prices, c.want)
		}
		got, err := db.PriceHistory(ctx, m.ID, arena.Yes, t0, t0.Add(100*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		if want := max(c.from+c.n, 2500); len(got) != want || !got[len(got)-1].Time.Equal(t0.Add(time.Duration(want-1)*time.Minute)) {
			t.Fatalf("history of %d points, want %d", len(got), want)
		}
	}
}
