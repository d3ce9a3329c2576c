package storetest

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// testChainTxs: an item is recorded once however many relayers race to
// record it, updates keep their fields, and a round stays open until its
// "done" item.
func testChainTxs(t *testing.T, db *store.DB) {
	ctx := context.Background()
	var wg sync.WaitGroup
	won := make(chan int, 8)
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := db.InsertChainTx(ctx, &arena.ChainTx{Kind: "commit", RoundID: 103, Item: "0xA", Nonce: 4, TxHash: "0x01", TxNonce: uint64(i), RawTx: "0xf8", Status: arena.ChainTxSent})
			if err != nil {
				t.Error(err)
			}
			if ok {
				won <- i
			}
		}()
	}
	wg.Wait()
	close(won)
	if len(won) != 1 {
		t.Fatalf("%d relayers recorded the same item, want 1", len(won))
	}
	winner := <-won
	for _, x := range []arena.ChainTx{{Kind: "round", RoundID: 103, Status: arena.ChainTxConfirmed}, {Kind: "round", RoundID: 105, Status: arena.ChainTxSent},
		{Kind: "done", RoundID: 103, Status: arena.ChainTxConfirmed}} {
		if ok, err := db.InsertChainTx(ctx, &x); err != nil || !ok {
			t.Fatalf("insert %+v: %v %v", x, ok, err)
		}
	}
	open, err := db.ChainRoundsOpen(ctx)
	if err != nil || len(open) != 1 || open[0] != 105 {
		t.Fatalf("open rounds %v, %v; want [105]", open, err)
	}
	upd := arena.ChainTx{Kind: "commit", RoundID: 103, Item: "0xA", Nonce: 4, TxHash: "0x02", TxNonce: 9, RawTx: "0xf9", Status: arena.ChainTxConfirmed,
		Block: 12, Error: "x", Attempts: 2, SignedAt: t0, Replaced: []string{"0xf8", "0xf7"}}
	if err := db.UpdateChainTx(ctx, &upd); err != nil {
		t.Fatal(err)
	}
	if err := db.UpdateChainTx(ctx, &arena.ChainTx{Kind: "commit", RoundID: 103, Item: "0xB"}); arena.ErrorKind(err) != arena.ENOTFOUND {
		t.Fatalf("update of an unrecorded item: %v, want not found", err)
	}
	got, err := db.ChainTxs(ctx, 103, arena.ChainTxConfirmed)
	if err != nil || len(got) != 3 {
		t.Fatalf("round 103 confirmed: %d items, %v; want 3", len(got), err)
	}
	c := got[0]
	if c.Kind != "commit" || c.TxHash != "0x02" || c.TxNonce != 9 || c.RawTx != "0xf9" || c.Block != 12 || c.Error != "x" || c.Attempts != 2 || c.Nonce != 4 ||
		!c.SignedAt.Equal(t0) || strings.Join(c.Replaced, ",") != "0xf8,0xf7" {
		t.Fatalf("updated item %+v (winner had tx nonce %d)", c, winner)
	}
	if all, err := db.ChainTxs(ctx, 0, ""); err != nil || len(all) != 4 {
		t.Fatalf("all items: %d, %v; want 4", len(all), err)
	}
	if sent, err := db.ChainTxs(ctx, 0, arena.ChainTxSent); err != nil || len(sent) != 1 || sent[0].RoundID != 105 {
		t.Fatalf("sent items: %+v, %v; want round 105's", sent, err)
	}
	// Rounds to start: open for commits at t0 and not recorded.
	ms := []*arena.Market{Binary("ct0", 1)}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	var ids []uint64
	for _, cd := range []time.Duration{time.Hour, -time.Hour, 2 * time.Hour} {
		r := &arena.Round{CommitDeadline: t0.Add(cd), RevealStart: t0.Add(cd + time.Hour), RevealDeadline: t0.Add(cd + 2*time.Hour),
			CreatedAt: t0.Add(-2 * time.Hour), Markets: []arena.RoundMarket{{MarketID: ms[0].ID}}}
		if err := db.CreateRound(ctx, r); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	if _, err := db.InsertChainTx(ctx, &arena.ChainTx{Kind: "round", RoundID: ids[2], Status: arena.ChainTxSent}); err != nil {
		t.Fatal(err)
	}
	start, err := db.ChainRoundsToStart(ctx, t0)
	if err != nil || len(start) != 1 || start[0] != ids[0] {
		t.Fatalf("rounds to start %v, %v; want [%d] (round %d is past its deadline, %d recorded)", start, err, ids[0], ids[1], ids[2])
	}
	if open, err := db.ChainRoundsOpen(ctx); err != nil || len(open) != 2 || open[0] != ids[2] || open[1] != 105 {
		t.Fatalf("open rounds %v, %v; want [%d 105]", open, err, ids[2])
	}
	if _, err := db.InsertChainTx(ctx, &arena.ChainTx{Kind: "done", RoundID: 105, Status: arena.ChainTxConfirmed}); err != nil {
		t.Fatal(err)
	}
	if open, err := db.ChainRoundsOpen(ctx); err != nil || len(open) != 1 || open[0] != ids[2] {
		t.Fatalf("open rounds after round 105 is done %v, %v; want [%d]", open, err, ids[2])
	}
}

// testSignedDeadlines: the deadlines of the signed commit and reveal are
// kept with the submission, on the one-by-one path and in group commits.
func testSignedDeadlines(t *testing.T, db *store.DB) {
	ctx := context.Background()
	ms := []*arena.Market{Binary("d0", 1)}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	r := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour),
		CreatedAt: t0, Markets: []arena.RoundMarket{{MarketID: ms[0].ID}}}
	if err := db.CreateRound(ctx, r); err != nil {
		t.Fatal(err)
	}
	ok := func(arena.SubmissionState) error { return nil }
	agents := []string{"0x00000000000000000000000000000000000000A1", "0x00000000000000000000000000000000000000A2", "0x00000000000000000000000000000000000000A3"}
	var wg sync.WaitGroup
	for i, a := range agents {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := db.Submit(ctx, arena.SubmitCommit, &arena.Submission{RoundID: r.ID, Agent: a, CommitHash: "0x01", CommitSig: "0x02",
				CommitSigDeadline: uint64(1000 + i)}, t0, ok)
			if err == nil {
				err = db.Submit(ctx, arena.SubmitReveal, &arena.Submission{RoundID: r.ID, Agent: a, Predictions: []uint16{5000}, Salt: "0x03",
					RevealNonce: 1, RevealSig: "0x04", RevealSigDeadline: uint64(2000 + i)}, t0.Add(2*time.Hour), ok)
			}
			if err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	subs, err := db.Submissions(ctx, r.ID)
	if err != nil || len(subs) != 3 {
		t.Fatalf("%d submissions, %v", len(subs), err)
	}
	for i, s := range subs {
		if s.CommitSigDeadline != uint64(1000+i) || s.RevealSigDeadline != uint64(2000+i) {
			t.Errorf("%s: signed deadlines %d, %d; want %d, %d", s.Agent, s.CommitSigDeadline, s.RevealSigDeadline, 1000+i, 2000+i)
		}
	}
}
