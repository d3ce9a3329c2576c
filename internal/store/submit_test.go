package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	mrand "math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

// The group-commit batch path (submitSet) must decide and write exactly what
// submitting the same requests one by one does. Random request sequences —
// valid and invalid commits, reveals and reasoning uploads over a few
// agents and rounds, some with checks that skip the nonce (so the
// database's compare-and-set must refuse) — run through both paths on
// fresh databases; every request's error code and the final stored state
// must agree.

func submitTestDBs(t *testing.T) map[string]func() *DB {
	open := func(url string) *DB {
		db, err := Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		return db
	}
	out := map[string]func() *DB{
		"sqlite": func() *DB { return open("sqlite:" + filepath.Join(t.TempDir(), "a.db")) },
	}
	if base := os.Getenv("ARENA_TEST_POSTGRES_URL"); base != "" {
		out["postgres"] = func() *DB {
			b := make([]byte, 6)
			rand.Read(b)
			schema := "t_" + hex.EncodeToString(b)
			admin, err := sql.Open("pgx", base)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := admin.Exec(`CREATE SCHEMA ` + schema); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { admin.Exec(`DROP SCHEMA ` + schema + ` CASCADE`); admin.Close() })
			u, _ := url.Parse(base)
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return open(u.String())
		}
	}
	return out
}

var t0 = time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)

