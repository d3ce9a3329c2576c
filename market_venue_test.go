package arena_test

import (
	"testing"

	"github.com/forecast-arena/arena"
)

// A market's venue is its source, or the venue the simulator named it
// after; a ForecastBench question's is ForecastBench.
func TestMarketVenue(t *testing.T) {
	for _, c := range []struct {
		source, origin, want string
	}{
		{arena.SourceKalshi, "", arena.SourceKalshi},
		{arena.SourcePolymarket, "", arena.SourcePolymarket},
		{arena.SourceSim, "", arena.SourceSim},
		{arena.SourceSim, arena.SourceManifold, arena.SourceManifold},
		{arena.SourceForecastBench, "manifold", arena.SourceForecastBench},
	} {
		m := &arena.Market{Source: c.source, Origin: c.origin}
		if got := m.Venue(); got != c.want {
			t.Errorf("%s/%s: venue %q, want %q", c.source, c.origin, got, c.want)
		}
	}
	for name, want := range map[string]bool{"polymarket": true, "kalshi": true, "manifold": true, "metaculus": true, "sim": false, "Kalshi": false, "": false} {
		if arena.IsVenue(name) != want {
			t.Errorf("IsVenue(%q) = %v", name, !want)
		}
	}
}
