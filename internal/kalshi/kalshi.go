// Package kalshi is the Kalshi market source: it lists the open binary
// markets of Kalshi's trade API v2 (GET /markets and GET /events with
// their nested markets, parlays excluded), prices them from the best Yes
// bid and ask or else the last trade, re-reads the markets the store
// knows (GET /markets/{ticker}) until they settle, and reads a market's
// past prices from its candlesticks. The market-data endpoints are
// public: no key is needed.
package kalshi

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"sort"
	"strconv"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/venue"
)

// Venue is the Source of Kalshi's markets.
const Venue = arena.SourceKalshi

// DefaultURL is the base URL of the public trade API.
const DefaultURL = "https://api.elections.kalshi.com/trade-api/v2"

// Defaults of the zero values of Client's fields.
const (
	// Kalshi's basic tier allows 20 reads a second; the sync takes half.
	defaultRate      = 10
	marketPage       = 1000 // GET /markets's largest page
	eventPage        = 200  // GET /events's largest page
	defaultMaxPages  = 100
	candleMinutes    = 1 // the candles' period: the finest Kalshi serves
	maxCandleSeconds = int64(venue.BenchmarkTolerance / time.Second)
)

// Client reads Kalshi's trade API. Build it with NewClient. Its
// MaxPages bounds each listing (default 100: 100,000 markets, 20,000
// events).
type Client struct {
	venue.Client
}

var (
	_ venue.Source      = (*Client)(nil)
	_ venue.Benchmarker = (*Client)(nil)
)

// NewClient returns a client of the API at base ("" for DefaultURL).
func NewClient(base string) *Client {
	return &Client{venue.NewClient(Venue, base, DefaultURL, defaultRate)}
}

// Name is arena.SourceKalshi.
func (c *Client) Name() string { return Venue }

// List pages through GET /markets?status=open and GET
// /events?status=open&with_nested_markets=true, both without
// multivariate (parlay) markets, and returns every eligible market once:
// a market seen in both listings takes its event's category and series
// from the second. Kalshi lists neither by volume, so every page is read
// (up to MaxPages each).
func (c *Client) List(ctx context.Context, rep *venue.Report) ([]*arena.Market, error) {
	l := venue.Listing{Rep: rep, Log: c.Logger}
	fetched := c.Clock()
	add := func(raw []byte, ev *event) {
		e, err := decode(raw, ev, fetched)
		if err != nil {
			l.Add(nil, false, err)
			return
		}
		// The event knows its markets' category and series.
		if first := l.Add(e.M, e.Eligible, nil); first != nil && ev != nil {
			first.Category, first.EventSlug = venue.Or(e.M.Category, first.Category), venue.Or(e.M.EventSlug, first.EventSlug)
		}
	}
	q := url.Values{"status": {"open"}, "mve_filter": {"exclude"}, "limit": {strconv.Itoa(marketPage)}}
	err := c.pages(ctx, "/markets", q, func(raw []byte) (string, error) {
		var page struct {
			Markets []json.RawMessage `json:"markets"`
			Cursor  string            `json:"cursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", err
		}
		for _, m := range page.Markets {
			add(m, nil)
		}
		return page.Cursor, nil
	})
	if err != nil {
		return nil, err
	}
	q = url.Values{"status": {"open"}, "with_nested_markets": {"true"}, "limit": {strconv.Itoa(eventPage)}}
	err = c.pages(ctx, "/events", q, func(raw []byte) (string, error) {
		var page struct {
			Events []json.RawMessage `json:"events"`
			Cursor string            `json:"cursor"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			return "", err
		}
		for _, e := range page.Events {
			ev, err := decodeEvent(e)
			if err != nil {
				l.Add(nil, false, err)
				continue
			}
			for _, m := range ev.Markets {
				add(m, ev)
			}
		}
		return page.Cursor, nil
	})
	if err != nil {
		return nil, err
	}
	return l.Markets, nil
}

// pages GETs path with q and every next cursor until a page has none,
// handing each page to read, which returns the page's cursor.
func (c *Client) pages(ctx context.Context, path string, q url.Values, read func(raw []byte) (string, error)) error {
	seen := map[string]bool{}
	for page := 0; page < c.Pages(defaultMaxPages); page++ {
		var raw json.RawMessage
		if err := c.HTTP.Get(ctx, path, q, &raw); err != nil {
			return fmt.Errorf("kalshi: list %s page %d: %w", path, page+1, err)
		}
		cursor, err := read(raw)
		if err != nil {
			return fmt.Errorf("kalshi: list %s page %d: %w", path, page+1, err)
		}
		if cursor == "" {
			return nil
		}
		if seen[cursor] { // a venue repeating a cursor would page forever
			return fmt.Errorf("kalshi: list %s: cursor %.40q repeats", path, cursor)
		}
		seen[cursor] = true
		q.Set("cursor", cursor)
	}
	c.Log().Warn("kalshi: stopped paging at the page cap", "path", path, "pages", c.Pages(defaultMaxPages))
	return nil
}

