package relay

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/chain"
	"github.com/forecast-arena/arena/chain/bindings"
)

// Record is the arena's own account of its rounds that Verify compares
// with the chain: the database (store.DB) or an export read back
// (export.Record). Both answer these four reads; the comparison is the
// same code for either.
type Record interface {
	Round(ctx context.Context, id uint64) (*arena.Round, error)
	MarketsByID(ctx context.Context, ids []int64) (map[int64]*arena.Market, error)
	Submissions(ctx context.Context, roundID uint64) ([]*arena.Submission, error)
	RoundScores(ctx context.Context, roundID uint64) ([]arena.RoundScore, error)
}

// VerifyOptions say which rounds to compare and how to read the record.
type VerifyOptions struct {
	// Rounds to compare; empty: every round created on chain (its
	// RoundCreated events) and every round the relayer recorded.
	Rounds []uint64
	// Name is the record in messages ("the database", "the export").
	Name string
	// SealedUntilTrigger: the record holds a round's submissions only once
	// its outcomes are triggered (an export), so the commits of an
	// untriggered round are not compared.
	SealedUntilTrigger bool
	// Since: on-chain rounds whose commit deadline is before it are not
	// expected in the record (an export made with --since).
	Since time.Time
	// Relayed, when set (the database), explains an item missing on chain
	// with the relayer's record of it, and adds the rounds it started.
	Relayed arena.ChainTxStore
	// Also are the record's rounds to look for on chain besides those
	// (an export's rounds): one absent from the chain is listed in
	// NotOnChain, unless the relayer recorded it.
	Also []uint64
}

// VerifyReport is what Verify compared, and every difference it found, in
// round order: the first is the first item that differs.
type VerifyReport struct {
	Rounds, Markets, Benchmarks, Commits, Reveals, Outcomes, Scores int
	// Sealed counts on-chain commits of untriggered rounds the record
	// does not show yet (SealedUntilTrigger).
	Sealed int
	// NotOnChain are rounds of the record that were never created on
	// chain (made before mirroring began, or while the relayer was down
	// until their commit deadline): nothing to compare, not a difference.
	NotOnChain []uint64
	Mismatches []string
}

// Verify compares the on-chain state with the record: for each round its
// schedule and markets (condition ids), benchmarks, every commit and
// reveal (and no commit on chain that the record lacks), the frozen
// outcomes and, for every agent with an address, the score in bps² (Brier,
// Alpha, forfeit). A difference is listed, never fatal; an error means the
// comparison could not be made.
func Verify(ctx context.Context, rec Record, client bind.ContractBackend, arenaAddr common.Address, o VerifyOptions) (*VerifyReport, error) {
	if o.Name == "" {
		o.Name = "the database"
	}
	pa, err := bindings.NewPredictionArena(arenaAddr, client)
	if err != nil {
		return nil, err
	}
	opts := &bind.CallOpts{Context: ctx}
	rmAddr, err := pa.Rounds(opts)
	if err != nil {
		return nil, fmt.Errorf("chain: %s is not a PredictionArena: %w", arenaAddr.Hex(), err)
	}
	rm, err := bindings.NewRoundManager(rmAddr, client)
	if err != nil {
		return nil, err
	}
	ids := o.Rounds
	if len(ids) == 0 {
		it, err := rm.FilterRoundCreated(&bind.FilterOpts{Context: ctx}, nil)
		if err != nil {
			return nil, fmt.Errorf("chain: rounds created on chain: %w", err)
		}
		for it.Next() {
			if e := it.Event; e.RoundId.IsUint64() && (o.Since.IsZero() || int64(e.CommitDeadline) >= o.Since.Unix()) {
				ids = append(ids, e.RoundId.Uint64())
			}
		}
		if err := it.Error(); err != nil {
			return nil, fmt.Errorf("chain: rounds created on chain: %w", err)
		}
		if o.Relayed != nil {
			items, err := o.Relayed.ChainTxs(ctx, 0, "")
			if err != nil {
				return nil, err
			}
			for _, it := range items {
				if it.Kind == KindRound {
					ids = append(ids, it.RoundID)
				}
			}
		}
		ids = append(ids, o.Also...)
		slices.Sort(ids)
		ids = slices.Compact(ids)
	}
	v := &verifier{o: o, rec: rec, pa: pa, rm: rm, opts: opts, rep: &VerifyReport{}}
	for _, id := range ids {
		if err := v.round(ctx, id); err != nil {
			return v.rep, fmt.Errorf("round %d: %w", id, err)
		}
	}
	return v.rep, nil
}

type verifier struct {
	o    VerifyOptions
	rec  Record
	pa   *bindings.PredictionArena
	rm   *bindings.RoundManager
	opts *bind.CallOpts
	rep  *VerifyReport
}

// roundCheck is one round being compared: the record's round and, with
// Relayed, the relayer's record of the round's transactions, which
// explains an item missing on chain.
type roundCheck struct {
	*verifier
	id    uint64
	bid   *big.Int
	rd    *arena.Round
	items []arena.ChainTx
}

