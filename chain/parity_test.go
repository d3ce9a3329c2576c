package chain

import (
	"context"
	"errors"
	"math/big"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	ethereum "github.com/ethereum/go-ethereum"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/testscale"
)

// payout vectors of the condition pool: index 0 is YES.
var payouts = [][]int64{
	{1, 0}, {0, 1}, {1, 0}, {0, 1}, {7, 0}, {0, 2}, // YES / NO, any denominator
	{1, 1}, {3, 1}, // split: void
	nil, // unresolved
}

// goOutcome is the outcome rule stated independently of the contract.
func goOutcome(p []int64) int8 {
	switch {
	case p == nil:
		return scoring.OutcomeExcluded
	case p[1] == 0:
		return scoring.OutcomeYes
	case p[0] == 0:
		return scoring.OutcomeNo
	}
	return scoring.OutcomeExcluded
}

type parityRound struct {
	id       uint64
	conds    []int // indices into the pool
	bench    []uint16
	entries  []signed
	forfeits []bool
}

// On random rounds (agents, forecasts, benchmarks, outcomes including
// void, unresolved and no-benchmark markets, forfeits) every on-chain score
// equals scoring.ScoreRound's to the unit in bps². ARENA_CHAIN_PARITY_ROUNDS
// overrides the number of rounds (1000 at full size, 100 otherwise).
func TestScoringParityRandomRounds(t *testing.T) {
	rounds := testscale.Size(100, 1000)
	if v := os.Getenv("ARENA_CHAIN_PARITY_ROUNDS"); v != "" {
		rounds, _ = strconv.Atoi(v)
	}
	start := time.Now()
	const nAgents = 8
	e := newEnv(t, nAgents)
	rng := rand.New(rand.NewPCG(12, 34))
	ctx := context.Background()

	// The condition pool: every payout vector several times.
	pool := make([][32]byte, 0, 4*len(payouts))
	poolPayout := make([][]int64, 0, 4*len(payouts))
	var txs []*types.Transaction
	for rep := range 4 {
		for j, p := range payouts {
			c := cid(1000 + rep*100 + j)
			pool = append(pool, c)
			poolPayout = append(poolPayout, p)
			if p != nil {
				tx, err := e.ctf.ReportPayouts(e.fixedOpts(1_000_000), c, []*big.Int{big.NewInt(p[0]), big.NewInt(p[1])})
				if err != nil {
					t.Fatal(err)
				}
				txs = append(txs, tx)
			}
		}
	}
	flush := func() {
		// The block builder may leave part of a burst for the next block.
		for attempt := 0; len(txs) > 0; attempt++ {
			if attempt == 10 {
				t.Fatalf("%d transactions not mined after %d blocks", len(txs), attempt)
			}
			e.sim.Commit()
			pending := txs[:0]
			for _, tx := range txs {
				r, err := e.client.TransactionReceipt(ctx, tx.Hash())
				if errors.Is(err, ethereum.NotFound) {
					pending = append(pending, tx)
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if r.Status != types.ReceiptStatusSuccessful {
					t.Fatalf("transaction %s reverted (gas used %d of %d)", tx.Hash().Hex(), r.GasUsed, tx.Gas())
				}
			}
			txs = pending
		}
	}
	send := func(tx *types.Transaction, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		txs = append(txs, tx)
		if len(txs) >= 64 {
			flush()
		}
	}
	flush()

	s := e.schedule()
	s.grace = 0
	nonces := make([]uint64, nAgents)
	dl := e.now() + 3000
	rs := make([]*parityRound, rounds)
	randPred := func() uint16 {
		switch rng.IntN(10) {
		case 0:
			return 0
		case 1:
			return forecast.MaxBps
		}
		return uint16(rng.IntN(forecast.MaxBps + 1))
	}
	for i := range rs {
		r := &parityRound{id: uint64(i + 1)}
		k := 1 + rng.IntN(10)
		cids := make([][32]byte, k)
		for j := range k {
			r.conds = append(r.conds, rng.IntN(len(pool)))
			cids[j] = pool[r.conds[j]]
			b := uint16(rng.IntN(forecast.MaxBps + 1))
			if rng.IntN(5) == 0 {
				b = 0xffff
			}
			r.bench = append(r.bench, b)
		}
		send(e.rm.CreateRound(e.fixedOpts(1_000_000), u(r.id), cids, s.commitDeadline, s.revealStart, s.revealDeadline, s.grace))
		for _, a := range rng.Perm(nAgents)[:rng.IntN(6)] {
			preds := make([]uint16, k)
			for j := range preds {
				preds[j] = randPred()
			}
			sc := e.signCommit(a, r.id, preds, nonces[a], dl)
			nonces[a]++
			r.entries = append(r.entries, sc)
			r.forfeits = append(r.forfeits, rng.IntN(4) == 0)
			send(e.sendCommit(e.fixedOpts(500_000), sc))
		}
		rs[i] = r
	}
	flush()
	e.warp(s.revealStart)
	dl = e.now() + 3000
	for _, r := range rs {
		send(e.rm.SetBenchmarks(e.fixedOpts(1_000_000), u(r.id), r.bench))
		for j, sc := range r.entries {
			if r.forfeits[j] {
				continue
			}
			a := sc.agentIdx
			send(e.sendReveal(e.fixedOpts(500_000), e.signReveal(sc, nonces[a], dl)))
			nonces[a]++
		}
	}
	flush()
	e.warp(s.revealDeadline + 1)
	// Rounds with no YES/NO market and some unresolved one cannot be
	// triggered; the contract must refuse them.
	var untriggerable []*parityRound
	for _, r := range rs {
		scoreable, resolved := 0, 0
		for _, c := range r.conds {
			if poolPayout[c] != nil {
				resolved++
			}
			if goOutcome(poolPayout[c]) != scoring.OutcomeExcluded {
				scoreable++
			}
		}
		if scoreable == 0 && resolved < len(r.conds) {
			untriggerable = append(untriggerable, r)
			continue
		}
		send(e.arena.TriggerOutcomes(e.fixedOpts(1_000_000), u(r.id)))
		send(e.arena.ScoreBatch(e.fixedOpts(5_000_000), u(r.id), u(64)))
	}
	flush()
	for _, r := range untriggerable {
		tx, err := e.arena.TriggerOutcomes(e.opts(), u(r.id))
		e.unsent()
		e.reverts(forecast.CodeNoResolvedMarkets, tx, err)
	}

	agentsScored := 0
	for _, r := range rs {
		res, err := e.arena.ResultOf(nil, u(r.id))
		if err != nil {
			t.Fatal(err)
		}
		if !res.Triggered {
			continue
		}
		markets := make([]scoring.MarketOutcome, len(r.conds))
		for j, c := range r.conds {
			markets[j] = scoring.MarketOutcome{MarketID: int64(j), Outcome: goOutcome(poolPayout[c]), Benchmark: int32(r.bench[j])}
			if r.bench[j] == 0xffff {
				markets[j].Benchmark = scoring.NoBenchmark
			}
		}
		entries := make([]scoring.Entry, len(r.entries))
		for j, sc := range r.entries {
			if r.forfeits[j] {
				entries[j] = scoring.Entry{Forfeit: true}
			} else {
				entries[j] = scoring.Entry{Predictions: sc.preds}
			}
		}
		want, err := scoring.ScoreRound(markets, entries)
		if err != nil {
			t.Fatal(err)
		}
		if int(res.Scored) != want.N || int(res.Benchmarked) != want.AlphaN || res.BaseBrierBps2.Int64() != want.BaseBrierBps2 {
			t.Fatalf("round %d: chain N=%d A=%d base=%s, Go N=%d A=%d base=%d", r.id, res.Scored, res.Benchmarked, res.BaseBrierBps2, want.N, want.AlphaN, want.BaseBrierBps2)
		}
		for j, sc := range r.entries {
			got, err := e.arena.ScoreOf(nil, u(r.id), sc.commit.Agent)
			if err != nil {
				t.Fatal(err)
			}
			w := want.Agents[j]
			if !got.Scored || got.Forfeit != w.Forfeit || got.BrierBps2 != w.BrierBps2 || got.AlphaBps2 != w.AlphaBps2 {
				t.Fatalf("round %d agent %d: chain %+v, Go %+v", r.id, j, got, w)
			}
			agentsScored++
		}
	}
	if agentsScored < rounds {
		t.Fatalf("only %d agent scores compared over %d rounds", agentsScored, rounds)
	}
	t.Logf("%d rounds (%d untriggerable refused), %d agent scores equal on chain and in Go, %s", rounds, len(untriggerable), agentsScored, time.Since(start).Round(time.Millisecond))
}

// Gas per call, bounded; scoring a batch costs the same whatever the
// number of agents in the round.
func TestGasBounds(t *testing.T) {
	const k = 7
	e := newEnv(t, 1)
	s := e.schedule()
	cids := make([][32]byte, k)
	for i := range cids {
		cids[i] = cid(i)
	}
	gas := map[string]uint64{}
	gas["createRound(k=7)"] = e.mine(e.rm.CreateRound(e.opts(), u(1), cids, s.commitDeadline, s.revealStart, s.revealDeadline, 0)).GasUsed
	e.mine(e.rm.CreateRound(e.opts(), u(2), cids, s.commitDeadline, s.revealStart, s.revealDeadline, 0))
	preds := []uint16{100, 2000, 3000, 4000, 5000, 6000, 9999}
	// Round 1: one agent. Round 2: 200 agents (the commits come from keys
	// made here; only their signatures matter).
	a := e.signCommit(0, 1, preds, 0, e.now()+3000)
	gas["commitWithSignature"] = e.mine(e.sendCommit(e.opts(), a)).GasUsed
	var crowd []signed
	for i := range 200 {
		idx, nonce := 0, uint64(1) // agent 0 committed in round 1 already
		if i > 0 {
			key, err := crypto.GenerateKey()
			if err != nil {
				t.Fatal(err)
			}
			e.agents = append(e.agents, key)
			idx, nonce = len(e.agents)-1, 0
		}
		sc := e.signCommit(idx, 2, preds, nonce, e.now()+3000)
		crowd = append(crowd, sc)
		if _, err := e.sendCommit(e.fixedOpts(500_000), sc); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			e.sim.Commit()
		}
	}
	e.sim.Commit()
	if pc, _ := e.arena.ParticipantCount(nil, u(2)); pc.Int64() != 200 {
		t.Fatalf("round 2 has %v participants", pc)
	}
	e.warp(s.revealStart)
	e.mine(e.rm.SetBenchmarks(e.opts(), u(1), []uint16{5000, 5000, 5000, 5000, 5000, 5000, 0xffff}))
	e.mine(e.rm.SetBenchmarks(e.opts(), u(2), []uint16{5000, 5000, 5000, 5000, 5000, 5000, 0xffff}))
	gas["revealWithSignature(k=7)"] = e.mine(e.sendReveal(e.opts(), e.signReveal(a, 2, e.now()+3000))).GasUsed
	for i, sc := range crowd {
		nonce := uint64(1)
		if i == 0 {
			nonce = 3 // commit 1, commit 2, reveal 1
		}
		if _, err := e.sendReveal(e.fixedOpts(500_000), e.signReveal(sc, nonce, e.now()+3000)); err != nil {
			t.Fatal(err)
		}
		if i%50 == 49 {
			e.sim.Commit()
		}
	}
	e.sim.Commit()
	e.warp(s.revealDeadline + 1)
	for i := range k {
		e.report(cids[i], int64(i%2), int64(1-i%2))
	}
	gas["triggerOutcomes(k=7)"] = e.mine(e.arena.TriggerOutcomes(e.opts(), u(1))).GasUsed
	if g := e.mine(e.arena.TriggerOutcomes(e.opts(), u(2))).GasUsed; g != gas["triggerOutcomes(k=7)"] {
		t.Fatalf("trigger gas %d with 200 agents, %d with 1", g, gas["triggerOutcomes(k=7)"])
	}
	gas["scoreBatch(1 agent)"] = e.mine(e.arena.ScoreBatch(e.opts(), u(1), u(64))).GasUsed
	first := e.mine(e.arena.ScoreBatch(e.opts(), u(2), u(64))).GasUsed
	second := e.mine(e.arena.ScoreBatch(e.opts(), u(2), u(64))).GasUsed
	gas["scoreBatch(64 agents)"] = first
	if diff := int64(first) - int64(second); diff < -int64(first)/50 || diff > int64(first)/50 {
		t.Fatalf("scoreBatch of 64 costs %d then %d: depends on the position in the round", first, second)
	}
	e.mine(e.arena.ScoreBatch(e.opts(), u(2), u(64)))
	e.mine(e.arena.ScoreBatch(e.opts(), u(2), u(64)))
	if done, _ := e.arena.ScoringDone(nil, u(2)); !done {
		t.Fatal("200 agents not scored in 4 batches")
	}
	bounds := map[string]uint64{
		"createRound(k=7)":         350_000,
		"commitWithSignature":      200_000,
		"revealWithSignature(k=7)": 200_000,
		"triggerOutcomes(k=7)":     300_000,
		"scoreBatch(1 agent)":      150_000,
		"scoreBatch(64 agents)":    5_000_000,
	}
	for name, g := range gas {
		t.Logf("gas %-26s %9d (bound %d)", name, g, bounds[name])
		if g > bounds[name] {
			t.Errorf("%s used %d gas, bound %d", name, g, bounds[name])
		}
	}
}
