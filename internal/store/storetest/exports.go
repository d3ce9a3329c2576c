package storetest

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"testing"

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
	hs, err := db.ExportPartHashes(ctx)
	slices.Sort(hs)
	if err != nil || !slices.Equal(hs, []string{"h1", "h2"}) {
		t.Fatalf("part hashes %v %v", hs, err)
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
}
