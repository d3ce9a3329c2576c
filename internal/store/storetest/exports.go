package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// Published exports: a part stored twice is stored once, with its first
// bytes; a manifest of a size is kept as first stored, and of 8 servers
// storing one size at once exactly one wins; the latest is the largest
// size's; a size or part never stored is ENOTFOUND.
func testExportStore(t *testing.T, db *store.DB) {
	ctx := context.Background()
	if _, _, err := db.ExportManifest(ctx, 0, true); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("latest export of an empty store: %v", err)
	}
	if _, err := db.ExportPart(ctx, "ab"); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("a part never stored: %v", err)
	}
	bin := []byte{0, 1, 2, 0xff, '\n'} // parts are bytes, not text
	for range 2 {
		if err := db.SaveExportPart(ctx, "h1", bin); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SaveExportPart(ctx, "h2", []byte("second\n")); err != nil {
		t.Fatal(err)
	}
	if b, err := db.ExportPart(ctx, "h1"); err != nil || !bytes.Equal(b, bin) {
		t.Fatalf("part h1: %q %v", b, err)
	}
	// Every part is stamped when stored, again when stored again.
	at := db.Now()
	if hs, err := db.ExportPartsBefore(ctx, at.Add(time.Second)); err != nil || len(hs) != 2 {
		t.Fatalf("parts before %s: %v %v", at, hs, err)
	}
	db.Now = func() time.Time { return at.Add(time.Hour) }
	if err := db.SaveExportPart(ctx, "h1", bin); err != nil {
		t.Fatal(err)
	}
	if hs, err := db.ExportPartsBefore(ctx, at.Add(time.Minute)); err != nil || !slices.Equal(hs, []string{"h2"}) {
		t.Fatalf("parts before %s, h1 stored again after: %v %v", at, hs, err)
	}
	if b, err := db.ExportPart(ctx, "h1"); err != nil || !bytes.Equal(b, bin) {
		t.Fatalf("part h1 stored again: %q %v", b, err)
	}
	wins := race(t, 8, func(i int) (bool, error) {
		return db.SaveExportManifest(ctx, 10, fmt.Appendf(nil, `{"server":%d}`, i))
	})
	if wins != 1 {
		t.Fatalf("%d of 8 servers stored the manifest of size 10", wins)
	}
	_, first, err := db.ExportManifest(ctx, 10, false)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := db.SaveExportManifest(ctx, 10, []byte(`{"later":true}`)); ok || err != nil {
		t.Fatalf("a second manifest of size 10: stored %v, %v", ok, err)
	}
	if _, m, _ := db.ExportManifest(ctx, 10, false); !bytes.Equal(m, first) {
		t.Fatalf("the manifest of size 10 changed to %s", m)
	}
	for _, size := range []uint64{30, 20} {
		if ok, err := db.SaveExportManifest(ctx, size, fmt.Appendf(nil, `{"size":%d}`, size)); !ok || err != nil {
			t.Fatalf("manifest %d: %v %v", size, ok, err)
		}
	}
	if size, m, err := db.ExportManifest(ctx, 0, true); err != nil || size != 30 || string(m) != `{"size":30}` {
		t.Fatalf("latest: %d %s %v", size, m, err)
	}
	if size, m, err := db.ExportManifest(ctx, 20, false); err != nil || size != 20 || string(m) != `{"size":20}` {
		t.Fatalf("size 20: %d %s %v", size, m, err)
	}
	for _, size := range []uint64{11, 1 << 63} {
		if _, _, err := db.ExportManifest(ctx, size, false); arena.ErrorKind(err) != arena.ENOTFOUND {
			t.Fatalf("size %d, never stored: %v", size, err)
		}
	}
	// Listed by size, with when each was stored; deleted by size.
	stored, err := db.ExportManifests(ctx)
	if err != nil || len(stored) != 3 || stored[0].Size != 10 || stored[2].Size != 30 || stored[0].CreatedAt.IsZero() {
		t.Fatalf("exports stored: %+v %v", stored, err)
	}
	if err := db.DeleteExportManifests(ctx, []uint64{10, 30, 99}); err != nil {
		t.Fatal(err)
	}
	if stored, _ := db.ExportManifests(ctx); len(stored) != 1 || stored[0].Size != 20 {
		t.Fatalf("after deleting 10 and 30: %+v", stored)
	}
	if err := db.DeleteExportParts(ctx, []string{"h2", "h9"}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExportPart(ctx, "h2"); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("a deleted part: %v", err)
	}
	if _, err := db.ExportPart(ctx, "h1"); err != nil {
		t.Fatalf("a part kept: %v", err)
	}
}
