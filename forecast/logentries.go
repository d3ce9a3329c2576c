package forecast

import (
	"encoding/json"

	"github.com/forecast-arena/arena/tlog"
)

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
