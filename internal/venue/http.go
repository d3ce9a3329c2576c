package venue

import (
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
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/retry"
)

// Defaults of the zero values of HTTP's tuning fields.
const (
	defaultMaxRetries    = 4
	defaultBackoff       = 500 * time.Millisecond
	defaultMaxBackoff    = 15 * time.Second
	defaultMaxRetryAfter = 60 * time.Second
	defaultTimeout       = 30 * time.Second
	// A venue's largest page (1,000 Manifold markets, 200 Kalshi events
	// with their markets) is a few MB.
	defaultMaxBody = 32 << 20
)

var defaultClient = &http.Client{Timeout: defaultTimeout}

// HTTP is the JSON client of a venue's read API: GET requests with the
// venue's header (an API token), at most Rate requests a second, and
// retries of rate limits, server errors and transport errors with the
// arena's backoff and Retry-After convention (internal/retry). The zero
// value of every tuning field takes its default.
type HTTP struct {
	Venue  string       // names the venue in errors and logs
	Base   string       // the API's base URL, without a trailing slash
	Header http.Header  // sent with every request (an Authorization token)
	Client *http.Client // default: a client with a 30 s timeout
	Logger *slog.Logger

	// Rate is the most requests a second this client sends, Burst how many
	// at once (0: no limit): each venue's published limit, so a sync stays
	// below it rather than learning it from 429 answers.
	Rate  float64
	Burst int

	// Retries on 429, 408, 5xx and transport errors: exponential backoff
	// with equal jitter from Backoff up to MaxBackoff; a Retry-After
	// header replaces it, and one longer than MaxRetryAfter ends the
	// retries. A negative MaxRetries means none.
	MaxRetries    int
	Backoff       time.Duration
	MaxBackoff    time.Duration
	MaxRetryAfter time.Duration
	MaxBody       int64 // largest accepted answer (default 32 MiB)

	// Now stamps Retry-After dates (default time.Now); Sleep waits between
	// attempts (default retry.Sleep), so tests can observe the waits.
	Now   func() time.Time
	Sleep func(ctx context.Context, d time.Duration) error

	limiterOnce sync.Once
	limiter     *rate.Limiter
}

// ErrTooLarge is an answer longer than the client accepts: not retried,
// since the venue would send the same again.
var ErrTooLarge = errors.New("answer too large")

// StatusError is a non-2xx answer.
type StatusError struct {
	URL  string
	Code int
	Body string // the first bytes of the body, for the log
}

func (e *StatusError) Error() string {
	msg := fmt.Sprintf("GET %s: HTTP %d", e.URL, e.Code)
	if e.Body != "" {
		msg += ": " + e.Body
	}
	return msg
}

// StatusCode is the HTTP status of an answer err reports, or 0.
func StatusCode(err error) int {
	var se *StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	return 0
}

// retryable reports whether an answer may change on a later attempt: a
// rate limit, a timeout or a server error; other 4xx answers will not.
func retryable(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}

// Get GETs Base+path?query and decodes the JSON answer into v. Reading
// the whole body before decoding lets a truncated answer be retried; a
// body that is read whole but is not valid JSON is an error at once.
func (h *HTTP) Get(ctx context.Context, path string, q url.Values, v any) error {
	u := strings.TrimRight(h.Base, "/") + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	retries := h.MaxRetries
	if retries == 0 {
		retries = defaultMaxRetries
	}
	maxAfter := or(h.MaxRetryAfter, defaultMaxRetryAfter)
	for attempt := 0; ; attempt++ {
		data, after, err := h.once(ctx, u)
		if err == nil {
			if err := json.Unmarshal(data, v); err != nil {
				return fmt.Errorf("%s: GET %s: invalid JSON: %w", h.Venue, u, err)
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("%s: GET %s: %w", h.Venue, u, ctx.Err())
		}
		var se *StatusError
		if errors.As(err, &se) && !retryable(se.Code) || errors.Is(err, ErrTooLarge) {
			return fmt.Errorf("%s: %w", h.Venue, err)
		}
		if attempt >= retries {
			return fmt.Errorf("%s: after %d attempts: %w", h.Venue, attempt+1, err)
		}
		d, ok := retry.Wait(after, after >= 0, retry.Backoff(attempt+1, or(h.Backoff, defaultBackoff), or(h.MaxBackoff, defaultMaxBackoff), rand.Int64N), maxAfter)
		if !ok {
			return fmt.Errorf("%s: after %d attempts (the server asks to wait %v, longer than %v): %w", h.Venue, attempt+1, after, maxAfter, err)
		}
		arena.Logger(h.Logger).Debug(h.Venue+": retrying", "url", u, "attempt", attempt+1, "wait", d, "err", err)
		sleep := h.Sleep
		if sleep == nil {
			sleep = retry.Sleep
		}
		if err := sleep(ctx, d); err != nil {
			return fmt.Errorf("%s: GET %s: %w", h.Venue, u, err)
		}
	}
}

// once sends one request, after the rate limiter allows it, and returns
// the body of a 2xx answer, or an error and the wait the server asked
// for (negative when none).
func (h *HTTP) once(ctx context.Context, u string) ([]byte, time.Duration, error) {
	if err := h.wait(ctx); err != nil {
		return nil, -1, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, -1, fmt.Errorf("build request: %w", err)
	}
	for k, vs := range h.Header {
		for _, v := range vs {
			req.Header.Add(k, v)
		}
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "forecast-arena (+https://github.com/forecast-arena/arena)")
	client := h.Client
	if client == nil {
		client = defaultClient
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, -1, err
	}
	defer resp.Body.Close()
	limit := h.MaxBody
	if limit <= 0 {
		limit = defaultMaxBody
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, -1, fmt.Errorf("GET %s: read body: %w", u, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		snippet := strings.ToValidUTF8(strings.TrimSpace(string(data[:min(len(data), 200)])), "?")
		after := time.Duration(-1)
		if d, ok := retry.After(resp.Header, arena.Clock(h.Now)()); ok {
			after = d
		}
		return nil, after, &StatusError{URL: u, Code: resp.StatusCode, Body: snippet}
	}
	if int64(len(data)) > limit {
		return nil, -1, fmt.Errorf("GET %s: %w: more than %d bytes", u, ErrTooLarge, limit)
	}
	return data, -1, nil
}

// wait blocks until the rate limiter allows a request.
func (h *HTTP) wait(ctx context.Context) error {
	if h.Rate <= 0 {
		return nil
	}
	h.limiterOnce.Do(func() { h.limiter = rate.NewLimiter(rate.Limit(h.Rate), max(h.Burst, 1)) })
	return h.limiter.Wait(ctx)
}

func or(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
