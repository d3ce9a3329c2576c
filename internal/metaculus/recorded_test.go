package metaculus

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/metaculus/metaculustest"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/venue"
	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// The contract suite: 28 open binary Metaculus posts recorded by another
// project (../shared/data/venues/metaculus, 2026-05-03, read in place,
// never copied; their community prediction is hidden in every one), the
// bodies written from Metaculus's documentation for shapes no recording
// holds (metaculustest/testdata/documented, each labelled with its page),
// and what the arena makes of each.

var (
	fetchedAt = time.Date(2026, 5, 3, 3, 40, 0, 0, time.UTC)
	quiet     = slog.New(slog.DiscardHandler)
)

func payloads(t *testing.T) []venuetest.Payload {
	t.Helper()
	return append(venuetest.Recorded(t, Venue), metaculustest.Documented(t)...)
}

func rfc3339(t *testing.T, s string) time.Time { return venuetest.Time(t, s) }

type recordedWant struct {
	id         string
	skip       venue.SkipReason
	status     arena.MarketStatus
	resolution string
	yes        float64 // NaN: no price
	close      string
	resolved   string
	category   string
	question   string
}

var stated = []recordedWant{
	// The first recorded post: post 43339 holds question 43341; its
	// community prediction is hidden (latest null), so it has no price.
	{id: "43339", status: arena.StatusOpen, yes: math.NaN(), close: "2026-05-17T22:59:00Z", category: "Politics",
		question: "[PRACTICE] Will any of Belgium, France, Italy, Luxembourg, Netherlands, and/or Germany leave the EU before 2027?"},
	// Aggregated unweighted by default: hidden too.
	{id: "39156", status: arena.StatusOpen, yes: math.NaN(), close: "2026-06-15T03:59:00Z"},

	// Written from the documentation.
	{id: "990001", status: arena.StatusResolved, resolution: arena.Yes, yes: 1, close: "2026-06-30T23:00:00Z", resolved: "2026-07-01T12:00:00Z", category: "Politics",
		question: "Will the documentation example's bill pass the Senate by June 30, 2026?"},
	{id: "990002", status: arena.StatusResolved, resolution: arena.No, yes: 0, close: "2026-06-30T23:00:00Z", resolved: "2026-07-01T12:00:00Z", category: "Politics"},
	{id: "990003", status: arena.StatusResolved, resolution: arena.Void, yes: math.NaN(), close: "2026-06-30T23:00:00Z", resolved: "2026-07-02T00:00:00Z", category: "Politics"},
	{id: "990004", status: arena.StatusResolved, resolution: arena.Void, yes: math.NaN(), close: "2026-06-30T23:00:00Z", resolved: "2026-07-02T00:00:00Z", category: "Politics"},
	{id: "990005", status: arena.StatusClosed, yes: 0.66, close: "2026-06-30T23:00:00Z", category: "Politics"},
	{id: "990006", status: arena.StatusOpen, yes: 0.34, close: "2026-06-30T23:00:00Z", category: "Politics"},
	{id: "990007", skip: venue.SkipGroupPost},
}

// Every recorded and documented post decodes to an open binary market
// named by the post's id, or is skipped for a typed reason; the stated
// ones decode to the stated facts.
func TestRecordedPosts(t *testing.T) {
	posts, err := metaculustest.Posts(payloads(t))
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]*entry{}
	skips := map[string]venue.SkipReason{}
	for _, p := range posts {
		e, err := decode(p.Raw, fetchedAt)
		if err != nil {
			skips[p.ID] = venue.Reason(err)
			continue
		}
		var q struct {
			Question struct {
				ID json.Number `json:"id"`
			} `json:"question"`
		}
		_ = json.Unmarshal(p.Raw, &q)
		if e.M.SourceID != p.ID || e.M.URL != "https://www.metaculus.com/questions/"+p.ID+"/" {
			t.Errorf("post %s (question %s): market %s at %s", p.ID, q.Question.ID, e.M.SourceID, e.M.URL)
		}
		if strings.HasPrefix(p.File, "Pat") && (e.M.Status != arena.StatusOpen || e.M.Prices != nil || e.M.Criteria == "") {
			t.Errorf("recorded post %s: %s prices %v criteria %q", p.ID, e.M.Status, e.M.Prices, e.M.Criteria)
		}
		byID[p.ID] = e
	}
	if len(posts) != 28+7 || len(byID) != 28+6 || !reflect.DeepEqual(skips, map[string]venue.SkipReason{"990007": venue.SkipGroupPost}) {
		t.Errorf("%d posts, %d decoded, skipped %v", len(posts), len(byID), skips)
	}
	for _, w := range stated {
		e := byID[w.id]
		if w.skip != "" || e == nil {
			if w.skip == "" || skips[w.id] != w.skip {
				t.Errorf("post %s: got %v, want skip %q", w.id, skips[w.id], w.skip)
			}
			continue
		}
		m := e.M
		yes, ok := m.Prices[arena.Yes]
		if math.IsNaN(w.yes) == ok || ok && yes != w.yes {
			t.Errorf("%s: prices %v, want Yes %v", w.id, m.Prices, w.yes)
		}
		got := []any{m.Status, m.Resolution, m.CloseTime, m.ResolvedAt, m.Type}
		exp := []any{w.status, w.resolution, rfc3339(t, w.close), rfc3339(t, w.resolved), arena.Binary}
		if w.category != "" {
			got, exp = append(got, m.Category), append(exp, w.category)
		}
		if w.question != "" {
			got, exp = append(got, m.Question), append(exp, w.question)
		}
		if !reflect.DeepEqual(got, exp) {
			t.Errorf("%s: got %v, want %v", w.id, got, exp)
		}
	}
}

