package tlog_test

import (
	"context"
	"errors"
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

// Every entry is provably in every later tree, and every tree is provably
// a prefix of every later one, as the log grows entry by entry.
func TestLogProofs(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		l := newLog(t, db)
		const n = 21
		roots := [][]byte{}
		for i := range n {
			if err := l.Append(ctx, tlog.KindScore, map[string]int{"i": i}); err != nil {
				t.Fatal(err)
			}
			size, err := l.Size(ctx)
			if err != nil || size != uint64(i+1) {
				t.Fatalf("size %d after %d appends: %v", size, i+1, err)
			}
			root, err := l.RootAt(ctx, size)
			if err != nil {
				t.Fatal(err)
			}
			roots = append(roots, root)
		}
		entries, err := l.Entries(ctx, 0, n)
		if err != nil || len(entries) != n {
			t.Fatalf("%d entries, %v", len(entries), err)
		}
		for s := uint64(1); s <= n; s++ {
			root := roots[s-1]
			for i := uint64(0); i < s; i++ {
				p, err := l.Inclusion(ctx, i, s)
				if err != nil {
					t.Fatal(err)
				}
				if err := tlog.VerifyInclusion(i, s, tlog.LeafHash(entries[i].Data), p, root); err != nil {
					t.Fatalf("inclusion of %d in %d: %v", i, s, err)
				}
				// A changed leaf is not included.
				bad := append([]byte(nil), entries[i].Data...)
				bad[len(bad)-2] ^= 1
				if tlog.VerifyInclusion(i, s, tlog.LeafHash(bad), p, root) == nil {
					t.Fatalf("a changed leaf %d verified", i)
				}
			}
			for s2 := s; s2 <= n; s2++ {
				p, err := l.Consistency(ctx, s, s2)
				if err != nil {
					t.Fatal(err)
				}
				if err := tlog.VerifyConsistency(s, s2, p, root, roots[s2-1]); err != nil {
					t.Fatalf("consistency %d → %d: %v", s, s2, err)
				}
			}
		}
		if _, err := l.Inclusion(ctx, n, n); !errors.Is(err, tlog.ErrRange) {
			t.Fatalf("inclusion proof beyond the log: %v", err)
		}
		if _, err := l.Consistency(ctx, 3, n+1); !errors.Is(err, tlog.ErrRange) {
			t.Fatalf("consistency proof beyond the log: %v", err)
		}
		if _, err := l.RootAt(ctx, n+1); !errors.Is(err, tlog.ErrRange) {
			t.Fatalf("root beyond the log: %v", err)
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
