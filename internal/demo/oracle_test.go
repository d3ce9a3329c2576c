package demo_test

import (
	"context"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/sim"
)

// The demo's disputed markets go through the real oracle: each one the
// panel or the arbiter resolved holds the simulator's outcome, the panel
// resolved alone only when unanimous, the arbiter decided the rest, and a
// round holding a disputed market was scored with that outcome.
func TestDemoOracle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	res, _ := played(t)
	o := res.Oracle
	if o.Disputed == 0 || o.Panel == 0 || o.Arbiter == 0 || o.Panel+o.Arbiter+o.Waiting != o.Disputed {
		t.Fatalf("oracle summary %+v: want markets resolved both by the panel and by the arbiter", o)
	}
	world, err := sim.New(sim.Config{Seed: fixtureSeed})
	if err != nil {
		t.Fatal(err)
	}
	truth := map[string]string{}
	for _, m := range world.MarketsAt(res.Clock.Now()) {
		truth[m.SourceID] = m.Resolution
	}
	all, err := res.DB.AllOracleResolutions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	resolved := map[int64]string{}
	for _, r := range all {
		m, err := res.DB.Market(ctx, r.MarketID)
		if err != nil {
			t.Fatal(err)
		}
		switch r.Status {
		case arena.OracleAuto:
			if !r.Verdict.Unanimous || len(r.Verdict.Round1) != 3 {
				t.Errorf("market %d resolved by the panel without a unanimous panel of 3: %+v", m.ID, r.Verdict)
			}
			for _, v := range r.Verdict.Round1 {
				if v.Decision != r.Final {
					t.Errorf("market %d resolved %s while %s voted %s", m.ID, r.Final, v.Agent, v.Decision)
				}
			}
		case arena.OracleDecided:
			if r.Arbiter != "demo arbiter (simulated)" {
				t.Errorf("market %d decided by %q", m.ID, r.Arbiter)
			}
		default:
			continue
		}
		if m.Resolution != truth[m.SourceID] {
			t.Errorf("market %d (%s): oracle resolution %q, simulator %q", m.ID, r.Status, m.Resolution, truth[m.SourceID])
		}
		resolved[m.ID] = m.Resolution
	}
	rounds, err := res.DB.Rounds(ctx, arena.RoundFilter{})
	if err != nil {
		t.Fatal(err)
	}
	scoredWithOracle := 0
	for _, rd := range rounds {
		for _, rm := range rd.Markets {
			if _, ok := resolved[rm.MarketID]; ok && !rd.TriggeredAt.IsZero() {
				scoredWithOracle++
			}
		}
	}
	if scoredWithOracle == 0 {
		t.Fatal("no scored round holds a market the oracle resolved")
	}
	t.Logf("oracle %+v; %d round markets scored on an oracle resolution", o, scoredWithOracle)
}
