package export

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	"github.com/forecast-arena/arena"
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
	mb, err := readMeta(dir)
	if err != nil {
		return nil, err
	}
	rec := &Record{rounds: map[uint64]*arena.Round{}, markets: map[int64]*arena.Market{},
		subs: map[uint64][]*arena.Submission{}, scores: map[uint64][]arena.RoundScore{}}
	if err := json.Unmarshal(mb, &rec.Meta); err != nil {
		return nil, fmt.Errorf("export: meta.json: %w", err)
	}
	ts, err := readDir(dir, rec.Meta.Format, "rounds", "round_markets", "markets", "submissions", "scores")
	if err != nil {
		return nil, err
	}
	rt := ts["rounds"]
	for _, row := range rt.Rows {
		g := func(c string) string { return rt.col(c)(row) }
		id, err := strconv.ParseUint(g("id"), 10, 64)
		if err != nil {
			return nil, fail("rounds", "id %q", g("id"))
		}
		r := &arena.Round{ID: id, Invalidated: g("invalidated") == "true"}
		for name, dst := range map[string]*time.Time{"commit_deadline": &r.CommitDeadline, "reveal_start": &r.RevealStart,
			"reveal_deadline": &r.RevealDeadline, "created_at": &r.CreatedAt, "benchmark_at": &r.BenchmarkAt, "triggered_at": &r.TriggeredAt} {
			if *dst, err = cellTime(g(name)); err != nil {
				return nil, fail(fmt.Sprintf("round %d", id), "%s: %v", name, err)
			}
		}
		grace, err := cellInt(g("grace_seconds"), 64)
		if err != nil {
			return nil, fail(fmt.Sprintf("round %d", id), "grace_seconds: %v", err)
		}
		if grace != nil {
			r.Grace = time.Duration(*grace) * time.Second
		}
		rec.rounds[id] = r
		rec.ids = append(rec.ids, id)
	}
	sort.Slice(rec.ids, func(i, j int) bool { return rec.ids[i] < rec.ids[j] })

	rmt := ts["round_markets"]
	for _, row := range rmt.Rows {
		g := func(c string) string { return rmt.col(c)(row) }
		rid, _ := strconv.ParseUint(g("round_id"), 10, 64)
		item := fmt.Sprintf("round %d market %s", rid, g("idx"))
		r := rec.rounds[rid]
		if r == nil {
			return nil, fail(item, "round not in the export")
		}
		m := arena.RoundMarket{Index: len(r.Markets)}
		if m.MarketID, err = strconv.ParseInt(g("market_id"), 10, 64); err != nil {
			return nil, fail(item, "market id %q", g("market_id"))
		}
		bps, err := cellInt(g("benchmark_bps"), 32)
		if err != nil {
			return nil, fail(item, "benchmark_bps: %v", err)
		}
		if bps != nil {
			p, _ := strconv.ParseFloat(g("benchmark"), 64)
			m.Benchmark, m.BenchmarkBps = &p, int32(*bps)
		}
		o, err := cellInt(g("outcome"), 8)
		if err != nil {
			return nil, fail(item, "outcome: %v", err)
		}
		if o != nil {
			x := int8(*o)
			m.Outcome = &x
		}
		r.Markets = append(r.Markets, m)
	}

	mt := ts["markets"]
	for _, row := range mt.Rows {
		g := func(c string) string { return mt.col(c)(row) }
		id, err := strconv.ParseInt(g("id"), 10, 64)
		if err != nil {
			return nil, fail("markets", "id %q", g("id"))
		}
		rec.markets[id] = &arena.Market{ID: id, Source: g("source"), SourceID: g("source_id"), Question: g("question"), Category: g("category"),
			EventID: g("event_id"), Status: arena.MarketStatus(g("status")), Resolution: g("resolution"), ConditionID: g("condition_id")}
	}

	st := ts["submissions"]
	for _, row := range st.Rows {
		g := func(c string) string { return st.col(c)(row) }
		rid, _ := strconv.ParseUint(g("round_id"), 10, 64)
		s := &arena.Submission{RoundID: rid, Agent: g("agent"), CommitHash: g("commit_hash"), ReasoningHash: g("reasoning_hash"),
			CommitSig: g("commit_sig"), Salt: g("salt"), RevealSig: g("reveal_sig")}
		item := fmt.Sprintf("submission round %d agent %s", rid, s.Agent)
		if s.CommitNonce, err = strconv.ParseUint(g("commit_nonce"), 10, 64); err != nil {
			return nil, fail(item, "commit_nonce %q", g("commit_nonce"))
		}
		if s.CommittedAt, err = cellTime(g("committed_at")); err == nil {
			s.RevealedAt, err = cellTime(g("revealed_at"))
		}
		if err != nil {
			return nil, fail(item, "%v", err)
		}
		if v := g("predictions"); v != "" {
			if s.Predictions, err = parsePreds(v); err != nil {
				return nil, fail(item, "predictions %q", v)
			}
			if s.RevealNonce, err = strconv.ParseUint(g("reveal_nonce"), 10, 64); err != nil {
				return nil, fail(item, "reveal_nonce %q", g("reveal_nonce"))
			}
		}
		rec.subs[rid] = append(rec.subs[rid], s)
	}

	sct := ts["scores"]
	for _, row := range sct.Rows {
		g := func(c string) string { return sct.col(c)(row) }
		rid, _ := strconv.ParseUint(g("round_id"), 10, 64)
		s := arena.RoundScore{RoundID: rid, Agent: g("agent"), Forfeit: g("forfeit") == "true"}
		item := fmt.Sprintf("score round %d agent %s", rid, s.Agent)
		if s.BrierBps2, err = strconv.ParseInt(g("brier_bps2"), 10, 64); err != nil {
			return nil, fail(item, "brier_bps2 %q", g("brier_bps2"))
		}
		if s.AlphaBps2, err = cellInt(g("alpha_bps2"), 64); err != nil {
			return nil, fail(item, "alpha_bps2: %v", err)
		}
		s.Brier, _ = strconv.ParseFloat(g("brier"), 64)
		if v := g("alpha"); v != "" {
			a, _ := strconv.ParseFloat(v, 64)
			s.Alpha = &a
		}
		s.Scored, _ = strconv.Atoi(g("scored_markets"))
		s.Benchmarked, _ = strconv.Atoi(g("benchmarked"))
		rec.scores[rid] = append(rec.scores[rid], s)
	}
	return rec, nil
}

// cellInt parses an integer cell; nil when empty.
func cellInt(v string, bits int) (*int64, error) {
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseInt(v, 10, bits)
	if err != nil {
		return nil, fmt.Errorf("%q is not an integer of %d bits", v, bits)
	}
	return &n, nil
}

func cellTime(v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	return time.Parse(time.RFC3339Nano, v)
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
