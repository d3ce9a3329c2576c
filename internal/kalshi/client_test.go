package kalshi

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/kalshi/kalshitest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/venue"
)

// fake is a local Kalshi of five trading markets, one of them in an event
// that carries its category.
func fake(t *testing.T) *kalshitest.Server {
	t.Helper()
	s := kalshitest.New(t)
	for i, id := range []string{"KXA-1-X", "KXB-1-X", "KXC-1-X", "KXD-1-X"} {
		s.Markets = append(s.Markets, obj(t, map[string]any{"ticker": id, "event_ticker": strings.TrimSuffix(id, "-X"), "volume_fp": []string{"10", "40", "30", "20"}[i]}))
	}
	nested := obj(t, map[string]any{"ticker": "KXE-1-X", "event_ticker": nil, "volume_fp": "50"})
	s.Events = []json.RawMessage{json.RawMessage(`{"event_ticker":"KXE-1","series_ticker":"KXE","category":"Science","title":"E?","markets":[` + string(nested) + `]}`)}
	return s
}

func TestSyncKeepsTheMostTraded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := fake(t)
		c := startClient(t, s)
		rep, err := venue.Sync(ctx, db, c, 3, quiet)
		if err != nil {
			t.Fatal(err)
		}
		ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceKalshi})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, m := range ms {
			ids = append(ids, m.SourceID)
		}
		if strings.Join(ids, " ") != "KXE-1-X KXB-1-X KXC-1-X" || rep.Kept != 3 || rep.Fetched != 5 {
			t.Fatalf("kept %v; %s", ids, rep)
		}
		if ms[0].Category != "Science" || ms[0].EventID != "KXE-1" {
			t.Errorf("nested market: category %q event %q", ms[0].Category, ms[0].EventID)
		}
		// Pages of 2: /markets takes 2 pages, /events 1.
		if n, e := s.Count("GET /markets?"), s.Count("GET /events?"); n != 2 || e != 1 {
			t.Errorf("%d /markets pages, %d /events pages", n, e)
		}
	})
}

// Rate limits are retried, after the wait the venue asks for.
func TestRetryAfterRateLimit(t *testing.T) {
	s := fake(t)
	s.Update(func() { s.Throttle["/markets"], s.RetryAfter = 2, "1" })
	c := startClient(t, s)
	var waits []time.Duration
	c.HTTP.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
	var rep venue.Report
	ms, err := c.List(context.Background(), &rep)
	if err != nil || len(ms) != 5 {
		t.Fatalf("%d markets, %v", len(ms), err)
	}
	if len(waits) != 2 || waits[0] != time.Second || waits[1] != time.Second {
		t.Errorf("waits %v, want the venue's 1s twice", waits)
	}
}

// A venue that fails, asks for a longer wait than the client allows, or
// answers what is not JSON changes nothing in the store.
func TestFailuresChangeNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := fake(t)
		c := startClient(t, s)
		if _, err := venue.Sync(ctx, db, c, 10, quiet); err != nil {
			t.Fatal(err)
		}
		before, err := db.Markets(ctx, arena.MarketFilter{})
		if err != nil {
			t.Fatal(err)
		}
		c.Now = func() time.Time { return decodeNow.Add(time.Hour) }
		for _, tc := range []struct {
			name    string
			breakIt func()
		}{
			{"outage", func() { s.Status = http.StatusServiceUnavailable }},
			{"long Retry-After", func() { s.Status, s.Throttle["/events"], s.RetryAfter = 0, 9, "3600" }},
			{"not JSON", func() { s.Throttle["/events"], s.Events = 0, []json.RawMessage{json.RawMessage(`{"event_ticker":`)} }},
		} {
			name, breakIt := tc.name, tc.breakIt
			s.Update(func() {
				s.Markets[0] = obj(t, map[string]any{"ticker": "KXA-1-X", "status": "closed", "volume_fp": "10"})
			})
			s.Update(breakIt)
			_, err := venue.Sync(ctx, db, c, 10, quiet)
			if err == nil {
				t.Fatalf("%s: no error", name)
			}
			if arena.ErrorKind(err) != arena.EUNAVAILABLE {
				t.Errorf("%s: %v is not EUNAVAILABLE", name, err)
			}
			after, err := db.Markets(ctx, arena.MarketFilter{})
			if err != nil || len(after) != len(before) || after[0].UpdatedAt != before[0].UpdatedAt || after[0].Status != before[0].Status {
				t.Errorf("%s: the store changed (%v)", name, err)
			}
		}
	})
}

