package llm

import (
	"fmt"
	"net/http"
	"strconv"
	"time"
)

// Error is a failed model call after the retry policy gave up. Status is
// the HTTP status of the last attempt (0 when no response arrived: timeout
// or connection error). Retryable says whether the last failure was of a
// retryable kind (429, 408, 5xx, timeout, connection error); when it is,
// the attempts were exhausted or the wait exceeded the policy.
type Error struct {
	Agent      string // registry id
	Model      string
	Status     int
	Retryable  bool
	Timeout    bool          // the per-attempt timeout expired
	RetryAfter time.Duration // server-requested wait on the last attempt, if any
	Attempts   int
	Message    string // provider's error message or a description
	Err        error  // underlying cause, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("llm %s (%s)", e.Agent, e.Model)
	switch {
	case e.Timeout:
		s += ": timeout"
	case e.Status != 0:
		s += ": HTTP " + strconv.Itoa(e.Status)
		if t := http.StatusText(e.Status); t != "" {
			s += " " + t
		}
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Attempts > 1 {
		s += fmt.Sprintf(" (after %d attempts)", e.Attempts)
	}
	return s
}

func (e *Error) Unwrap() error { return e.Err }

// retryableStatus reports whether an HTTP status is worth retrying: rate
// limits, request timeouts and server errors. 401/403/404 and other 4xx are
// the caller's fault and repeat identically.
func retryableStatus(code int) bool {
	return code == http.StatusTooManyRequests || code == http.StatusRequestTimeout || code >= 500
}

// retryAfter reads the server's requested wait: Retry-After-Ms (OpenAI),
// then Retry-After in seconds or as an HTTP date.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if h == nil {
		return 0
	}
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 && ms < 1e10 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := h.Get("Retry-After")
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s > 0 && s < 1e7 {
			return time.Duration(s * float64(time.Second))
		}
		return 0
	}
	if t, err := http.ParseTime(v); err == nil {
		if d := t.Sub(now); d > 0 {
			return d
		}
	}
	return 0
}
