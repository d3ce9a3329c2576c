package retry

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	hi := func(n int64) int64 { return n - 1 }
	lo := func(int64) int64 { return 0 }
	for _, c := range []struct {
		n      int
		lo, hi time.Duration
	}{
		{1, 500 * time.Millisecond, time.Second},
		{2, time.Second, 2 * time.Second},
		{3, 2 * time.Second, 4 * time.Second},
		{10, 15 * time.Second, 30 * time.Second}, // capped at most
		{1000, 15 * time.Second, 30 * time.Second},
	} {
		if got := Backoff(c.n, time.Second, 30*time.Second, lo); got != c.lo {
			t.Errorf("Backoff(%d) least = %v, want %v", c.n, got, c.lo)
		}
		if got := Backoff(c.n, time.Second, 30*time.Second, hi); got != c.hi {
			t.Errorf("Backoff(%d) most = %v, want %v", c.n, got, c.hi)
		}
	}
	if got := Backoff(1, 1, time.Second, lo); got != 1 {
		t.Errorf("a 1 ns base: %v", got)
	}
}

func TestAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name   string
		header map[string]string
		want   time.Duration
		ok     bool
	}{
		{"absent", nil, 0, false},
		{"seconds", map[string]string{"Retry-After": "7"}, 7 * time.Second, true},
		{"fractional seconds", map[string]string{"Retry-After": "1.5"}, 1500 * time.Millisecond, true},
		{"zero", map[string]string{"Retry-After": "0"}, 0, true},
		{"negative", map[string]string{"Retry-After": "-3"}, 0, false},
		{"absurd", map[string]string{"Retry-After": "1e12"}, 0, false},
		{"date", map[string]string{"Retry-After": now.Add(90 * time.Second).Format(http.TimeFormat)}, 90 * time.Second, true},
		{"past date", map[string]string{"Retry-After": now.Add(-time.Hour).Format(http.TimeFormat)}, 0, true},
		{"garbage", map[string]string{"Retry-After": "soon"}, 0, false},
		{"milliseconds first", map[string]string{"Retry-After-Ms": "250", "Retry-After": "9"}, 250 * time.Millisecond, true},
		{"bad milliseconds fall back", map[string]string{"Retry-After-Ms": "x", "Retry-After": "2"}, 2 * time.Second, true},
	} {
		h := http.Header{}
		for k, v := range c.header {
			h.Set(k, v)
		}
		got, ok := After(h, now)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: After = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func TestWait(t *testing.T) {
	for _, c := range []struct {
		name      string
		requested time.Duration
		asked     bool
		want      time.Duration
		ok        bool
	}{
		{"no request: the backoff", 0, false, 3 * time.Second, true},
		{"a request within the bound", 20 * time.Second, true, 20 * time.Second, true},
		{"a request at the bound", time.Minute, true, time.Minute, true},
		{"a request past the bound ends the retries", time.Minute + 1, true, 0, false},
		{"a request for no wait", 0, true, 0, true},
	} {
		got, ok := Wait(c.requested, c.asked, 3*time.Second, time.Minute)
		if got != c.want || ok != c.ok {
			t.Errorf("%s: Wait = %v, %v; want %v, %v", c.name, got, ok, c.want, c.ok)
		}
	}
}

func FuzzAfter(f *testing.F) {
	for _, s := range []string{"7", "1.5", "-1", "Sun, 01 Mar 2026 12:01:30 GMT", "NaN", "Inf", "1e308"} {
		f.Add(s, "")
	}
	f.Add("", "250")
	f.Fuzz(func(t *testing.T, ra, ms string) {
		h := http.Header{"Retry-After": {ra}, "Retry-After-Ms": {ms}}
		if d, ok := After(h, time.Unix(0, 0)); d < 0 || (!ok && d != 0) {
			t.Fatalf("After(%q, %q) = %v, %v", ra, ms, d, ok)
		}
	})
}

func TestSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := Sleep(ctx, time.Millisecond); err != nil {
		t.Fatalf("a short sleep: %v", err)
	}
	cancel()
	if err := Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("a sleep on an ended context: %v", err)
	}
	if err := Sleep(ctx, 0); !errors.Is(err, context.Canceled) {
		t.Fatalf("no sleep on an ended context: %v", err)
	}
}
