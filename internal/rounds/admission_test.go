package rounds_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// tryCommit signs and sends a commit for k in r and returns its error.
func tryCommit(t *testing.T, svc *rounds.Service, clk *clock.Manual, k *forecast.Key, r *arena.Round) error {
	t.Helper()
	ctx := context.Background()
	n, err := svc.Store.Nonce(ctx, k.Address().Hex())
	if err != nil {
		t.Fatal(err)
	}
	preds := make([]uint16, len(r.Markets))
	c := forecast.Commit{RoundID: r.ID, CommitHash: forecast.CommitHash(r.ID, k.Address(), preds, [32]byte{1}), Agent: k.Address(),
		Nonce: n, Deadline: uint64(clk.Now().Add(time.Hour).Unix())}
	sig, err := k.SignCommit(svc.Domain, c)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Commit(ctx, r.ID, forecast.CommitRequest{Agent: c.Agent.Hex(), CommitHash: c.CommitHash.Hex(), Nonce: n,
		Deadline: c.Deadline, Signature: forecast.EncodeSignature(sig)})
	return err
}

// A sybil flood meets the admission caps: a round admits at most
// MaxAgentsPerRound agents (round_full, a conflict: final for the round)
// and an hour at most MaxNewAgentsHour new ones (too_many_new_agents,
// with the wait until one is admitted again: a retry after it passes, a
// retry two seconds early does not), while known agents keep committing
// to other rounds; refused commits store nothing.
func TestAdmissionCaps(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0.Add(-90 * time.Minute)) // rounds close at t0+1h
		db.Now = clk.Now
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet,
			Admission: rounds.Admission{Store: db, MaxAgentsPerRound: 3, MaxNewAgentsHour: 4}}
		r1, _ := newRound(t, db, svc, "a", 2)
		r2, _ := newRound(t, db, svc, "b", 2)
		key := func(i int) *forecast.Key { return agentKey(fmt.Sprint("sybil", i)) }
		for i := 0; i < 3; i++ {
			if err := tryCommit(t, svc, clk, key(i), r1); err != nil {
				t.Fatalf("agent %d in round 1: %v", i, err)
			}
		}
		if err := tryCommit(t, svc, clk, key(3), r1); arena.ErrorCode(err) != forecast.CodeRoundFull || arena.ErrorKind(err) != arena.ECONFLICT {
			t.Fatalf("fourth agent in round 1: %v", err)
		}
		if n, _ := db.RoundAgents(ctx, r1.ID); n != 3 {
			t.Fatalf("round 1 has %d agents", n)
		}
		// Known agents are not new: all three join round 2 too.
		for i := 0; i < 3; i++ {
			if err := tryCommit(t, svc, clk, key(i), r2); err != nil {
				t.Fatalf("known agent %d in round 2: %v", i, err)
			}
		}
		// Round 2 is full as well; a third round takes the new-agent cap.
		// The first three agents came at start, the fourth 10 minutes
		// later: 20 minutes later, a fifth waits 40 minutes for the first
		// three to leave the hour.
		start := clk.Now()
		r3, _ := newRound(t, db, svc, "c", 2)
		clk.Set(start.Add(10 * time.Minute))
		if err := tryCommit(t, svc, clk, key(3), r3); err != nil {
			t.Fatalf("fourth new agent: %v", err)
		}
		clk.Set(start.Add(20*time.Minute + 300*time.Millisecond))
		err := tryCommit(t, svc, clk, key(4), r3)
		var later *forecast.RetryLater
		if arena.ErrorCode(err) != forecast.CodeTooManyNewAgents || arena.ErrorKind(err) != arena.ETOOMANY || !errors.As(err, &later) {
			t.Fatalf("fifth new agent within the hour: %v", err)
		}
		if wait := later.RetryAfter(); wait < 40*time.Minute-300*time.Millisecond || wait > 40*time.Minute+2*time.Second || wait%time.Second != 0 {
			t.Fatalf("fifth new agent told to wait %s, want about 40m in whole seconds", wait)
		}
		if known, _ := db.AgentKnown(ctx, key(4).Address().Hex()); known {
			t.Fatal("a refused agent was stored")
		}
		retry := clk.Now().Add(later.RetryAfter())
		clk.Set(retry.Add(-2 * time.Second))
		if err := tryCommit(t, svc, clk, key(4), r3); arena.ErrorCode(err) != forecast.CodeTooManyNewAgents {
			t.Fatalf("a new agent two seconds before its Retry-After: %v", err)
		}
		clk.Set(retry)
		if err := tryCommit(t, svc, clk, key(4), r3); err != nil {
			t.Fatalf("a new agent after its Retry-After: %v", err)
		}
	})
}
