package rounds

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
)

// Rescore is the forecast track's part of applying a market's resolution
// (an arena.ResolutionHook, run inside the transaction that records it):
// every scored round that froze the market as resolved (YES, NO or void)
// with another outcome than the new one is scored again with ScoreFrozen,
// exactly as the trigger scores, and the scores before and after are kept
// for audit and listed in the resolution's Rescored. A round that froze
// the market as unresolved never scored it and keeps its scores.
func Rescore(ctx context.Context, tx arena.ResolutionTx, c *arena.ResolutionChange) error {
	return rescore(ctx, tx, c)
}

func rescore(ctx context.Context, tx arena.RescoreTx, c *arena.ResolutionChange) error {
	if c.Market.Resolution == "" {
		return nil // a first resolution: no round froze another
	}
	marketID, outcome := c.Resolution.MarketID, frozenOutcome(c.Outcome)
	ids, err := tx.ScoredRounds(ctx, marketID)
	if err != nil {
		return err
	}
	for _, id := range ids {
		r, err := tx.LockRound(ctx, id)
		if err != nil {
			return err
		}
		for idx, rm := range r.Markets {
			if rm.MarketID != marketID || rm.Outcome == nil || *rm.Outcome == scoring.OutcomeUnresolved || *rm.Outcome == outcome {
				continue
			}
			rs, err := rescoreRound(ctx, tx, c, r, idx, outcome)
			if err != nil {
				return err
			}
			r.Markets[idx].Outcome = &rs.Outcome
			c.Resolution.Rescored = append(c.Resolution.Rescored, *rs)
		}
	}
	return nil
}

// frozenOutcome is the outcome a round freezes for a market resolved to
// res: scored YES or NO, or void (excluded from scoring).
func frozenOutcome(res string) int8 {
	switch res {
	case arena.Yes:
		return scoring.OutcomeYes
	case arena.No:
		return scoring.OutcomeNo
	}
	return scoring.OutcomeExcluded
}

// rescoreRound scores round r again with the frozen outcome of its market
// idx replaced by outcome, and saves the new scores with the audit record.
func rescoreRound(ctx context.Context, tx arena.RescoreTx, c *arena.ResolutionChange, r *arena.Round, idx int, outcome int8) (*arena.RoundRescore, error) {
	ids := make([]int64, len(r.Markets))
	for i, rm := range r.Markets {
		ids[i] = rm.MarketID
	}
	byID, err := tx.MarketsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	rs := &arena.RoundRescore{RoundID: r.ID, MarketID: c.Resolution.MarketID, ResolutionID: c.Resolution.ID, Index: idx, Outcome: outcome, At: c.At}
	markets := make([]*arena.Market, len(r.Markets))
	for i, rm := range r.Markets {
		if rm.Outcome == nil {
			return nil, fmt.Errorf("rounds: round %d is scored but its market %d has no frozen outcome", r.ID, i)
		}
		rs.Outcomes = append(rs.Outcomes, *rm.Outcome)
		markets[i] = byID[rm.MarketID]
	}
	rs.PrevOutcome, rs.Outcomes[idx] = rs.Outcomes[idx], outcome
	subs, err := tx.Submissions(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	if rs.Previous, err = tx.RoundScores(ctx, r.ID); err != nil {
		return nil, err
	}
	scores, rows, err := scoring.ScoreFrozen(r, rs.Outcomes, markets, subs)
	if err != nil {
		return nil, fmt.Errorf("rounds: re-score round %d: %w", r.ID, err)
	}
	// In agent order, as RoundScores reads them back.
	slices.SortFunc(scores, func(a, b arena.RoundScore) int { return strings.Compare(a.Agent, b.Agent) })
	rs.Scores = scores
	if rs.Previous == nil {
		rs.Previous = []arena.RoundScore{}
	}
	if rs.Scores == nil {
		rs.Scores = []arena.RoundScore{}
	}
	if err := tx.SaveRescore(ctx, rs, rows); err != nil {
		return nil, err
	}
	return rs, nil
}
