package relay_test

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/relay"
	"github.com/forecast-arena/arena/internal/store"
)

// seedFinished adds n rounds whose mirroring is long over, as a busy
// arena accumulates them: scored in the database, every item recorded
// (round, three commits, benchmarks, two reveals, three payouts, trigger,
// score, done).
func (e *env) seedFinished(raw *sql.DB, n int) {
	e.t.Helper()
	tx, err := raw.Begin()
	if err != nil {
		e.t.Fatal(err)
	}
	past := e.now.Add(-30 * 24 * time.Hour).UnixMicro()
	hour := time.Hour.Microseconds()
	for i := range n {
		res, err := tx.Exec(`INSERT INTO rounds (commit_deadline, reveal_start, reveal_deadline, grace_micros, rules, created_at, benchmark_at, triggered_at)
			VALUES (?, ?, ?, ?, '{}', ?, ?, ?)`, past, past+hour, past+2*hour, hour, past-hour, past, past+3*hour)
		if err != nil {
			e.t.Fatal(err)
		}
		id, _ := res.LastInsertId()
		items := [][2]string{{"round", ""}, {"benchmarks", ""}, {"trigger", ""}, {"score", "0"}, {"done", ""}}
		for a := range 3 {
			agent := fmt.Sprintf("0x%040x", i*3+a+1)
			items = append(items, [2]string{"commit", agent}, [2]string{"payout", fmt.Sprint(a)})
			if a < 2 {
				items = append(items, [2]string{"reveal", agent})
			}
		}
		for _, it := range items {
			if _, err := tx.Exec(`INSERT INTO chain_txs (kind, round_id, item, tx_hash, status, block, created_at, updated_at)
				VALUES (?, ?, ?, ?, 'confirmed', 1, ?, ?)`, it[0], id, it[1], fmt.Sprintf("0x%064x", id), past, past); err != nil {
				e.t.Fatal(err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		e.t.Fatal(err)
	}
}

// BenchmarkPass is one relayer pass over an arena with one round being
// mirrored (commits on chain, waiting for its deadline) and 0, 1,000 or
// 10,000 rounds whose mirroring is over: the pass should cost the same.
func BenchmarkPass(b *testing.B) {
	for _, finished := range []int{0, 1_000, 10_000} {
		b.Run(fmt.Sprintf("finished=%d", finished), func(b *testing.B) {
			db, raw := fileDB(b)
			e := newEnv(b, db)
			e.seedFinished(raw, finished)
			r, _ := e.newRound("bench", 3)
			for _, k := range []string{"a", "b", "c"} {
				e.commit(r, agentKey(k), []uint16{1000, 2000, 3000})
			}
			e.passes(3, nil)
			rel := e.relayer(nil)
			ctx := context.Background()
			b.ResetTimer()
			for range b.N {
				if err := rel.Pass(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// readLog is a store that records which rounds a pass reads.
type readLog struct {
	*store.DB
	mu     sync.Mutex
	rounds map[uint64]int
}

func (s *readLog) read(id uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rounds[id]++
}

func (s *readLog) Round(ctx context.Context, id uint64) (*arena.Round, error) {
	s.read(id)
	return s.DB.Round(ctx, id)
}

func (s *readLog) Submissions(ctx context.Context, id uint64) ([]*arena.Submission, error) {
	s.read(id)
	return s.DB.Submissions(ctx, id)
}

func (s *readLog) ChainTxs(ctx context.Context, id uint64, status string) ([]arena.ChainTx, error) {
	if id == 0 && status != arena.ChainTxSent {
		s.read(0) // every item of every round
	}
	if id != 0 {
		s.read(id)
	}
	return s.DB.ChainTxs(ctx, id, status)
}

// A pass reads only the rounds it still mirrors and those it may start:
// none of the finished ones, and never every item of every round.
func TestPassReadsOnlyOpenRounds(t *testing.T) {
	db, raw := fileDB(t)
	e := newEnv(t, db)
	e.seedFinished(raw, 50)
	r, _ := e.newRound("inc", 2)
	e.commit(r, agentKey("ivan"), []uint16{1000, 2000})
	e.passes(3, nil)
	log := &readLog{DB: db, rounds: map[uint64]int{}}
	rel := &relay.Relayer{Store: log, Client: e.client, Key: e.key, Arena: e.addrs.PredictionArena, ReportOutcomes: true, Now: e.clock, Logger: quiet}
	if err := rel.Init(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := rel.Pass(context.Background()); err != nil {
		t.Fatal(err)
	}
	for id := range log.rounds {
		if id != r.ID {
			t.Errorf("the pass read round %d (reads by round: %v); only round %d is being mirrored", id, log.rounds, r.ID)
		}
	}
	if log.rounds[r.ID] == 0 {
		t.Fatalf("the pass did not read the round it mirrors: %v", log.rounds)
	}
}
