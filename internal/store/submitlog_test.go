package store

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/forecast-arena/arena"
)

// A submission and its tamper-evident log entry are one transaction, on
// the one-by-one path and in group commits: every accepted commit has
// exactly one entry, a refused one none, and when the log cannot be written
// the submission is not stored either (no accepted item can be missing
// from the log, whatever fails or crashes between the two writes).
func TestSubmitLogAtomic(t *testing.T) {
	for engine, fresh := range submitTestDBs(t) {
		t.Run(engine, func(t *testing.T) {
			db := fresh()
			seedRounds(t, db, 10)
			ctx := context.Background()
			leaf := func(s string) *arena.LogLeaf { return &arena.LogLeaf{Kind: "commit", Data: []byte(s), Hash: []byte(s)} }
			const agents = 12
			var wg sync.WaitGroup
			for a := range agents {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 1; r <= 10; r++ {
						q := testReq{kind: arena.SubmitCommit, round: uint64(r), agent: fmt.Sprintf("0xL%d", a), nonce: uint64(r - 1), preds: []uint16{1, 2}}
						sub := q.submission()
						sub.Log = leaf(fmt.Sprintf("ok %d %d", a, r))
						if err := db.Submit(ctx, q.kind, sub, t0, q.check(sub)); err != nil {
							t.Errorf("agent %d round %d: %v", a, r, err)
						}
						dup := q.submission()
						dup.Log = leaf(fmt.Sprintf("dup %d %d", a, r))
						if err := db.Submit(ctx, q.kind, dup, t0, q.check(dup)); arena.ErrorCode(err) != "already_committed" {
							t.Errorf("duplicate of agent %d round %d: %v", a, r, err)
						}
					}
				}()
			}
			wg.Wait()
			size, err := db.LogSize(ctx)
			if err != nil || size != agents*10 {
				t.Fatalf("log size %d (%v), want %d: one entry per accepted commit", size, err, agents*10)
			}
			es, err := db.LogEntries(ctx, 0, size)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, string(e.Data))
			}
			slices.Sort(got)
			if got = slices.Compact(got); len(got) != agents*10 || got[0][:3] != "ok " {
				t.Fatalf("log holds %d distinct entries (first %q), want %d accepted commits and no refused one", len(got), got[0], agents*10)
			}

			// The log refuses writes: the submissions are refused too.
			block := `CREATE TRIGGER log_down BEFORE INSERT ON log_entries BEGIN SELECT RAISE(ABORT, 'log unavailable'); END`
			if engine == "postgres" {
				block = `ALTER TABLE log_entries ADD CONSTRAINT log_down CHECK (kind <> 'commit') NOT VALID`
			}
			if _, err := db.db.Exec(block); err != nil {
				t.Fatal(err)
			}
			before, _ := db.Nonce(ctx, "0xL0")
			for a := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					q := testReq{kind: arena.SubmitCommit, round: 1, agent: fmt.Sprintf("0xM%d", a), preds: []uint16{1, 2}}
					sub := q.submission()
					sub.Log = leaf(fmt.Sprintf("lost %d", a))
					if err := db.Submit(ctx, q.kind, sub, t0, q.check(sub)); err == nil {
						t.Errorf("agent M%d: accepted while its log entry could not be written", a)
					}
				}()
			}
			wg.Wait()
			subs, _ := db.Submissions(ctx, 1)
			if len(subs) != agents {
				t.Fatalf("round 1 has %d submissions, want %d: a submission was stored without its log entry", len(subs), agents)
			}
			if n, _ := db.Nonce(ctx, "0xM0"); n != 0 || before != 10 {
				t.Fatalf("nonces moved: %d, %d", n, before)
			}
			if s2, _ := db.LogSize(ctx); s2 != size {
				t.Fatalf("log size %d after refused writes, want %d", s2, size)
			}
		})
	}
}
