package demo_test

import (
	"context"
	"slices"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/rounds"
)

// Naming the simulator's markets after venues gives each venue an equal
// share of every round, a board by venue, and a trading track that trades
// only the venues with a market price.
func TestDemoVenues(t *testing.T) {
	if testing.Short() {
		t.Skip("plays a demo")
	}
	t.Parallel()
	ctx := context.Background()
	res, err := demo.Run(ctx, demo.Config{Seed: 2, Rounds: 2, Dir: t.TempDir(), Venues: "Polymarket,kalshi,manifold,metaculus"})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	rs, err := res.DB.Rounds(ctx, arena.RoundFilter{})
	if err != nil || len(rs) != 2 {
		t.Fatalf("%d rounds: %v", len(rs), err)
	}
	market := func(id int64) *arena.Market {
		t.Helper()
		m, err := res.DB.Market(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	for _, r := range rs {
		venues := map[string]int{}
		for _, rm := range r.Markets {
			m := market(rm.MarketID)
			if !arena.IsVenue(m.Venue()) || m.Source != arena.SourceSim {
				t.Errorf("round %d: market %s of source %s, venue %q", r.ID, m.SourceID, m.Source, m.Venue())
			}
			venues[m.Venue()]++
		}
		lo, hi := len(r.Markets), 0
		for _, v := range arena.Venues {
			lo, hi = min(lo, venues[v]), max(hi, venues[v])
		}
		if lo == 0 || hi-lo > 1 {
			t.Errorf("round %d: %v markets by venue, want equal shares of %d", r.ID, venues, len(r.Markets))
		}
	}
	vb, err := res.App.Rounds.VenueBoard(ctx, rounds.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	if want := slices.Sorted(slices.Values(arena.Venues)); !slices.Equal(vb.Venues, want) || len(vb.Rows) == 0 {
		t.Errorf("board by venue: venues %v (want %v), %d rows", vb.Venues, want, len(vb.Rows))
	}
	cohorts, err := res.DB.Cohorts(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	traded := 0
	for _, c := range cohorts {
		ports, err := res.DB.Portfolios(ctx, c.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range ports {
			trades, err := res.DB.Trades(ctx, p.ID)
			if err != nil {
				t.Fatal(err)
			}
			for _, tr := range trades {
				traded++
				if v := market(tr.MarketID).Venue(); slices.Contains(arena.UntradedVenues, v) {
					t.Errorf("cohort %d traded market %d of %s, whose price is no market's", c.ID, tr.MarketID, v)
				}
			}
		}
	}
	if traded == 0 {
		t.Error("no trade to check")
	}
	if _, err := demo.Run(ctx, demo.Config{Seed: 2, Rounds: 1, Dir: t.TempDir(), Venues: "kalshi,predictit"}); arena.ErrorKind(err) != arena.EINVALID {
		t.Errorf("an unknown venue: %v", err)
	}
}
