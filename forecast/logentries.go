package forecast

import (
	"context"
	"encoding/json"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/tlog"
)

// Appender records accepted items in the tamper-evident log (tlog.Log).
type Appender interface {
	Append(ctx context.Context, kind string, v any) error
}

// The log entries the service appends, one per accepted item. They carry
// everything needed to check the item without the database: signed
// messages with their signatures (including the signed deadline, which the
// database does not keep), benchmarks in bps, frozen outcomes, scores.
type (
	CommitEntry struct {
		RoundID       uint64 `json:"round_id"`
		Agent         string `json:"agent"`
		CommitHash    string `json:"commit_hash"`
		ReasoningHash string `json:"reasoning_hash"`
		Nonce         uint64 `json:"nonce"`
		Deadline      uint64 `json:"deadline"`
		Signature     string `json:"signature"`
	}
	RevealEntry struct {
		RoundID     uint64   `json:"round_id"`
		Agent       string   `json:"agent"`
		Predictions []uint16 `json:"predictions"`
		Salt        string   `json:"salt"`
		Nonce       uint64   `json:"nonce"`
		Deadline    uint64   `json:"deadline"`
		Signature   string   `json:"signature"`
	}
	// BenchmarkEntry: one value per market of the round, NoBenchmark for none.
	BenchmarkEntry struct {
		RoundID    uint64  `json:"round_id"`
		MarketIDs  []int64 `json:"market_ids"`
		Benchmarks []int32 `json:"benchmarks_bps"`
	}
	ResolutionEntry struct {
		MarketID   int64  `json:"market_id"`
		Resolution string `json:"resolution"`
	}
	// OutcomeEntry: the frozen outcome per market (1, 0, OutcomeExcluded
	// for void, OutcomeUnresolved).
	OutcomeEntry struct {
		RoundID  uint64 `json:"round_id"`
		Outcomes []int8 `json:"outcomes"`
	}
	ScoreEntry struct {
		RoundID     uint64 `json:"round_id"`
		Agent       string `json:"agent"`
		BrierBps2   int64  `json:"brier_bps2"`
		AlphaBps2   *int64 `json:"alpha_bps2"`
		Scored      int    `json:"scored"`
		Benchmarked int    `json:"benchmarked"`
		Forfeit     bool   `json:"forfeit"`
	}
	// ProfileEntry is a signed profile update, published at once (a
	// profile reveals nothing about any round).
	ProfileEntry struct {
		Agent        string `json:"agent"`
		Name         string `json:"name"`
		Organisation string `json:"organisation"`
		Model        string `json:"model"`
		Homepage     string `json:"homepage"`
		Description  string `json:"description"`
		Version      uint64 `json:"version"`
		Deadline     uint64 `json:"deadline"`
		Signature    string `json:"signature"`
	}
	// DisputeEntry is an admin's dispute of a market's resolution by its
	// source: who, why, when, and the resolution disputed.
	DisputeEntry struct {
		MarketID   int64  `json:"market_id"`
		Resolution string `json:"resolution"`
		Admin      string `json:"admin"`
		Reason     string `json:"reason"`
		AtMicros   int64  `json:"at_micros"`
	}
	// DecisionEntry is a human arbiter's decision on a market (an
	// escalated or disputed one, or a re-resolution): who, why, when and
	// what, logged before the resolution entry it leads to.
	DecisionEntry struct {
		MarketID int64  `json:"market_id"`
		Seq      int    `json:"seq"`
		Decision string `json:"decision"`
		Arbiter  string `json:"arbiter"`
		Reason   string `json:"reason"`
		AtMicros int64  `json:"at_micros"`
	}
)

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

// SealedUntilTrigger reports whether a log entry carries a round's commit
// or reveal, and which round: such a leaf (signature, predictions, salt)
// is published only once that round's outcomes are triggered, by its leaf
// hash alone before. A commit or reveal leaf that cannot be read reports
// round 0 with ok false, and callers keep it sealed.
func SealedUntilTrigger(kind string, leaf []byte) (round uint64, sealable, ok bool) {
	if kind != tlog.KindCommit && kind != tlog.KindReveal {
		return 0, false, true
	}
	var l tlog.Leaf
	var e struct {
		RoundID *uint64 `json:"round_id"`
	}
	if json.Unmarshal(leaf, &l) != nil || json.Unmarshal(l.Data, &e) != nil || e.RoundID == nil {
		return 0, true, false
	}
	return *e.RoundID, true, true
}

// OracleDisputed records in the log an admin's dispute of a market's
// resolution by its source.
func (s *Service) OracleDisputed(ctx context.Context, d *arena.OracleDispute) {
	s.record(ctx, logDispute, DisputeEntry{MarketID: d.MarketID, Resolution: d.Resolution, Admin: d.Admin, Reason: d.Reason,
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
		s.record(ctx, logDecision, DecisionEntry{MarketID: r.MarketID, Seq: r.Seq, Decision: string(r.Final), Arbiter: r.Arbiter,
			Reason: r.Reason, AtMicros: r.DecidedAt.UnixMicro()})
	}
	s.record(ctx, logResolution, ResolutionEntry{MarketID: r.MarketID, Resolution: res})
	for _, rs := range r.Rescored {
		s.recordScores(ctx, rs.RoundID, rs.Outcomes, rs.Scores)
		s.log().InfoContext(ctx, "round re-scored after a re-resolution", "round", rs.RoundID, "market", rs.MarketID,
			"outcome_before", rs.PrevOutcome, "outcome", rs.Outcome, "reason", r.Reason)
	}
}
