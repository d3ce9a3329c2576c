// Package metaculus is the Metaculus question source: it lists the open
// binary questions of Metaculus's posts API (GET /api/posts/), prices
// them with the community prediction where Metaculus publishes it,
// re-reads the questions the store knows (GET /api/posts/{id}/) until
// they resolve, and reads the community prediction at a past instant
// from its history. Metaculus's API asks for a token
// (Authorization: Token …); the market is the post, named by the id in
// its URL, not by its question's id.
package metaculus

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/venue"
)

// Venue is the Source of Metaculus's questions.
const Venue = arena.SourceMetaculus

// DefaultURL is the base URL of the API.
const DefaultURL = "https://www.metaculus.com/api"

const (
	// Metaculus publishes no limit; the sync asks at most twice a second.
	defaultRate     = 2
	postsPage       = 100
	defaultMaxPages = 10
)

// ErrNoToken is a client without a Metaculus API token: Metaculus
// answers its API only to a token's holder.
var ErrNoToken = arena.Errorf(arena.EINVALID, "metaculus: Metaculus answers only an account's API token, and none is set: set ARENA_METACULUS_TOKEN (or METACULUS_TOKEN) to the one in your Metaculus account's settings")

// Client reads Metaculus's API. Build it with NewClient. Its MaxPages
// bounds the listing's pages of 100 (default 10), the most forecast
// questions first.
type Client struct {
	venue.Client
}

var (
	_ venue.Source      = (*Client)(nil)
	_ venue.Benchmarker = (*Client)(nil)
)

// NewClient returns a client of the API at base ("" for DefaultURL) with
// token; every request fails with ErrNoToken when token is empty.
func NewClient(base, token string) *Client {
	c := &Client{venue.NewClient(Venue, base, DefaultURL, defaultRate)}
	if token != "" {
		c.HTTP.Header = http.Header{"Authorization": {"Token " + token}}
	}
	return c
}

// Name is arena.SourceMetaculus.
func (c *Client) Name() string { return Venue }

// get GETs path, refusing to ask without a token.
func (c *Client) get(ctx context.Context, path string, q url.Values, v any) error {
	if c.HTTP.Header.Get("Authorization") == "" {
		return ErrNoToken
	}
	return refused(c.HTTP.Get(ctx, path, q, v))
}

// refused says what a refused token means.
func refused(err error) error {
	if code := venue.StatusCode(err); code == http.StatusUnauthorized || code == http.StatusForbidden {
		return fmt.Errorf("%w (is ARENA_METACULUS_TOKEN a valid token?)", err)
	}
	return err
}

// List pages through the open binary posts, the most forecast first,
// until a page without a next one or MaxPages, and returns the open
// questions once each.
func (c *Client) List(ctx context.Context, rep *venue.Report) ([]*arena.Market, error) {
	fetched, maxPages := c.Clock(), c.Pages(defaultMaxPages)
	l := venue.Listing{Rep: rep, Log: c.Logger}
	offset := 0
	for page := 0; page < maxPages; page++ {
		q := url.Values{"statuses": {"open"}, "forecast_type": {"binary"}, "order_by": {"-forecasts_count"}, "with_cp": {"true"},
			"limit": {strconv.Itoa(postsPage)}, "offset": {strconv.Itoa(offset)}}
		var resp struct {
			Next    *string           `json:"next"`
			Results []json.RawMessage `json:"results"`
		}
		if err := c.get(ctx, "/posts/", q, &resp); err != nil {
			return nil, fmt.Errorf("metaculus: list posts at offset %d: %w", offset, err)
		}
		for _, raw := range resp.Results {
			if e, err := decode(raw, fetched); err != nil {
				l.Add(nil, false, err)
			} else {
				l.Add(e.M, e.Eligible, nil)
			}
		}
		if len(resp.Results) == 0 || resp.Next == nil || *resp.Next == "" {
			return l.Markets, nil
		}
		offset += len(resp.Results)
	}
	c.Log().Warn("metaculus: stopped paging at the page cap", "pages", maxPages, "questions", len(l.Markets))
	return l.Markets, nil
}

// post reads one post with GET /posts/{id}/.
func (c *Client) post(ctx context.Context, id string) (*entry, error) {
	if c.HTTP.Header.Get("Authorization") == "" {
		return nil, ErrNoToken
	}
	var raw json.RawMessage
	if err := c.ReadOne(ctx, "/posts/"+url.PathEscape(id)+"/", "post", id, &raw); err != nil {
		return nil, refused(err)
	}
	e, err := decode(raw, c.Clock())
	if err != nil {
		return nil, err
	}
	return e, venue.SameID(Venue, id, e.M.SourceID)
}

// Market re-reads one post's question.
func (c *Client) Market(ctx context.Context, id string) (*arena.Market, error) {
	e, err := c.post(ctx, id)
	if err != nil {
		return nil, err
	}
	return e.M, nil
}

// BenchmarkAt is the community prediction in force at t, from the post's
// aggregation history (arena.PriceCommunity, stamped t); ok is false
// while it is hidden or before its first aggregate.
func (c *Client) BenchmarkAt(ctx context.Context, m *arena.Market, t time.Time) (arena.PricePoint, bool, error) {
	e, err := c.post(ctx, m.SourceID)
	if err != nil {
		return arena.PricePoint{}, false, err
	}
	p, ok := e.q.at(t)
	if !ok {
		return arena.PricePoint{}, false, nil
	}
	return venue.YesPoint(t, p, arena.PriceCommunity, c.Clock()), true, nil
}
