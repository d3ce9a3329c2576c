package export

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
)

// Record is an export read back into the arena's own types: the rounds
// (with their markets, benchmarks and frozen outcomes), markets,
// submissions and scores, as the database would return them. The chain
// comparison (arena verify --chain) reads an export through it and the
// database through the same methods. Load does not check the export:
// Verify does.
type Record struct {
	Meta    Meta
	rounds  map[uint64]*arena.Round
	ids     []uint64
	markets map[int64]*arena.Market
	subs    map[uint64][]*arena.Submission
	scores  map[uint64][]arena.RoundScore
}

// Load reads the export in dir.
func Load(dir string) (*Record, error) {
	meta, ts, err := readTables(dir)
	if err != nil {
		return nil, err
	}
	rec := &Record{Meta: meta, rounds: map[uint64]*arena.Round{}, markets: map[int64]*arena.Market{},
		subs: map[uint64][]*arena.Submission{}, scores: map[uint64][]arena.RoundScore{}}
	for _, r := range ts["rounds"].rows {
		rd := &arena.Round{ID: r.u("id"), CommitDeadline: r.t("commit_deadline"), RevealStart: r.t("reveal_start"), RevealDeadline: r.t("reveal_deadline"),
			Grace: time.Duration(r.u("grace_seconds")) * time.Second, CreatedAt: r.t("created_at"), BenchmarkAt: r.t("benchmark_at"),
			TriggeredAt: r.t("triggered_at"), Invalidated: r.b("invalidated")}
		rec.rounds[rd.ID] = rd
		rec.ids = append(rec.ids, rd.ID)
	}
	slices.Sort(rec.ids)
	rms := ts["round_markets"].rows
	slices.SortFunc(rms, func(a, b *row) int {
		return cmp.Or(cmp.Compare(a.u("round_id"), b.u("round_id")), cmp.Compare(a.u("idx"), b.u("idx")))
	})
	for _, r := range rms {
		rd := rec.rounds[r.u("round_id")]
		if rd == nil {
			return nil, fmt.Errorf("export: round_markets [%s]: round not in the export", r.key)
		}
		m := arena.RoundMarket{Index: len(rd.Markets), MarketID: r.i("market_id"), BenchmarkTime: r.t("benchmark_time"),
			BenchmarkSource: arena.PriceSource(r.s("benchmark_source"))}
		if r.has("benchmark_bps") {
			p := float64(r.i("benchmark_bps")) / forecast.MaxBps
			m.Benchmark, m.BenchmarkBps = &p, int32(r.i("benchmark_bps"))
		}
		if r.has("outcome") {
			x := int8(r.i("outcome"))
			m.Outcome = &x
		}
		rd.Markets = append(rd.Markets, m)
	}
	for _, r := range ts["markets"].rows {
		m := &arena.Market{ID: r.i("id"), Source: r.s("source"), SourceID: r.s("source_id"), Question: r.s("question"), Category: r.s("category"),
			EventID: r.s("event_id"), Status: arena.MarketStatus(r.s("status")), Resolution: r.s("resolution"), ConditionID: r.s("condition_id")}
		rec.markets[m.ID] = m
	}
	for _, r := range ts["submissions"].rows {
		s := &arena.Submission{RoundID: r.u("round_id"), Agent: r.s("agent"), CommitHash: r.s("commit_hash"), ReasoningHash: r.s("reasoning_hash"),
			CommitNonce: r.u("commit_nonce"), CommitSig: r.s("commit_sig"), CommittedAt: r.t("committed_at"), Salt: r.s("salt"),
			RevealNonce: r.u("reveal_nonce"), RevealSig: r.s("reveal_sig"), RevealedAt: r.t("revealed_at")}
		if r.has("predictions") {
			s.Predictions, _ = parsePreds(r.s("predictions"))
		}
		rec.subs[s.RoundID] = append(rec.subs[s.RoundID], s)
	}
	for _, r := range ts["scores"].rows {
		s := arena.RoundScore{RoundID: r.u("round_id"), Agent: r.s("agent"), BrierBps2: r.i("brier_bps2"), Scored: int(r.u("scored_markets")),
			Benchmarked: int(r.u("benchmarked")), Forfeit: r.b("forfeit")}
		s.Brier, _ = strconv.ParseFloat(r.s("brier"), 64)
		if r.has("alpha") {
			a, _ := strconv.ParseFloat(r.s("alpha"), 64)
			ab := r.i("alpha_bps2")
			s.Alpha, s.AlphaBps2 = &a, &ab
		}
		rec.scores[s.RoundID] = append(rec.scores[s.RoundID], s)
	}
	return rec, nil
}

// RoundIDs are the exported rounds' ids, ascending.
func (rec *Record) RoundIDs() []uint64 { return rec.ids }

// Round returns an exported round, or an ENOTFOUND error.
func (rec *Record) Round(_ context.Context, id uint64) (*arena.Round, error) {
	if r := rec.rounds[id]; r != nil {
		return r, nil
	}
	return nil, arena.Errorf(arena.ENOTFOUND, "round %d is not in the export", id)
}

// MarketsByID returns the exported markets among ids.
func (rec *Record) MarketsByID(_ context.Context, ids []int64) (map[int64]*arena.Market, error) {
	out := make(map[int64]*arena.Market, len(ids))
	for _, id := range ids {
		if m := rec.markets[id]; m != nil {
			out[id] = m
		}
	}
	return out, nil
}

// Submissions returns a round's exported submissions: none until the
// round's outcomes are triggered (SealedUntilTrigger).
func (rec *Record) Submissions(_ context.Context, roundID uint64) ([]*arena.Submission, error) {
	return rec.subs[roundID], nil
}

// RoundScores returns a round's exported scores.
func (rec *Record) RoundScores(_ context.Context, roundID uint64) ([]arena.RoundScore, error) {
	return rec.scores[roundID], nil
}
