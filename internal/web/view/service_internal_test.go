package view

import (
	"context"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
)

// The service checks a page's parameters itself, whoever calls it: a
// value no page takes answers EINVALID before anything is read (the
// service below has no parts to read), naming what it wants.
func TestPageParamsChecked(t *testing.T) {
	t.Parallel()
	ctx, s := context.Background(), &Service{}
	for _, c := range []struct {
		name string
		err  error
		want string
	}{
		{"sort key", second(s.LeaderboardPage(ctx, LeaderboardParams{Sort: "height"})), `sort "height": want rank, name, score,`},
		{"direction", second(s.LeaderboardPage(ctx, LeaderboardParams{Dir: "up"})), `dir "up": want asc or desc`},
		{"columns", second(s.LeaderboardPage(ctx, LeaderboardParams{Columns: "some"})), `columns "some": want all`},
		{"window", second(s.LeaderboardPage(ctx, LeaderboardParams{Window: "1y"})), `window "1y": want 7d, 30d, 90d or all`},
		{"market status", second(s.MarketsPage(ctx, MarketsParams{Status: "pending"})), `status "pending": want open, closed or resolved`},
	} {
		if arena.ErrorKind(c.err) != arena.EINVALID || !strings.Contains(c.err.Error(), c.want) {
			t.Errorf("%s: %v, want %s containing %q", c.name, c.err, arena.EINVALID, c.want)
		}
	}
	w, f, err := BoardFilter("", " crypto ", "kalshi ")
	if err != nil || w != "all" || f.Window != 0 || f.Category != "crypto" || f.Venue != "kalshi" {
		t.Errorf("BoardFilter of defaults: %q %+v %v", w, f, err)
	}
}

// A page of a track the service was not given answers ENOTFOUND, as its
// routes do.
func TestDisabledTrackPages(t *testing.T) {
	t.Parallel()
	ctx, s := context.Background(), &Service{}
	for name, err := range map[string]error{
		"round":       second(s.RoundPage(ctx, 1)),
		"agent":       second(s.AgentPage(ctx, "random")),
		"compare":     second(s.ComparePage(ctx, "")),
		"cohort":      second(s.CohortPage(ctx, 1, "")),
		"curves":      second(s.Curves(ctx, 1, "", "")),
		"human board": second(s.HumanBoardPage(ctx)),
		"human item":  second(s.HumanItemPage(ctx, "x")),
		"oracle":      second(s.OraclePage(ctx)),
		"oracle item": second(s.OracleMarketPage(ctx, 1)),
	} {
		if arena.ErrorKind(err) != arena.ENOTFOUND {
			t.Errorf("%s page without its track: %v, want %s", name, err, arena.ENOTFOUND)
		}
	}
}

// An agent page names an agent by a baseline's id or an address in any
// letter case, checksummed; anything else is no agent.
func TestAgentID(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in, want string
		baseline bool
		kind     string
	}{
		{"random", "random", true, ""},
		{"market", "market", true, ""},
		{"0x178cdcd53cb5e2798c07db9cfefd43c1cb05de2e", "0x178cdCd53CB5e2798C07Db9cfefD43C1CB05dE2E", false, ""},
		{"Random", "", false, arena.ENOTFOUND},
		{"0xZZ", "", false, arena.ENOTFOUND},
	} {
		got, baseline, err := agentID(c.in)
		if got != c.want || baseline != c.baseline || (c.kind == "") != (err == nil) || (err != nil && arena.ErrorKind(err) != c.kind) {
			t.Errorf("agentID(%q) = %q, %v, %v; want %q, %v, kind %q", c.in, got, baseline, err, c.want, c.baseline, c.kind)
		}
	}
}

func second[V any](_ V, err error) error { return err }
