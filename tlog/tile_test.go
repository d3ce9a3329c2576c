package tlog

import (
	"strconv"
	"strings"
	"testing"

	sumdb "golang.org/x/mod/sumdb/tlog"
)

// Tile paths parse only in the canonical form of tlog-tiles.
func TestParseTilePath(t *testing.T) {
	for path, want := range map[string]sumdb.Tile{
		"tile/0/000":                 {H: 8, L: 0, N: 0, W: 256},
		"tile/0/001.p/17":            {H: 8, L: 0, N: 1, W: 17},
		"tile/2/x001/x234/067.p/255": {H: 8, L: 2, N: 1234067, W: 255},
		"tile/63/000.p/1":            {H: 8, L: 63, N: 0, W: 1},
		"tile/entries/x001/000":      {H: 8, L: -1, N: 1000, W: 256},
		"tile/entries/042.p/3":       {H: 8, L: -1, N: 42, W: 3},
	} {
		got, err := parseTilePath(path)
		if err != nil || got != want {
			t.Errorf("%s: %+v, %v; want %+v", path, got, err, want)
		}
		if p := tilePath(got); p != path {
			t.Errorf("%+v formats as %s, want %s", got, p, path)
		}
	}
	for _, bad := range []string{
		"", "tile", "tile/0", "tile/0/", "tile/00/000", "tile/-1/000", "tile/64/000", "tile/+1/000",
		"tile/data/000", "tile/8/0/000", "tile/0/0", "tile/0/1000", "tile/0/x000/001", "tile/0/001/002",
		"tile/0/000.p/0", "tile/0/000.p/256", "tile/0/000.p/01", "tile/0/000.p/", "tile/entries/000.p/256",
		"tile/0/x001", "tiles/0/000", "/tile/0/000", "tile/0/000/", "tile/entries", "tile/0/x999/x999/x999/x999/x999/x999/x999/999",
	} {
		if got, err := parseTilePath(bad); err == nil {
			t.Errorf("%q parsed as %+v", bad, got)
		}
	}
}

// Fuzzed tile paths: parsing never panics, and a path that parses is the
// canonical path of its tile.
func FuzzTilePath(f *testing.F) {
	for _, s := range []string{"tile/0/000", "tile/1/x001/234.p/5", "tile/entries/000.p/255", "tile/63/x999/999", "tile/0/000.p/256"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		tile, err := parseTilePath(path)
		if err != nil {
			return
		}
		if tile.H != 8 || tile.L < -1 || tile.L > 63 || tile.N < 0 || tile.W < 1 || tile.W > 256 || tilePath(tile) != path {
			t.Fatalf("%q parsed as %+v (%s)", path, tile, tilePath(tile))
		}
	})
}

// tilePath is the C2SP path of a tile of height 8.
func tilePath(t sumdb.Tile) string {
	p := strings.TrimPrefix(t.Path(), "tile/"+strconv.Itoa(tileHeight)+"/")
	if t.L == -1 {
		return "tile/entries" + strings.TrimPrefix(p, "data")
	}
	return "tile/" + p
}
