package rounds

import (
	"errors"
	"testing"
	"time"

	"github.com/forecast-arena/arena/forecast"
)

// spendProfileUpdate: each update spends a day's share from the later of
// now and the allowance spent; one spending more than a day ahead is
// refused with the wait in whole seconds, never early.
func TestSpendProfileUpdate(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	cases := []struct {
		name    string
		perDay  int
		spent   time.Time
		want    time.Time     // the allowance spent after the update
		refused time.Duration // the Retry-After of a refusal; 0 accepted
	}{
		{"no cap", 0, now.Add(100 * time.Hour), now.Add(100 * time.Hour), 0},
		{"the first update", 4, time.Time{}, now.Add(6 * time.Hour), 0},
		{"spent in the past counts from now", 4, now.Add(-48 * time.Hour), now.Add(6 * time.Hour), 0},
		{"the last of the day's allowance", 4, now.Add(18 * time.Hour), now.Add(24 * time.Hour), 0},
		{"one past the allowance", 4, now.Add(24 * time.Hour), now.Add(24 * time.Hour), 6 * time.Hour},
		{"a second short", 4, now.Add(18*time.Hour + time.Second), now.Add(18*time.Hour + time.Second), time.Second},
		{"part of a second short: rounded up", 4, now.Add(18*time.Hour + time.Millisecond), now.Add(18*time.Hour + time.Millisecond), time.Second},
		{"one a day", 1, now.Add(time.Hour), now.Add(time.Hour), time.Hour},
		{"seven a day: shares that do not divide a day in whole seconds", 7, now.Add(6 * 24 * time.Hour / 7), now.Add(7 * (24 * time.Hour / 7)), 0},
	}
	for _, c := range cases {
		got, err := Admission{ProfileUpdatesPerDay: c.perDay}.spendProfileUpdate("0xA", c.spent, now)
		var rl *forecast.RetryLater
		switch {
		case c.refused == 0 && (err != nil || !got.Equal(c.want)):
			t.Errorf("%s: %v %v, want %v", c.name, got, err, c.want)
		case c.refused != 0 && (!errors.As(err, &rl) || rl.After != c.refused || rl.Err.Code != forecast.CodeTooManyProfileUpdates || !got.Equal(c.want)):
			t.Errorf("%s: %v %v, want %s refused for %s and the allowance unchanged", c.name, got, err, forecast.CodeTooManyProfileUpdates, c.refused)
		}
	}
}
