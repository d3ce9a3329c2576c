package chain

import (
	"math/big"
	"testing"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
)

// The contract hashes exactly as package forecast does, including the
// deployed Foresight Arena format's published vector.
func TestHashesMatchForecast(t *testing.T) {
	e := newEnv(t, 1)
	var salt [32]byte
	salt[31] = 1
	compat, err := e.arena.CompatCommitHash(nil, u(1), []uint16{7500, 3000}, salt)
	if err != nil {
		t.Fatal(err)
	}
	const vector = "0x64ae6dbf6bb178fe94aeaf851583af73f26bc2d59aa9a124e1de0570cccf09f5"
	if got := common.Hash(compat).Hex(); got != vector || forecast.CompatCommitHash(1, []uint16{7500, 3000}, salt).Hex() != vector {
		t.Fatalf("compat commit hash %s, want %s", got, vector)
	}
	sep, err := e.arena.DomainSeparator(nil)
	if err != nil {
		t.Fatal(err)
	}
	if common.Hash(sep) != e.domain.Separator() {
		t.Fatalf("domain separator %x, Go %s", sep, e.domain.Separator().Hex())
	}
	for i := range 20 {
		preds := make([]uint16, 1+i%9)
		for j := range preds {
			preds[j] = uint16((i*7919 + j*104729) % 10001)
		}
		salt, _ := forecast.NewSalt()
		agent := common.BytesToAddress(crypto.Keccak256([]byte{byte(i)}))
		round := uint64(i*1000 + 1)
		h, err := e.arena.CommitHashOf(nil, u(round), agent, preds, salt)
		if err != nil {
			t.Fatal(err)
		}
		if common.Hash(h) != forecast.CommitHash(round, agent, preds, salt) {
			t.Fatalf("case %d: commit hash differs", i)
		}
		ph, _ := e.arena.PredictionsHash(nil, preds)
		if common.Hash(ph) != forecast.PredictionsHash(preds) {
			t.Fatalf("case %d: predictions hash differs", i)
		}
		c := forecast.Commit{RoundID: round, CommitHash: h, ReasoningHash: salt, Agent: agent, Nonce: uint64(i), Deadline: uint64(1e9 + i)}
		cd, _ := e.arena.CommitDigest(nil, u(round), c.CommitHash, c.ReasoningHash, agent, u(c.Nonce), u(c.Deadline))
		if common.Hash(cd) != e.domain.CommitDigest(c) {
			t.Fatalf("case %d: commit digest differs", i)
		}
		r := forecast.Reveal{RoundID: round, Predictions: preds, Salt: salt, Agent: agent, Nonce: uint64(i), Deadline: uint64(1e9 + i)}
		rd, _ := e.arena.RevealDigest(nil, u(round), ph, salt, agent, u(r.Nonce), u(r.Deadline))
		if common.Hash(rd) != e.domain.RevealDigest(r) {
			t.Fatalf("case %d: reveal digest differs", i)
		}
	}
}