// bad lists a difference of the round.
func (c *roundCheck) bad(format string, args ...any) {
	c.rep.Mismatches = append(c.rep.Mismatches, fmt.Sprintf("round %d: ", c.id)+fmt.Sprintf(format, args...))
}

// why explains a missing item with the relayer's record of it.
func (c *roundCheck) why(kind, item string) string {
	if c.o.Relayed == nil {
		return ""
	}
	if t := find(c.items, kind, item); t != nil {
		s := "relayer: " + t.Status
		if t.Error != "" {
			s += ", " + t.Error
		}
		return " (" + s + ")"
	}
	return " (relayer: not recorded)"
}

// round compares one round, phase by phase: its existence and schedule,
// its markets, its benchmarks, its commits and reveals, its outcomes and
// its scores. A phase that finds nothing further to compare (the round
// sealed in the record, or its outcomes not triggered) ends the round.
func (v *verifier) round(ctx context.Context, id uint64) error {
	c := &roundCheck{verifier: v, id: id, bid: new(big.Int).SetUint64(id)}
	name := v.o.Name
	if v.o.Relayed != nil {
		var err error
		if c.items, err = v.o.Relayed.ChainTxs(ctx, id, ""); err != nil {
			return err
		}
	}
	on, err := v.rm.GetRound(v.opts, c.bid)
	if err != nil {
		return err
	}
	rd, err := v.rec.Round(ctx, id)
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		if on.Exists {
			v.rep.Rounds++
			c.bad("on chain, not in %s", name)
		}
		return nil
	} else if err != nil {
		return err
	}
	c.rd = rd
	if !on.Exists {
		if v.o.Relayed != nil && find(c.items, KindRound, "") != nil {
			v.rep.Rounds++
			c.bad("not on chain%s", c.why(KindRound, ""))
		} else {
			v.rep.NotOnChain = append(v.rep.NotOnChain, id)
		}
		return nil
	}
	v.rep.Rounds++
	if on.CommitDeadline != uint64(rd.CommitDeadline.Unix()) || on.RevealDeadline != uint64(rd.RevealDeadline.Unix()) || on.MarketCount.Cmp(big.NewInt(int64(len(rd.Markets)))) != 0 {
		c.bad("schedule or market count differ: chain commit deadline %d, reveal deadline %d, %s markets; %s %d, %d, %d",
			on.CommitDeadline, on.RevealDeadline, on.MarketCount, name, rd.CommitDeadline.Unix(), rd.RevealDeadline.Unix(), len(rd.Markets))
	}
	if on.Invalidated != rd.Invalidated {
		c.bad("invalidated on chain %v, in %s %v", on.Invalidated, name, rd.Invalidated)
	}
	if err := c.checkMarkets(ctx); err != nil {
		return err
	}
	if err := c.checkBenchmarks(on.BenchmarksSet); err != nil {
		return err
	}
	if sealed, err := c.checkSubmissions(ctx); err != nil || sealed {
		return err
	}
	if triggered, err := c.checkOutcomes(); err != nil || !triggered {
		return err
	}
	return c.checkScores(ctx)
}

// checkMarkets compares the round's markets with their condition ids on
// chain.
func (c *roundCheck) checkMarkets(ctx context.Context) error {
	rd, name := c.rd, c.o.Name
	mids := make([]int64, len(rd.Markets))
	for i, m := range rd.Markets {
		mids[i] = m.MarketID
	}
	ms, err := c.rec.MarketsByID(ctx, mids)
	if err != nil {
		return err
	}
	cids, err := c.rm.ConditionIdsOf(c.opts, c.bid)
	if err != nil {
		return err
	}
	for i, m := range rd.Markets {
		c.rep.Markets++
		switch {
		case ms[m.MarketID] == nil:
			c.bad("market %d: market %d is not in %s", i, m.MarketID, name)
		case i >= len(cids):
			c.bad("market %d: not on chain", i)
		case common.Hash(cids[i]) != chain.ConditionID(ms[m.MarketID]):
			c.bad("market %d: condition id on chain %x, for market %d in %s %x", i, cids[i], m.MarketID, name, chain.ConditionID(ms[m.MarketID]))
		}
	}
	return nil
}

// checkBenchmarks compares the round's benchmarks with the chain's, which
// has them when set is.
func (c *roundCheck) checkBenchmarks(set bool) error {
	rd, name := c.rd, c.o.Name
	if rd.BenchmarkAt.IsZero() {
		if set {
			c.bad("benchmarks on chain, none in %s", name)
		}
		return nil
	}
	if !set {
		c.bad("benchmarks not on chain%s", c.why(KindBenchmarks, ""))
		return nil
	}
	bench, err := c.rm.BenchmarksOf(c.opts, c.bid)
	if err != nil {
		return err
	}
	for i, m := range rd.Markets {
		want := uint16(chain.NoBenchmark)
		if m.Benchmark != nil {
			want = uint16(m.BenchmarkBps)
		}
		if i >= len(bench) || bench[i] != want {
			c.bad("market %d: benchmark on chain %v, in %s %d bps", i, bench, name, want)
			break
		}
		c.rep.Benchmarks++
	}
	return nil
}

