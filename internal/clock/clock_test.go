package clock_test

import (
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/clock"
)

func TestManual(t *testing.T) {
	var zero clock.Manual
	if !zero.Now().IsZero() {
		t.Fatalf("zero clock reads %s", zero.Now())
	}
	paris := time.FixedZone("CET", 3600)
	at := time.Date(2026, 5, 4, 12, 0, 0, 0, paris)
	c := clock.New(at)
	if got := c.Now(); !got.Equal(at) || got.Location() != time.UTC {
		t.Fatalf("New(%s).Now() = %s, want the same instant in UTC", at, got)
	}
	back := at.Add(-time.Hour)
	c.Set(back)
	if got := c.Now(); !got.Equal(back) {
		t.Fatalf("after Set(%s): %s", back, got)
	}
}
