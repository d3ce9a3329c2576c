package participant_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"
	"github.com/gofrs/flock"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/strategy"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/participant"
)

var quiet = slog.New(slog.DiscardHandler)

var t0 = time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)

// arenaServer is the real API on a loopback test server.
type arenaServer struct {
	db  *store.DB
	svc *rounds.Service
	url string
	clk *clock.Manual
	ms  []*arena.Market
}

func newServer(t *testing.T, db *store.DB) *arenaServer {
	t.Helper()
	clk := &clock.Manual{}
	clk.Set(t0)
	svc := &rounds.Service{Store: db, Now: clk.Now, Logger: quiet, Domain: forecast.Domain{ChainID: 8453}}
	srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc, Forecasters: db})
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	var ms []*arena.Market
	for i, p := range []float64{0.37, 0.5, 0.8123} {
		ms = append(ms, &arena.Market{Source: "test", SourceID: fmt.Sprint(i), Kind: arena.KindMarket, Question: fmt.Sprintf("Q%d?", i),
			EventID: fmt.Sprint(i), Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No},
			Prices: map[string]float64{arena.Yes: p, arena.No: 1 - p}, CloseTime: t0.Add(30 * 24 * time.Hour), Status: arena.StatusOpen})
	}
	if _, err := db.SaveMarkets(context.Background(), ms); err != nil {
		t.Fatal(err)
	}
	return &arenaServer{db: db, svc: svc, url: hs.URL, clk: clk, ms: ms}
}