// checkSubmissions compares the round's commits and reveals with the
// chain's, and lists a commit on chain the record lacks; sealed when the
// record does not show the round's submissions yet.
func (c *roundCheck) checkSubmissions(ctx context.Context) (sealed bool, err error) {
	name := c.o.Name
	n, err := c.pa.ParticipantCount(c.opts, c.bid)
	if err != nil {
		return false, err
	}
	if c.o.SealedUntilTrigger && c.rd.TriggeredAt.IsZero() {
		c.rep.Sealed += int(n.Int64())
		return true, nil
	}
	subs, err := c.rec.Submissions(ctx, c.id)
	if err != nil {
		return false, err
	}
	inRecord := map[common.Address]bool{}
	for _, s := range subs {
		agent := common.HexToAddress(s.Agent)
		inRecord[agent] = true
		c.rep.Commits++
		so, err := c.pa.SubmissionOf(c.opts, c.bid, agent)
		if err != nil {
			return false, err
		}
		if !so.Committed {
			c.bad("commit of %s not on chain%s", s.Agent, c.why(KindCommit, s.Agent))
			continue
		}
		var rh common.Hash
		if s.ReasoningHash != "" {
			rh = common.HexToHash(s.ReasoningHash)
		}
		if common.Hash(so.CommitHash) != common.HexToHash(s.CommitHash) || common.Hash(so.ReasoningHash) != rh {
			c.bad("commit of %s: hash on chain %x, in %s %s", s.Agent, so.CommitHash, name, s.CommitHash)
		}
		if s.Revealed() {
			c.rep.Reveals++
			if !so.Revealed {
				c.bad("reveal of %s not on chain%s", s.Agent, c.why(KindReveal, s.Agent))
			} else if !slices.Equal(so.Predictions, s.Predictions) {
				c.bad("reveal of %s: predictions on chain %v, in %s %v", s.Agent, so.Predictions, name, s.Predictions)
			}
		} else if so.Revealed {
			c.bad("%s revealed on chain, not in %s", s.Agent, name)
		}
	}
	for i := int64(0); i < n.Int64(); i++ {
		a, err := c.pa.ParticipantAt(c.opts, c.bid, big.NewInt(i))
		if err != nil {
			return false, err
		}
		if !inRecord[a] {
			c.bad("commit of %s on chain has no submission in %s", a.Hex(), name)
		}
	}
	return false, nil
}

// checkOutcomes compares the round's frozen outcomes with the chain's;
// triggered when both the record and the chain have them, and the scores
// are then compared.
func (c *roundCheck) checkOutcomes() (triggered bool, err error) {
	rd, name := c.rd, c.o.Name
	res, err := c.pa.ResultOf(c.opts, c.bid)
	if err != nil {
		return false, err
	}
	if rd.TriggeredAt.IsZero() {
		if res.Triggered {
			c.bad("outcomes triggered on chain, not in %s", name)
		}
		return false, nil
	}
	c.rep.Outcomes++
	if !res.Triggered {
		c.bad("outcomes not triggered on chain%s", c.why(KindTrigger, ""))
		return false, nil
	}
	for i, m := range rd.Markets {
		if m.Outcome == nil || i >= len(res.Outcomes) || res.Outcomes[i] != *m.Outcome {
			var want any = "none"
			if m.Outcome != nil {
				want = *m.Outcome
			}
			c.bad("market %d: outcome on chain %v, in %s %v", i, res.Outcomes, name, want)
			break
		}
	}
	return true, nil
}

// checkScores compares the scores of the round's agents that have an
// address (not the built-in baselines) with the chain's.
func (c *roundCheck) checkScores(ctx context.Context) error {
	name := c.o.Name
	scores, err := c.rec.RoundScores(ctx, c.id)
	if err != nil {
		return err
	}
	for _, sc := range scores {
		if !common.IsHexAddress(sc.Agent) {
			continue // the built-in baselines are not on chain
		}
		c.rep.Scores++
		so, err := c.pa.ScoreOf(c.opts, c.bid, common.HexToAddress(sc.Agent))
		if err != nil {
			return err
		}
		var alpha int64
		if sc.AlphaBps2 != nil {
			alpha = *sc.AlphaBps2
		}
		switch {
		case !so.Scored:
			c.bad("score of %s not on chain%s", sc.Agent, c.why(KindScore, "0"))
		case so.BrierBps2 != sc.BrierBps2 || so.AlphaBps2 != alpha || so.Forfeit != sc.Forfeit:
			c.bad("score of %s: on chain Brier %d Alpha %d bps² forfeit %v, in %s Brier %d Alpha %d bps² forfeit %v",
				sc.Agent, so.BrierBps2, so.AlphaBps2, so.Forfeit, name, sc.BrierBps2, alpha, sc.Forfeit)
		}
	}
	return nil
}
