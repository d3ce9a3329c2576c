package tlog_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

const origin = "arena.test/log"

func newPublisher(t *testing.T, db *store.DB) (*tlog.Publisher, *tlog.MemCheckpoints) {
	t.Helper()
	cps := &tlog.MemCheckpoints{}
	p, err := tlog.NewPublisher(newLog(t, db), origin, cps)
	if err != nil {
		t.Fatal(err)
	}
	return p, cps
}

func appendN(t *testing.T, l *tlog.Log, n int) {
	t.Helper()
	for i := range n {
		if err := l.Append(context.Background(), tlog.KindScore, map[string]int{"i": i}); err != nil {
			t.Fatal(err)
		}
	}
}

// latest opens the saved checkpoint.
func latest(t *testing.T, p *tlog.Publisher) tlog.Checkpoint {
	t.Helper()
	n, err := p.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := tlog.OpenCheckpoint(n, p.VerifierKey())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The publisher signs a checkpoint per new size, with the root of the
// log's entries, and never signs one that contradicts the published one.
func TestPublish(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p, cps := newPublisher(t, db)
		if _, err := p.Checkpoint(ctx); arena.ErrorKind(err) != arena.ENOTFOUND {
			t.Fatalf("checkpoint before the first: %v", err)
		}
		c, err := p.Publish(ctx)
		empty := sha256.Sum256(nil)
		if err != nil || c.Size != 0 || !bytes.Equal(c.Hash, empty[:]) || latest(t, p).Size != 0 {
			t.Fatalf("empty log: %+v, %v", c, err)
		}
		appendN(t, p.Log, 5)
		c, err = p.Publish(ctx)
		if err != nil || c.Size != 5 {
			t.Fatalf("published %+v, %v", c, err)
		}
		root, _ := p.Log.RootAt(ctx, 5)
		if got := latest(t, p); got.Size != 5 || tlog.Equal(got.Hash, nil) || !tlog.Equal(got.Hash, root) {
			t.Fatalf("checkpoint %+v, root of the log's 5 entries %x", got, root)
		}
		before, _ := p.Checkpoint(ctx)
		if c, err := p.Publish(ctx); err != nil || c.Size != 5 {
			t.Fatalf("publish without appends: %+v, %v", c, err)
		}
		if after, _ := p.Checkpoint(ctx); !bytes.Equal(before, after) {
			t.Fatal("an unchanged log got a new checkpoint")
		}

		// Published checkpoints the log's tree contradicts: each refused
		// with a conflict, and the published one left as it was.
		signer, _ := tlog.NoteSigner(origin, p.Log.Key)
		_, other, _ := ed25519.GenerateKey(nil)
		otherSigner, _ := tlog.NoteSigner(origin, other)
		otherOrigin, _ := tlog.NoteSigner("other.test/log", p.Log.Key)
		bad := sha256.Sum256([]byte("fork"))
		for name, tc := range map[string]struct {
			c      tlog.Checkpoint
			signer note.Signer
		}{
			"another root at the log's size (a fork)": {tlog.Checkpoint{Origin: origin, Size: 5, Hash: bad[:]}, signer},
			"another root at a smaller size":          {tlog.Checkpoint{Origin: origin, Size: 3, Hash: bad[:]}, signer},
			"a larger size than the log has":          {tlog.Checkpoint{Origin: origin, Size: 9, Hash: bad[:]}, signer},
			"signed by another key":                   {tlog.Checkpoint{Origin: origin, Size: 5, Hash: c.Hash}, otherSigner},
			"of another origin":                       {tlog.Checkpoint{Origin: "other.test/log", Size: 5, Hash: c.Hash}, otherOrigin},
		} {
			forged, err := note.Sign(&note.Note{Text: string(tc.c.Text())}, tc.signer)
			if err != nil {
				t.Fatal(err)
			}
			*cps = tlog.MemCheckpoints{}
			if err := cps.SaveCheckpoint(ctx, arena.SignedCheckpoint{Size: tc.c.Size, Text: tlog.NoteText(forged), Note: forged}); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Publish(ctx); arena.ErrorKind(err) != arena.ECONFLICT {
				t.Errorf("%s: published over it: %v", name, err)
			}
			if now, _ := p.Checkpoint(ctx); !bytes.Equal(now, forged) {
				t.Errorf("%s: the saved checkpoint changed", name)
			}
		}
	})
}