// A known market the venue no longer serves is counted and left as
// stored; one that comes back under another ticker is skipped.
func TestRefreshGoneAndMismatched(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := fake(t)
		c := startClient(t, s)
		if _, err := venue.Sync(ctx, db, c, 10, quiet); err != nil {
			t.Fatal(err)
		}
		s.Update(func() {
			s.Markets = s.Markets[2:]
			s.Single["KXB-1-X"] = obj(t, map[string]any{"ticker": "KXZ-1-X"})
		})
		rep, err := venue.Sync(ctx, db, c, 10, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if rep.RefreshMissing != 1 || rep.SkipReasons[venue.SkipIDMismatch] != 1 || rep.Refreshed != 0 {
			t.Errorf("%s", rep)
		}
	})
}

// A venue repeating a cursor would page forever: the listing fails.
func TestRepeatedCursor(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"markets":[],"cursor":"again"}`))
	}))
	defer srv.Close()
	c := NewClient(srv.URL)
	if _, err := c.List(context.Background(), &venue.Report{}); err == nil || !strings.Contains(err.Error(), "repeats") {
		t.Fatalf("got %v", err)
	}
}

// The benchmark is the price at the candle end nearest the instant,
// within five minutes.
func TestBenchmarkAt(t *testing.T) {
	s := kalshitest.New(t)
	at := time.Unix(1781305200, 0).UTC()
	s.Candles["KXNBAGAME/KXNBAGAME-26JUN13NYKSAS-SAS"] = json.RawMessage(`{"candlesticks":[
		{"end_period_ts":1781305140,"yes_bid":{"close_dollars":"0.6000"},"yes_ask":{"close_dollars":"0.6400"},"price":{"close_dollars":"0.6300"}},
		{"end_period_ts":1781305200,"yes_bid":{"close_dollars":"0.0000"},"yes_ask":{"close_dollars":"0.6400"},"price":{"close_dollars":"0.6100"}},
		{"end_period_ts":1781305260,"yes_bid":{"close":62},"yes_ask":{"close":64},"price":{"close":null}}]}`)
	c := startClient(t, s)
	m := &arena.Market{Source: arena.SourceKalshi, SourceID: "KXNBAGAME-26JUN13NYKSAS-SAS"}
	for _, tc := range []struct {
		t     time.Time
		price float64
		src   arena.PriceSource
	}{
		{at, 0.61, arena.PriceLastTrade},                        // a one-sided book: the last trade
		{at.Add(40 * time.Second), 0.63, arena.PriceCandleMid},  // legacy cents, 20 s away
		{at.Add(-30 * time.Second), 0.62, arena.PriceCandleMid}, // a tie goes to the earlier point
	} {
		p, ok, err := c.BenchmarkAt(context.Background(), m, tc.t)
		if err != nil || !ok || p.Price != tc.price || p.Source != tc.src {
			t.Errorf("at %v: %+v %v %v, want %v from %s", tc.t, p, ok, err, tc.price, tc.src)
		}
	}
	if _, ok, err := c.BenchmarkAt(context.Background(), &arena.Market{SourceID: "KXNONE-1-A"}, at); ok || err != nil {
		t.Errorf("a market without candles: %v %v", ok, err)
	}
	if q := s.Requests()[0]; !strings.Contains(q, "period_interval=1") || !strings.Contains(q, "start_ts=1781304900") {
		t.Errorf("request %s", q)
	}
}