// Every rejection of a signed submission happens on chain too, with the
// same code as off chain, and changes nothing (the agent's nonce, the
// round's participants).
func TestSignedSubmissionRejections(t *testing.T) {
	e := newEnv(t, 2)
	s := e.schedule()
	cids := [][32]byte{cid(1), cid(2), cid(3)}
	e.createRound(1, cids, s)
	e.createRound(2, cids, s)
	e.mine(e.rm.InvalidateRound(e.opts(), u(2)))
	now := e.now()
	dl := now + 600
	preds := []uint16{1000, 5000, 10000}

	good := e.signCommit(0, 1, preds, 0, dl)
	tamper := func(f func(sig []byte)) signed {
		c := good
		c.sig = append([]byte(nil), good.sig...)
		f(c.sig)
		return c
	}
	otherDomain := func(d forecast.Domain) signed {
		c := good
		c.sig, _ = forecast.Sign(e.agents[0], d.CommitDigest(c.commit))
		return c
	}
	n := new(big.Int).SetBytes(common.FromHex("fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141"))
	highS := tamper(func(sig []byte) {
		s := new(big.Int).SetBytes(sig[32:64])
		new(big.Int).Sub(n, s).FillBytes(sig[32:64])
		sig[64] ^= 27 ^ 28
	})
	commitCases := []struct {
		name string
		s    signed
		code string
	}{
		{"short signature", func() signed { c := good; c.sig = good.sig[:64]; return c }(), forecast.CodeSignatureMalformed},
		{"v=1", tamper(func(sig []byte) { sig[64] -= 27 }), forecast.CodeSignatureV},
		{"r=0", tamper(func(sig []byte) { clear(sig[:32]) }), forecast.CodeSignatureInvalid},
		{"s≥n", tamper(func(sig []byte) { n.FillBytes(sig[32:64]) }), forecast.CodeSignatureInvalid},
		{"high s", highS, forecast.CodeSignatureHighS},
		{"other signer", func() signed {
			c := good
			c.sig, _ = forecast.Sign(e.agents[1], e.domain.CommitDigest(c.commit))
			return c
		}(), forecast.CodeSignerMismatch},
		{"other chain id", otherDomain(forecast.Domain{ChainID: 1, Contract: e.domain.Contract}), forecast.CodeSignerMismatch},
		{"other contract", otherDomain(forecast.Domain{ChainID: simChainID, Contract: e.addrs.RoundManager}), forecast.CodeSignerMismatch},
		{"round not found", e.signCommit(0, 9, preds, 0, dl), forecast.CodeRoundNotFound},
		{"round invalidated", e.signCommit(0, 2, preds, 0, dl), forecast.CodeRoundInvalidated},
		{"deadline expired", e.signCommit(0, 1, preds, 0, now-1), forecast.CodeDeadlineExpired},
		{"deadline too far", e.signCommit(0, 1, preds, 0, now+24*3600+60), forecast.CodeDeadlineTooFar},
		{"nonce ahead", e.signCommit(0, 1, preds, 1, dl), forecast.CodeNonceInvalid},
	}
	for _, c := range commitCases {
		tx, err := e.sendCommit(e.opts(), c.s)
		e.unsent()
		t.Run("commit/"+c.name, func(t *testing.T) { e.t = t; e.reverts(c.code, tx, err) })
	}
	e.t = t
	if e.agentNonce(0) != 0 {
		t.Fatal("a rejected commit changed the nonce")
	}
	if pc, _ := e.arena.ParticipantCount(nil, u(1)); pc.Sign() != 0 {
		t.Fatal("a rejected commit added a participant")
	}

	e.mine(e.sendCommit(e.opts(), good))
	// The same signed message again: already committed (before the stale nonce).
	tx, err := e.sendCommit(e.opts(), good)
	e.unsent()
	e.reverts(forecast.CodeAlreadyCommitted, tx, err)
	// Agent 1 copies agent 0's commit hash: accepted as a commit, but it can
	// never be revealed with agent 0's predictions (the hash binds the address).
	copied := e.signCommit(1, 1, preds, 0, dl)
	copied.commit.CommitHash = good.commit.CommitHash
	copied.sig, _ = forecast.Sign(e.agents[1], e.domain.CommitDigest(copied.commit))
	copied.salt = good.salt
	e.mine(e.sendCommit(e.opts(), copied))

	// Reveals before the window.
	rv := e.signReveal(good, 1, e.now()+600)
	tx, err = e.sendReveal(e.opts(), rv)
	e.unsent()
	e.reverts(forecast.CodeRevealNotOpen, tx, err)
	// Commits after the deadline.
	e.warp(s.revealStart)
	late := e.signCommit(0, 1, preds, 1, e.now()+600)
	tx, err = e.sendCommit(e.opts(), late)
	e.unsent()
	e.reverts(forecast.CodeCommitClosed, tx, err)

	dl = e.now() + 600
	rv = e.signReveal(good, 1, dl)
	wrongCount := good
	wrongCount.preds = preds[:2]
	wrongRange := good
	wrongRange.preds = []uint16{1000, 5000, 10001}
	wrongSalt := good
	wrongSalt.salt[0] ^= 1
	notCommitted := e.signCommit(1, 1, preds, 0, dl)
	notCommitted.commit.RoundID = 3 // never committed in round 3; the round does not exist either
	revealCases := []struct {
		name string
		s    signed
		code string
	}{
		{"prediction count", e.signReveal(wrongCount, 1, dl), forecast.CodePredictionCount},
		{"prediction range", e.signReveal(wrongRange, 1, dl), forecast.CodePredictionRange},
		{"wrong salt", e.signReveal(wrongSalt, 1, dl), forecast.CodeCommitMismatch},
		{"stale nonce", e.signReveal(good, 0, dl), forecast.CodeNonceInvalid},
		{"deadline expired", e.signReveal(good, 1, e.now()-1), forecast.CodeDeadlineExpired},
		{"copied commit", e.signReveal(copied, 1, dl), forecast.CodeCommitMismatch},
		{"round not found", e.signReveal(notCommitted, 0, dl), forecast.CodeRoundNotFound},
	}
	for _, c := range revealCases {
		tx, err := e.sendReveal(e.opts(), c.s)
		e.unsent()
		t.Run("reveal/"+c.name, func(t *testing.T) { e.t = t; e.reverts(c.code, tx, err) })
	}
	e.t = t
	// Agent 0 has a nonce of 1 (one accepted commit) and has not revealed.
	if e.agentNonce(0) != 1 {
		t.Fatalf("nonce %d after rejected reveals, want 1", e.agentNonce(0))
	}
	// An agent without a commit in an existing round.
	e.createRound(4, cids, schedule{commitDeadline: e.now() + 10, revealStart: e.now() + 11, revealDeadline: e.now() + 5000})
	e.warp(e.now() + 20)
	nc := e.signCommit(1, 4, preds, 1, e.now()+600)
	tx, err = e.sendReveal(e.opts(), e.signReveal(nc, 1, e.now()+600))
	e.unsent()
	e.reverts(forecast.CodeNotCommitted, tx, err)

	e.mine(e.sendReveal(e.opts(), rv))
	tx, err = e.sendReveal(e.opts(), e.signReveal(good, 2, e.now()+600))
	e.unsent()
	e.reverts(forecast.CodeAlreadyRevealed, tx, err)
	sub, err := e.arena.SubmissionOf(nil, u(1), e.agent(0))
	if err != nil || !sub.Revealed || len(sub.Predictions) != 3 || sub.Predictions[2] != 10000 {
		t.Fatalf("submission %+v, %v", sub, err)
	}
	e.warp(s.revealDeadline + 1)
	tx, err = e.sendReveal(e.opts(), e.signReveal(copied, 1, e.now()+600))
	e.unsent()
	e.reverts(forecast.CodeRevealClosed, tx, err)
}