// round creates a round at t0 + offset: commits for an hour, reveals
// from +2 h to +3 h.
func (s *arenaServer) round(t *testing.T, offset time.Duration) *arena.Round {
	t.Helper()
	ids := []int64{s.ms[0].ID, s.ms[1].ID, s.ms[2].ID}
	base := t0.Add(offset)
	prev := s.clk.Now()
	s.clk.Set(base)
	defer s.clk.Set(prev)
	r, err := s.svc.CreateRound(context.Background(), rounds.CreateRoundRequest{MarketIDs: ids,
		CommitDeadline: base.Add(time.Hour), RevealStart: base.Add(2 * time.Hour), RevealDeadline: base.Add(3 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func (s *arenaServer) submission(t *testing.T, round uint64, agent common.Address) *arena.Submission {
	t.Helper()
	subs, err := s.db.Submissions(context.Background(), round)
	if err != nil {
		t.Fatal(err)
	}
	for _, sub := range subs {
		if sub.Agent == agent.Hex() {
			return sub
		}
	}
	return nil
}

func (s *arenaServer) nonce(t *testing.T, agent common.Address) uint64 {
	t.Helper()
	n, err := s.db.Nonce(context.Background(), agent.Hex())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func sqliteDB(t *testing.T) *store.DB {
	t.Helper()
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func testKey(name string) *forecast.Key {
	k, err := crypto.ToECDSA(crypto.Keccak256([]byte("participant test"), []byte(name)))
	if err != nil {
		panic(err)
	}
	return forecast.NewKey(k)
}

func (s *arenaServer) client(t *testing.T, name, strategy string) *participant.Client {
	t.Helper()
	k := testKey(name)
	c := &participant.Client{Server: s.url, Key: k, StateDir: filepath.Join(t.TempDir(), "state"), Now: s.clk.Now, Logger: quiet}
	st, err := participant.NewStrategy(strategy, k.Address())
	if err != nil {
		t.Fatal(err)
	}
	c.Strategy = st
	return c
}

// state reads a round's state file as the participant wrote it.
type state struct {
	RoundID       uint64   `json:"round_id"`
	Predictions   []uint16 `json:"predictions"`
	Salt          string   `json:"salt"`
	Reasoning     []string `json:"reasoning"`
	CommitHash    string   `json:"commit_hash"`
	ReasoningHash string   `json:"reasoning_hash"`
	Committed     bool     `json:"committed"`
	Revealed      bool     `json:"revealed"`
	ReasoningSent bool     `json:"reasoning_sent"`
	Abandoned     string   `json:"abandoned"`
}

// serverState is the client's state directory for its server: the single
// server-* subdirectory of StateDir.
func serverState(t *testing.T, c *participant.Client) string {
	t.Helper()
	dirs, _ := filepath.Glob(filepath.Join(c.StateDir, "server-*"))
	if len(dirs) != 1 {
		t.Fatalf("server state dirs %v, want one", dirs)
	}
	return dirs[0]
}

// tamperState sets key in the client's state file of round, as a local
// edit or a bug would.
func tamperState(t *testing.T, c *participant.Client, round uint64, key string, v any) {
	t.Helper()
	path := filepath.Join(serverState(t, c), fmt.Sprintf("round-%d.json", round))
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m[key] = v
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

func readState(t *testing.T, c *participant.Client, round uint64) (state, bool) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(c.StateDir, "server-*", fmt.Sprintf("round-%d.json", round)))
	if len(files) > 1 {
		t.Fatalf("round %d in several server dirs: %v", round, files)
	}
	if len(files) == 0 {
		return state{}, false
	}
	b, err := os.ReadFile(files[0])
	if os.IsNotExist(err) {
		return state{}, false
	}
	if err != nil {
		t.Fatal(err)
	}
	var s state
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s, true
}

func run(t *testing.T, c *participant.Client, want participant.Report) {
	t.Helper()
	rep, err := c.RunOnce(context.Background())
	if err != nil {
		t.Fatalf("RunOnce: %v", err)
	}
	if counts(rep) != counts(want) {
		t.Fatalf("RunOnce did %+v, want %+v", rep, want)
	}
}

// counts is what a run did, without what it waits for.
func counts(r participant.Report) participant.Report {
	return participant.Report{Committed: r.Committed, Revealed: r.Revealed, ReasoningSent: r.ReasoningSent, Abandoned: r.Abandoned}
}

// A whole round from cron-style runs: commit, nothing to do, reveal and
// reasoning in the window, nothing more. The commit the participant made
// verifies on the server and its hash recomputes from the revealed values.
func TestRunOnceRound(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		s := newServer(t, db)
		r := s.round(t, 0)
		c := s.client(t, "market agent", "market")
		c.LeadTime = 10 * time.Minute
		// An hour before the deadline: not yet, and the report says until when.
		if rep, err := c.RunOnce(context.Background()); err != nil || counts(rep) != (participant.Report{}) || rep.Open != 1 ||
			rep.Next != (participant.Wait{Round: r.ID, For: "the lead time before the commit deadline", At: r.CommitDeadline.Add(-c.LeadTime)}) {
			t.Fatalf("an hour before: %+v, %v", rep, err)
		}
		if _, ok := readState(t, c, r.ID); ok {
			t.Fatal("state written before the lead time")
		}
		s.clk.Set(r.CommitDeadline.Add(-5 * time.Minute))
		run(t, c, participant.Report{Committed: 1})
		st, ok := readState(t, c, r.ID)
		if !ok || !st.Committed || st.Revealed || len(st.Reasoning) != 3 {
			t.Fatalf("state after commit %+v", st)
		}
		wantPreds := []uint16{3700, 5000, 8123}
		if !slices.Equal(st.Predictions, wantPreds) {
			t.Fatalf("market strategy predicted %v, want the listed prices %v", st.Predictions, wantPreds)
		}
		sub := s.submission(t, r.ID, c.Key.Address())
		if sub == nil || sub.CommitHash != st.CommitHash || sub.ReasoningHash != st.ReasoningHash || sub.Revealed() {
			t.Fatalf("server commit %+v, state %+v", sub, st)
		}
		run(t, c, participant.Report{})
		s.clk.Set(r.CommitDeadline.Add(30 * time.Minute)) // before the reveal window
		if rep, err := c.RunOnce(context.Background()); err != nil || counts(rep) != (participant.Report{}) ||
			rep.Next != (participant.Wait{Round: r.ID, For: "the reveal window", At: r.RevealStart}) {
			t.Fatalf("before the reveal window: %+v, %v", rep, err)
		}
		s.clk.Set(r.RevealStart.Add(time.Minute))
		run(t, c, participant.Report{Revealed: 1, ReasoningSent: 1})
		run(t, c, participant.Report{})
		sub = s.submission(t, r.ID, c.Key.Address())
		if !slices.Equal(sub.Predictions, wantPreds) || sub.Reasoning == "" {
			t.Fatalf("server after reveal %+v", sub)
		}
		salt := common.HexToHash(sub.Salt)
		if got := forecast.CommitHash(r.ID, c.Key.Address(), sub.Predictions, salt).Hex(); got != sub.CommitHash {
			t.Fatalf("commit hash %s does not recompute from the revealed values (%s)", sub.CommitHash, got)
		}
		if h, _ := forecast.ReasoningHash(st.Reasoning); h.Hex() != sub.ReasoningHash {
			t.Fatal("reasoning hash mismatch")
		}
		if n := s.nonce(t, c.Key.Address()); n != 2 {
			t.Fatalf("nonce %d after one commit and one reveal", n)
		}
		// The commit signature verifies under the server's domain.
		sig, _ := forecast.DecodeSignature(sub.CommitSig)
		msg := forecast.Commit{RoundID: r.ID, CommitHash: common.HexToHash(sub.CommitHash), ReasoningHash: common.HexToHash(sub.ReasoningHash),
			Agent: c.Key.Address(), Nonce: sub.CommitNonce}
		for msg.Deadline = uint64(t0.Unix()); msg.Deadline < uint64(t0.Add(2*time.Hour).Unix()); msg.Deadline++ {
			if s.svc.Domain.VerifyCommit(msg, sig) == nil {
				break
			}
		}
		if s.svc.Domain.VerifyCommit(msg, sig) != nil {
			t.Fatal("stored commit signature does not verify")
		}
	})
}

// lossy wraps the transport: for requests whose path ends with suffix it
// either drops the request (before it reaches the server) or delivers it
// and loses the answer, as a crash or a dead connection would.
type lossy struct {
	suffix  string
	deliver bool
	armed   bool
	mu      sync.Mutex
}

func (l *lossy) RoundTrip(req *http.Request) (*http.Response, error) {
	l.mu.Lock()
	hit := l.armed && req.Method == "POST" && strings.HasSuffix(req.URL.Path, l.suffix)
	if hit {
		l.armed = false
	}
	l.mu.Unlock()
	if !hit {
		return http.DefaultTransport.RoundTrip(req)
	}
	if !l.deliver {
		return nil, errors.New("connection reset (simulated crash before sending)")
	}
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		resp.Body.Close()
	}
	return nil, errors.New("connection reset (simulated crash: the answer was lost)")
}

// A crash after the state file is written and before the commit's answer is
// recorded: the rerun reveals, exactly once, whether it runs before the
// commit deadline or only in the reveal window; a commit that never left
// the machine is abandoned after the deadline without touching the server.
func TestResumeAfterCrash(t *testing.T) {
	for _, c := range []struct {
		name      string
		deliver   bool
		rerunAt   func(r *arena.Round) time.Time
		committed bool // the rerun finds the commit on the server
	}{
		{"answer lost, rerun before the deadline", true, func(r *arena.Round) time.Time { return r.CommitDeadline.Add(-time.Minute) }, true},
		{"answer lost, rerun in the reveal window", true, func(r *arena.Round) time.Time { return r.RevealStart }, true},
		{"answer lost, rerun between the phases", true, func(r *arena.Round) time.Time { return r.CommitDeadline.Add(time.Minute) }, true},
		{"never sent, rerun in the reveal window", false, func(r *arena.Round) time.Time { return r.RevealStart }, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newServer(t, sqliteDB(t))
			r := s.round(t, 0)
			cl := s.client(t, c.name, "random")
			l := &lossy{suffix: "/commits", deliver: c.deliver, armed: true}
			cl.HTTP = &http.Client{Transport: l}
			rep, err := cl.RunOnce(context.Background())
			if err == nil || rep.Committed != 0 {
				t.Fatalf("crashing run: %+v, %v", rep, err)
			}
			st, ok := readState(t, cl, r.ID)
			if !ok || st.Committed || st.Salt == "" {
				t.Fatalf("state after the crash: %+v (the salt must be on disk before the commit leaves)", st)
			}
			if got := s.submission(t, r.ID, cl.Key.Address()) != nil; got != c.committed {
				t.Fatalf("server has the commit: %v", got)
			}
			s.clk.Set(c.rerunAt(r))
			rep, err = cl.RunOnce(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Run on until the reveal window is over.
			for _, at := range []time.Time{r.RevealStart, r.RevealStart.Add(time.Minute), r.RevealDeadline.Add(time.Minute)} {
				if s.clk.Now().Before(at) {
					s.clk.Set(at)
				}
				more, err := cl.RunOnce(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				rep.Committed += more.Committed
				rep.Revealed += more.Revealed
				rep.Abandoned += more.Abandoned
			}
			sub := s.submission(t, r.ID, cl.Key.Address())
			st, _ = readState(t, cl, r.ID)
			if c.committed {
				if counts(rep) != (participant.Report{Revealed: 1}) || sub == nil || !sub.Revealed() || !st.Revealed || st.Abandoned != "" {
					t.Fatalf("rerun: %+v, server %+v, state %+v", rep, sub, st)
				}
				if !slices.Equal(sub.Predictions, st.Predictions) || sub.Salt != st.Salt {
					t.Fatalf("revealed %v/%s, the state holds %v/%s", sub.Predictions, sub.Salt, st.Predictions, st.Salt)
				}
				if n := s.nonce(t, cl.Key.Address()); n != 2 {
					t.Fatalf("nonce %d: want exactly one commit and one reveal", n)
				}
			} else {
				if counts(rep) != (participant.Report{Abandoned: 1}) || sub != nil || !strings.Contains(st.Abandoned, "never received") {
					t.Fatalf("rerun: %+v, server %+v, state %+v", rep, sub, st)
				}
				if n := s.nonce(t, cl.Key.Address()); n != 0 {
					t.Fatalf("nonce %d: nothing was accepted", n)
				}
			}
		})
	}
	// A reveal whose answer is lost is not sent twice.
	t.Run("reveal answer lost", func(t *testing.T) {
		s := newServer(t, sqliteDB(t))
		r := s.round(t, 0)
		cl := s.client(t, "reveal lost", "market")
		run(t, cl, participant.Report{Committed: 1})
		cl.HTTP = &http.Client{Transport: &lossy{suffix: "/reveals", deliver: true, armed: true}}
		s.clk.Set(r.RevealStart)
		if _, err := cl.RunOnce(context.Background()); err == nil {
			t.Fatal("no error when the reveal answer was lost")
		}
		run(t, cl, participant.Report{ReasoningSent: 1})
		if st, _ := readState(t, cl, r.ID); !st.Revealed || !st.ReasoningSent {
			t.Fatalf("state %+v", st)
		}
		if n := s.nonce(t, cl.Key.Address()); n != 2 {
			t.Fatalf("nonce %d", n)
		}
	})
}

// A round that fails does not hold up the others, and the failure is
// reported; a missed reveal window and a vanished round are abandoned once.
func TestFailuresAndAbandonment(t *testing.T) {
	s := newServer(t, sqliteDB(t))
	r1 := s.round(t, 0)
	c := s.client(t, "tamper", "random")
	run(t, c, participant.Report{Committed: 1})
	// Corrupt the stored predictions: the reveal will not match the commit.
	tamperState(t, c, r1.ID, "predictions", []int{1, 2, 3})
	r2 := s.round(t, 2*time.Hour) // open while r1 reveals
	s.clk.Set(r1.RevealStart)
	rep, err := c.RunOnce(context.Background())
	if err == nil || arena.ErrorCode(err) != forecast.CodeCommitMismatch || !strings.Contains(err.Error(), fmt.Sprintf("round %d", r1.ID)) {
		t.Fatalf("failing round: %v", err)
	}
	if rep.Committed != 1 || s.submission(t, r2.ID, c.Key.Address()) == nil {
		t.Fatalf("the failing round %d held up round %d: %+v", r1.ID, r2.ID, rep)
	}
	// r1's reveal window closes: abandoned, once.
	s.clk.Set(r1.RevealDeadline.Add(time.Second))
	run(t, c, participant.Report{Abandoned: 1})
	run(t, c, participant.Report{})
	if st, _ := readState(t, c, r1.ID); !strings.Contains(st.Abandoned, "reveal window closed") {
		t.Fatalf("state %+v", st)
	}
	// A state file for a round the server does not know.
	os.WriteFile(filepath.Join(serverState(t, c), "round-9999.json"), []byte(`{"round_id":9999,"predictions":[1],"salt":"0x01","commit_hash":"0x02"}`), 0o600)
	rep, err = c.RunOnce(context.Background())
	if err != nil || rep.Abandoned != 1 {
		t.Fatalf("unknown round: %+v, %v", rep, err)
	}
	// A corrupt state file is reported with its path but does not stop the
	// run: the other rounds go on; it is never overwritten.
	corrupt := filepath.Join(serverState(t, c), "round-77.json")
	os.WriteFile(corrupt, []byte(`{"round_id":`), 0o600)
	s.clk.Set(r2.RevealStart)
	rep, err = c.RunOnce(context.Background())
	if err == nil || !strings.Contains(err.Error(), "round-77.json") {
		t.Fatalf("corrupt state: %v", err)
	}
	if rep.Revealed != 1 || !s.submission(t, r2.ID, c.Key.Address()).Revealed() {
		t.Fatalf("a corrupt state file held up round %d: %+v", r2.ID, rep)
	}
	if b, _ := os.ReadFile(corrupt); string(b) != `{"round_id":` {
		t.Fatalf("corrupt state file overwritten: %s", b)
	}
}

// A round that is full (409 round_full) is abandoned at once, not
// retried by every later run until its commit deadline.
func TestRoundFullAbandoned(t *testing.T) {
	db := sqliteDB(t)
	s := newServer(t, db)
	s.svc.Admission = rounds.Admission{Store: db, MaxAgentsPerRound: 1}
	r := s.round(t, 0)
	run(t, s.client(t, "first", "random"), participant.Report{Committed: 1})
	late := s.client(t, "late", "random")
	run(t, late, participant.Report{Abandoned: 1})
	run(t, late, participant.Report{})
	if st, _ := readState(t, late, r.ID); !strings.Contains(st.Abandoned, "round was full") || st.Committed {
		t.Fatalf("state %+v", st)
	}
}

// Round ids are per server: one state directory used against two
// servers keeps their rounds apart, and a state whose round differs from
// the server's (a reset database) is abandoned, not revealed into it.
func TestStatePerServer(t *testing.T) {
	a, b := newServer(t, sqliteDB(t)), newServer(t, sqliteDB(t))
	ra, rb := a.round(t, 0), b.round(t, 0)
	if ra.ID != rb.ID {
		t.Fatalf("round ids %d, %d: the test needs the same id on both", ra.ID, rb.ID)
	}
	ca := a.client(t, "two servers", "random")
	cb := b.client(t, "two servers", "random")
	cb.StateDir = ca.StateDir
	run(t, ca, participant.Report{Committed: 1})
	run(t, cb, participant.Report{Committed: 1})
	if a.submission(t, ra.ID, ca.Key.Address()) == nil || b.submission(t, rb.ID, cb.Key.Address()) == nil {
		t.Fatal("each server must have its own commit")
	}
	for _, s := range []*arenaServer{a, b} {
		s.clk.Set(ra.RevealStart)
	}
	run(t, ca, participant.Report{Revealed: 1})
	run(t, cb, participant.Report{Revealed: 1})

	// The server's round under the stored id is another round.
	c := newServer(t, sqliteDB(t))
	r := c.round(t, 0)
	cl := c.client(t, "reset", "random")
	run(t, cl, participant.Report{Committed: 1})
	tamperState(t, cl, r.ID, "market_ids", []int64{101, 102, 103})
	c.clk.Set(r.RevealStart)
	run(t, cl, participant.Report{Abandoned: 1})
	if st, _ := readState(t, cl, r.ID); !strings.Contains(st.Abandoned, "not the one prepared") {
		t.Fatalf("state %+v", st)
	}
	if c.submission(t, r.ID, cl.Key.Address()).Revealed() {
		t.Fatal("revealed into another round")
	}
}

// A state directory written by an earlier version (round files at its
// root) is moved into the server's subdirectory and resumed.
func TestLegacyStateMigrated(t *testing.T) {
	s := newServer(t, sqliteDB(t))
	r := s.round(t, 0)
	c := s.client(t, "legacy", "random")
	run(t, c, participant.Report{Committed: 1})
	name := fmt.Sprintf("round-%d.json", r.ID)
	if err := os.Rename(filepath.Join(serverState(t, c), name), filepath.Join(c.StateDir, name)); err != nil {
		t.Fatal(err)
	}
	s.clk.Set(r.RevealStart)
	run(t, c, participant.Report{Revealed: 1})
	if st, ok := readState(t, c, r.ID); !ok || !st.Revealed {
		t.Fatalf("state after migration %+v", st)
	}
}

// Reasoning the server refuses for good (4xx) is given up with a note,
// once; the round is then complete instead of retried on every run.
func TestReasoningRefusedGivenUp(t *testing.T) {
	s := newServer(t, sqliteDB(t))
	r := s.round(t, 0)
	c := s.client(t, "bad reasoning", "market")
	run(t, c, participant.Report{Committed: 1})
	tamperState(t, c, r.ID, "reasoning", []string{"not", "what was", "committed"})
	s.clk.Set(r.RevealStart)
	rep, err := c.RunOnce(context.Background())
	if arena.ErrorCode(err) != forecast.CodeReasoningMismatch || rep.Revealed != 1 {
		t.Fatalf("first run: %+v, %v", rep, err)
	}
	run(t, c, participant.Report{})
	var st struct {
		GivenUp string `json:"reasoning_given_up"`
	}
	raw, _ := os.ReadFile(filepath.Join(serverState(t, c), fmt.Sprintf("round-%d.json", r.ID)))
	if json.Unmarshal(raw, &st); !strings.Contains(st.GivenUp, forecast.CodeReasoningMismatch) {
		t.Fatalf("state %s: want the refusal noted", raw)
	}
}

// Overlapping runs (cron) never race: the second fails fast.
func TestStateLock(t *testing.T) {
	s := newServer(t, sqliteDB(t))
	s.round(t, 0)
	c := s.client(t, "locked", "random")
	if err := os.MkdirAll(c.StateDir, 0o700); err != nil {
		t.Fatal(err)
	}
	l := flock.New(filepath.Join(c.StateDir, "lock"))
	if err := l.Lock(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.RunOnce(context.Background()); err == nil || !strings.Contains(err.Error(), "another run") {
		t.Fatalf("run under a held lock: %v", err)
	}
	l.Unlock()
	run(t, c, participant.Report{Committed: 1})
}

func TestStrategies(t *testing.T) {
	ctx := context.Background()
	a, b := testKey("a").Address(), testKey("b").Address()
	p := 0.4567
	r := &forecast.RoundJSON{ID: 12, Markets: []forecast.RoundMarketJSON{{Price: &p}, {}, {Price: new(float64)}}}
	ra, _ := participant.NewStrategy("random", a)
	rb, _ := participant.NewStrategy("random", b)
	p1, _, _ := ra.Forecast(ctx, r)
	p2, _, _ := ra.Forecast(ctx, r)
	p3, _, _ := rb.Forecast(ctx, r)
	if !slices.Equal(p1, p2) || slices.Equal(p1, p3) || len(p1) != 3 || forecast.CheckPredictions(p1, 3) != nil {
		t.Fatalf("random: %v %v %v (same agent and round → same forecast; another agent differs)", p1, p2, p3)
	}
	var sum float64
	for id := uint64(1); id <= 2000; id++ {
		ps, _, _ := ra.Forecast(ctx, &forecast.RoundJSON{ID: id, Markets: make([]forecast.RoundMarketJSON, 5)})
		for _, v := range ps {
			sum += float64(v) / 1e4
		}
	}
	if mean := sum / 10000; math.Abs(mean-0.5) > 0.02 {
		t.Fatalf("random mean %.3f, want ≈ 0.5 (uniform)", mean)
	}
	m, _ := participant.NewStrategy("market", a)
	ps, reasons, _ := m.Forecast(ctx, r)
	if !slices.Equal(ps, []uint16{4567, 5000, 0}) || len(reasons) != 3 {
		t.Fatalf("market: %v %q", ps, reasons)
	}
	if _, err := strategy.NewSim(nil, "informed-0.05", nil, nil); err == nil {
		t.Fatal("sim without a world")
	}
	if _, err := participant.NewStrategy("oracle", a); err == nil {
		t.Fatal("unknown strategy accepted")
	}
	// sim: the informed agent of the simulator world, seen through the
	// server's market ids.
	w, err := sim.New(sim.Config{Seed: 3, Markets: 20})
	if err != nil {
		t.Fatal(err)
	}
	at := w.Config().Start.Add(48 * time.Hour)
	var open []*arena.Market
	for _, mk := range w.MarketsAt(at) {
		if mk.Status == arena.StatusOpen {
			open = append(open, mk)
		}
	}
	lookup := func(_ context.Context, id int64) (string, string, error) {
		return arena.SourceSim, open[id].SourceID, nil
	}
	st, err := strategy.NewSim(w, "informed-0.05", lookup, nil)
	if err != nil {
		t.Fatal(err)
	}
	rr := &forecast.RoundJSON{ID: 1, CommitDeadline: at.Add(time.Minute), Markets: []forecast.RoundMarketJSON{{MarketID: 0}, {MarketID: 1}}}
	got, _, err := st.Forecast(ctx, rr)
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		want, err := w.ForecastBPS("informed-0.05", open[i].SourceID, at)
		if err != nil || got[i] != want {
			t.Fatalf("sim forecast %d: %d, world says %d (%v)", i, got[i], want, err)
		}
	}
	notSim := func(_ context.Context, id int64) (string, string, error) { return "polymarket", "1", nil }
	st, _ = strategy.NewSim(w, "informed-0.05", notSim, nil)
	if _, _, err := st.Forecast(ctx, rr); err == nil {
		t.Fatal("sim strategy forecast a non-simulator market")
	}
}

// SetProfile normalises, signs the next version under the server's domain
// (a chain id here) and returns what the server stored; what the server
// would refuse is refused before anything is sent; a profile set while
// the agent has commits signed does not make them stale.
func TestSetProfile(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		s := newServer(t, db)
		c := s.client(t, "profiled", "market")
		k := c.Key
		got, err := c.SetProfile(ctx, forecast.ProfileFields{Name: "  Ｐｒｏｆｉｌｅｄ  Agent ", Model: "m-1"})
		if err != nil || got.Name != "Profiled Agent" || got.Model != "m-1" || got.Version != 1 || got.Agent != k.Address().Hex() {
			t.Fatalf("first profile: %+v %v", got, err)
		}
		r := s.round(t, 0)
		if _, err := c.RunOnce(ctx); err != nil {
			t.Fatal(err)
		}
		if got, err = c.SetProfile(ctx, forecast.ProfileFields{Name: "Profiled Agent", Homepage: "https://p.example"}); err != nil || got.Version != 2 {
			t.Fatalf("update: %+v %v", got, err)
		}
		if _, err := c.SetProfile(ctx, forecast.ProfileFields{Name: "x", Homepage: "ftp://p.example"}); arena.ErrorCode(err) != forecast.CodeProfileHomepageInvalid {
			t.Fatalf("a homepage the server refuses: %v", err)
		}
		other := &participant.Client{Server: s.url, Key: testKey("other"), StateDir: t.TempDir(), Now: s.clk.Now, Logger: quiet}
		if _, err := other.SetProfile(ctx, forecast.ProfileFields{Name: "PROFILED AGENT"}); arena.ErrorCode(err) != forecast.CodeProfileNameTaken {
			t.Fatalf("another agent's name: %v", err)
		}
		s.clk.Set(r.RevealStart.Add(time.Minute))
		rep, err := c.RunOnce(ctx)
		if err != nil || rep.Revealed != 1 || s.nonce(t, k.Address()) != 2 {
			t.Fatalf("the reveal after two profile updates: %+v %v, nonce %d", rep, err, s.nonce(t, k.Address()))
		}
		a, err := db.Agent(ctx, k.Address().Hex())
		if err != nil || a.Name != "Profiled Agent" || a.Homepage != "https://p.example" || a.ProfileVersion != 2 {
			t.Fatalf("stored %+v %v", a, err)
		}
	})
}