// Every documented body says which page it follows.
func TestDocumentedLabelled(t *testing.T) {
	for _, p := range metaculustest.Documented(t) {
		if !strings.HasPrefix(p.Documented, "https://www.metaculus.com/api") {
			t.Errorf("%s: written from %s, not Metaculus's documentation", p.File, p.Documented)
		}
	}
}

func startClient(t *testing.T, s *metaculustest.Server) *Client {
	t.Helper()
	c := NewClient(s.URL, metaculustest.Token)
	venuetest.Local(&c.Client, fetchedAt)
	return c
}

// The recordings and the documented bodies go through the sync `arena
// sync --source metaculus` and `arena serve` run, over HTTP, into a real
// store (SQLite, and PostgreSQL when ARENA_TEST_POSTGRES_URL is set): a
// first sync lists every question open (the closed and resolved ones as
// their open twins), a second sees those drop out and re-reads them.
func TestSyncRecorded(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		r := metaculustest.NewReplay(t, payloads(t))
		c := startClient(t, r.Server)
		get := func(id string) *arena.Market {
			t.Helper()
			m, err := db.MarketBySource(ctx, arena.SourceMetaculus, id)
			if err != nil {
				t.Fatalf("post %s: %v", id, err)
			}
			return m
		}
		rep, err := venue.Sync(ctx, db, c, 100, quiet)
		if err != nil {
			t.Fatal(err)
		}
		// 35 posts in pages of 2; the group post is skipped; the 28
		// recorded questions have no price (hidden), the 6 documented
		// ones have theirs.
		if rep.Fetched != 35 || rep.Skipped != 1 || rep.Kept != 34 || rep.Inserted != 34 || rep.Priced != 6 || rep.Unpriced != 28 || r.Count("GET /posts/?") != 18 {
			t.Fatalf("listing: %s; %d pages", rep, r.Count("GET /posts/?"))
		}
		// Metaculus has no volume: the listing's order (the most forecast
		// first) stands.
		if m := get("990006"); m.Status != arena.StatusOpen || m.Prices[arena.Yes] != 0.34 || m.Volume != 0 {
			t.Errorf("990006: %s %v volume %v", m.Status, m.Prices, m.Volume)
		}
		r.RefreshPhase()
		c.Now = func() time.Time { return fetchedAt.Add(time.Hour) }
		rep, err = venue.Sync(ctx, db, c, 100, quiet)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Refreshed != 5 || rep.Resolved != 4 || rep.Closed != 1 || rep.Updated != 5 {
			t.Errorf("refresh: %s", rep)
		}
		for _, w := range stated {
			if w.skip != "" {
				continue
			}
			m := get(w.id)
			if m.Status != w.status || m.Resolution != w.resolution || !m.ResolvedAt.Equal(rfc3339(t, w.resolved)) {
				t.Errorf("%s after refresh: %s %q at %v", w.id, m.Status, m.Resolution, m.ResolvedAt)
			}
		}
	})
}

// Without a token, or with one Metaculus refuses, a sync fails at once
// and says what to set.
func TestToken(t *testing.T) {
	s := metaculustest.New(t)
	c := NewClient(s.URL, "")
	if _, err := c.List(context.Background(), &venue.Report{}); !errors.Is(err, ErrNoToken) || len(s.Requests()) != 0 {
		t.Errorf("no token: %v after %d requests", err, len(s.Requests()))
	}
	c = NewClient(s.URL, "wrong")
	if _, err := c.List(context.Background(), &venue.Report{}); err == nil || !strings.Contains(err.Error(), "ARENA_METACULUS_TOKEN") || !strings.Contains(err.Error(), "401") {
		t.Errorf("a refused token: %v", err)
	}
}

// The benchmark is the community prediction in force at the instant.
func TestBenchmarkAt(t *testing.T) {
	r := metaculustest.NewReplay(t, metaculustest.Documented(t))
	c := startClient(t, r.Server)
	for _, tc := range []struct {
		id    string
		at    string
		price float64
		ok    bool
	}{
		{"990006", "2026-04-03T00:00:00Z", 0, false}, // before the first aggregate
		{"990006", "2026-04-04T00:00:00Z", 0.30, true},
		{"990006", "2026-04-11T00:00:00Z", 0.36, true}, // an aggregate's start holds
		{"990006", "2026-04-20T00:00:00Z", 0.41, true},
		{"990006", "2026-05-01T00:00:00Z", 0.34, true}, // the current one
	} {
		p, ok, err := c.BenchmarkAt(context.Background(), &arena.Market{SourceID: tc.id}, rfc3339(t, tc.at))
		if err != nil || ok != tc.ok || ok && (p.Price != tc.price || p.Source != arena.PriceCommunity || !p.Time.Equal(rfc3339(t, tc.at))) {
			t.Errorf("%s at %s: %+v %v %v, want %v", tc.id, tc.at, p, ok, err, tc.price)
		}
	}
	if _, _, err := c.BenchmarkAt(context.Background(), &arena.Market{SourceID: "990007"}, fetchedAt); venue.Reason(err) != venue.SkipGroupPost {
		t.Errorf("a group post: %v", err)
	}
}
