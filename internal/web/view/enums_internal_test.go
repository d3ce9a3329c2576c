package view

import (
	"maps"
	"slices"
	"testing"
)

// The values the API declares of the enumerated parameters (WindowNames,
// RangeNames, StepNames) are the values the service acts on.
func TestEnumsMatchHandlers(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct{ names, keys []string }{
		"window": {WindowNames, slices.Collect(maps.Keys(leaderboardWindows))},
		"range":  {RangeNames, slices.Collect(maps.Keys(cohortRanges))},
		"step":   {StepNames, slices.Collect(maps.Keys(snapshotSteps))},
	} {
		if !slices.Equal(slices.Sorted(slices.Values(c.names)), slices.Sorted(slices.Values(c.keys))) {
			t.Errorf("%s: declared %v, handled %v", name, c.names, c.keys)
		}
	}
}
