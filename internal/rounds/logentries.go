package rounds

import (
	"context"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/tlog"
)

// leaf is the tamper-evident log's entry of an accepted item, which the
// store appends in the transaction that records the item: the item and
// its entry are stored both or neither, whatever crashes when, and an
// export of the log's first n entries reads exactly the items they record.
func leaf(kind string, v any) (*arena.LogLeaf, error) { return tlog.Encode(kind, v) }

// leaves are the entries of several items, in order.
func leaves(items ...entry) ([]*arena.LogLeaf, error) {
	out := make([]*arena.LogLeaf, len(items))
	for i, it := range items {
		l, err := leaf(it.kind, it.v)
		if err != nil {
			return nil, err
		}
		out[i] = l
	}
	return out, nil
}

// entry is one item to log: its kind and its entry.
type entry struct {
	kind string
	v    any
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

// scoreEntries are the entries of a round's frozen outcomes and its
// scores, in the order they are logged.
func scoreEntries(roundID uint64, frozen []int8, scores []arena.RoundScore) []entry {
	out := []entry{{logOutcome, forecast.OutcomeEntry{RoundID: roundID, Outcomes: frozen}}}
	for _, sc := range scores {
		out = append(out, entry{logScore, forecast.ScoreEntry{RoundID: roundID, Agent: sc.Agent, BrierBps2: sc.BrierBps2, AlphaBps2: sc.AlphaBps2,
			Scored: sc.Scored, Benchmarked: sc.Benchmarked, Forfeit: sc.Forfeit}})
	}
	return out
}

// LogDispute is the forecast track's part of recording an admin's dispute
// of a market's resolution by its source (an arena.DisputeHook, run in
// the transaction that records it): the log entry of who disputed what,
// why and when.
func LogDispute(ctx context.Context, tx arena.LogTx, d *arena.OracleDispute) error {
	l, err := leaf(logDispute, forecast.DisputeEntry{MarketID: d.MarketID, Resolution: d.Resolution, Admin: d.Admin, Reason: d.Reason,
		AtMicros: d.CreatedAt.UnixMicro()})
	if err != nil {
		return err
	}
	return tx.AppendLeaves(ctx, l)
}

// LogResolution is the forecast track's part of applying a resolution to
// a market (an arena.ResolutionHook, run after Rescore in the transaction
// that records it): the log entries of an arbiter's decision (who, why,
// when) when a human decided it, the market's resolution and, for each
// round a re-resolution re-scored, the round's outcomes as now frozen and
// its new scores. They follow the round's earlier entries, so the log
// keeps both and a verifier checks the latest against the export.
func LogResolution(ctx context.Context, tx arena.ResolutionTx, c *arena.ResolutionChange) error {
	r := c.Resolution
	var items []entry
	if r.Status == arena.OracleDecided {
		items = append(items, entry{logDecision, forecast.DecisionEntry{MarketID: r.MarketID, Seq: r.Seq, Decision: string(r.Final), Arbiter: r.Arbiter,
			Reason: r.Reason, AtMicros: r.DecidedAt.UnixMicro()}})
	}
	items = append(items, entry{logResolution, forecast.ResolutionEntry{MarketID: r.MarketID, Resolution: c.Outcome}})
	for _, rs := range r.Rescored {
		items = append(items, scoreEntries(rs.RoundID, rs.Outcomes, rs.Scores)...)
	}
	ls, err := leaves(items...)
	if err != nil {
		return err
	}
	return tx.AppendLeaves(ctx, ls...)
}
