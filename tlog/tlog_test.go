package tlog_test

import (
	"context"
	"crypto/ed25519"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"sync"
	"testing"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/tlog"
)

func newLog(t *testing.T, db *store.DB) *tlog.Log {
	t.Helper()
	key, err := tlog.LoadOrCreateKey(filepath.Join(t.TempDir(), "log.key"))
	if err != nil {
		t.Fatal(err)
	}
	return &tlog.Log{Store: db, Key: key}
}

// Every entry is provably in every later tree, every tree is provably a
// prefix of every later one, and heads verify only under the log's key.
func TestLogProofs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		l := newLog(t, db)
		var heads []tlog.Head
		const n = 21
		for i := range n {
			if err := l.Append(ctx, tlog.KindScore, map[string]int{"i": i}); err != nil {
				t.Fatal(err)
			}
			h, err := l.SignedHead(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if h.TreeSize != uint64(i+1) {
				t.Fatalf("head size %d after %d appends", h.TreeSize, i+1)
			}
			heads = append(heads, h)
		}
		again, _ := l.SignedHead(ctx)
		if again != heads[n-1] {
			t.Fatal("a head for an unchanged size was signed again")
		}
		stored, _ := l.Heads(ctx)
		if len(stored) != n {
			t.Fatalf("%d heads stored, want %d", len(stored), n)
		}
		entries, err := l.Entries(ctx, 0, n)
		if err != nil || len(entries) != n {
			t.Fatalf("%d entries, %v", len(entries), err)
		}
		pub := l.PublicKey()
		for _, h := range heads {
			root, err := h.Verify(pub)
			if err != nil {
				t.Fatal(err)
			}
			for i := uint64(0); i < h.TreeSize; i++ {
				p, err := l.Inclusion(ctx, i, h.TreeSize)
				if err != nil {
					t.Fatal(err)
				}
				if err := tlog.VerifyInclusion(i, h.TreeSize, tlog.LeafHash(entries[i].Data), p, root); err != nil {
					t.Fatalf("inclusion of %d in %d: %v", i, h.TreeSize, err)
				}
				// A changed leaf is not included.
				bad := append([]byte(nil), entries[i].Data...)
				bad[len(bad)-2] ^= 1
				if tlog.VerifyInclusion(i, h.TreeSize, tlog.LeafHash(bad), p, root) == nil {
					t.Fatalf("a changed leaf %d verified", i)
				}
			}
			for _, h2 := range heads[h.TreeSize-1:] {
				root2, _ := h2.Verify(pub)
				p, err := l.Consistency(ctx, h.TreeSize, h2.TreeSize)
				if err != nil {
					t.Fatal(err)
				}
				if err := tlog.VerifyConsistency(h.TreeSize, h2.TreeSize, p, root, root2); err != nil {
					t.Fatalf("consistency %d → %d: %v", h.TreeSize, h2.TreeSize, err)
				}
			}
		}
		// A head signed by another key is refused, whatever key it names.
		_, other, _ := ed25519.GenerateKey(nil)
		forged := heads[n-1]
		root, _ := hex.DecodeString(forged.RootHash)
		forged.Signature = hex.EncodeToString(ed25519.Sign(other, tlog.Message(forged.TreeSize, root, forged.Timestamp)))
		if _, err := forged.Verify(pub); err == nil {
			t.Fatal("head signed by another key verified")
		}
		forged.PublicKey = hex.EncodeToString(other.Public().(ed25519.PublicKey))
		if _, err := forged.Verify(pub); err == nil {
			t.Fatal("head naming another key verified")
		}
		if _, err := l.Inclusion(ctx, n, n); err == nil {
			t.Fatal("inclusion proof beyond the log")
		}
		if _, err := l.Consistency(ctx, 3, n+1); err == nil {
			t.Fatal("consistency proof beyond the log")
		}
	})
}

// Concurrent appends get consecutive indices.
func TestConcurrentAppends(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		l := newLog(t, db)
		var wg sync.WaitGroup
		for g := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 10 {
					if err := l.Append(ctx, tlog.KindCommit, fmt.Sprint(g, i)); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		wg.Wait()
		es, err := l.Entries(ctx, 0, 100)
		if err != nil || len(es) != 40 {
			t.Fatalf("%d entries, %v", len(es), err)
		}
		for i, e := range es {
			if e.Index != uint64(i) {
				t.Fatalf("entry %d has index %d", i, e.Index)
			}
		}
	})
}

// The key file is created once and read back.
func TestKeyFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "log.key")
	k1, err := tlog.LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	k2, err := tlog.LoadOrCreateKey(path)
	if err != nil || !k1.Equal(k2) {
		t.Fatalf("key not persisted: %v", err)
	}
}
