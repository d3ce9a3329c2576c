// Package manifold is the Manifold market source: it lists Manifold's
// open BINARY markets (GET /v0/search-markets), prices them with the
// market maker's probability, reads each new market once whole (GET
// /v0/market/{id}: its description and topics), re-reads the markets the
// store knows until they resolve, and reads a market's past price from
// its bets (GET /v0/bets). The read endpoints are public: no key is
// needed.
package manifold

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/venue"
)

// Venue is the Source of Manifold's markets.
const Venue = arena.SourceManifold

// DefaultURL is the base URL of the public API.
const DefaultURL = "https://api.manifold.markets/v0"

const (
	// Manifold allows 500 requests a minute from an address; the sync
	// takes 5 a second, 300 a minute.
	defaultRate     = 5
	searchPage      = 1000 // GET /search-markets's largest page
	defaultMaxPages = 5
	betsPage        = 100
)

// Client reads Manifold's API. Build it with NewClient. Its MaxPages
// bounds the listing's pages of 1,000 (default 5): Manifold lists by
// popularity, and the sync keeps the most traded of those.
type Client struct {
	venue.Client
}

var (
	_ venue.Partial     = (*Client)(nil)
	_ venue.Benchmarker = (*Client)(nil)
)

// NewClient returns a client of the API at base ("" for DefaultURL).
func NewClient(base string) *Client {
	return &Client{venue.NewClient(Venue, base, DefaultURL, defaultRate)}
}

// Name is arena.SourceManifold.
func (c *Client) Name() string { return Venue }

// ListsPartial is true: the listing has no description and no topics.
func (c *Client) ListsPartial() bool { return true }

// List pages through the open BINARY markets by popularity, until an
// empty page or MaxPages, and returns the eligible ones once each.
func (c *Client) List(ctx context.Context, rep *venue.Report) ([]*arena.Market, error) {
	now, maxPages := c.Clock(), c.Pages(defaultMaxPages)
	l := venue.Listing{Rep: rep, Log: c.Logger}
	offset := 0
	for page := 0; page < maxPages; page++ {
		q := url.Values{"term": {""}, "filter": {"open"}, "contractType": {"BINARY"}, "sort": {"most-popular"},
			"limit": {strconv.Itoa(searchPage)}, "offset": {strconv.Itoa(offset)}}
		var items []json.RawMessage
		if err := c.HTTP.Get(ctx, "/search-markets", q, &items); err != nil {
			return nil, fmt.Errorf("manifold: list markets at offset %d: %w", offset, err)
		}
		if len(items) == 0 {
			return l.Markets, nil
		}
		for _, raw := range items {
			if e, err := decode(raw, now); err != nil {
				l.Add(nil, false, err)
			} else {
				l.Add(e.M, e.Eligible, nil)
			}
		}
		offset += len(items)
	}
	c.Log().Warn("manifold: stopped paging at the page cap", "pages", maxPages, "markets", len(l.Markets))
	return l.Markets, nil
}

// Market reads one market whole with GET /market/{id}.
func (c *Client) Market(ctx context.Context, id string) (*arena.Market, error) {
	var raw json.RawMessage
	if err := c.ReadOne(ctx, "/market/"+url.PathEscape(id), "market", id, &raw); err != nil {
		return nil, err
	}
	e, err := decode(raw, c.Clock())
	if err != nil {
		return nil, err
	}
	return e.M, venue.SameID(Venue, id, e.M.SourceID)
}

// bet is what the arena reads of one of GET /bets's bets: when it was
// made and the market maker's probability after it.
type bet struct {
	CreatedTime venue.Number `json:"createdTime"`
	ProbAfter   venue.Number `json:"probAfter"`
}

// BenchmarkAt is the market's price in force at t: the probability the
// last bet made at or before t left (arena.PriceAMMHistory, stamped t).
// A binary market maker's price moves only with trades, so it held from
// that bet until t. ok is false before the first bet.
func (c *Client) BenchmarkAt(ctx context.Context, m *arena.Market, t time.Time) (arena.PricePoint, bool, error) {
	q := url.Values{"contractId": {m.SourceID}, "beforeTime": {strconv.FormatInt(t.UnixMilli()+1, 10)},
		"limit": {strconv.Itoa(betsPage)}, "order": {"desc"}}
	var raws []json.RawMessage
	if err := c.HTTP.Get(ctx, "/bets", q, &raws); err != nil {
		return arena.PricePoint{}, false, fmt.Errorf("manifold: bets of %s: %w", m.SourceID, err)
	}
	p, ok := lastPrice(raws, t)
	if !ok {
		return arena.PricePoint{}, false, nil
	}
	return venue.YesPoint(t, p, arena.PriceAMMHistory, c.Clock()), true, nil
}

// lastPrice is the probability after the latest readable bet made at or
// before t.
func lastPrice(raws []json.RawMessage, t time.Time) (float64, bool) {
	best, found := 0.0, false
	var bestAt time.Time
	for _, raw := range raws {
		var b bet
		if json.Unmarshal(raw, &b) != nil {
			continue
		}
		at, err := venue.Millis(b.CreatedTime)
		p, ok, perr := b.ProbAfter.Probability("probAfter")
		if err != nil || perr != nil || !ok || at.IsZero() || at.After(t) {
			continue
		}
		if !found || at.After(bestAt) {
			best, bestAt, found = p, at, true
		}
	}
	return best, found
}
