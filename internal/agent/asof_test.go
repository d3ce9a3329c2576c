package agent

import (
	"fmt"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
)

func TestAsOf(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	at := func(d time.Duration) *time.Time { v := t0.Add(d); return &v }
	backtest, live := AsOf{Time: t0}, AsOf{Time: t0, Live: true}
	for _, tc := range []struct {
		name                 string
		g                    AsOf
		dated                time.Time  // Sees and Listed
		published            *time.Time // Source
		sees, listed, source bool
	}{
		{"equal time is seen", backtest, t0, at(0), true, false, true},
		{"equal time, live", live, t0, at(0), true, true, true},
		{"equal instant in another zone", backtest, t0.In(time.FixedZone("x", 3600)), at(0), true, false, true},
		{"one nanosecond later is not", backtest, t0.Add(1), at(1), false, false, false},
		{"one nanosecond later, live", live, t0.Add(1), at(1), false, false, false},
		{"earlier is seen", backtest, t0.Add(-time.Hour), at(-time.Hour), true, false, true},
		{"undated source in a backtest", backtest, t0, nil, true, false, false},
		{"undated source live", live, t0, nil, true, true, true},
		{"zero time shows nothing dated", AsOf{}, t0, at(0), false, false, false},
		{"zero time, live: only undated", AsOf{Live: true}, t0, nil, false, false, true},
		{"zero time sees the zero time", AsOf{}, time.Time{}, at(0), true, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.g.Sees(tc.dated); got != tc.sees {
				t.Errorf("Sees = %v, want %v", got, tc.sees)
			}
			if got := tc.g.Listed(tc.dated); got != tc.listed {
				t.Errorf("Listed = %v, want %v", got, tc.listed)
			}
			if got := tc.g.Source(tc.published); got != tc.source {
				t.Errorf("Source = %v, want %v", got, tc.source)
			}
		})
	}
	var pts []arena.PricePoint
	for _, d := range []time.Duration{-time.Hour, -1, 0, 1, time.Hour, -2 * time.Hour} {
		pts = append(pts, arena.PricePoint{Time: t0.Add(d), Price: float64(d)})
	}
	var kept []time.Duration
	for _, p := range backtest.Points(pts) {
		kept = append(kept, p.Time.Sub(t0))
	}
	if fmt.Sprint(kept) != "[-1h0m0s -1ns 0s -2h0m0s]" {
		t.Errorf("points kept %v", kept)
	}
	if got := (AsOf{}).Points(nil); len(got) != 0 {
		t.Errorf("no points: %v", got)
	}
}
