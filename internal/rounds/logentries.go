package rounds

import (
	"context"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/tlog"
)

// Appender records accepted items in the tamper-evident log (tlog.Log).
type Appender interface {
	Append(ctx context.Context, kind string, v any) error
}

// record appends an accepted item to the log, when there is one. The item
// is already stored; a failing append is logged, not returned, because the
// request was accepted (the verifier then reports the item as missing from
// the log, which is what happened).
func (s *Service) record(ctx context.Context, kind string, v any) {
	if s.Log == nil {
		return
	}
	if err := s.Log.Append(ctx, kind, v); err != nil {
		s.log().ErrorContext(ctx, "tamper-evident log: append failed; the item is stored but not logged", "kind", kind, "err", err)
	}
}

// leafInTx is the log entry of an accepted commit, reveal or profile, for
// the store to append in the transaction that records it, when the log
// lives in the service's own store (as in `arena serve`): the item and its
// entry are then stored both or neither, whatever crashes when. Otherwise
// nil, and the entry is appended after the item is stored (record).
func (s *Service) leafInTx(kind string, v any) (*arena.LogLeaf, error) {
	l, ok := s.Log.(*tlog.Log)
	if !ok || l == nil || any(l.Store) != any(s.Store) {
		return nil, nil
	}
	return tlog.Encode(kind, v)
}

// Kinds of log entries the service writes.
const (
	logCommit     = tlog.KindCommit
	logReveal     = tlog.KindReveal
	logBenchmark  = tlog.KindBenchmark
	logResolution = tlog.KindResolution
	logOutcome    = tlog.KindOutcome
	logScore      = tlog.KindScore
	logProfile    = tlog.KindProfile
	logDispute    = tlog.KindDispute
	logDecision   = tlog.KindDecision
)

// OracleDisputed records in the log an admin's dispute of a market's
// resolution by its source.
func (s *Service) OracleDisputed(ctx context.Context, d *arena.OracleDispute) {
	s.record(ctx, logDispute, forecast.DisputeEntry{MarketID: d.MarketID, Resolution: d.Resolution, Admin: d.Admin, Reason: d.Reason,
		AtMicros: d.CreatedAt.UnixMicro()})
}

// OracleDecided records in the log a resolution the oracle applied: an
// arbiter's decision (who, why, when) when a human decided it, the
// market's resolution and, for each round a re-resolution re-scored, the
// round's outcomes as now frozen and its new scores. They follow the
// round's earlier entries, so the log keeps both and a verifier checks the
// latest against the export.
func (s *Service) OracleDecided(ctx context.Context, r *arena.OracleResolution) {
	res, ok := r.Final.MarketResolution()
	if !ok {
		return // escalated: nothing applied
	}
	if r.Status == arena.OracleDecided {
		s.record(ctx, logDecision, forecast.DecisionEntry{MarketID: r.MarketID, Seq: r.Seq, Decision: string(r.Final), Arbiter: r.Arbiter,
			Reason: r.Reason, AtMicros: r.DecidedAt.UnixMicro()})
	}
	s.record(ctx, logResolution, forecast.ResolutionEntry{MarketID: r.MarketID, Resolution: res})
	for _, rs := range r.Rescored {
		s.recordScores(ctx, rs.RoundID, rs.Outcomes, rs.Scores)
		s.log().InfoContext(ctx, "round re-scored after a re-resolution", "round", rs.RoundID, "market", rs.MarketID,
			"outcome_before", rs.PrevOutcome, "outcome", rs.Outcome, "reason", r.Reason)
	}
}
