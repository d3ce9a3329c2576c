package web

import (
	"maps"
	"slices"
	"testing"

	"github.com/forecast-arena/arena/internal/web/view"
)

// The declared values of the enumerated parameters are the values their
// handlers act on.
func TestEnumsMatchHandlers(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ names, keys []string }{
		"window": {windowNames, slices.Collect(maps.Keys(leaderboardWindows))},
		"range":  {view.RangeNames, slices.Collect(maps.Keys(cohortRanges))},
		"step":   {stepNames, slices.Collect(maps.Keys(snapshotSteps))},
	} {
		if !slices.Equal(slices.Sorted(slices.Values(c.names)), slices.Sorted(slices.Values(c.keys))) {
			t.Errorf("%s: declared %v, handled %v", name, c.names, c.keys)
		}
	}
}
