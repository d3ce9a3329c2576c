package c2sptest_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"filippo.io/torchwood"
	"golang.org/x/mod/sumdb/note"
	"golang.org/x/mod/sumdb/tlog"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// filippo.io/torchwood's tlog client, a second independent
// implementation of tlog-tiles, reads and proves every entry of the log
// against its checkpoint.
func TestTorchwoodClient(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		srv := newServer(t, db)
		srv.append(600)
		srv.publish()
		v, err := note.NewVerifier(strings.TrimSpace(string(get(t, srv.url+"vkey", http.StatusOK))))
		if err != nil {
			t.Fatal(err)
		}
		n, err := note.Open(get(t, srv.url+"checkpoint", http.StatusOK), note.VerifierList(v))
		if err != nil {
			t.Fatal(err)
		}
		cp, err := torchwood.ParseCheckpoint(n.Text)
		if err != nil || cp.Origin != "arena.test/log" || cp.N != 600 {
			t.Fatalf("checkpoint %+v, %v", cp, err)
		}
		fetcher, err := torchwood.NewTileFetcher(srv.url)
		if err != nil {
			t.Fatal(err)
		}
		client, err := torchwood.NewClient(fetcher)
		if err != nil {
			t.Fatal(err)
		}
		next := int64(0)
		for i, e := range client.Entries(ctx, cp.Tree, 0) {
			if i != next || len(e) == 0 {
				t.Fatalf("entry %d (%d bytes) where %d was expected", i, len(e), next)
			}
			next++
		}
		if err := client.Err(); err != nil {
			t.Fatal(err)
		}
		// Entries stops before the partial bundle; the rest one by one.
		if next < 512 {
			t.Fatalf("torchwood read %d entries", next)
		}
		for ; next < cp.N; next++ {
			e, proof, err := client.Entry(ctx, cp.Tree, next)
			if err != nil {
				t.Fatalf("entry %d: %v", next, err)
			}
			if err := tlog.CheckRecord(proof, cp.N, cp.Hash, next, tlog.RecordHash(e)); err != nil {
				t.Fatal(err)
			}
		}
	})
}
