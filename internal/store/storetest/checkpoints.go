package storetest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// The latest checkpoint starts empty; a larger one replaces it, one of its
// size replaces it only with the same text (more cosignatures); a smaller
// one, or another text of its size (a fork), is refused with ECONFLICT and
// changes nothing; 8 servers saving at once leave the largest.
func testLogCheckpoints(t *testing.T, db *store.DB) {
	ctx := context.Background()
	// The store neither parses nor checks notes: a checkpoint's text and a
	// signature line of the signed-note shape are enough.
	sign := func(size uint64, root string) arena.SignedCheckpoint {
		h := sha256.Sum256([]byte(root))
		text := fmt.Sprintf("arena.test/log\n%d\n%s\n", size, base64.StdEncoding.EncodeToString(h[:]))
		return arena.SignedCheckpoint{Size: size, Text: text, Note: []byte(text + "\n— arena.test/log " + base64.StdEncoding.EncodeToString(h[:8]) + "\n")}
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
	if err := db.SaveCheckpoint(ctx, c5); err != nil {
		t.Fatal(err)
	}
	if n := latest(); !bytes.Equal(n, c5.Note) {
		t.Fatalf("latest %q, want %q", n, c5.Note)
	}
	// The same checkpoint with a cosignature line more replaces it.
	cosigned := append(bytes.Clone(c5.Note), "— witness.test/w AAAAAAAA\n"...)
	if err := db.SaveCheckpoint(ctx, arena.SignedCheckpoint{Size: 5, Text: c5.Text, Note: cosigned}); err != nil {
		t.Fatal(err)
	}
	if n := latest(); !bytes.Equal(n, cosigned) {
		t.Fatalf("latest %q after the cosigned one was saved", n)
	}
	for name, c := range map[string]arena.SignedCheckpoint{
		"a smaller checkpoint": sign(4, "a"),
		"a fork of its size":   sign(5, "b"),
	} {
		if err := db.SaveCheckpoint(ctx, c); arena.ErrorKind(err) != arena.ECONFLICT {
			t.Errorf("%s: %v, want ECONFLICT", name, err)
		}
		if n := latest(); !bytes.Equal(n, cosigned) {
			t.Fatalf("%s changed the latest checkpoint to %q", name, n)
		}
	}
	notes := map[uint64]arena.SignedCheckpoint{}
	for i := range uint64(8) {
		notes[10+i] = sign(10+i, fmt.Sprint(i))
	}
	race(t, 8, func(i int) (bool, error) {
		err := db.SaveCheckpoint(ctx, notes[10+uint64(i)])
		if arena.ErrorKind(err) == arena.ECONFLICT {
			return false, nil
		}
		return err == nil, err
	})
	if n := latest(); !bytes.Equal(n, notes[17].Note) {
		t.Fatalf("after 8 concurrent saves the latest is %q, want the largest", n)
	}
}