// Market re-reads one market with GET /markets/{ticker}.
func (c *Client) Market(ctx context.Context, ticker string) (*arena.Market, error) {
	var resp struct {
		Market json.RawMessage `json:"market"`
	}
	if err := c.ReadOne(ctx, "/markets/"+url.PathEscape(ticker), "market", ticker, &resp); err != nil {
		return nil, err
	}
	if len(resp.Market) == 0 {
		return nil, venue.Skip(Venue, venue.SkipInvalidJSON, ticker, "no market in the answer")
	}
	e, err := decode(resp.Market, nil, c.Clock())
	if err != nil {
		return nil, err
	}
	return e.M, venue.SameID(Venue, ticker, e.M.SourceID)
}

// candle is one of GET /series/{s}/markets/{t}/candlesticks's candles:
// the best Yes bid and ask and the last trade at the candle's end, as
// dollar strings or, in the legacy form, integer cents.
type candle struct {
	End    venue.Number `json:"end_period_ts"`
	YesBid ohlc         `json:"yes_bid"`
	YesAsk ohlc         `json:"yes_ask"`
	Price  ohlc         `json:"price"`
}

type ohlc struct {
	CloseDollars venue.Number `json:"close_dollars"`
	Close        venue.Number `json:"close"`
}

func (o ohlc) close(what string) (float64, bool, error) { return price(o.CloseDollars, o.Close, what) }

// Candles returns the market's price at each one-minute candle's end in
// [start, end], oldest first: the midpoint of the best Yes bid and ask
// (arena.PriceCandleMid), or when a side is empty the last trade
// (arena.PriceLastTrade); a candle with neither is left out.
func (c *Client) Candles(ctx context.Context, m *arena.Market, start, end time.Time) ([]arena.PricePoint, error) {
	if end.Before(start) {
		return nil, arena.Errorf(arena.EINVALID, "kalshi: candles of %s: end %s before start %s", m.SourceID, end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	series := venue.Or(m.EventSlug, seriesOf(m.SourceID))
	if _, ok := venue.ID(series); !ok {
		return nil, arena.Errorf(arena.EINVALID, "kalshi: candles of %s: series %.40q", m.SourceID, series)
	}
	q := url.Values{"start_ts": {strconv.FormatInt(start.Unix(), 10)}, "end_ts": {strconv.FormatInt(end.Unix(), 10)},
		"period_interval": {strconv.Itoa(candleMinutes)}}
	var resp struct {
		Candlesticks []json.RawMessage `json:"candlesticks"`
	}
	path := "/series/" + url.PathEscape(series) + "/markets/" + url.PathEscape(m.SourceID) + "/candlesticks"
	if err := c.HTTP.Get(ctx, path, q, &resp); err != nil {
		return nil, fmt.Errorf("kalshi: candles of %s: %w", m.SourceID, err)
	}
	return candlePoints(resp.Candlesticks, start, end, c.Clock()), nil
}

// candlePoints reads the candles ending in [start, end]; a candle it
// cannot read, or without a price, is no point.
func candlePoints(candles []json.RawMessage, start, end, fetched time.Time) []arena.PricePoint {
	var pts []arena.PricePoint
	for _, raw := range candles {
		var k candle
		if json.Unmarshal(raw, &k) != nil {
			continue
		}
		at, err := venue.Seconds(k.End)
		if err != nil || at.IsZero() || at.Before(start.Truncate(time.Second)) || at.After(end) {
			continue
		}
		bid, hasBid, err1 := k.YesBid.close("bid")
		ask, hasAsk, err2 := k.YesAsk.close("ask")
		last, hasLast, err3 := k.Price.close("price")
		switch {
		case err1 == nil && err2 == nil && hasBid && hasAsk && quoted(bid) && quoted(ask) && bid <= ask:
			pts = append(pts, venue.YesPoint(at, venue.Round((bid+ask)/2), arena.PriceCandleMid, fetched))
		case err3 == nil && hasLast && quoted(last):
			pts = append(pts, venue.YesPoint(at, last, arena.PriceLastTrade, fetched))
		}
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Time.Before(pts[j].Time) })
	return pts
}

// BenchmarkAt is the market's price at the one-minute candle end nearest
// to t, within venue.BenchmarkTolerance.
func (c *Client) BenchmarkAt(ctx context.Context, m *arena.Market, t time.Time) (arena.PricePoint, bool, error) {
	tol := time.Duration(maxCandleSeconds) * time.Second
	pts, err := c.Candles(ctx, m, t.Add(-tol), t.Add(tol))
	if err != nil {
		return arena.PricePoint{}, false, err
	}
	p, ok := venue.Nearest(pts, t, tol)
	return p, ok, nil
}
