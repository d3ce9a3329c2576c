package export

import (
	"context"
	"slices"
	"time"

	"github.com/forecast-arena/arena"
)

// Retention is which published exports are kept: the latest ones, and
// the last of each UTC day for some days back. Every export younger than
// Grace is kept too. The log's checkpoint and tiles are not exports: they
// prove every entry whatever is pruned, and `arena verify --url` checks
// the latest export.
type Retention struct {
	Latest int // the latest exports kept (at least 1)
	Days   int // the last export of each of this many UTC days, today's included (0: none)
}

// DefaultRetention keeps the latest 100 exports and the last of each day
// for a year.
var DefaultRetention = Retention{Latest: 100, Days: 365}

// Grace is how young an export, a part or a node is never deleted: twice
// ReuseFor, so that what a Publisher makes an export from outlives the
// making (see ReuseFor).
const Grace = 2 * ReuseFor

// Keep is the sizes of the exports stored that r keeps at now.
func (r Retention) Keep(stored []arena.StoredExport, now time.Time) map[uint64]bool {
	byNewest := slices.Clone(stored)
	slices.SortFunc(byNewest, func(a, b arena.StoredExport) int {
		switch {
		case a.Size > b.Size:
			return -1
		case a.Size < b.Size:
			return 1
		}
		return 0
	})
	keep := map[uint64]bool{}
	today := now.UTC().Truncate(24 * time.Hour)
	days := map[time.Time]bool{}
	for i, e := range byNewest {
		day := e.CreatedAt.UTC().Truncate(24 * time.Hour)
		switch {
		case i < max(r.Latest, 1), now.Sub(e.CreatedAt) < Grace:
			keep[e.Size] = true
		case !days[day] && day.After(today.AddDate(0, 0, -r.Days)):
			keep[e.Size] = true
		}
		days[day] = true // the largest of its day comes first
	}
	return keep
}

// PruneStats are what a prune found and deleted.
type PruneStats struct {
	Exports, ExportsDeleted int
	PartsDeleted            int
}

// Prune deletes the exports r no longer keeps at now, then every part and
// node stored before Grace that no export left names.
func Prune(ctx context.Context, store arena.ExportStore, r Retention, now time.Time) (PruneStats, error) {
	var st PruneStats
	stored, err := store.ExportManifests(ctx)
	if err != nil {
		return st, err
	}
	st.Exports = len(stored)
	keep := r.Keep(stored, now)
	var drop []uint64
	for _, e := range stored {
		if !keep[e.Size] {
			drop = append(drop, e.Size)
		}
	}
	if err := store.DeleteExportManifests(ctx, drop); err != nil {
		return st, err
	}
	st.ExportsDeleted = len(drop)
	// Read after the deletion: an export stored meanwhile names parts
	// either younger than Grace or named by an export kept.
	named := map[string]bool{}
	for size := range keep {
		_, b, err := store.ExportManifest(ctx, size, false)
		if arena.ErrorKind(err) == arena.ENOTFOUND {
			continue
		}
		if err != nil {
			return st, err
		}
		m, err := ParseManifest(b)
		if err != nil {
			return st, err
		}
		for _, f := range m.Files {
			for _, h := range f.Parts {
				named[h] = true
			}
			if err := treeNodes(ctx, store, f.Root, f.Depth, named); err != nil {
				return st, err
			}
		}
	}
	old, err := store.ExportPartsBefore(ctx, now.Add(-Grace))
	if err != nil {
		return st, err
	}
	var gone []string
	for _, h := range old {
		if !named[h] {
			gone = append(gone, h)
		}
	}
	if err := store.DeleteExportParts(ctx, gone); err != nil {
		return st, err
	}
	st.PartsDeleted = len(gone)
	return st, nil
}
