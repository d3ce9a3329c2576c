package polymarket

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func ids(ms []*arena.Market) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.SourceID
	}
	return out
}

func stored(t *testing.T, st *spyStore) map[string]*arena.Market {
	t.Helper()
	ms, err := st.Markets(context.Background(), arena.MarketFilter{Source: arena.SourcePolymarket})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*arena.Market{}
	for _, m := range ms {
		out[m.SourceID] = m
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// The top 5 by numeric volumeNum across both listings; the string `volume`
// would rank "99000" above "950000.25" and "1800000".
func TestSyncTopN(t *testing.T) {
	f := newFake(t)
	c, _ := startClient(t, f)
	logs := &syncBuffer{}
	c.Logger = slog.New(slog.NewTextHandler(logs, nil))
	st := newSpyStore(t)

	rep, err := Sync(context.Background(), st, c, 5)
	if err != nil {
		t.Fatal(err)
	}
	got := stored(t, st)
	wantIDs := []string{"501001", "501002", "601001", "501004", "601005"}
	ms, _ := st.Markets(context.Background(), arena.MarketFilter{})
	if !reflect.DeepEqual(ids(ms), wantIDs) {
		t.Fatalf("stored %v, want %v (by volumeNum)", ids(ms), wantIDs)
	}
	if st.saves != 1 {
		t.Errorf("SaveMarkets called %d times, want exactly 1", st.saves)
	}
	if rep.Kept != 5 || rep.Inserted != 5 {
		t.Errorf("report kept %d inserted %d, want 5/5: %s", rep.Kept, rep.Inserted, rep)
	}

	// Paging stopped as soon as the top 5 were certain: two /markets pages
	// (Gamma caps pages at 4 here) and one /events page, whose fourth event
	// has less volume than the 5th market.
	if n := f.Count("GET /markets?"); n != 2 {
		t.Errorf("%d /markets pages fetched, want 2: %v", n, f.Requests())
	}
	if n := f.Count("GET /events?"); n != 1 {
		t.Errorf("%d /events pages fetched, want 1", n)
	}

	tok := polymarkettest.Tokens(t)
	fed := got["501001"]
	if fed.Type != arena.Binary || !reflect.DeepEqual(fed.Outcomes, []string{"Yes", "No"}) ||
		!reflect.DeepEqual(fed.TokenIDs, tok["501001"]) {
		t.Errorf("501001: type %s outcomes %v tokens %v", fed.Type, fed.Outcomes, fed.TokenIDs)
	}
	// Category and event come from the /events listing (the /markets entry
	// has neither a category nor tags).
	if fed.Category != "Economy" || fed.EventSlug != "fed-june-2026" || fed.EventID != "9001" {
		t.Errorf("501001 category %q event %q/%q", fed.Category, fed.EventID, fed.EventSlug)
	}
	if !near(fed.Prices["Yes"], 0.615) || !near(fed.Prices["No"], 0.385) {
		t.Errorf("501001 prices %v, want CLOB mids 0.615/0.385", fed.Prices)
	}
	if fed.Volume != 2500000.5 || fed.Liquidity != 12000.5 || fed.Status != arena.StatusOpen || fed.Kind != arena.KindMarket {
		t.Errorf("501001 volume %v liquidity %v status %s kind %s", fed.Volume, fed.Liquidity, fed.Status, fed.Kind)
	}
	if want := time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC); !fed.CloseTime.Equal(want) {
		t.Errorf("close time %v, want %v", fed.CloseTime, want)
	}
	if fed.ConditionID == "" || fed.Slug != "will-the-fed-cut-rates-in-june-2026" {
		t.Errorf("ids: condition %q slug %q", fed.ConditionID, fed.Slug)
	}

	// Two teams are a multi-outcome market, never binary.
	lc := got["501002"]
	if lc.Type != arena.Multi || !reflect.DeepEqual(lc.Outcomes, []string{"Lakers", "Celtics"}) || lc.Category != "Sports" {
		t.Errorf("501002: type %s outcomes %v category %q", lc.Type, lc.Outcomes, lc.Category)
	}
	if !near(lc.Prices["Lakers"], 0.46) {
		t.Errorf("501002 prices %v", lc.Prices)
	}

	// Gamma 0.30 vs CLOB 0.40: the CLOB price wins and both points are flagged.
	el := got["501004"]
	if !near(el.Prices["Yes"], 0.40) || el.EventID != "9002" || el.Category != "Politics" {
		t.Errorf("501004 prices %v event %q category %q", el.Prices, el.EventID, el.Category)
	}
	hist, _ := st.PriceHistory(context.Background(), el.ID, "Yes", time.Time{}, time.Now().Add(1e6*time.Hour))
	if len(hist) != 2 {
		t.Fatalf("501004 Yes history %+v, want a gamma and a clob point", hist)
	}
	wantAt := time.Date(2026, 2, 1, 12, 30, 45, 0, time.UTC)
	sources := map[arena.PriceSource]float64{}
	for _, p := range hist {
		sources[p.Source] = p.Price
		if !p.Flagged || !p.Time.Equal(wantAt) || p.FetchedAt.Location() != time.UTC || p.FetchedAt.Nanosecond() == 0 {
			t.Errorf("point %+v: want flagged, time %v, fetched_at with sub-second precision in UTC", p, wantAt)
		}
	}
	if !near(sources[arena.PriceGamma], 0.30) || !near(sources[arena.PriceCLOBMid], 0.40) {
		t.Errorf("provenance %v", sources)
	}
	if rep.Flagged != 2 { // Yes and No of 501004
		t.Errorf("flagged %d, want 2", rep.Flagged)
	}
	// 601001: CLOB 0.045 vs Gamma 0.04 is within tolerance: not flagged.
	hist, _ = st.PriceHistory(context.Background(), got["601001"].ID, "Yes", time.Time{}, time.Now().Add(1e6*time.Hour))
	for _, p := range hist {
		if p.Flagged {
			t.Errorf("601001 point flagged: %+v", p)
		}
	}

	// Skipped entries are counted by reason and logged.
	for _, reason := range []SkipReason{SkipCountMismatch, SkipMissingQuestion, SkipBadPrices, SkipBadEvent} {
		if rep.SkipReasons[reason] != 1 {
			t.Errorf("skip reason %s counted %d, want 1 (report %s)", reason, rep.SkipReasons[reason], rep)
		}
		if !strings.Contains(logs.String(), "reason="+string(reason)) {
			t.Errorf("no log line with reason=%s", reason)
		}
	}
}

// With a limit above the universe every page is read, and every kind of
// entry is accounted for exactly once.
func TestSyncAllPagesAndCounts(t *testing.T) {
	f := newFake(t)
	c, _ := startClient(t, f)
	st := newSpyStore(t)
	rep, err := Sync(context.Background(), st, c, 100)
	if err != nil {
		t.Fatal(err)
	}
	ms, _ := st.Markets(context.Background(), arena.MarketFilter{})
	want := []string{"501001", "501002", "601001", "501004", "601005", "601006", "501007", "501008", "601007", "501010", "501012", "601009"}
	if !reflect.DeepEqual(ids(ms), want) {
		t.Fatalf("stored %v, want %v", ids(ms), want)
	}
	// 13 /markets entries + 9 sub-markets of the 4 well-formed events.
	if rep.Fetched != 22 || rep.Duplicates != 3 || rep.Ineligible != 2 || rep.Kept != 12 {
		t.Errorf("counts: %s", rep)
	}
	wantSkips := map[SkipReason]int{SkipCountMismatch: 1, SkipMissingQuestion: 1, SkipBadPrices: 1, SkipBadOutcomes: 1, SkipMissingID: 1, SkipBadEvent: 1}
	if !reflect.DeepEqual(rep.SkipReasons, wantSkips) || rep.Skipped != 6 {
		t.Errorf("skips %v (%d), want %v", rep.SkipReasons, rep.Skipped, wantSkips)
	}
	if rep.Fetched-rep.Duplicates-rep.Ineligible-(rep.Skipped-1) != rep.Kept {
		t.Errorf("counts do not add up: %s", rep)
	}
	// 601006 has no order book: its Gamma price is used and only a Gamma point stored.
	m := stored(t, st)["601006"]
	if !near(m.Prices["Yes"], 0.08) {
		t.Errorf("601006 prices %v, want Gamma 0.08", m.Prices)
	}
	hist, _ := st.PriceHistory(context.Background(), m.ID, "Yes", time.Time{}, time.Now().Add(1e6*time.Hour))
	if len(hist) != 1 || hist[0].Source != arena.PriceGamma {
		t.Errorf("601006 history %+v", hist)
	}
	// Real JSON arrays instead of string-encoded ones are accepted.
	if m := stored(t, st)["501008"]; m == nil || !near(m.Prices["No"], 0.98) || len(m.TokenIDs) != 2 {
		t.Errorf("501008 (real arrays) = %+v", m)
	}
	if m := stored(t, st)["501010"]; !m.NegRisk {
		t.Error("501010 lost negRisk")
	}
	// Pages continue past a capped (short) page until an empty one.
	if n := f.Count("GET /markets?"); n != 5 {
		t.Errorf("%d /markets pages, want 5 (13 entries in pages of 4, then empty)", n)
	}

	// A second sync with the same upstream at the same instant changes
	// nothing; a minute later it appends prices and updates nothing else.
	same, err := Sync(context.Background(), st, c, 100)
	if err != nil || same.Inserted != 0 || same.Updated != 0 || same.PricePoints != 0 {
		t.Errorf("same-instant sync: %s %v", same, err)
	}
	c.Now = func() time.Time { return fixedNow.Add(time.Minute) }
	rep2, err := Sync(context.Background(), st, c, 100)
	if err != nil {
		t.Fatal(err)
	}
	if rep2.Inserted != 0 || rep2.Updated != 0 || rep2.Unchanged != 12 || rep2.PricePoints == 0 {
		t.Errorf("second sync: %s", rep2)
	}
}

// 429 with Retry-After, then success; 503 without it backs off with jitter.
func TestSyncRetries(t *testing.T) {
	f := newFake(t)
	f.Throttle["/markets?4"] = 2
	f.Throttle["/events?0"] = 1
	f.RetryAfter = "7"
	c, waits := startClient(t, f)
	st := newSpyStore(t)
	if _, err := Sync(context.Background(), st, c, 5); err != nil {
		t.Fatal(err)
	}
	if want := []time.Duration{7 * time.Second, 7 * time.Second, 7 * time.Second}; !reflect.DeepEqual(*waits, want) {
		t.Errorf("waits %v, want Retry-After honoured: %v", *waits, want)
	}
	if len(stored(t, st)) != 5 {
		t.Errorf("stored %d markets after retries", len(stored(t, st)))
	}

	// A Retry-After longer than MaxRetryAfter ends the retries at once
	// (the one convention of internal/retry): the sync fails, saying why,
	// having waited for nothing.
	f2 := newFake(t)
	f2.Throttle["/markets?0"] = 1
	f2.RetryAfter = "3600"
	c2, waits2 := startClient(t, f2)
	c2.MaxRetryAfter = 2 * time.Second
	if _, err := Sync(context.Background(), newSpyStore(t), c2, 5); err == nil || !strings.Contains(err.Error(), "asks to wait 1h0m0s, longer than 2s") {
		t.Fatalf("sync past a long Retry-After: %v", err)
	}
	if len(*waits2) != 0 {
		t.Errorf("waits %v, want none", *waits2)
	}
}

// Any upstream failure leaves the store exactly as it was.
func TestSyncErrorsLeaveStoreUnchanged(t *testing.T) {
	seed := func(t *testing.T) *spyStore {
		st := newSpyStore(t)
		m := &arena.Market{Source: arena.SourcePolymarket, SourceID: "400005", Kind: arena.KindMarket, Question: "Seeded?",
			Type: arena.Binary, Outcomes: []string{"Yes", "No"}, Status: arena.StatusOpen, Volume: 10,
			Prices: map[string]float64{"Yes": 0.5, "No": 0.5}}
		if _, err := st.SaveMarkets(context.Background(), []*arena.Market{m}); err != nil {
			t.Fatal(err)
		}
		st.saves = 0
		return st
	}
	cases := []struct {
		name  string
		setup func(f *polymarkettest.Server, c *Client)
	}{
		{"gamma down", func(f *polymarkettest.Server, c *Client) { c.GammaURL = deadURL(t) }},
		{"gamma 500 forever", func(f *polymarkettest.Server, c *Client) { f.GammaStatus = 500 }},
		{"gamma 429 forever", func(f *polymarkettest.Server, c *Client) { f.Throttle["/markets?0"] = 1000 }},
		{"gamma invalid JSON", func(f *polymarkettest.Server, c *Client) { f.GammaBadJSON = true }},
		{"gamma 403", func(f *polymarkettest.Server, c *Client) { f.GammaStatus = 403 }},
		{"clob 502 forever", func(f *polymarkettest.Server, c *Client) { f.CLOBStatus = 502 }},
		{"clob down", func(f *polymarkettest.Server, c *Client) { c.CLOBURL = deadURL(t) }},
		{"refresh 429 forever", func(f *polymarkettest.Server, c *Client) { f.Throttle["/markets/400005"] = 1000 }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			c, _ := startClient(t, f)
			tc.setup(f, c)
			st := seed(t)
			before, beforeP := st.snapshot(t)
			_, err := Sync(context.Background(), st, c, 5)
			if err == nil {
				t.Fatal("sync succeeded against a failing source")
			}
			if k := arena.ErrorKind(err); k != arena.EUNAVAILABLE {
				t.Errorf("error kind %q, want %q: %v", k, arena.EUNAVAILABLE, err)
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error: %q", err)
			}
			after, afterP := st.snapshot(t)
			if st.saves != 0 || !reflect.DeepEqual(before, after) || !reflect.DeepEqual(beforeP, afterP) {
				t.Errorf("store changed: %d saves", st.saves)
			}
		})
	}

	t.Run("cancelled", func(t *testing.T) {
		f := newFake(t)
		c, _ := startClient(t, f)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		st := seed(t)
		_, err := Sync(ctx, st, c, 5)
		if !errors.Is(err, context.Canceled) || st.saves != 0 {
			t.Errorf("err %v saves %d", err, st.saves)
		}
	})
	t.Run("bad limit", func(t *testing.T) {
		_, err := Sync(context.Background(), newSpyStore(t), &Client{}, 0)
		if arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("err %v", err)
		}
	})
	t.Run("store error", func(t *testing.T) {
		f := newFake(t)
		c, _ := startClient(t, f)
		st := newSpyStore(t)
		st.failSave = errors.New("disk full")
		if _, err := Sync(context.Background(), st, c, 5); err == nil || !strings.Contains(err.Error(), "disk full") {
			t.Errorf("err %v", err)
		}
	})
}

