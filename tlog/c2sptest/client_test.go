package c2sptest_test

// The client half of this file uses only the standard library and
// golang.org/x/mod/sumdb/{note,tlog}, following the C2SP specifications
// (signed-note, tlog-checkpoint, tlog-tiles); the server half, newServer,
// is the only code that touches the arena's packages.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	arenatlog "github.com/forecast-arena/arena/tlog"
)

// server is a running arena log: append adds entries, publish makes the
// checkpoint that covers them.
type server struct {
	url     string
	append  func(n int)
	publish func()
}

func newServer(t *testing.T, db *store.DB) server {
	t.Helper()
	ctx := context.Background()
	key, err := arenatlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	l := &arenatlog.Log{Store: db, Key: key}
	pub, err := arenatlog.NewPublisher(l, "arena.test/log", &arenatlog.MemCheckpoints{})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /log/", http.StripPrefix("/log", pub.Handler()))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	next := 0
	return server{
		url: srv.URL + "/log/",
		append: func(n int) {
			for range n {
				// Entries of varied lengths, as the arena's are.
				if err := l.Append(ctx, arenatlog.KindScore, map[string]any{"i": next, "pad": strings.Repeat("x", next%97)}); err != nil {
					t.Fatal(err)
				}
				next++
			}
		},
		publish: func() {
			if _, err := pub.Publish(ctx); err != nil {
				t.Fatal(err)
			}
		},
	}
}

// TestIndependentClient: a client that knows only the log's URL prefix
// and its verifier key checks the checkpoint's signature, recomputes the
// root hash from the hash tiles, proves entries of the entry bundles
// included, and proves a later checkpoint consistent with an earlier one.
func TestIndependentClient(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		srv := newServer(t, db)
		srv.append(300) // one full tile and a partial one
		srv.publish()

		// The verifier key is distributed out of band; here it is read
		// once from the log, as an operator would copy it.
		vkey := strings.TrimSpace(string(get(t, srv.url+"vkey", http.StatusOK)))
		c := client{t: t, prefix: srv.url, origin: "arena.test/log", vkey: vkey}

		old := c.checkpoint()
		if old.N != 300 {
			t.Fatalf("first checkpoint has size %d, want 300", old.N)
		}
		c.checkTiles(old)

		srv.append(700 - 300) // two full tiles, a partial one, and a partial level-1 tile
		srv.publish()
		cur := c.checkpoint()
		if cur.N != 700 {
			t.Fatalf("second checkpoint has size %d, want 700", cur.N)
		}
		c.checkTiles(cur)
		c.checkConsistent(old, cur)

		// The checks above can fail: a changed tile, checkpoint or
		// entry is caught.
		c.checkTamperingCaught(cur)
	})
}

// client is the independent C2SP client.
type client struct {
	t      *testing.T
	prefix string // the log's URL prefix, ending in "/"
	origin string
	vkey   string
}

func get(t *testing.T, url string, want int) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != want {
		t.Fatalf("GET %s: %d %s, want %d", url, resp.StatusCode, body, want)
	}
	return body
}

// checkpoint fetches <prefix>/checkpoint and verifies it: a signed note
// with a valid signature by the log's key, whose text is the origin, the
// tree size in decimal and the base64 root hash (tlog-checkpoint).
func (c client) checkpoint() tlog.Tree {
	c.t.Helper()
	resp, err := http.Get(c.prefix + "checkpoint")
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/plain; charset=utf-8" {
		c.t.Errorf("checkpoint Content-Type %q", ct)
	}
	msg, _ := io.ReadAll(resp.Body)
	tree, err := c.open(msg)
	if err != nil {
		c.t.Fatalf("checkpoint %q: %v", msg, err)
	}
	return tree
}

func (c client) open(msg []byte) (tlog.Tree, error) {
	v, err := note.NewVerifier(c.vkey)
	if err != nil {
		return tlog.Tree{}, err
	}
	if v.Name() != c.origin {
		return tlog.Tree{}, fmt.Errorf("log key named %q, want the origin %q", v.Name(), c.origin)
	}
	n, err := note.Open(msg, note.VerifierList(v))
	if err != nil {
		return tlog.Tree{}, err
	}
	lines := strings.Split(n.Text, "\n")
	if len(lines) != 4 || lines[3] != "" || lines[0] != c.origin {
		return tlog.Tree{}, fmt.Errorf("checkpoint text %q is not origin, size, root hash", n.Text)
	}
	size, err := strconv.ParseInt(lines[1], 10, 64)
	if err != nil || size < 0 || strconv.FormatInt(size, 10) != lines[1] {
		return tlog.Tree{}, fmt.Errorf("tree size %q", lines[1])
	}
	root, err := base64.StdEncoding.DecodeString(lines[2])
	if err != nil || len(root) != tlog.HashSize {
		return tlog.Tree{}, fmt.Errorf("root hash %q", lines[2])
	}
	return tlog.Tree{N: size, Hash: tlog.Hash(root)}, nil
}

