package demo_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/demo"
)

// Naming the simulator's markets after venues lets an offline round mix
// them, and changes no figure: the leaderboard is the same as without.
func TestDemoVenues(t *testing.T) {
	if testing.Short() {
		t.Skip("plays two demos")
	}
	t.Parallel()
	ctx := context.Background()
	run := func(venues string) (*demo.Result, []byte) {
		t.Helper()
		res, err := demo.Run(ctx, demo.Config{Seed: 2, Rounds: 2, Dir: t.TempDir(), Venues: venues})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Close() })
		b, err := json.Marshal(res.Leaderboard)
		if err != nil {
			t.Fatal(err)
		}
		return res, b
	}
	_, plain := run("")
	res, named := run("Polymarket,kalshi,manifold,metaculus")
	if string(plain) != string(named) {
		t.Errorf("the leaderboard changed with venues:\n%s\n%s", plain, named)
	}
	rounds, err := res.DB.Rounds(ctx, arena.RoundFilter{})
	if err != nil || len(rounds) != 2 {
		t.Fatalf("%d rounds: %v", len(rounds), err)
	}
	for _, r := range rounds {
		venues := map[string]bool{}
		for _, rm := range r.Markets {
			m, err := res.DB.Market(ctx, rm.MarketID)
			if err != nil {
				t.Fatal(err)
			}
			if !arena.IsVenue(m.Venue()) || m.Source != arena.SourceSim {
				t.Errorf("round %d: market %s of source %s, venue %q", r.ID, m.SourceID, m.Source, m.Venue())
			}
			venues[m.Venue()] = true
		}
		if len(venues) < 2 {
			t.Errorf("round %d draws from %d venue", r.ID, len(venues))
		}
	}
	if _, err := demo.Run(ctx, demo.Config{Seed: 2, Rounds: 1, Dir: t.TempDir(), Venues: "kalshi,predictit"}); arena.ErrorKind(err) != arena.EINVALID {
		t.Errorf("an unknown venue: %v", err)
	}
}