// deadURL returns the URL of a server that has already shut down, so
// connections are refused.
func deadURL(t *testing.T) string {
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	return srv.URL
}

// When the batch endpoint is refused, single GET /midpoint requests give
// the same prices.
func TestMidpointFallback(t *testing.T) {
	f := newFake(t)
	f.MidpointsStatus = 404
	c, _ := startClient(t, f)
	st := newSpyStore(t)
	if _, err := Sync(context.Background(), st, c, 5); err != nil {
		t.Fatal(err)
	}
	if n := f.Count("GET /midpoint?"); n != 10 {
		t.Errorf("%d single midpoint requests, want 10 (5 markets × 2 tokens)", n)
	}
	if p := stored(t, st)["501001"].Prices["Yes"]; !near(p, 0.615) {
		t.Errorf("501001 Yes %v, want CLOB 0.615 via fallback", p)
	}
}

func TestMidpointsBatching(t *testing.T) {
	f := newFake(t)
	c, _ := startClient(t, f)
	c.MidpointBatch = 3
	tok := polymarkettest.Tokens(t)
	ts := slices.Concat(tok["501001"], tok["501004"], tok["601006"], tok["501001"]) // a duplicate, and no-book tokens
	mids, err := c.Midpoints(context.Background(), ts)
	if err != nil {
		t.Fatal(err)
	}
	if n := f.Count("POST /midpoints"); n != 2 {
		t.Errorf("%d batches, want 2 (6 unique tokens in batches of 3)", n)
	}
	if len(mids) != 4 || !near(mids[tok["501004"][0]], 0.40) {
		t.Errorf("mids %v", mids)
	}
}
