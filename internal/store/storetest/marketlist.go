package storetest

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// testMarketList: the question browser's page is newest first, filtered by
// source, category and status, paged by an id cursor that visits every
// market once, with the total the filters select; a market's forecasters
// are the agents whose revealed forecast of it was scored (no baseline, no
// forfeit); the facets are the stored sources and categories, sorted.
func testMarketList(t *testing.T, db *store.DB) {
	ctx := context.Background()
	var ms []*arena.Market
	for i := range 12 {
		m := Binary(fmt.Sprintf("list-%02d", i), float64(i))
		m.Category = []string{"sports", "politics", ""}[i%3]
		if i%4 == 0 {
			m.Source = arena.SourcePolymarket
		}
		if i >= 8 {
			m.Status, m.Resolution, m.ResolvedAt = arena.StatusResolved, arena.Yes, t0
		}
		ms = append(ms, m)
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	list := func(f arena.MarketListFilter) ([]int64, []int, int) {
		t.Helper()
		page, total, err := db.MarketList(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		var counts []int
		for _, l := range page {
			ids, counts = append(ids, l.Market.ID), append(counts, l.Forecasters)
		}
		return ids, counts, total
	}
	idsOf := func(keep func(i int) bool) []int64 {
		var out []int64
		for i := len(ms) - 1; i >= 0; i-- {
			if keep(i) {
				out = append(out, ms[i].ID)
			}
		}
		return out
	}
	for _, c := range []struct {
		name string
		f    arena.MarketListFilter
		want []int64
	}{
		{"all", arena.MarketListFilter{}, idsOf(func(int) bool { return true })},
		{"source", arena.MarketListFilter{Source: arena.SourcePolymarket}, idsOf(func(i int) bool { return i%4 == 0 })},
		{"category", arena.MarketListFilter{Category: "politics"}, idsOf(func(i int) bool { return i%3 == 1 })},
		{"status", arena.MarketListFilter{Status: arena.StatusResolved}, idsOf(func(i int) bool { return i >= 8 })},
		{"all three", arena.MarketListFilter{Source: arena.SourceSim, Category: "sports", Status: arena.StatusOpen},
			idsOf(func(i int) bool { return i%4 != 0 && i%3 == 0 && i < 8 })},
	} {
		ids, _, total := list(c.f)
		if !slices.Equal(ids, c.want) || total != len(c.want) {
			t.Errorf("%s: ids %v (total %d), want %v", c.name, ids, total, c.want)
		}
		// Paging by two visits the same markets in the same order.
		var paged []int64
		f := c.f
		f.Limit = 2
		for {
			ids, _, total := list(f)
			if total != len(c.want) {
				t.Errorf("%s: page total %d, want %d", c.name, total, len(c.want))
			}
			paged = append(paged, ids...)
			if len(ids) < 2 {
				break
			}
			f.Before = ids[len(ids)-1]
		}
		if !slices.Equal(paged, c.want) {
			t.Errorf("%s paged: %v, want %v", c.name, paged, c.want)
		}
	}

	// Round 1 (triggered): A and C reveal, B only commits (a forfeit);
	// the random baseline is scored too. Only A and C count.
	r := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour),
		CreatedAt: t0, Markets: []arena.RoundMarket{{MarketID: ms[8].ID}, {MarketID: ms[9].ID}}}
	if err := db.CreateRound(ctx, r); err != nil {
		t.Fatal(err)
	}
	ok := func(arena.SubmissionState) error { return nil }
	agents := []string{"0x00000000000000000000000000000000000000A1", "0x00000000000000000000000000000000000000B2", "0x00000000000000000000000000000000000000C3"}
	for i, a := range agents {
		if err := db.Submit(ctx, arena.SubmitCommit, &arena.Submission{RoundID: r.ID, Agent: a, CommitHash: "0x01", CommitSig: "0x02"}, t0, ok); err != nil {
			t.Fatal(err)
		}
		if i == 1 {
			continue
		}
		if err := db.Submit(ctx, arena.SubmitReveal, &arena.Submission{RoundID: r.ID, Agent: a, Predictions: []uint16{6000, 3000}, Salt: "0x03",
			RevealNonce: 1, RevealSig: "0x04"}, t0.Add(2*time.Hour), ok); err != nil {
			t.Fatal(err)
		}
	}
	var rows []arena.ScoredForecast
	for _, a := range append(agents, "random") {
		for _, m := range ms[8:10] {
			rows = append(rows, arena.ScoredForecast{RoundID: r.ID, Agent: a, MarketID: m.ID, Forecast: 0.6, Outcome: 1, Forfeit: a == agents[1]})
		}
	}
	if err := db.SaveRoundResult(ctx, r.ID, []int8{1, 1}, nil, rows, t0.Add(4*time.Hour)); err != nil {
		t.Fatal(err)
	}
	// Round 2 holds market 10 and is not triggered: its reveal counts for nothing.
	r2 := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(30 * time.Hour),
		CreatedAt: t0, Markets: []arena.RoundMarket{{MarketID: ms[10].ID}}}
	if err := db.CreateRound(ctx, r2); err != nil {
		t.Fatal(err)
	}
	if err := db.Submit(ctx, arena.SubmitCommit, &arena.Submission{RoundID: r2.ID, Agent: agents[0], CommitHash: "0x05", CommitNonce: 2, CommitSig: "0x06"}, t0, ok); err != nil {
		t.Fatal(err)
	}
	if err := db.Submit(ctx, arena.SubmitReveal, &arena.Submission{RoundID: r2.ID, Agent: agents[0], Predictions: []uint16{4321}, Salt: "0x07",
		RevealNonce: 3, RevealSig: "0x08"}, t0.Add(2*time.Hour), ok); err != nil {
		t.Fatal(err)
	}
	ids, counts, _ := list(arena.MarketListFilter{Status: arena.StatusResolved})
	want := map[int64]int{ms[8].ID: 2, ms[9].ID: 2, ms[10].ID: 0, ms[11].ID: 0}
	for i, id := range ids {
		if counts[i] != want[id] {
			t.Errorf("market %d: %d forecasters, want %d", id, counts[i], want[id])
		}
	}

	facets, err := db.MarketFacets(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(facets.Sources, []string{arena.SourcePolymarket, arena.SourceSim}) || !slices.Equal(facets.Categories, []string{"politics", "sports"}) {
		t.Errorf("facets %+v", facets)
	}
}

// testMarketListThousands: paging through a few thousand markets by the
// cursor visits each once, newest first, a page at a time.
func testMarketListThousands(t *testing.T, db *store.DB) {
	ctx := context.Background()
	const n = 3000
	ms := make([]*arena.Market, n)
	for i := range ms {
		ms[i] = Binary(fmt.Sprintf("many-%04d", i), float64(i))
		ms[i].History = nil
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	seen := map[int64]bool{}
	prev := int64(0)
	f := arena.MarketListFilter{Limit: 500}
	for pages := 0; ; pages++ {
		page, total, err := db.MarketList(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if total != n || pages > n/500 {
			t.Fatalf("page %d: total %d", pages, total)
		}
		if len(page) == 0 {
			break
		}
		for _, l := range page {
			id := l.Market.ID
			if seen[id] || (prev != 0 && id >= prev) {
				t.Fatalf("market %d out of order or twice (after %d)", id, prev)
			}
			seen[id], prev = true, id
		}
		f.Before = prev
	}
	if len(seen) != n {
		t.Fatalf("visited %d markets, want %d", len(seen), n)
	}
}
