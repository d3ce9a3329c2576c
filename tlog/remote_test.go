package tlog_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
	"github.com/forecast-arena/arena/witness"
)

// A remote log's checkpoint is fetched and a later checkpoint proved
// consistent with an earlier one from its hash tiles; a rollback, a fork
// (at a smaller size or at the same one), a tile changed in transit and a
// tile the server does not serve all fail.
func TestRemoteProveConsistent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		p, _ := newPublisher(t, db)
		publish := func() tlog.Checkpoint {
			t.Helper()
			c, err := p.Publish(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		c0 := publish()
		appendN(t, p.Log, 300) // a full tile and a partial one
		c300 := publish()
		appendN(t, p.Log, 400) // a partial level-1 tile too
		c700 := publish()

		// The server's tiles, with a hook to tamper with them.
		var tamper func(w http.ResponseWriter, r *http.Request) bool
		srv := httptest.NewServer(http.StripPrefix("/log", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if tamper != nil && tamper(w, r) {
				return
			}
			p.Handler().ServeHTTP(w, r)
		})))
		defer srv.Close()
		remote := &tlog.Remote{URL: srv.URL + "/log/"}

		n, err := remote.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if c, err := tlog.OpenCheckpoint(n, p.VerifierKey()); err != nil || c.Size != 700 {
			t.Fatalf("fetched checkpoint %+v: %v", c, err)
		}
		for _, c := range [][2]tlog.Checkpoint{{c300, c700}, {c0, c700}, {c700, c700}, {c0, c300}} {
			if err := remote.ProveConsistent(ctx, c[0], c[1]); err != nil {
				t.Fatalf("%d → %d: %v", c[0].Size, c[1].Size, err)
			}
		}

		// Another history under the same key and origin.
		other := &tlog.Log{Store: storetest.Open(t, "sqlite"), Key: p.Log.Key}
		if err := other.Append(ctx, tlog.KindScore, "another history"); err != nil {
			t.Fatal(err)
		}
		appendN(t, other, 299)
		forkRoot, err := other.RootAt(ctx, 300)
		if err != nil {
			t.Fatal(err)
		}
		fork := tlog.Checkpoint{Origin: origin, Size: 300, Hash: forkRoot}
		for name, c := range map[string][2]tlog.Checkpoint{
			"rollback":                {c700, c300},
			"fork at a smaller size":  {fork, c700},
			"fork at the same size":   {fork, c300},
			"size 0 with a root hash": {{Origin: origin, Hash: forkRoot}, c300},
		} {
			if err := remote.ProveConsistent(ctx, c[0], c[1]); !errors.Is(err, tlog.ErrInconsistent) {
				t.Errorf("%s: %v, want ErrInconsistent", name, err)
			} else {
				t.Logf("%s: %v", name, err)
			}
		}

		for name, hook := range map[string]func(w http.ResponseWriter, r *http.Request) bool{
			"a tile changed in transit": func(w http.ResponseWriter, r *http.Request) bool {
				if !strings.HasPrefix(r.URL.Path, "/tile/0/") {
					return false
				}
				rec := httptest.NewRecorder()
				p.Handler().ServeHTTP(rec, r)
				b := rec.Body.Bytes()
				b[len(b)-1] ^= 1
				w.Write(b)
				return true
			},
			"a tile not served": func(w http.ResponseWriter, r *http.Request) bool {
				if strings.HasPrefix(r.URL.Path, "/tile/1/") {
					http.NotFound(w, r)
					return true
				}
				return false
			},
		} {
			tamper = hook
			if err := remote.ProveConsistent(ctx, c300, c700); err == nil {
				t.Errorf("%s: the proof passed", name)
			} else {
				t.Logf("%s: %v", name, err)
			}
		}
	})
}

// A log verifier key gives back its origin and public key; a witness's
// key, a key whose ID does not match and a malformed one are refused.
func TestParseVerifierKey(t *testing.T) {
	pub, priv, _ := ed25519.GenerateKey(nil)
	vkey, err := tlog.VerifierKey(origin, pub)
	if err != nil {
		t.Fatal(err)
	}
	name, got, err := tlog.ParseVerifierKey(vkey)
	if err != nil || name != origin || !got.Equal(pub) {
		t.Fatalf("ParseVerifierKey(%q) = %q, %x, %v", vkey, name, got, err)
	}
	wkey, err := witness.VerifierKey("witness.test/w", priv.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	for name, bad := range map[string]string{
		"a witness's cosignature key":  wkey,
		"a key ID that does not match": origin + "+00000000+" + strings.SplitN(vkey, "+", 3)[2],
		"no key":                       origin,
	} {
		if _, _, err := tlog.ParseVerifierKey(bad); err == nil {
			t.Errorf("%s: %q accepted", name, bad)
		}
	}
}
