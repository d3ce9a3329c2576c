package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// testOracleFlag: an admin's flag makes an unresolved market ambiguous
// and keeps it so: a sync reporting a resolution does not resolve it, nor
// does a hand resolution; the oracle does, and a later sync does not
// change the oracle's resolution.
func testOracleFlag(t *testing.T, db *store.DB) {
	ctx := context.Background()
	m := Binary("flagged", 100)
	done := Binary("done", 100)
	if _, err := db.SaveMarkets(ctx, []*arena.Market{m, done}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ResolveMarket(ctx, done.ID, arena.Yes, t0); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		f    arena.OracleFlag
		kind string
	}{
		{arena.OracleFlag{MarketID: m.ID, Reason: "  "}, arena.EINVALID},
		{arena.OracleFlag{MarketID: 99999, Reason: "r"}, arena.ENOTFOUND},
		{arena.OracleFlag{MarketID: done.ID, Reason: "r"}, arena.ECONFLICT},
	} {
		if err := db.FlagOracle(ctx, c.f); arena.ErrorKind(err) != c.kind {
			t.Errorf("flag %+v: %v, want %s", c.f, err, c.kind)
		}
	}
	if fs, _ := db.OracleFlags(ctx); len(fs) != 0 {
		t.Fatalf("flags after refusals: %+v", fs)
	}
	if err := db.FlagOracle(ctx, arena.OracleFlag{MarketID: m.ID, Reason: "source disputed", CreatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := db.FlagOracle(ctx, arena.OracleFlag{MarketID: m.ID, Reason: "again"}); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("second flag: %v", err)
	}
	fs, err := db.OracleFlags(ctx)
	if err != nil || len(fs) != 1 || fs[0].MarketID != m.ID || fs[0].Reason != "source disputed" || !fs[0].CreatedAt.Equal(t0) {
		t.Fatalf("flags %+v %v", fs, err)
	}
	if got, _ := db.Market(ctx, m.ID); !got.Ambiguous || got.Resolution != "" {
		t.Fatalf("flagged market %+v", got)
	}
	// The source resolves it YES: stored resolved but ambiguous, no winner.
	up := Binary("flagged", 100)
	up.Status, up.Resolution, up.ResolvedAt = arena.StatusResolved, arena.Yes, t0.Add(time.Hour)
	if _, err := db.SaveMarkets(ctx, []*arena.Market{up}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Market(ctx, m.ID); !got.Ambiguous || got.Resolution != "" || got.Status != arena.StatusResolved {
		t.Fatalf("flagged market after a sync: %+v", got)
	}
	if _, err := db.ResolveMarket(ctx, m.ID, arena.Yes, t0); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("hand resolution of a flagged market: %v", err)
	}
	// The oracle resolves it NO; a sync still saying YES changes nothing.
	if err := db.SaveOracleResolution(ctx, &arena.OracleResolution{MarketID: m.ID, Verdict: oracleVerdict(false, arena.OracleNo), Policy: arena.DefaultOraclePolicy}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveMarkets(ctx, []*arena.Market{up}); err != nil {
		t.Fatal(err)
	}
	if got, _ := db.Market(ctx, m.ID); got.Ambiguous || got.Resolution != arena.No {
		t.Fatalf("flagged market after the oracle and a sync: %+v", got)
	}
	if err := db.FlagOracle(ctx, arena.OracleFlag{MarketID: m.ID, Reason: "r"}); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("flag of a resolved market: %v", err)
	}
}
