package polymarket

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"golang.org/x/sync/errgroup"
)

// BenchmarkTolerance is how far from the commit deadline a CLOB history
// point may lie and still serve as the benchmark price.
const BenchmarkTolerance = 300 * time.Second

// Midpoints returns the CLOB midpoint of each token that has an order book.
// Tokens are sent in batches to POST /midpoints; when the batch endpoint
// rejects a request (a 4xx answer), that batch falls back to one
// GET /midpoint per token. Tokens without a book are absent from the map.
// Server errors that persist after retries are returned: the caller then
// knows the prices are incomplete rather than silently stale.
func (c *Client) Midpoints(ctx context.Context, tokenIDs []string) (map[string]float64, error) {
	out := make(map[string]float64, len(tokenIDs))
	tokenIDs = uniq(tokenIDs)
	n := c.midpointBatch()
	for start := 0; start < len(tokenIDs); start += n {
		batch := tokenIDs[start:min(start+n, len(tokenIDs))]
		body := make([]map[string]string, len(batch))
		for i, t := range batch {
			body[i] = map[string]string{"token_id": t}
		}
		var resp map[string]flexString
		err := c.postJSON(ctx, c.clobBase()+"/midpoints", body, &resp)
		var se *StatusError
		switch {
		case err == nil:
			want := make(map[string]bool, len(batch))
			for _, t := range batch {
				want[t] = true
			}
			for t, s := range resp {
				if !want[t] {
					continue
				}
				if p, ok := parsePrice(string(s)); ok {
					out[t] = p
				} else {
					c.log().Warn("polymarket: ignoring unreadable midpoint", "token", t, "value", string(s))
				}
			}
		case errors.As(err, &se) && !retryable(se.Code):
			c.log().Info("polymarket: batch midpoints rejected; falling back to single requests", "tokens", len(batch), "err", err)
			if err := c.singleMidpoints(ctx, batch, out); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("polymarket: midpoints batch at %d: %w", start, err)
		}
	}
	return out, nil
}

func (c *Client) singleMidpoints(ctx context.Context, tokens []string, out map[string]float64) error {
	var mu sync.Mutex
	return forEach(ctx, c.concurrency(), tokens, func(ctx context.Context, t string) error {
		p, ok, err := c.Midpoint(ctx, t)
		if err != nil || !ok {
			return err
		}
		mu.Lock()
		out[t] = p
		mu.Unlock()
		return nil
	})
}

// Midpoint returns one token's CLOB midpoint via GET /midpoint; ok is false
// when the token has no order book (a 4xx answer).
func (c *Client) Midpoint(ctx context.Context, tokenID string) (float64, bool, error) {
	var resp struct {
		Mid      flexString `json:"mid"`
		MidPrice flexString `json:"mid_price"` // the name newer deployments use
	}
	err := c.getJSON(ctx, c.clobBase(), "/midpoint", url.Values{"token_id": {tokenID}}, &resp)
	var se *StatusError
	if errors.As(err, &se) && !retryable(se.Code) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("polymarket: midpoint of %s: %w", tokenID, err)
	}
	p, ok := parsePrice(string(or(string(resp.Mid), string(resp.MidPrice))))
	return p, ok, nil
}

// PriceHistory returns the CLOB price history of a token in [start, end]
// at one-minute fidelity, oldest first, as points with provenance
// arena.PriceCLOBHistory (MarketID and Outcome are left for the caller).
func (c *Client) PriceHistory(ctx context.Context, tokenID string, start, end time.Time) ([]arena.PricePoint, error) {
	if end.Before(start) {
		return nil, arena.Errorf(arena.EINVALID, "polymarket: price history of %s: end %s before start %s", tokenID, end.Format(time.RFC3339), start.Format(time.RFC3339))
	}
	q := url.Values{
		"market":   {tokenID},
		"startTs":  {strconv.FormatInt(start.Unix(), 10)},
		"endTs":    {strconv.FormatInt(end.Unix(), 10)},
		"fidelity": {"1"},
	}
	var resp struct {
		History []struct {
			T flexFloat `json:"t"`
			P flexFloat `json:"p"`
		} `json:"history"`
	}
	if err := c.getJSON(ctx, c.clobBase(), "/prices-history", q, &resp); err != nil {
		return nil, fmt.Errorf("polymarket: price history of %s: %w", tokenID, err)
	}
	fetched := c.now().UTC()
	pts := make([]arena.PricePoint, 0, len(resp.History))
	for _, h := range resp.History {
		if !h.T.Set || !h.P.Set || h.P.V < 0 || h.P.V > 1 || h.T.V < 0 || h.T.V > 1e11 {
			continue // a point we cannot place or that is not a price
		}
		t := time.Unix(int64(h.T.V), 0).UTC()
		if t.Before(start.Truncate(time.Second)) || t.After(end) {
			continue
		}
		pts = append(pts, arena.PricePoint{Time: t, Price: h.P.V, Source: arena.PriceCLOBHistory, FetchedAt: fetched})
	}
	sort.SliceStable(pts, func(i, j int) bool { return pts[i].Time.Before(pts[j].Time) })
	return pts, nil
}

// BenchmarkAt returns the benchmark price of a token at t: the
// CLOB history point nearest to t within ±BenchmarkTolerance. ok is false
// when there is none; the market then has no benchmark (never a silent 0.5).
func (c *Client) BenchmarkAt(ctx context.Context, tokenID string, t time.Time) (price float64, at time.Time, ok bool, err error) {
	pts, err := c.PriceHistory(ctx, tokenID, t.Add(-BenchmarkTolerance), t.Add(BenchmarkTolerance))
	if err != nil {
		return 0, time.Time{}, false, err
	}
	p, ok := Nearest(pts, t, BenchmarkTolerance)
	return p.Price, p.Time, ok, nil
}

// Nearest returns the point closest to t within tol. On a tie the earlier
// point wins, so a benchmark never prefers information from after t.
func Nearest(pts []arena.PricePoint, t time.Time, tol time.Duration) (arena.PricePoint, bool) {
	best, found := arena.PricePoint{}, false
	var bestD time.Duration
	for _, p := range pts {
		d := p.Time.Sub(t)
		if d < 0 {
			d = -d
		}
		if d > tol {
			continue
		}
		if !found || d < bestD || (d == bestD && p.Time.Before(best.Time)) {
			best, bestD, found = p, d, true
		}
	}
	return best, found
}

// parsePrice reads a price string; ok is false unless it is in [0,1].
func parsePrice(s string) (float64, bool) {
	p, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	if err != nil || math.IsNaN(p) || p < 0 || p > 1 {
		return 0, false
	}
	return p, true
}

func uniq(xs []string) []string {
	seen := make(map[string]bool, len(xs))
	out := make([]string, 0, len(xs))
	for _, x := range xs {
		if x != "" && !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// forEach runs fn on every item with at most n in flight and returns the
// first error, cancelling the rest.
func forEach[T any](ctx context.Context, n int, items []T, fn func(context.Context, T) error) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(n, 1))
	for _, it := range items {
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error { return fn(gctx, it) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return ctx.Err()
}

// statusCode returns the HTTP status of an upstream error, or 0.
func statusCode(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}
