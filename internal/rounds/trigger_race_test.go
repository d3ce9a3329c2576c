package rounds_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// hookStore runs beforeReveal once, just before the first reveal reaches
// the store (modelling the time a request waits in the group commit), and
// afterSubmissions once, just after the trigger has read the submissions.
type hookStore struct {
	*store.DB
	mu               sync.Mutex
	beforeReveal     func()
	afterSubmissions func()
}

func (h *hookStore) take(f *func()) func() {
	h.mu.Lock()
	defer h.mu.Unlock()
	g := *f
	*f = nil
	return g
}

func (h *hookStore) Submit(ctx context.Context, kind arena.SubmissionKind, sub *arena.Submission, at time.Time, check func(arena.SubmissionState) error) error {
	if kind == arena.SubmitReveal {
		if f := h.take(&h.beforeReveal); f != nil {
			f()
		}
	}
	return h.DB.Submit(ctx, kind, sub, at, check)
}

func (h *hookStore) Submissions(ctx context.Context, roundID uint64) ([]*arena.Submission, error) {
	subs, err := h.DB.Submissions(ctx, roundID)
	if f := h.take(&h.afterSubmissions); f != nil {
		f()
	}
	return subs, err
}

// A reveal timed at the reveal deadline that waits in the store's queue
// while the round is triggered must be refused (reveal_closed), not stored
// after the scores were frozen (where it would count as a forfeit).
func TestRevealQueuedPastTriggerRejected(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, Grace: time.Hour}
		r, ms := newRound(t, db, svc, "x", 2)
		alice := agentKey("alice")
		preds := []uint16{9000, 1000}
		salt := commit(t, svc, clk, alice, r, preds)
		hs := &hookStore{DB: db}
		queued := &rounds.Service{Store: hs, Now: clk.Now, Logger: quiet, Grace: time.Hour}
		hs.beforeReveal = func() {
			clk.Set(r.RevealDeadline.Add(time.Second))
			for i, res := range []string{arena.Yes, arena.No} {
				if _, err := db.ResolveMarket(ctx, ms[i].ID, res, clk.Now()); err != nil {
					t.Fatal(err)
				}
			}
			if n, err := svc.TriggerDue(ctx); err != nil || n != 1 {
				t.Fatalf("trigger during the queued reveal: %d, %v", n, err)
			}
		}
		clk.Set(r.RevealDeadline)
		_, err := queued.Reveal(ctx, r.ID, signedReveal(t, svc, clk, alice, r, preds, salt))
		if arena.ErrorCode(err) != forecast.CodeRevealClosed {
			t.Fatalf("reveal queued past the trigger: %v, want %s", err, forecast.CodeRevealClosed)
		}
		subs, err := db.Submissions(ctx, r.ID)
		if err != nil || len(subs) != 1 || subs[0].Revealed() {
			t.Fatalf("stored after scoring: %+v, %v", subs, err)
		}
		if sc := scoreMap(t, db, r.ID)[alice.Address().Hex()]; !sc.Forfeit {
			t.Fatalf("alice %+v: she did not reveal in time, a forfeit", sc)
		}
	})
}

// A reveal that commits after the trigger read the submissions (but
// before it saved the result) makes the store refuse the stale scores;
// the trigger rescores and the reveal counts.
func TestTriggerRescoresRevealLandingMidScoring(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		hs := &hookStore{DB: db}
		svc := &rounds.Service{Store: hs, Now: clk.Now, Logger: quiet, Grace: time.Hour}
		r, ms := newRound(t, db, svc, "z", 2)
		alice := agentKey("alice")
		preds := []uint16{9000, 1000}
		salt := commit(t, svc, clk, alice, r, preds)
		for i, res := range []string{arena.Yes, arena.No} {
			if _, err := db.ResolveMarket(ctx, ms[i].ID, res, t0); err != nil {
				t.Fatal(err)
			}
		}
		clk.Set(r.RevealDeadline)
		req := signedReveal(t, svc, clk, alice, r, preds, salt)
		hs.afterSubmissions = func() {
			// The reveal was checked in time; it commits while the trigger
			// (a moment later, on another replica) scores.
			clk.Set(r.RevealDeadline)
			if _, err := svc.Reveal(ctx, r.ID, req); err != nil {
				t.Fatal(err)
			}
			clk.Set(r.RevealDeadline.Add(time.Second))
		}
		clk.Set(r.RevealDeadline.Add(time.Second))
		if n, err := svc.TriggerDue(ctx); err != nil || n != 1 {
			t.Fatalf("trigger: %d, %v", n, err)
		}
		sc := scoreMap(t, db, r.ID)[alice.Address().Hex()]
		if sc.Forfeit || sc.Brier > 0.011 {
			t.Fatalf("alice %+v: her reveal was accepted, it must be scored", sc)
		}
	})
}

// D2: the loser of two concurrent admin triggers is told the round was
// already triggered (trigger_not_allowed), not that no market resolved.
func TestTriggerRaceLoserIsToldAlreadyTriggered(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		clk := clock.New(t0)
		hs := &hookStore{DB: db}
		svc := &rounds.Service{Store: hs, Now: clk.Now, Logger: quiet, Grace: time.Hour}
		r, ms := newRound(t, db, svc, "race", 2)
		for i, res := range []string{arena.Yes, arena.No} {
			if _, err := db.ResolveMarket(ctx, ms[i].ID, res, t0); err != nil {
				t.Fatal(err)
			}
		}
		clk.Set(r.RevealDeadline.Add(time.Second))
		other := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, Grace: time.Hour}
		hs.afterSubmissions = func() { // the other run wins while this one scores
			if err := other.Trigger(ctx, r.ID); err != nil {
				t.Errorf("winner: %v", err)
			}
		}
		err := svc.Trigger(ctx, r.ID)
		if arena.ErrorCode(err) != forecast.CodeTriggerNotAllowed || !strings.Contains(err.Error(), "already triggered") {
			t.Fatalf("loser: %v, want %s (already triggered)", err, forecast.CodeTriggerNotAllowed)
		}
		// The scheduled trigger that loses the same race counts nothing and reports nothing.
		if n, err := svc.TriggerDue(ctx); err != nil || n != 0 {
			t.Fatalf("TriggerDue after: %d, %v", n, err)
		}
	})
}

func signedReveal(t *testing.T, svc *rounds.Service, clk *clock.Manual, k *forecast.Key, r *arena.Round, preds []uint16, salt common.Hash) forecast.RevealRequest {
	t.Helper()
	n, err := svc.Store.Nonce(context.Background(), k.Address().Hex())
	if err != nil {
		t.Fatal(err)
	}
	m := forecast.Reveal{RoundID: r.ID, Predictions: preds, Salt: salt, Agent: k.Address(), Nonce: n, Deadline: uint64(clk.Now().Add(time.Hour).Unix())}
	sig, err := k.SignReveal(svc.Domain, m)
	if err != nil {
		t.Fatal(err)
	}
	return forecast.RevealRequest{Agent: m.Agent.Hex(), Predictions: preds, Salt: salt.Hex(), Nonce: n,
		Deadline: m.Deadline, Signature: forecast.EncodeSignature(sig)}
}
