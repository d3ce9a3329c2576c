package storetest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"fmt"
	"testing"

	"golang.org/x/mod/sumdb/note"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/tlog"
)

// The latest checkpoint starts empty; a larger one replaces it, one of its
// size replaces it only with the same text (more cosignatures); a smaller
// one, or another text of its size (a fork), is refused with ECONFLICT and
// changes nothing; 8 servers saving at once leave the largest.
func testLogCheckpoints(t *testing.T, db *store.DB) {
	ctx := context.Background()
	_, key, _ := ed25519.GenerateKey(nil)
	signer, err := tlog.NoteSigner("arena.test/log", key)
	if err != nil {
		t.Fatal(err)
	}
	sign := func(size uint64, root string) []byte {
		h := sha256.Sum256([]byte(root))
		n, err := note.Sign(&note.Note{Text: string(tlog.Checkpoint{Origin: "arena.test/log", Size: size, Hash: h[:]}.Text())}, signer)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	latest := func() []byte {
		t.Helper()
		n, err := db.LatestCheckpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := latest(); n != nil {
		t.Fatalf("latest checkpoint of an empty store: %q", n)
	}
	c5 := sign(5, "a")
	if err := db.SaveCheckpoint(ctx, 5, c5); err != nil {
		t.Fatal(err)
	}
	if n := latest(); !bytes.Equal(n, c5) {
		t.Fatalf("latest %q, want %q", n, c5)
	}
	// The same checkpoint with a cosignature line more replaces it.
	cosigned := append(bytes.Clone(c5), "— witness.test/w AAAAAAAA\n"...)
	if err := db.SaveCheckpoint(ctx, 5, cosigned); err != nil {
		t.Fatal(err)
	}
	if n := latest(); !bytes.Equal(n, cosigned) {
		t.Fatalf("latest %q after the cosigned one was saved", n)
	}
	for name, c := range map[string]struct {
		size uint64
		note []byte
	}{
		"a smaller checkpoint": {4, sign(4, "a")},
		"a fork of its size":   {5, sign(5, "b")},
	} {
		if err := db.SaveCheckpoint(ctx, c.size, c.note); arena.ErrorKind(err) != arena.ECONFLICT {
			t.Errorf("%s: %v, want ECONFLICT", name, err)
		}
		if n := latest(); !bytes.Equal(n, cosigned) {
			t.Fatalf("%s changed the latest checkpoint to %q", name, n)
		}
	}
	notes := map[uint64][]byte{}
	for i := range uint64(8) {
		notes[10+i] = sign(10+i, fmt.Sprint(i))
	}
	race(t, 8, func(i int) (bool, error) {
		err := db.SaveCheckpoint(ctx, 10+uint64(i), notes[10+uint64(i)])
		if arena.ErrorKind(err) == arena.ECONFLICT {
			return false, nil
		}
		return err == nil, err
	})
	if n := latest(); !bytes.Equal(n, notes[17]) {
		t.Fatalf("after 8 concurrent saves the latest is %q, want the largest", n)
	}
}