// The direct (msg.sender) paths share the agent's nonce with the signed ones.
func TestDirectSubmissionSharesNonce(t *testing.T) {
	e := newEnv(t, 1)
	s := e.schedule()
	e.createRound(1, [][32]byte{cid(1)}, s)
	salt, _ := forecast.NewSalt()
	preds := []uint16{4200}
	e.mine(e.arena.Commit(e.agentOpts(0), u(1), forecast.CommitHash(1, e.agent(0), preds, salt), [32]byte{}))
	if e.agentNonce(0) != 1 {
		t.Fatalf("nonce %d after a direct commit", e.agentNonce(0))
	}
	e.warp(s.revealStart)
	tx, err := e.arena.Reveal(e.agentOpts(0), u(1), []uint16{4201}, salt)
	e.reverts(forecast.CodeCommitMismatch, tx, err)
	e.mine(e.arena.Reveal(e.agentOpts(0), u(1), preds, salt))
	if e.agentNonce(0) != 2 {
		t.Fatalf("nonce %d after a direct reveal", e.agentNonce(0))
	}
}

// Outcomes: index 0 of the payout vector is YES; split payouts are void;
// unresolved conditions are excluded; a commit without reveal is a forfeit.
// The on-chain result equals scoring.ScoreRound's.
func TestTriggerForfeitSplitAndParity(t *testing.T) {
	e := newEnv(t, 3)
	s := e.schedule()
	cids := [][32]byte{cid(1), cid(2), cid(3), cid(4), cid(5)}
	e.createRound(1, cids, s)
	dl := e.now() + 600
	a := e.signCommit(0, 1, []uint16{9000, 2000, 5000, 7000, 0}, 0, dl)
	b := e.signCommit(1, 1, []uint16{100, 9900, 5000, 5000, 10000}, 0, dl)
	c := e.signCommit(2, 1, []uint16{6000, 6000, 6000, 6000, 6000}, 0, dl)
	for _, x := range []signed{a, b, c} {
		e.mine(e.sendCommit(e.opts(), x))
	}
	tx, err := e.arena.ScoreBatch(e.opts(), u(1), u(10))
	e.unsent()
	e.reverts("not_triggered", tx, err)
	e.warp(s.commitDeadline + 1)
	tx, err = e.rm.SetBenchmarks(e.agentOpts(0), u(1), []uint16{5000, 5000, 5000, 5000, 5000})
	e.reverts("not_curator", tx, err)
	tx, err = e.rm.SetBenchmarks(e.opts(), u(1), []uint16{8000, 3000, 10001, 5000, 5000})
	e.unsent()
	e.reverts("benchmark_range", tx, err)
	noBench := uint16(0xffff)
	bench := []uint16{8000, 3000, 5000, noBench, 6000}
	e.mine(e.rm.SetBenchmarks(e.opts(), u(1), bench))
	e.warp(s.revealStart)
	dl = e.now() + 600
	e.mine(e.sendReveal(e.opts(), e.signReveal(a, 1, dl)))
	e.mine(e.sendReveal(e.opts(), e.signReveal(c, 1, dl)))
	// b never reveals: forfeit.

	tx, err = e.arena.TriggerOutcomes(e.opts(), u(1))
	e.unsent()
	e.reverts(forecast.CodeTriggerNotAllowed, tx, err) // before the reveal deadline
	e.warp(s.revealDeadline + 1)
	// Nothing resolved yet.
	tx, err = e.arena.TriggerOutcomes(e.agentOpts(0), u(1))
	e.reverts(forecast.CodeNoResolvedMarkets, tx, err)
	e.report(cids[0], 1, 0) // YES (index 0)
	e.report(cids[1], 0, 3) // NO, denominator 3
	e.report(cids[2], 1, 1) // split: void
	e.report(cids[3], 2, 0) // YES
	// cids[4] unresolved: before the grace period only the curator may trigger.
	tx, err = e.arena.TriggerOutcomes(e.agentOpts(0), u(1))
	e.reverts(forecast.CodeTriggerNotAllowed, tx, err)
	e.mine(e.arena.TriggerOutcomes(e.opts(), u(1)))
	tx, err = e.arena.TriggerOutcomes(e.opts(), u(1))
	e.unsent()
	e.reverts(forecast.CodeTriggerNotAllowed, tx, err) // once
	tx, err = e.sendReveal(e.opts(), e.signReveal(b, 1, e.now()+600))
	e.unsent()
	e.reverts(forecast.CodeRevealClosed, tx, err)
	for _, bad := range []int64{0, 65} {
		tx, err = e.arena.ScoreBatch(e.opts(), u(1), big.NewInt(bad))
		e.unsent()
		e.reverts("batch_size", tx, err)
	}
	e.mine(e.arena.ScoreBatch(e.opts(), u(1), u(2)))
	if done, _ := e.arena.ScoringDone(nil, u(1)); done {
		t.Fatal("scoring done after 2 of 3")
	}
	e.mine(e.arena.ScoreBatch(e.opts(), u(1), u(64)))
	if done, _ := e.arena.ScoringDone(nil, u(1)); !done {
		t.Fatal("scoring not done")
	}

	want, err := scoring.ScoreRound([]scoring.MarketOutcome{
		{MarketID: 1, Outcome: scoring.OutcomeYes, Benchmark: 8000},
		{MarketID: 2, Outcome: scoring.OutcomeNo, Benchmark: 3000},
		{MarketID: 3, Outcome: scoring.OutcomeExcluded, Benchmark: 5000},
		{MarketID: 4, Outcome: scoring.OutcomeYes, Benchmark: scoring.NoBenchmark},
		{MarketID: 5, Outcome: scoring.OutcomeExcluded, Benchmark: 6000},
	}, []scoring.Entry{{Predictions: a.preds}, {Forfeit: true}, {Predictions: c.preds}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := e.arena.ResultOf(nil, u(1))
	if err != nil {
		t.Fatal(err)
	}
	wantFrozen := []int8{1, 0, -1, 1, -2}
	for i := range wantFrozen {
		if res.Outcomes[i] != wantFrozen[i] {
			t.Fatalf("outcomes %v, want %v", res.Outcomes, wantFrozen)
		}
	}
	if int(res.Scored) != want.N || int(res.Benchmarked) != want.AlphaN || res.BaseBrierBps2.Int64() != want.BaseBrierBps2 {
		t.Fatalf("result %+v, Go N=%d A=%d base=%d", res, want.N, want.AlphaN, want.BaseBrierBps2)
	}
	for i, w := range want.Agents {
		got, err := e.arena.ScoreOf(nil, u(1), e.agent(i))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Scored || got.Forfeit != w.Forfeit || got.BrierBps2 != w.BrierBps2 || got.AlphaBps2 != w.AlphaBps2 {
			t.Fatalf("agent %d: chain %+v, Go %+v", i, got, w)
		}
	}
	if w := want.Agents[1]; !w.Forfeit || w.BrierBps2 != scoring.Bps2 {
		t.Fatalf("forfeit scored %+v", w)
	}
}

// An invalidated round accepts nothing more; only the curator curates.
func TestInvalidation(t *testing.T) {
	e := newEnv(t, 1)
	s := e.schedule()
	e.createRound(1, [][32]byte{cid(1)}, s)
	tx, err := e.rm.CreateRound(e.agentOpts(0), u(2), [][32]byte{cid(1)}, s.commitDeadline, s.revealStart, s.revealDeadline, 0)
	e.reverts("not_curator", tx, err)
	tx, err = e.rm.CreateRound(e.opts(), u(1), [][32]byte{cid(1)}, s.commitDeadline, s.revealStart, s.revealDeadline, 0)
	e.unsent()
	e.reverts("round_exists", tx, err)
	tx, err = e.rm.CreateRound(e.opts(), u(3), [][32]byte{cid(1)}, s.revealStart, s.revealStart, s.revealDeadline, 0)
	e.unsent()
	e.reverts("schedule_invalid", tx, err)
	tx, err = e.rm.CreateRound(e.opts(), u(3), make([][32]byte, 33), s.commitDeadline, s.revealStart, s.revealDeadline, 0)
	e.unsent()
	e.reverts("market_count", tx, err)

	a := e.signCommit(0, 1, []uint16{5000}, 0, e.now()+600)
	e.mine(e.sendCommit(e.opts(), a))
	tx, err = e.rm.InvalidateRound(e.agentOpts(0), u(1))
	e.reverts("not_curator", tx, err)
	e.mine(e.rm.InvalidateRound(e.opts(), u(1)))
	e.warp(s.revealStart)
	tx, err = e.sendReveal(e.opts(), e.signReveal(a, 1, e.now()+600))
	e.unsent()
	e.reverts(forecast.CodeRoundInvalidated, tx, err)
	tx, err = e.rm.SetBenchmarks(e.opts(), u(1), []uint16{5000})
	e.unsent()
	e.reverts(forecast.CodeRoundInvalidated, tx, err)
	e.warp(s.revealDeadline + 1)
	e.report(cid(1), 1, 0)
	tx, err = e.arena.TriggerOutcomes(e.opts(), u(1))
	e.unsent()
	e.reverts(forecast.CodeRoundInvalidated, tx, err)
	tx, err = e.arena.ScoreBatch(e.opts(), u(1), u(1))
	e.unsent()
	e.reverts(forecast.CodeRoundInvalidated, tx, err)
}