// path is a tile's URL path per tlog-tiles: tile/<L>/<N>[.p/<W>], or
// tile/entries/<N>[.p/<W>] for level -1, N written in 3-digit groups of
// which all but the last begin with "x".
func path(t tlog.Tile) string {
	n := fmt.Sprintf("%03d", t.N%1000)
	for x := t.N / 1000; x > 0; x /= 1000 {
		n = fmt.Sprintf("x%03d/%s", x%1000, n)
	}
	level := strconv.Itoa(t.L)
	if t.L == -1 {
		level = "entries"
	}
	p := "tile/" + level + "/" + n
	if t.W < 256 {
		p += ".p/" + strconv.Itoa(t.W)
	}
	return p
}

// tiles fetches every hash tile of the tree (full 256-hash tiles and the
// partial ones the tree's size makes) and returns them by coordinates.
func (c client) tiles(tree tlog.Tree) map[tlog.Tile][]byte {
	c.t.Helper()
	out := map[tlog.Tile][]byte{}
	for _, t := range tlog.NewTiles(8, 0, tree.N) {
		resp, err := http.Get(c.prefix + path(t))
		if err != nil {
			c.t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || len(data) != t.W*tlog.HashSize {
			c.t.Fatalf("%s: %d, %d bytes, want %d", path(t), resp.StatusCode, len(data), t.W*tlog.HashSize)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/octet-stream" {
			c.t.Errorf("%s: Content-Type %q", path(t), ct)
		}
		// Full tiles never change and are cached long; partial ones not.
		if cc := resp.Header.Get("Cache-Control"); (t.W == 256) != strings.Contains(cc, "immutable") {
			c.t.Errorf("%s: Cache-Control %q", path(t), cc)
		}
		out[t] = data
	}
	return out
}

// reader reads stored hashes out of a tree's tiles: the hash with a
// storage index lies in the tile TileForIndex names, or in the wider
// tile of the same coordinates the tree has.
func reader(tree tlog.Tree, tiles map[tlog.Tile][]byte) tlog.HashReader {
	return tlog.HashReaderFunc(func(indexes []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(indexes))
		for i, x := range indexes {
			want := tlog.TileForIndex(8, x)
			found := false
			for t, data := range tiles {
				if t.L == want.L && t.N == want.N && t.W >= want.W {
					h, err := tlog.HashFromTile(t, data, x)
					if err != nil {
						return nil, err
					}
					out[i], found = h, true
					break
				}
			}
			if !found {
				return nil, fmt.Errorf("no tile of tree %d holds hash %d", tree.N, x)
			}
		}
		return out, nil
	})
}

// bundle fetches an entry bundle and splits it into its entries, each
// prefixed by its length as a big-endian uint16.
func (c client) bundle(t tlog.Tile) [][]byte {
	c.t.Helper()
	t.L = -1
	data := get(c.t, c.prefix+path(t), http.StatusOK)
	var entries [][]byte
	for len(data) > 0 {
		if len(data) < 2 || len(data) < 2+int(binary.BigEndian.Uint16(data)) {
			c.t.Fatalf("%s: truncated entry after %d entries", path(t), len(entries))
		}
		n := int(binary.BigEndian.Uint16(data))
		entries = append(entries, data[2:2+n])
		data = data[2+n:]
	}
	if len(entries) != t.W {
		c.t.Fatalf("%s: %d entries, want %d", path(t), len(entries), t.W)
	}
	return entries
}

// verify recomputes the checkpoint's root hash from the tree's tiles and
// authenticates each full tile by its hash in the tile above: then every
// hash the tiles hold is the tree's.
func verify(tree tlog.Tree, tiles map[tlog.Tile][]byte) error {
	r := reader(tree, tiles)
	root, err := tlog.TreeHash(tree.N, r)
	if err != nil {
		return err
	}
	if root != tree.Hash {
		return fmt.Errorf("tiles of tree %d hash to %v, the checkpoint says %v", tree.N, root, tree.Hash)
	}
	for t, data := range tiles {
		if t.W < 256 {
			continue // partial tiles' hashes all go into the root above
		}
		// The tile's hash joins the hashes of its two halves.
		left, err := tlog.HashFromTile(t, data, tlog.StoredHashIndex(8*t.L+7, 2*t.N))
		if err != nil {
			return err
		}
		right, err := tlog.HashFromTile(t, data, tlog.StoredHashIndex(8*t.L+7, 2*t.N+1))
		if err != nil {
			return err
		}
		h := tlog.NodeHash(left, right)
		above, err := r.ReadHashes([]int64{tlog.StoredHashIndex(8*(t.L+1), t.N)})
		if err != nil {
			return err
		}
		if h != above[0] {
			return fmt.Errorf("%s does not hash to its entry in the tile above", path(t))
		}
	}
	return nil
}

