package export_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/export"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

func TestRetentionKeep(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	at := func(days, hours float64) time.Time {
		return now.Add(-time.Duration((days*24 + hours) * float64(time.Hour)))
	}
	stored := []arena.StoredExport{
		{Size: 10, CreatedAt: at(9, 3)}, {Size: 11, CreatedAt: at(9, 1)}, // day -9: 11 is its last
		{Size: 20, CreatedAt: at(3, 2)}, {Size: 21, CreatedAt: at(3, 1)}, // day -3: 21
		{Size: 30, CreatedAt: at(0, 5)}, {Size: 31, CreatedAt: at(0, 3)}, // today, past the grace period
		{Size: 40, CreatedAt: at(0, 0.5)}, {Size: 41, CreatedAt: at(0, 0.1)}, // within the grace period
	}
	for _, c := range []struct {
		name string
		r    export.Retention
		want []uint64
	}{
		{"the latest alone, and the grace period", export.Retention{Latest: 1}, []uint64{40, 41}},
		{"none asked: still the latest", export.Retention{}, []uint64{40, 41}},
		{"the latest three", export.Retention{Latest: 3}, []uint64{31, 40, 41}},
		{"today's last", export.Retention{Latest: 1, Days: 1}, []uint64{40, 41}},
		{"a week of days", export.Retention{Latest: 1, Days: 7}, []uint64{21, 40, 41}},
		{"ten days", export.Retention{Latest: 1, Days: 10}, []uint64{11, 21, 40, 41}},
		{"everything", export.Retention{Latest: 100, Days: 365}, []uint64{10, 11, 20, 21, 30, 31, 40, 41}},
	} {
		keep := c.r.Keep(stored, now)
		var got []uint64
		for s := range keep {
			got = append(got, s)
		}
		slices.Sort(got)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: kept %v, want %v", c.name, got, c.want)
		}
	}
}

// Pruning deletes the exports the policy no longer keeps and then the
// parts and nodes no export left names, once older than the grace period:
// the exports kept still mirror whole and byte for byte, and pruning again
// deletes nothing.
func TestPrune(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.Open(t, "sqlite")
	clock := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	db.Now = func() time.Time { return clock }
	// Five exports of growing files, a day apart, each of its own parts.
	for i := range 5 {
		var ps []string
		var file []byte
		for j := range i + 1 {
			data := fmt.Appendf(nil, "line %d of export %d\n", j, i)
			file = append(file, data...)
			h := sha(data)
			if err := db.SaveExportPart(ctx, h, data); err != nil {
				t.Fatal(err)
			}
			ps = append(ps, h)
		}
		list, _ := json.Marshal(ps)
		m := fmt.Sprintf(`{"tree_size":%d,"files":[{"name":"a.jsonl","size":%d,"sha256":%q,"parts":%s}]}`, 10+i, len(file), sha(file), list)
		if ok, err := db.SaveExportManifest(ctx, uint64(10+i), []byte(m)); err != nil || !ok {
			t.Fatal(err)
		}
		clock = clock.Add(24 * time.Hour)
	}
	st, err := export.Prune(ctx, db, export.Retention{Latest: 2}, clock)
	if err != nil || st.Exports != 5 || st.ExportsDeleted != 3 {
		t.Fatalf("prune: %+v %v", st, err)
	}
	for size := range uint64(5) {
		_, m, err := db.ExportManifest(ctx, 10+size, false)
		if kept := size >= 3; kept != (err == nil) {
			t.Fatalf("export %d: kept %v, %v", 10+size, kept, err)
		}
		if err == nil {
			if err := export.Mirror(ctx, db, m, filepath.Join(t.TempDir(), "m")); err != nil {
				t.Fatalf("export %d after the prune: %v", 10+size, err)
			}
		}
	}
	old, _ := db.ExportPartsBefore(ctx, clock.Add(time.Hour))
	if st.PartsDeleted != 6 || len(old) != 9 {
		t.Fatalf("%d parts deleted, %d left; want 1+2+3 deleted and 4+5 left", st.PartsDeleted, len(old))
	}
	if again, err := export.Prune(ctx, db, export.Retention{Latest: 2}, clock); err != nil || again.ExportsDeleted != 0 || again.PartsDeleted != 0 {
		t.Fatalf("pruning again: %+v %v", again, err)
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}
