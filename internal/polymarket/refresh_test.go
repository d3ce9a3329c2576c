package polymarket

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
)

// gammaSingle renders a GET /markets/{id} answer in Gamma's shape.
func gammaSingle(id string, active, closed bool, uma string, prices [2]string, extra string) json.RawMessage {
	return json.RawMessage(fmt.Sprintf(`{"id":%q,"question":"Known market %s?","conditionId":"0xcond%s","slug":"known-%s",
		"endDate":"2026-01-15T00:00:00Z","closedTime":"2026-01-16 10:00:00+00","active":%v,"closed":%v,
		"outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"%s\", \"%s\"]","clobTokenIds":"[\"%s1\", \"%s2\"]",
		"volume":"1000","volumeNum":1000,"liquidityNum":0,"umaResolutionStatus":%q,
		"events":[{"id":"8%s","slug":"known-event-%s","title":"Known"}]%s}`,
		id, id, id, id, active, closed, prices[0], prices[1], id, id, uma, id, id, extra))
}

func knownMarket(id string, status arena.MarketStatus) *arena.Market {
	m := &arena.Market{
		Source: arena.SourcePolymarket, SourceID: id, Kind: arena.KindMarket, Question: "Known market " + id + "?",
		Category: "Stored category", Type: arena.Binary, Outcomes: []string{"Yes", "No"}, Status: status,
		TokenIDs: []string{id + "1", id + "2"}, Volume: 900, Prices: map[string]float64{"Yes": 0.7, "No": 0.3},
	}
	if status == arena.StatusResolved {
		m.Resolution, m.ResolvedAt = "Yes", time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	return m
}

func TestSyncRefreshesKnownMarkets(t *testing.T) {
	f := newFake(t)
	f.Single["400001"] = gammaSingle("400001", true, true, "resolved", [2]string{"1", "0"}, "")
	f.Single["400002"] = gammaSingle("400002", true, true, "resolved", [2]string{"0.5", "0.5"}, "")
	f.Single["400003"] = gammaSingle("400003", true, true, "resolved", [2]string{"0.62", "0.38"}, "")
	// 400004 is gone upstream (404).
	f.Single["400005"] = gammaSingle("400005", true, false, "", [2]string{"0.2", "0.8"}, "")
	f.Single["400007"] = gammaSingle("400007", false, true, "", [2]string{"0.9", "0.1"}, "")
	f.Single["400008"] = gammaSingle("400008", true, true, "resolved", [2]string{"0.7", "0.3"},
		`,"tokens":[{"token_id":"4000082","outcome":"No","winner":true},{"token_id":"4000081","outcome":"Yes","winner":false}]`)
	f.Single["400009"] = json.RawMessage(`{"id":"400009","question":"Now broken?","outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"x\", \"y\"]"}`)
	f.Mids["4000051"] = "0.21"
	f.Mids["4000052"] = "0.79"
	c, _ := startClient(t, f)
	st := newSpyStore(t)
	seed := []*arena.Market{
		knownMarket("400001", arena.StatusOpen),
		knownMarket("400002", arena.StatusClosed),
		knownMarket("400003", arena.StatusOpen),
		knownMarket("400004", arena.StatusOpen),
		knownMarket("400005", arena.StatusOpen),
		knownMarket("400006", arena.StatusResolved), // settled: never re-read
		knownMarket("400007", arena.StatusOpen),
		knownMarket("400008", arena.StatusClosed),
		knownMarket("400009", arena.StatusOpen),
		knownMarket("501001", arena.StatusOpen), // still in the top list: no extra request
	}
	if _, err := st.SaveMarkets(context.Background(), seed); err != nil {
		t.Fatal(err)
	}
	st.saves = 0

	rep, err := Sync(context.Background(), st, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	if st.saves != 1 {
		t.Errorf("%d SaveMarkets calls, want 1", st.saves)
	}
	for _, id := range []string{"400006", "501001"} {
		if n := f.Count("GET /markets/" + id + "?"); n != 0 {
			t.Errorf("market %s re-read %d times", id, n)
		}
	}
	got := stored(t, st)
	at := time.Date(2026, 1, 16, 10, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		id         string
		status     arena.MarketStatus
		resolution string
		ambiguous  bool
	}{
		{"400001", arena.StatusResolved, "Yes", false},
		{"400002", arena.StatusResolved, arena.Void, false},
		{"400003", arena.StatusClosed, "", true},
		{"400004", arena.StatusOpen, "", false}, // gone upstream: left as stored
		{"400005", arena.StatusOpen, "", false},
		{"400006", arena.StatusResolved, "Yes", false},
		{"400007", arena.StatusClosed, "", false},
		{"400008", arena.StatusResolved, "No", false},
		{"400009", arena.StatusOpen, "", false}, // now malformed: left as stored
	} {
		m := got[tc.id]
		if m.Status != tc.status || m.Resolution != tc.resolution || m.Ambiguous != tc.ambiguous {
			t.Errorf("%s: status %s resolution %q ambiguous %v; want %s %q %v", tc.id, m.Status, m.Resolution, m.Ambiguous, tc.status, tc.resolution, tc.ambiguous)
		}
		if tc.status == arena.StatusResolved && tc.id != "400006" && !m.ResolvedAt.Equal(at) {
			t.Errorf("%s resolved at %v, want closedTime %v", tc.id, m.ResolvedAt, at)
		}
	}
	// A refreshed open market gets CLOB prices; stored metadata Gamma lacks is kept.
	if m := got["400005"]; m.Prices["Yes"] != 0.21 || m.Category != "Stored category" || m.EventSlug != "known-event-400005" {
		t.Errorf("400005 prices %v category %q event %q", m.Prices, m.Category, m.EventSlug)
	}
	// Closed markets are priced from Gamma's final outcome prices, not the CLOB.
	if m := got["400001"]; m.Prices["Yes"] != 1 {
		t.Errorf("400001 prices %v", m.Prices)
	}
	if rep.Refreshed != 6 || rep.Resolved != 3 || rep.Ambiguous != 1 || rep.Closed != 1 || rep.RefreshMissing != 1 || rep.SkipReasons[SkipBadPrices] != 2 { // 501006 in the listing and 400009
		t.Errorf("report: %s", rep)
	}

	// The next sync re-reads the still-closed 400007 but records no new
	// price points for it: a closed market's price is logged once.
	before := st.priceCount(t, got["400007"].ID)
	if _, err := Sync(context.Background(), st, c, 5); err != nil {
		t.Fatal(err)
	}
	if n := f.Count("GET /markets/400007?"); n != 2 {
		t.Errorf("400007 re-read %d times, want 2", n)
	}
	if after := st.priceCount(t, got["400007"].ID); after != before {
		t.Errorf("closed market gained %d price points", after-before)
	}
	if n := f.Count("GET /markets/400001?"); n != 1 {
		t.Errorf("resolved 400001 re-read %d times, want once", n)
	}
}

func TestPriceHistoryAndBenchmark(t *testing.T) {
	f := newFake(t)
	deadline := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	d := deadline.Unix()
	f.History["tok"] = fmt.Sprintf(`{"history":[{"t":%d,"p":0.41},{"t":%d,"p":0.44},{"t":%d,"p":"0.47"},{"t":%d,"p":1.7}]}`, d-250, d+130, d-90, d+10)
	f.History["far"] = fmt.Sprintf(`{"history":[{"t":%d,"p":0.41},{"t":%d,"p":0.44}]}`, d-400, d+301)
	c, _ := startClient(t, f)
	ctx := context.Background()

	pts, err := c.PriceHistory(ctx, "tok", deadline.Add(-time.Hour), deadline.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 3 || pts[0].Price != 0.41 || pts[1].Price != 0.47 || pts[2].Price != 0.44 || pts[0].Source != arena.PriceCLOBHistory {
		t.Fatalf("history %+v, want 3 points oldest first (the 1.7 is not a price)", pts)
	}
	p, at, ok, err := c.BenchmarkAt(ctx, "tok", deadline)
	if err != nil || !ok || p != 0.47 || !at.Equal(deadline.Add(-90*time.Second)) {
		t.Errorf("benchmark %v at %v ok %v err %v, want 0.47 at deadline-90s", p, at, ok, err)
	}
	if _, _, ok, err := c.BenchmarkAt(ctx, "far", deadline); ok || err != nil {
		t.Errorf("benchmark from points > 300 s away: ok %v err %v", ok, err)
	}
	if _, _, ok, err := c.BenchmarkAt(ctx, "none", deadline); ok || err != nil {
		t.Errorf("benchmark without history: ok %v err %v", ok, err)
	}
	if _, err := c.PriceHistory(ctx, "tok", deadline, deadline.Add(-time.Second)); arena.ErrorKind(err) != arena.EINVALID {
		t.Errorf("reversed range: %v", err)
	}
	f.Update(func(s *polymarkettest.Server) { s.CLOBStatus = 500 })
	if _, _, _, err := c.BenchmarkAt(ctx, "tok", deadline); err == nil {
		t.Error("benchmark succeeded against a failing CLOB")
	}
}