// A checkpoint store refuses an older checkpoint and another of the same
// size; the publisher that lost such a race reports no error.
func TestMemCheckpoints(t *testing.T) {
	ctx := context.Background()
	var m tlog.MemCheckpoints
	a := []byte("o\n2\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n\n— o sig\n")
	if err := m.SaveCheckpoint(ctx, signed(2, a)); err != nil {
		t.Fatal(err)
	}
	if err := m.SaveCheckpoint(ctx, signed(2, append(bytes.Clone(a), "— w cosig\n"...))); err != nil {
		t.Fatalf("the same checkpoint with a cosignature more: %v", err)
	}
	if err := m.SaveCheckpoint(ctx, signed(1, a)); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("older checkpoint: %v", err)
	}
	if err := m.SaveCheckpoint(ctx, signed(2, bytes.Replace(a, []byte("AAAA"), []byte("BAAA"), 1))); arena.ErrorKind(err) != arena.ECONFLICT {
		t.Fatalf("another root at the same size: %v", err)
	}

	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p, _ := newPublisher(t, db)
		ahead := &aheadStore{MemCheckpoints: &tlog.MemCheckpoints{}}
		p.Store = ahead
		appendN(t, p.Log, 2)
		if _, err := p.Publish(ctx); err != nil {
			t.Fatalf("losing the race to another server: %v", err)
		}
	})
}

// Another server appends and publishes while this one starts publishing:
// the log does not look shorter than the checkpoint this one reads.
func TestPublishWhileAnotherServerPublishes(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p, cps := newPublisher(t, db)
		other, err := tlog.NewPublisher(&tlog.Log{Store: db, Key: p.Log.Key}, origin, cps)
		if err != nil {
			t.Fatal(err)
		}
		p.Store = &interleaved{MemCheckpoints: cps, before: func() {
			appendN(t, other.Log, 3)
			if _, err := other.Publish(ctx); err != nil {
				t.Fatal(err)
			}
		}}
		appendN(t, p.Log, 2)
		if _, err := p.Publish(ctx); err != nil {
			t.Fatalf("publishing while another server published: %v", err)
		}
		if c := latest(t, p); c.Size != 5 {
			t.Fatalf("latest checkpoint %+v", c)
		}
	})
}

// interleaved runs before once, when the checkpoint is first read.
type interleaved struct {
	*tlog.MemCheckpoints
	before func()
}

func (s *interleaved) LatestCheckpoint(ctx context.Context) ([]byte, error) {
	if s.before != nil {
		s.before()
		s.before = nil
	}
	return s.MemCheckpoints.LatestCheckpoint(ctx)
}

// aheadStore is a store another server always publishes to first.
type aheadStore struct{ *tlog.MemCheckpoints }

func (aheadStore) SaveCheckpoint(context.Context, arena.SignedCheckpoint) error {
	return arena.Errorf(arena.ECONFLICT, "a larger checkpoint is saved")
}

// Run publishes a checkpoint covering an append within the interval.
func TestPublishRunInterval(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		p, _ := newPublisher(t, db)
		p.Interval = time.Second
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()
		defer func() { cancel(); <-done }()
		for i := range 3 {
			appendN(t, p.Log, 1)
			start := time.Now()
			for {
				if n, _ := p.Checkpoint(ctx); n != nil && latest(t, p).Size == uint64(i+1) {
					break
				}
				if time.Since(start) > p.Interval {
					t.Fatalf("no checkpoint of size %d %v after the append", i+1, p.Interval)
				}
				time.Sleep(10 * time.Millisecond)
			}
		}
	})
}

