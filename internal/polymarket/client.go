// Package polymarket is the Polymarket market source: it lists the
// most-traded open markets from the Gamma API, prices them with CLOB
// midpoints, refreshes the status of markets already in the store, and
// writes everything to an arena.MarketStore in one batch.
//
// All endpoints are public and unauthenticated. Base URLs are configurable
// so tests run against a local fake server speaking the same wire format.
package polymarket

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/retry"
)

// Default base URLs of the public APIs.
const (
	DefaultGammaURL = "https://gamma-api.polymarket.com"
	DefaultCLOBURL  = "https://clob.polymarket.com"
)

// Defaults for the zero values of Client's tuning fields.
const (
	defaultPageSize      = 500
	defaultMaxPages      = 20
	defaultMidpointBatch = 100
	defaultMaxRetries    = 4
	defaultBackoff       = 500 * time.Millisecond
	defaultMaxBackoff    = 15 * time.Second
	defaultMaxRetryAfter = 60 * time.Second
	defaultConcurrency   = 4
	defaultTimeout       = 30 * time.Second
	// Gamma's /events pages embed every sub-market; a full page is a few MB.
	maxBodyBytes = 64 << 20
)

// Client talks to the Gamma and CLOB APIs. The zero value is usable; every
// zero field takes its default.
type Client struct {
	GammaURL string       // default DefaultGammaURL
	CLOBURL  string       // default DefaultCLOBURL
	HTTP     *http.Client // default: a client with a 30 s timeout
	Logger   *slog.Logger // default slog.Default()

	PageSize      int // items requested per Gamma listing page (default 500); shorter pages are tolerated
	MaxPages      int // pages per listing, a guard against endless pagination
	MidpointBatch int // tokens per POST /midpoints request
	Concurrency   int // parallel status refreshes and single-token midpoint requests

	// Retries on 429, 5xx and transport errors: exponential backoff with
	// equal jitter from Backoff up to MaxBackoff (retry.Backoff); a
	// Retry-After header replaces it, and one longer than MaxRetryAfter
	// ends the retries (retry.Wait).
	MaxRetries    int
	Backoff       time.Duration
	MaxBackoff    time.Duration
	MaxRetryAfter time.Duration

	// Now is the clock used to timestamp fetched prices (default time.Now).
	Now func() time.Time

	// sleep waits between retries; tests replace it to observe delays.
	sleep func(ctx context.Context, d time.Duration) error
}

// NewClient returns a client for the given base URLs; empty strings select
// the public defaults.
func NewClient(gammaURL, clobURL string) *Client {
	return &Client{GammaURL: gammaURL, CLOBURL: clobURL}
}

func (c *Client) gammaBase() string { return strings.TrimRight(or(c.GammaURL, DefaultGammaURL), "/") }
func (c *Client) clobBase() string  { return strings.TrimRight(or(c.CLOBURL, DefaultCLOBURL), "/") }

var defaultHTTP = &http.Client{Timeout: defaultTimeout}

func (c *Client) http() *http.Client {
	if c.HTTP != nil {
		return c.HTTP
	}
	return defaultHTTP
}

func (c *Client) log() *slog.Logger {
	return arena.Logger(c.Logger)
}

func (c *Client) now() time.Time {
	return arena.Clock(c.Now)()
}

func (c *Client) pageSize() int      { return orInt(c.PageSize, defaultPageSize) }
func (c *Client) maxPages() int      { return orInt(c.MaxPages, defaultMaxPages) }
func (c *Client) midpointBatch() int { return orInt(c.MidpointBatch, defaultMidpointBatch) }
func (c *Client) concurrency() int   { return orInt(c.Concurrency, defaultConcurrency) }

func (c *Client) maxRetries() int {
	if c.MaxRetries < 0 {
		return 0
	}
	return orInt(c.MaxRetries, defaultMaxRetries)
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func orInt(n, def int) int {
	if n <= 0 {
		return def
	}
	return n
}

func orDur(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// StatusError is a non-2xx answer from an upstream API.
type StatusError struct {
	Method, URL string
	Code        int
	Body        string // first bytes of the body, for the log
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("%s %s: HTTP %d", e.Method, e.URL, e.Code)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// retryable reports whether a status is worth retrying: rate limits and
// server errors; other 4xx answers will not change.
func retryable(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}

// getJSON GETs base+path?query and decodes the JSON answer into v.
func (c *Client) getJSON(ctx context.Context, base, path string, q url.Values, v any) error {
	u := base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return c.do(ctx, http.MethodGet, u, nil, v)
}

// postJSON POSTs body as JSON and decodes the answer into v.
func (c *Client) postJSON(ctx context.Context, u string, body, v any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	return c.do(ctx, http.MethodPost, u, b, v)
}

// do runs one request with bounded retries. Reading the whole body before
// decoding lets a truncated or invalid answer be retried like a failed one
// would not be: invalid JSON is a permanent error, reported at once.
func (c *Client) do(ctx context.Context, method, u string, body []byte, v any) error {
	retries := c.maxRetries()
	for attempt := 0; ; attempt++ {
		data, retryAfter, err := c.once(ctx, method, u, body)
		if err == nil {
			if err := json.Unmarshal(data, v); err != nil {
				return fmt.Errorf("%s %s: invalid JSON: %w", method, u, err)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s %s: %w", method, u, ctx.Err())
		}
		var se *StatusError
		if errors.As(err, &se) && !retryable(se.Code) {
			return err
		}
		if attempt >= retries {
			return fmt.Errorf("after %d attempts: %w", attempt+1, err)
		}
		d, ok := retry.Wait(retryAfter, retryAfter >= 0, retry.Backoff(attempt+1, orDur(c.Backoff, defaultBackoff), orDur(c.MaxBackoff, defaultMaxBackoff), rand.Int64N),
			orDur(c.MaxRetryAfter, defaultMaxRetryAfter))
		if !ok {
			return fmt.Errorf("after %d attempts (the server asks to wait %v, longer than %v): %w", attempt+1, retryAfter, orDur(c.MaxRetryAfter, defaultMaxRetryAfter), err)
		}
		c.log().Debug("polymarket: retrying", "method", method, "url", u, "attempt", attempt+1, "wait", d, "err", err)
		if err := c.wait(ctx, d); err != nil {
			return fmt.Errorf("%s %s: %w", method, u, err)
		}
	}
}

// retryAfter is the wait the server asked for, negative when none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := retry.After(h, now); ok {
		return d
	}
	return -1
}

// once performs a single request and returns the body of a 2xx answer, or
// an error and the server's Retry-After wish (negative when absent).
func (c *Client) once(ctx context.Context, method, u string, body []byte) ([]byte, time.Duration, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, -1, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "forecast-arena (+https://github.com/forecast-arena/arena)")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.http().Do(req)
	if err != nil {
		return nil, -1, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBodyBytes+1))
	if err != nil {
		return nil, -1, fmt.Errorf("%s %s: read body: %w", method, u, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet := strings.TrimSpace(string(data))
		if len(snippet) > 200 {
			snippet = snippet[:200] + "…"
		}
		return nil, retryAfter(resp.Header, c.now()),
			&StatusError{Method: method, URL: u, Code: resp.StatusCode, Body: snippet}
	}
	if len(data) > maxBodyBytes {
		return nil, -1, fmt.Errorf("%s %s: body larger than %d bytes", method, u, maxBodyBytes)
	}
	return data, -1, nil
}

func (c *Client) wait(ctx context.Context, d time.Duration) error {
	if c.sleep != nil {
		return c.sleep(ctx, d)
	}
	return retry.Sleep(ctx, d)
}
