package store

import (
	"context"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

// A reveal inside its transaction and SaveRoundResult are serialized: the
// result, saved while the reveal is in flight, waits for it and then
// refuses scores that call the revealed agent a forfeit (rescore). On
// PostgreSQL this needs the reveal's FOR SHARE lock on the round row
// (READ COMMITTED would otherwise let both commit); on SQLite the write
// lock does it.
func TestSaveRoundResultWaitsForInFlightReveal(t *testing.T) {
	for name, open := range submitTestDBs(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := open()
			seedRounds(t, db, 1)
			c := testReq{kind: arena.SubmitCommit, round: 1, agent: "0xA1", nonce: 0, preds: []uint16{1, 2}}
			if err := db.Submit(ctx, c.kind, c.submission(), t0, c.check(nil)); err != nil {
				t.Fatal(err)
			}
			inCheck, release := make(chan struct{}), make(chan struct{})
			rv := testReq{kind: arena.SubmitReveal, round: 1, agent: "0xA1", nonce: 1, preds: []uint16{1, 2}}
			revealed := make(chan error, 1)
			go func() {
				check := rv.check(nil)
				revealed <- db.Submit(ctx, rv.kind, rv.submission(), t0.Add(3*time.Hour), func(st arena.SubmissionState) error {
					close(inCheck)
					<-release
					return check(st)
				})
			}()
			<-inCheck
			saved := make(chan error, 1)
			go func() {
				scores := []arena.RoundScore{{RoundID: 1, Agent: "0xA1", Brier: 1, Forfeit: true}, {RoundID: 1, Agent: "random", Brier: 0.3}}
				saved <- db.SaveRoundResult(ctx, 1, []int8{1, 0}, scores, nil, t0.Add(3*time.Hour+time.Second))
			}()
			select {
			case err := <-saved:
				close(release)
				t.Fatalf("result saved (%v) while a reveal was in flight", err)
			case <-time.After(300 * time.Millisecond):
			}
			close(release)
			if err := <-revealed; err != nil {
				t.Fatalf("reveal: %v", err)
			}
			if err := <-saved; arena.ErrorCode(err) != arena.CodeRescore {
				t.Fatalf("save after the reveal: %v, want %s", err, arena.CodeRescore)
			}
			if r, _ := db.Round(ctx, 1); !r.TriggeredAt.IsZero() {
				t.Fatal("refused result left the round triggered")
			}
		})
	}
}