// checkTiles verifies the tree's tiles, checks that every entry of every
// bundle hashes to its leaf in the level-0 tiles, and proves a sample of
// entries included in the tree.
func (c client) checkTiles(tree tlog.Tree) {
	c.t.Helper()
	tiles := c.tiles(tree)
	if err := verify(tree, tiles); err != nil {
		c.t.Fatal(err)
	}
	r := reader(tree, tiles)
	for t, data := range tiles {
		if t.L != 0 {
			continue
		}
		for i, e := range c.bundle(t) {
			index := t.N*256 + int64(i)
			leaf := tlog.RecordHash(e)
			if !bytes.Equal(leaf[:], data[i*tlog.HashSize:(i+1)*tlog.HashSize]) {
				c.t.Fatalf("entry %d does not hash to its leaf in %s", index, path(t))
			}
			if index%37 != 0 && index != tree.N-1 {
				continue // a sample, and the last entry
			}
			p, err := tlog.ProveRecord(tree.N, index, r)
			if err != nil {
				c.t.Fatal(err)
			}
			if err := tlog.CheckRecord(p, tree.N, tree.Hash, index, leaf); err != nil {
				c.t.Fatalf("entry %d not proved in tree %d: %v", index, tree.N, err)
			}
		}
	}
}

// checkConsistent proves the later tree an extension of the earlier one
// (RFC 6962 consistency proof made from the later tree's tiles).
func (c client) checkConsistent(old, cur tlog.Tree) {
	c.t.Helper()
	r := reader(cur, c.tiles(cur))
	p, err := tlog.ProveTree(cur.N, old.N, r)
	if err != nil {
		c.t.Fatal(err)
	}
	if err := tlog.CheckTree(p, cur.N, cur.Hash, old.N, old.Hash); err != nil {
		c.t.Fatalf("tree %d not proved consistent with tree %d: %v", cur.N, old.N, err)
	}
	if h, err := tlog.TreeHash(old.N, r); err != nil || h != old.Hash {
		c.t.Fatalf("the later tiles give tree %d the root %v (%v), the earlier checkpoint says %v", old.N, h, err, old.Hash)
	}
}

// checkTamperingCaught: each check above fails on altered data.
func (c client) checkTamperingCaught(tree tlog.Tree) {
	c.t.Helper()
	msg := get(c.t, c.prefix+"checkpoint", http.StatusOK)
	bad := bytes.Replace(msg, []byte(strconv.FormatInt(tree.N, 10)), []byte(strconv.FormatInt(tree.N+1, 10)), 1)
	if _, err := c.open(bad); err == nil {
		c.t.Error("a checkpoint with a changed size verified")
	}
	if _, err := (client{prefix: c.prefix, origin: "other.test/log", vkey: c.vkey}).open(msg); err == nil {
		c.t.Error("a checkpoint verified for another origin")
	}
	tiles := c.tiles(tree)
	for t, data := range tiles {
		if t.L == 0 && t.W == 256 {
			data[5] ^= 1
			break
		}
	}
	if verify(tree, tiles) == nil {
		c.t.Error("a changed full tile verified")
	}
	tiles = c.tiles(tree)
	for t, data := range tiles {
		if t.L == 0 && t.W < 256 {
			data[len(data)-1] ^= 1
		}
	}
	if verify(tree, tiles) == nil {
		c.t.Error("a changed partial tile verified")
	}
	var t0 tlog.Tile
	for t := range tiles {
		if t.L == 0 && t.N == 0 {
			t0 = t
		}
	}
	e := c.bundle(t0)[3]
	e[len(e)-2] ^= 1
	p, _ := tlog.ProveRecord(tree.N, 3, reader(tree, c.tiles(tree)))
	if tlog.CheckRecord(p, tree.N, tree.Hash, 3, tlog.RecordHash(e)) == nil {
		c.t.Error("a changed entry was proved included")
	}
}
