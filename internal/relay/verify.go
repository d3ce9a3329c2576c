package relay

import (
	"context"
	"fmt"
	"math/big"
	"slices"

	"github.com/ethereum/go-ethereum/accounts/abi/bind"
	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/chain"
	"github.com/forecast-arena/arena/chain/bindings"
)

// VerifyStore is what the chain check reads of the database.
type VerifyStore interface {
	Store
	RoundScores(ctx context.Context, roundID uint64) ([]arena.RoundScore, error)
}

// VerifyReport is what Verify compared, and every difference it found.
type VerifyReport struct {
	Rounds, Commits, Reveals, Outcomes, Scores int
	Mismatches                                 []string
}

// Verify compares the on-chain state of the given rounds (all rounds the
// relayer started when ids is empty) with the database: schedule and
// markets, benchmarks, every commit and reveal (and no commit on chain that
// the database lacks), the frozen outcomes and, for every agent with an
// address, the score in bps² (Brier, Alpha, forfeit). A difference is
// listed, never fatal; an error means the comparison could not be made.
func Verify(ctx context.Context, db VerifyStore, client bind.ContractBackend, arenaAddr common.Address, ids []uint64) (*VerifyReport, error) {
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
	if len(ids) == 0 {
		items, err := db.ChainTxs(ctx, 0, "")
		if err != nil {
			return nil, err
		}
		for _, it := range items {
			if it.Kind == KindRound && !slices.Contains(ids, it.RoundID) {
				ids = append(ids, it.RoundID)
			}
		}
	}
	rep := &VerifyReport{}
	for _, id := range ids {
		if err := verifyRound(ctx, db, pa, rm, opts, id, rep); err != nil {
			return rep, fmt.Errorf("round %d: %w", id, err)
		}
	}
	return rep, nil
}

func verifyRound(ctx context.Context, db VerifyStore, pa *bindings.PredictionArena, rm *bindings.RoundManager, opts *bind.CallOpts, id uint64, rep *VerifyReport) error {
	bad := func(format string, args ...any) {
		rep.Mismatches = append(rep.Mismatches, fmt.Sprintf("round %d: ", id)+fmt.Sprintf(format, args...))
	}
	rd, err := db.Round(ctx, id)
	if err != nil {
		return err
	}
	items, err := db.ChainTxs(ctx, id, "")
	if err != nil {
		return err
	}
	// why explains a missing item with the relayer's record of it.
	why := func(kind, item string) string {
		if t := find(items, kind, item); t != nil {
			s := "relayer: " + t.Status
			if t.Error != "" {
				s += ", " + t.Error
			}
			return " (" + s + ")"
		}
		return " (relayer: not recorded)"
	}
	rep.Rounds++
	bid := new(big.Int).SetUint64(id)
	on, err := rm.GetRound(opts, bid)
	if err != nil {
		return err
	}
	if !on.Exists {
		bad("not on chain%s", why(KindRound, ""))
		return nil
	}
	if on.CommitDeadline != uint64(rd.CommitDeadline.Unix()) || on.RevealDeadline != uint64(rd.RevealDeadline.Unix()) || on.MarketCount.Cmp(big.NewInt(int64(len(rd.Markets)))) != 0 {
		bad("schedule or market count differ: chain commit deadline %d, reveal deadline %d, %s markets; database %d, %d, %d",
			on.CommitDeadline, on.RevealDeadline, on.MarketCount, rd.CommitDeadline.Unix(), rd.RevealDeadline.Unix(), len(rd.Markets))
	}
	if on.Invalidated != rd.Invalidated {
		bad("invalidated on chain %v, in the database %v", on.Invalidated, rd.Invalidated)
	}
	ids := make([]int64, len(rd.Markets))
	for i, m := range rd.Markets {
		ids[i] = m.MarketID
	}
	ms, err := db.MarketsByID(ctx, ids)
	if err != nil {
		return err
	}
	cids, err := rm.ConditionIdsOf(opts, bid)
	if err != nil {
		return err
	}
	for i, m := range rd.Markets {
		if i < len(cids) && common.Hash(cids[i]) != chain.ConditionID(ms[m.MarketID]) {
			bad("market %d: condition id on chain %x, for market %d %x", i, cids[i], m.MarketID, chain.ConditionID(ms[m.MarketID]))
		}
	}
	if !rd.BenchmarkAt.IsZero() {
		if !on.BenchmarksSet {
			bad("benchmarks not on chain%s", why(KindBenchmarks, ""))
		} else {
			bench, err := rm.BenchmarksOf(opts, bid)
			if err != nil {
				return err
			}
			for i, m := range rd.Markets {
				want := uint16(chain.NoBenchmark)
				if m.Benchmark != nil {
					want = uint16(m.BenchmarkBps)
				}
				if i >= len(bench) || bench[i] != want {
					bad("market %d: benchmark on chain %v, in the database %d bps", i, bench, want)
					break
				}
			}
		}
	}
	subs, err := db.Submissions(ctx, id)
	if err != nil {
		return err
	}
	inDB := map[common.Address]bool{}
	for _, s := range subs {
		agent := common.HexToAddress(s.Agent)
		inDB[agent] = true
		rep.Commits++
		so, err := pa.SubmissionOf(opts, bid, agent)
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
			bad("commit of %s: hash on chain %x, in the database %s", s.Agent, so.CommitHash, s.CommitHash)
		}
		if s.Revealed() {
			rep.Reveals++
			if !so.Revealed {
				bad("reveal of %s not on chain%s", s.Agent, why(KindReveal, s.Agent))
			} else if !slices.Equal(so.Predictions, s.Predictions) {
				bad("reveal of %s: predictions on chain %v, in the database %v", s.Agent, so.Predictions, s.Predictions)
			}
		} else if so.Revealed {
			bad("%s revealed on chain, not in the database", s.Agent)
		}
	}
	n, err := pa.ParticipantCount(opts, bid)
	if err != nil {
		return err
	}
	for i := int64(0); i < n.Int64(); i++ {
		a, err := pa.ParticipantAt(opts, bid, big.NewInt(i))
		if err != nil {
			return err
		}
		if !inDB[a] {
			bad("commit of %s on chain has no submission in the database", a.Hex())
		}
	}
	res, err := pa.ResultOf(opts, bid)
	if err != nil {
		return err
	}
	if rd.TriggeredAt.IsZero() {
		if res.Triggered {
			bad("outcomes triggered on chain, not in the database")
		}
		return nil
	}
	rep.Outcomes++
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
			bad("market %d: outcome on chain %v, in the database %v", i, res.Outcomes, want)
			break
		}
	}
	scores, err := db.RoundScores(ctx, id)
	if err != nil {
		return err
	}
	for _, sc := range scores {
		if !common.IsHexAddress(sc.Agent) {
			continue // the built-in baselines are not on chain
		}
		rep.Scores++
		so, err := pa.ScoreOf(opts, bid, common.HexToAddress(sc.Agent))
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
			bad("score of %s: on chain Brier %d Alpha %d bps² forfeit %v, in the database Brier %d Alpha %d bps² forfeit %v",
				sc.Agent, so.BrierBps2, so.AlphaBps2, so.Forfeit, sc.BrierBps2, alpha, sc.Forfeit)
		}
	}
	return nil
}
