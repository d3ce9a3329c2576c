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

func (v *verifier) round(ctx context.Context, id uint64) error {
	name := v.o.Name
	bad := func(format string, args ...any) {
		v.rep.Mismatches = append(v.rep.Mismatches, fmt.Sprintf("round %d: ", id)+fmt.Sprintf(format, args...))
	}
	var items []arena.ChainTx
	if v.o.Relayed != nil {
		var err error
		if items, err = v.o.Relayed.ChainTxs(ctx, id, ""); err != nil {
			return err
		}
	}
	// why explains a missing item with the relayer's record of it.
	why := func(kind, item string) string {
		if v.o.Relayed == nil {
			return ""
		}
		if t := find(items, kind, item); t != nil {
			s := "relayer: " + t.Status
			if t.Error != "" {
				s += ", " + t.Error
			}
			return " (" + s + ")"
		}
		return " (relayer: not recorded)"
	}
	bid := new(big.Int).SetUint64(id)
	on, err := v.rm.GetRound(v.opts, bid)
	if err != nil {
		return err
	}
	rd, err := v.rec.Round(ctx, id)
	if arena.ErrorKind(err) == arena.ENOTFOUND {
		if on.Exists {
			v.rep.Rounds++
			bad("on chain, not in %s", name)
		}
		return nil
	} else if err != nil {
		return err
	}
	if !on.Exists {
		if v.o.Relayed != nil && find(items, KindRound, "") != nil {
			v.rep.Rounds++
			bad("not on chain%s", why(KindRound, ""))
		} else {
			v.rep.NotOnChain = append(v.rep.NotOnChain, id)
		}
		return nil
	}
	v.rep.Rounds++
	if on.CommitDeadline != uint64(rd.CommitDeadline.Unix()) || on.RevealDeadline != uint64(rd.RevealDeadline.Unix()) || on.MarketCount.Cmp(big.NewInt(int64(len(rd.Markets)))) != 0 {
		bad("schedule or market count differ: chain commit deadline %d, reveal deadline %d, %s markets; %s %d, %d, %d",
			on.CommitDeadline, on.RevealDeadline, on.MarketCount, name, rd.CommitDeadline.Unix(), rd.RevealDeadline.Unix(), len(rd.Markets))
	}
	if on.Invalidated != rd.Invalidated {
		bad("invalidated on chain %v, in %s %v", on.Invalidated, name, rd.Invalidated)
	}
	mids := make([]int64, len(rd.Markets))
	for i, m := range rd.Markets {
		mids[i] = m.MarketID
	}
	ms, err := v.rec.MarketsByID(ctx, mids)
	if err != nil {
		return err
	}
	cids, err := v.rm.ConditionIdsOf(v.opts, bid)
	if err != nil {
		return err
	}
	for i, m := range rd.Markets {
		v.rep.Markets++
		switch {
		case ms[m.MarketID] == nil:
			bad("market %d: market %d is not in %s", i, m.MarketID, name)
		case i >= len(cids):
			bad("market %d: not on chain", i)
		case common.Hash(cids[i]) != chain.ConditionID(ms[m.MarketID]):
			bad("market %d: condition id on chain %x, for market %d in %s %x", i, cids[i], m.MarketID, name, chain.ConditionID(ms[m.MarketID]))
		}
	}
	if !rd.BenchmarkAt.IsZero() {
		if !on.BenchmarksSet {
			bad("benchmarks not on chain%s", why(KindBenchmarks, ""))
		} else {
			bench, err := v.rm.BenchmarksOf(v.opts, bid)
			if err != nil {
				return err
			}
			for i, m := range rd.Markets {
				want := uint16(chain.NoBenchmark)
				if m.Benchmark != nil {
					want = uint16(m.BenchmarkBps)
				}
				if i >= len(bench) || bench[i] != want {
					bad("market %d: benchmark on chain %v, in %s %d bps", i, bench, name, want)
					break
				}
				v.rep.Benchmarks++
			}
		}
	} else if on.BenchmarksSet {
		bad("benchmarks on chain, none in %s", name)
	}
	n, err := v.pa.ParticipantCount(v.opts, bid)
	if err != nil {
		return err
	}
	if v.o.SealedUntilTrigger && rd.TriggeredAt.IsZero() {
		// The record does not show this round's submissions yet.
		v.rep.Sealed += int(n.Int64())
		return nil
	}
	subs, err := v.rec.Submissions(ctx, id)
	if err != nil {
		return err
	}
	inRecord := map[common.Address]bool{}
	for _, s := range subs {
		agent := common.HexToAddress(s.Agent)
		inRecord[agent] = true
		v.rep.Commits++
		so, err := v.pa.SubmissionOf(v.opts, bid, agent)
		if err != nil {
			return err
		}
		if !so.Committed {
			bad("commit of %s not on chain%s", s.Agent, why(KindCommit, s.Agent))
			continue
		}
		var rh common.Hash
		if s.ReasoningHash != "" {
			rh = common.HexToHash(s.ReasoningHash)
		}
		if common.Hash(so.CommitHash) != common.HexToHash(s.CommitHash) || common.Hash(so.ReasoningHash) != rh {
			bad("commit of %s: hash on chain %x, in %s %s", s.Agent, so.CommitHash, name, s.CommitHash)
		}
		if s.Revealed() {
			v.rep.Reveals++
			if !so.Revealed {
				bad("reveal of %s not on chain%s", s.Agent, why(KindReveal, s.Agent))
			} else if !slices.Equal(so.Predictions, s.Predictions) {
				bad("reveal of %s: predictions on chain %v, in %s %v", s.Agent, so.Predictions, name, s.Predictions)
			}
		} else if so.Revealed {
			bad("%s revealed on chain, not in %s", s.Agent, name)
		}
	}
	for i := int64(0); i < n.Int64(); i++ {
		a, err := v.pa.ParticipantAt(v.opts, bid, big.NewInt(i))
		if err != nil {
			return err
		}
		if !inRecord[a] {
			bad("commit of %s on chain has no submission in %s", a.Hex(), name)
		}
	}
	res, err := v.pa.ResultOf(v.opts, bid)
	if err != nil {
		return err
	}
	if rd.TriggeredAt.IsZero() {
		if res.Triggered {
			bad("outcomes triggered on chain, not in %s", name)
		}
		return nil
	}
	v.rep.Outcomes++
	if !res.Triggered {
		bad("outcomes not triggered on chain%s", why(KindTrigger, ""))
		return nil
	}
	for i, m := range rd.Markets {
		if m.Outcome == nil || i >= len(res.Outcomes) || res.Outcomes[i] != *m.Outcome {
			var want any = "none"
			if m.Outcome != nil {
				want = *m.Outcome
			}
			bad("market %d: outcome on chain %v, in %s %v", i, res.Outcomes, name, want)
			break
		}
	}
	scores, err := v.rec.RoundScores(ctx, id)
	if err != nil {
		return err
	}
	for _, sc := range scores {
		if !common.IsHexAddress(sc.Agent) {
			continue // the built-in baselines are not on chain
		}
		v.rep.Scores++
		so, err := v.pa.ScoreOf(v.opts, bid, common.HexToAddress(sc.Agent))
		if err != nil {
			return err
		}
		var alpha int64
		if sc.AlphaBps2 != nil {
			alpha = *sc.AlphaBps2
		}
		switch {
		case !so.Scored:
			bad("score of %s not on chain%s", sc.Agent, why(KindScore, "0"))
		case so.BrierBps2 != sc.BrierBps2 || so.AlphaBps2 != alpha || so.Forfeit != sc.Forfeit:
			bad("score of %s: on chain Brier %d Alpha %d bps² forfeit %v, in %s Brier %d Alpha %d bps² forfeit %v",
				sc.Agent, so.BrierBps2, so.AlphaBps2, so.Forfeit, name, sc.BrierBps2, alpha, sc.Forfeit)
		}
	}
	return nil
}
