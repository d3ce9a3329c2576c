package sim

import (
	"testing"
	"time"
)

// BenchmarkNewWorld measures generating the default world (200 markets,
// 8-week horizon, 10-minute grid).
func BenchmarkNewWorld(b *testing.B) {
	points := 0
	for _, m := range NewWorld(Config{Seed: 1}).markets {
		points += len(m.w)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		NewWorld(Config{Seed: int64(i)})
	}
	b.ReportMetric(float64(b.N)*float64(points)/b.Elapsed().Seconds(), "gridpoints/s")
	b.ReportMetric(float64(b.N)*DefaultMarkets/b.Elapsed().Seconds(), "markets/s")
}

// BenchmarkMarketsAt measures the observer's view in mid-horizon with full
// histories, against an incremental one-hour MarketsSince in the same run.
func BenchmarkMarketsAt(b *testing.B) {
	w := NewWorld(Config{Seed: 1})
	now := w.Config().Start.Add(28 * 24 * time.Hour)
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.MarketsAt(now)
		}
	})
	b.Run("since1h", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			w.MarketsSince(now.Add(-time.Hour), now)
		}
	})
}

// BenchmarkDraws measures direct sampling of independent observations.
func BenchmarkDraws(b *testing.B) {
	const n = 10000
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		Draws(int64(i), n, 24*time.Hour, 7*24*time.Hour)
	}
	b.ReportMetric(float64(b.N)*n/b.Elapsed().Seconds(), "draws/s")
}

// BenchmarkForecast measures one informed forecast (hash-seeded RNG included).
func BenchmarkForecast(b *testing.B) {
	w := NewWorld(Config{Seed: 1})
	s := w.Markets()[0]
	t := s.Open.Add(time.Hour)
	for b.Loop() {
		if _, err := w.Forecast("informed-0.05", s.SourceID, t); err != nil {
			b.Fatal(err)
		}
	}
}