// seedRounds stores rounds of 2 markets.
func seedRounds(t *testing.T, db *DB, n int) {
	t.Helper()
	ctx := context.Background()
	var ms []*arena.Market
	for i := 0; i < 2; i++ {
		ms = append(ms, &arena.Market{Source: "t", SourceID: fmt.Sprint(i), Kind: arena.KindMarket, Question: "q", Type: arena.Binary,
			Outcomes: []string{arena.Yes, arena.No}, Status: arena.StatusOpen})
	}
	if _, err := db.SaveMarkets(ctx, ms); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		r := &arena.Round{CommitDeadline: t0.Add(time.Hour), RevealStart: t0.Add(2 * time.Hour), RevealDeadline: t0.Add(3 * time.Hour),
			CreatedAt: t0, Markets: []arena.RoundMarket{{MarketID: ms[0].ID}, {MarketID: ms[1].ID}}}
		if err := db.CreateRound(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

type testReq struct {
	kind   arena.SubmissionKind
	round  uint64
	agent  string
	nonce  uint64
	lax    bool // the check skips the nonce: the database must refuse
	preds  []uint16
	reason string
}

// check mimics the service's validation on the state it is given.
func (q testReq) check(sub *arena.Submission) func(arena.SubmissionState) error {
	return func(st arena.SubmissionState) error {
		if st.Round == nil {
			return arena.Rejectf(arena.ENOTFOUND, "round_not_found", "round")
		}
		if len(st.Round.Markets) != 2 {
			return fmt.Errorf("round %d has %d markets", st.Round.ID, len(st.Round.Markets))
		}
		s := st.Submission
		nonceOK := q.lax || q.nonce == st.Nonce
		switch q.kind {
		case arena.SubmitCommit:
			if s != nil {
				return arena.Rejectf(arena.ECONFLICT, "already_committed", "x")
			}
		case arena.SubmitReveal:
			if s == nil {
				return arena.Rejectf(arena.ECONFLICT, "not_committed", "x")
			}
			if s.Revealed() {
				return arena.Rejectf(arena.ECONFLICT, "already_revealed", "x")
			}
			if s.CommitHash != "h"+fmt.Sprint(q.preds) && !q.lax {
				return arena.Rejectf(arena.EINVALID, "commit_mismatch", "x")
			}
		case arena.SubmitReasoning:
			if s == nil || !s.Revealed() {
				return arena.Rejectf(arena.ECONFLICT, "reasoning_not_revealed", "x")
			}
			if s.Reasoning != "" {
				return arena.Rejectf(arena.ECONFLICT, "reasoning_already_stored", "x")
			}
			sub.Reasoning = q.reason // as the service's check does
			return nil
		}
		if !nonceOK {
			return arena.Rejectf(arena.ECONFLICT, "nonce_invalid", "x")
		}
		return nil
	}
}

func (q testReq) submission() *arena.Submission {
	s := &arena.Submission{RoundID: q.round, Agent: q.agent}
	switch q.kind {
	case arena.SubmitCommit:
		s.CommitHash, s.CommitNonce, s.CommitSig = "h"+fmt.Sprint(q.preds), q.nonce, "sig"
		if q.reason != "" {
			s.ReasoningHash = "rh"
		}
	case arena.SubmitReveal:
		s.Predictions, s.Salt, s.RevealNonce, s.RevealSig = q.preds, "salt", q.nonce, "rsig"
	}
	return s
}

func randomRequests(rng *mrand.Rand, n, agents, rounds int) []testReq {
	nonce := map[string]uint64{}
	var out []testReq
	for i := 0; i < n; i++ {
		q := testReq{agent: fmt.Sprintf("0xA%d", rng.IntN(agents)), round: uint64(1 + rng.IntN(rounds+1)), // round rounds+1 does not exist
			kind: arena.SubmissionKind(rng.IntN(3)), preds: []uint16{uint16(rng.IntN(3)), 5000}, reason: fmt.Sprint("why ", i)}
		// Mostly the nonce the agent would use if all its requests so far
		// were accepted, sometimes stale or ahead.
		q.nonce = nonce[q.agent]
		switch rng.IntN(8) {
		case 0:
			q.nonce += 1
		case 1:
			if q.nonce > 0 {
				q.nonce--
			}
		}
		q.lax = rng.IntN(6) == 0
		if q.kind != arena.SubmitReasoning {
			nonce[q.agent]++
		}
		out = append(out, q)
	}
	return out
}

// dump renders the stored forecast state.
func dump(t *testing.T, db *DB, rounds int) string {
	t.Helper()
	ctx := context.Background()
	var b strings.Builder
	agents, err := db.Agents(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		fmt.Fprintf(&b, "agent %s nonce %d\n", a.Address, a.Nonce)
	}
	for id := 1; id <= rounds; id++ {
		subs, err := db.Submissions(ctx, uint64(id))
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range subs {
			j, _ := json.Marshal(s)
			fmt.Fprintf(&b, "%s\n", j)
		}
	}
	return b.String()
}

func TestSubmitBatchMatchesOneByOne(t *testing.T) {
	for engine, fresh := range submitTestDBs(t) {
		t.Run(engine, func(t *testing.T) {
			const rounds = 3
			seeds := uint64(12)
			if engine == "postgres" {
				seeds = 4 // the same logic; keep the run short
			}
			setBatches, replays := 0, 0
			for seed := uint64(1); seed <= seeds; seed++ {
				rng := mrand.New(mrand.NewPCG(seed, 7))
				reqs := randomRequests(rng, 60, 4, rounds)
				one, batched := fresh(), fresh()
				seedRounds(t, one, rounds)
				seedRounds(t, batched, rounds)
				ctx := context.Background()
				var want []string
				for i, q := range reqs {
					sub := q.submission()
					err := one.Submit(ctx, q.kind, sub, t0.Add(time.Duration(i)*time.Second), q.check(sub))
					want = append(want, code(err))
				}
				// The same requests in batches of random sizes.
				var got []string
				for lo := 0; lo < len(reqs); {
					hi := min(len(reqs), lo+1+rng.IntN(20))
					var batch []*submitReq
					for i := lo; i < hi; i++ {
						q := reqs[i]
						sub := q.submission()
						batch = append(batch, &submitReq{kind: q.kind, sub: sub, at: t0.Add(time.Duration(i) * time.Second), check: q.check(sub)})
					}
					// runSubmitBatch's two paths, counted.
					err := batched.tx(ctx, func(tx *sql.Tx) error { return batched.submitSet(ctx, tx, batch) })
					switch {
					case err == nil:
						setBatches++
					case errors.Is(err, errReplay):
						replays++
						for _, r := range batch {
							r.err = batched.tx(ctx, func(tx *sql.Tx) error { _, err := batched.submitIn(ctx, tx, r); return err })
						}
					default:
						t.Fatalf("seed %d: batch: %v", seed, err)
					}
					for _, r := range batch {
						got = append(got, code(r.err))
					}
					lo = hi
				}
				for i := range want {
					if want[i] != got[i] {
						t.Fatalf("seed %d request %d %+v: one by one %q, batched %q", seed, i, reqs[i], want[i], got[i])
					}
				}
				if a, b := dump(t, one, rounds), dump(t, batched, rounds); a != b {
					t.Fatalf("seed %d: stored state differs\none by one:\n%s\nbatched:\n%s", seed, a, b)
				}
				accepted := 0
				for _, c := range want {
					if c == "ok" {
						accepted++
					}
				}
				if accepted == 0 || accepted == len(want) {
					t.Fatalf("seed %d: %d of %d accepted: the sequence does not exercise both outcomes", seed, accepted, len(want))
				}
			}
			// Both paths ran: set batches, and replays where a lax check let
			// through what only the database refuses.
			if setBatches == 0 || replays == 0 {
				t.Fatalf("%d set batches, %d replays", setBatches, replays)
			}
			t.Logf("%d batches written as sets, %d replayed one by one", setBatches, replays)
		})
	}
}

// code is "ok", a rejection code, or an internal error's text.
func code(err error) string {
	switch {
	case err == nil:
		return "ok"
	case arena.ErrorKind(err) == arena.EINTERNAL:
		return "internal: " + err.Error()
	}
	return arena.ErrorCode(err)
}

// Concurrent submissions through Submit (group commit with handoffs):
// every accepted commit is stored, nonces advance once per acceptance.
func TestSubmitConcurrentGroupCommit(t *testing.T) {
	for engine, fresh := range submitTestDBs(t) {
		t.Run(engine, func(t *testing.T) {
			db := fresh()
			seedRounds(t, db, 20)
			ctx := context.Background()
			const agents = 16
			var wg sync.WaitGroup
			errs := make(chan error, agents*20)
			for a := 0; a < agents; a++ {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 1; r <= 20; r++ {
						q := testReq{kind: arena.SubmitCommit, round: uint64(r), agent: fmt.Sprintf("0xC%d", a), nonce: uint64(r - 1), preds: []uint16{1, 2}}
						sub := q.submission()
						if err := db.Submit(ctx, q.kind, sub, t0, q.check(sub)); err != nil {
							errs <- fmt.Errorf("agent %d round %d: %s %w", a, r, arena.ErrorCode(err), err)
						}
						// A duplicate races the original in some rounds.
						if r%5 == 0 {
							sub := q.submission()
							if err := db.Submit(ctx, q.kind, sub, t0, q.check(sub)); arena.ErrorCode(err) != "already_committed" {
								errs <- fmt.Errorf("duplicate of agent %d round %d: %v", a, r, err)
							}
						}
					}
				}()
			}
			wg.Wait()
			close(errs)
			for err := range errs {
				t.Error(err)
			}
			as, _ := db.Agents(ctx)
			if len(as) != agents {
				t.Fatalf("%d agents", len(as))
			}
			for _, a := range as {
				if a.Nonce != 20 {
					t.Errorf("%s nonce %d, want 20", a.Address, a.Nonce)
				}
			}
			n := 0
			for r := 1; r <= 20; r++ {
				subs, _ := db.Submissions(ctx, uint64(r))
				n += len(subs)
			}
			if n != agents*20 {
				t.Fatalf("%d commits stored, want %d", n, agents*20)
			}
		})
	}
}

// A transaction that prepares a query for the first time must not wait
// for a second connection: with every connection held by transactions
// (here, the pool's only one), such a wait never ends. The first use
// prepares on the transaction's connection; the next finds it prepared.
func TestPrepareInTransactionNeedsNoSecondConnection(t *testing.T) {
	for name, open := range submitTestDBs(t) {
		t.Run(name, func(t *testing.T) {
			d := open()
			d.db.SetMaxOpenConns(1)
			const q = `UPDATE data_versions SET version = version WHERE domain = ?`
			for i := range 2 {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				err := d.tx(ctx, func(tx *sql.Tx) error {
					_, err := d.execPrepared(ctx, tx, q, "nonesuch")
					return err
				})
				cancel()
				if err != nil {
					t.Fatalf("use %d: %v", i+1, err)
				}
				if _, cached := d.stmts.Load(q); !cached {
					t.Fatalf("use %d: not prepared for the database after the transaction", i+1)
				}
			}
		})
	}
}