// The C2SP endpoints: statuses, content types, cache headers, sealed
// entries, compression.
func TestHandler(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p, _ := newPublisher(t, db)
		p.Sealed = func(_ context.Context, es []arena.LogEntry) (bool, error) {
			for _, e := range es {
				if e.Kind == tlog.KindCommit {
					return true, nil
				}
			}
			return false, nil
		}
		srv := httptest.NewServer(http.StripPrefix("/log", p.Handler()))
		defer srv.Close()
		get := func(path string, hdr ...string) (*http.Response, []byte) {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/log/"+path, nil)
			for i := 0; i < len(hdr); i += 2 {
				req.Header.Set(hdr[i], hdr[i+1])
			}
			resp, err := http.DefaultTransport.RoundTrip(req) // no transparent gzip
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			b, _ := io.ReadAll(resp.Body)
			return resp, b
		}
		if resp, _ := get("checkpoint"); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("checkpoint before the first: %d", resp.StatusCode)
		}
		appendN(t, p.Log, 300)
		if err := p.Log.Append(ctx, tlog.KindCommit, map[string]string{"secret": "prediction"}); err != nil {
			t.Fatal(err)
		}
		if _, err := p.Publish(ctx); err != nil {
			t.Fatal(err)
		}
		resp, body := get("vkey")
		if resp.StatusCode != 200 || string(body) != p.VerifierKey()+"\n" {
			t.Fatalf("vkey: %d %q", resp.StatusCode, body)
		}
		resp, body = get("checkpoint")
		if resp.StatusCode != 200 || !strings.HasPrefix(string(body), origin+"\n301\n") || resp.Header.Get("Cache-Control") != "public, max-age=2" {
			t.Fatalf("checkpoint: %d %q %v", resp.StatusCode, body, resp.Header)
		}
		for _, tc := range []struct {
			path, cache string
			status      int
			size        int
		}{
			{"tile/0/000", "immutable", 200, 256 * 32},
			{"tile/0/001.p/45", "max-age=60", 200, 45 * 32},
			{"tile/0/001.p/44", "max-age=60", 200, 44 * 32}, // of an earlier size
			{"tile/1/000.p/1", "max-age=60", 200, 32},
			{"tile/entries/000", "immutable", 200, -1},
			{"tile/0/001.p/46", "", 404, -1},                 // beyond the log
			{"tile/0/001", "", 404, -1},                      // not full yet
			{"tile/1/000", "", 404, -1},                      // not full yet
			{"tile/2/000.p/1", "", 404, -1},                  // beyond the log
			{"tile/entries/001.p/45", "", 404, -1},           // holds a sealed entry
			{"tile/entries/001.p/44", "max-age=60", 200, -1}, // does not
			{"tile/0/01", "", 400, -1},
			{"tile/8/0/000", "", 400, -1},
			{"tile/0/000.p/256", "", 400, -1},
		} {
			resp, body := get(tc.path)
			if resp.StatusCode != tc.status || !strings.Contains(resp.Header.Get("Cache-Control"), tc.cache) || tc.size >= 0 && len(body) != tc.size {
				t.Errorf("%s: %d, Cache-Control %q, %d bytes; want %d, %q, %d", tc.path, resp.StatusCode, resp.Header.Get("Cache-Control"), len(body), tc.status, tc.cache, tc.size)
			}
			if resp.StatusCode == 200 && resp.Header.Get("Content-Type") != "application/octet-stream" {
				t.Errorf("%s: Content-Type %q", tc.path, resp.Header.Get("Content-Type"))
			}
		}
		// The hash tile of the sealed entry is served: hashes hide nothing.
		if resp, _ := get("tile/0/001.p/45"); resp.StatusCode != 200 {
			t.Fatal("the hash tile of a sealed entry was refused")
		}
		_, plain := get("tile/entries/000")
		resp, zipped := get("tile/entries/000", "Accept-Encoding", "gzip")
		zr, err := gzip.NewReader(bytes.NewReader(zipped))
		if err != nil || resp.Header.Get("Content-Encoding") != "gzip" {
			t.Fatalf("gzip bundle: %v %v", err, resp.Header)
		}
		unzipped, _ := io.ReadAll(zr)
		if !bytes.Equal(unzipped, plain) || len(zipped) >= len(plain) {
			t.Fatalf("gzip bundle of %d bytes, %d unzipped, plain %d", len(zipped), len(unzipped), len(plain))
		}

		// A leaf too large for a bundle's uint16 length: an error, not a
		// bundle clients would misread.
		appendN(t, p.Log, 512-301) // the big leaf is entry 512
		if err := p.Log.Append(ctx, tlog.KindScore, strings.Repeat("x", 70000)); err != nil {
			t.Fatal(err)
		}
		if resp, body := get("tile/entries/002.p/1"); resp.StatusCode != 500 || resp.Header.Get("Cache-Control") != "no-store" {
			t.Fatalf("bundle with a 70 kB leaf: %d %q", resp.StatusCode, body)
		}
		if resp, _ := get("tile/0/002.p/1"); resp.StatusCode != 200 {
			t.Fatalf("hash tile of a 70 kB leaf: %d", resp.StatusCode)
		}
	})
}

// signed is note as a store saves it: its size and signed text beside it.
func signed(size uint64, note []byte) arena.SignedCheckpoint {
	return arena.SignedCheckpoint{Size: size, Text: tlog.NoteText(note), Note: note}
}
