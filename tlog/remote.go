package tlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	sumdb "golang.org/x/mod/sumdb/tlog"

	"github.com/forecast-arena/arena/httpclient"
)

// Remote reads a log another server publishes as C2SP specifies
// (tlog-checkpoint, tlog-tiles), as a verifier does: its checkpoint, and
// the hash tiles that prove one checkpoint's tree a prefix of another's.
type Remote struct {
	URL string // the log's prefix: URL/checkpoint and URL/tile/… are served
	// HTTP is the client; when nil, one whose requests time out when
	// connecting, waiting for headers and waiting for the body stall
	// (httpclient.Default). The caller's context bounds the whole.
	HTTP *http.Client
}

// remoteClient is the client of a Remote without one.
var remoteClient = sync.OnceValue(func() *http.Client { return httpclient.New(httpclient.Default) })

// ErrInconsistent is wrapped by the errors of ProveConsistent that show
// two checkpoints of one log key contradicting each other.
var ErrInconsistent = errors.New("inconsistent checkpoints")

// Checkpoint fetches the log's current checkpoint note, unverified.
func (r *Remote) Checkpoint(ctx context.Context) ([]byte, error) {
	return r.get(ctx, "checkpoint", maxCheckpoint)
}

// ProveConsistent proves that old's tree is a prefix of cur's from the
// log's hash tiles, each tile authenticated by cur's root hash: what a
// verifier holding an earlier checkpoint checks the current one with. A
// smaller cur (a rollback), or a tree that is not an extension of old's
// (a fork), wraps ErrInconsistent; a tile the log does not serve, or one
// its root does not cover, is an error too.
func (r *Remote) ProveConsistent(ctx context.Context, old, cur Checkpoint) error {
	empty := hasher.EmptyRoot()
	switch {
	case old.Size > cur.Size:
		return fmt.Errorf("%w: the current checkpoint covers %d entries, fewer than the %d of the earlier one (a rollback)", ErrInconsistent, cur.Size, old.Size)
	case old.Size == cur.Size && !Equal(old.Hash, cur.Hash):
		return fmt.Errorf("%w: two roots for %d entries (a fork): %x and %x", ErrInconsistent, cur.Size, old.Hash, cur.Hash)
	case old.Size == 0 && !Equal(old.Hash, empty):
		return fmt.Errorf("%w: the earlier checkpoint has 0 entries and a root other than the empty tree's", ErrInconsistent)
	case old.Size == 0 || old.Size == cur.Size:
		return nil
	}
	tree := sumdb.Tree{N: int64(cur.Size), Hash: sumdb.Hash(cur.Hash)}
	hr := sumdb.TileHashReader(tree, &tileReader{ctx: ctx, r: r})
	p, err := sumdb.ProveTree(tree.N, int64(old.Size), hr)
	if err != nil {
		return fmt.Errorf("tlog: consistency proof %d → %d from the tiles of %s: %w", old.Size, cur.Size, r.URL, err)
	}
	if err := sumdb.CheckTree(p, tree.N, tree.Hash, int64(old.Size), sumdb.Hash(old.Hash)); err != nil {
		return fmt.Errorf("%w: the tree of %d entries is not a prefix of the current one of %d (a fork)", ErrInconsistent, old.Size, cur.Size)
	}
	return nil
}

func (r *Remote) get(ctx context.Context, path string, limit int64) ([]byte, error) {
	url := strings.TrimSuffix(r.URL, "/") + "/" + path
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, fmt.Errorf("tlog: %w", err)
	}
	hc := r.HTTP
	if hc == nil {
		hc = remoteClient()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("tlog: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	switch {
	case err != nil:
		return nil, fmt.Errorf("tlog: GET %s: %w", url, err)
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("tlog: GET %s: %s: %s", url, resp.Status, bytes.TrimSpace(body[:min(len(body), 200)]))
	case int64(len(body)) > limit:
		return nil, fmt.Errorf("tlog: GET %s: more than %d bytes", url, limit)
	}
	return body, nil
}

// tileReader reads a remote log's hash tiles for sumdb.TileHashReader,
// which checks each against the tree's root hash.
type tileReader struct {
	ctx context.Context
	r   *Remote
}

func (t *tileReader) Height() int { return tileHeight }

func (t *tileReader) ReadTiles(tiles []sumdb.Tile) ([][]byte, error) {
	out := make([][]byte, len(tiles))
	for i, tile := range tiles {
		// x/mod names the tile tile/8/L/N…; tlog-tiles leaves the height out.
		path := "tile/" + strings.TrimPrefix(tile.Path(), fmt.Sprintf("tile/%d/", tileHeight))
		data, err := t.r.get(t.ctx, path, int64(tile.W*sumdb.HashSize))
		if err != nil {
			return nil, err
		}
		if len(data) != tile.W*sumdb.HashSize {
			return nil, fmt.Errorf("tlog: %s has %d bytes, want %d", path, len(data), tile.W*sumdb.HashSize)
		}
		out[i] = data
	}
	return out, nil
}

func (t *tileReader) SaveTiles([]sumdb.Tile, [][]byte) {}
