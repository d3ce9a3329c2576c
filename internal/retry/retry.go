// Package retry is the one backoff and Retry-After convention of the
// arena's HTTP clients (the model client, the Polymarket client and the
// other venues' client, internal/venue): how long to wait before the
// next attempt, and what a server's requested wait means.
package retry

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Backoff is the wait before retry n (n ≥ 1): a random point in the upper
// half of base·2^(n−1), capped at most ("equal jitter"), so retries of
// concurrent clients spread apart while each still waits at least half
// its window. rnd(k) returns a value in [0, k).
func Backoff(n int, base, most time.Duration, rnd func(int64) int64) time.Duration {
	d := base
	for i := 1; i < n && d < most; i++ {
		d *= 2
	}
	d = min(d, most)
	half := d / 2
	if half <= 0 {
		return d
	}
	return half + time.Duration(rnd(int64(half)+1))
}

// After reads the wait a server asked for: Retry-After-Ms (OpenAI's, in
// milliseconds), else Retry-After as delay-seconds or an HTTP date. ok is
// false when neither is present and readable (a date in the past asks for
// no wait: 0, true).
func After(h http.Header, now time.Time) (d time.Duration, ok bool) {
	if h == nil {
		return 0, false
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < 1e10 {
			return time.Duration(ms * float64(time.Millisecond)), true
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s >= 0 && s < 1e7 {
			return time.Duration(s * float64(time.Second)), true
		}
		return 0, false
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0), true
	}
	return 0, false
}

// Wait is the wait before the next attempt: the server's requested wait
// when it gave one (asked), else backoff. A requested wait longer than
// maxAfter ends the retries (ok false): an earlier attempt would likely be
// refused again, and a longer wait is more than the caller allows.
func Wait(requested time.Duration, asked bool, backoff, maxAfter time.Duration) (d time.Duration, ok bool) {
	if !asked {
		return backoff, true
	}
	if requested > maxAfter {
		return 0, false
	}
	return requested, true
}

// Sleep waits d, or until ctx ends, and returns ctx's error then: the one
// wait between attempts of every client and job.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
