package forecast

import (
	"github.com/forecast-arena/arena"
)

// Outcomes as ScoreRound takes them.
const (
	OutcomeNo       int8 = 0
	OutcomeYes      int8 = 1
	OutcomeExcluded int8 = -1 // void (50-50) or unresolved when the set was frozen
)

// NoBenchmark marks a market without a benchmark price (SPEC F5): it is
// scored for Brier but excluded from Alpha, never treated as 0.5.
const NoBenchmark int32 = -1

// Bps2 is one in squared basis points: a Brier score of 1.
const Bps2 = MaxBps * MaxBps

// Entry is one agent's part in a round: its revealed predictions, or a
// forfeit (committed, never revealed).
type Entry struct {
	Predictions []uint16 // k values in bps; nil for a forfeit
	Forfeit     bool
}

// RoundScore is a round's scores over its frozen set M* (SPEC F6).
type RoundScore struct {
	Scored      int // |M*|: markets with outcome 0 or 1
	Benchmarked int // markets of M* with a benchmark: the Alpha set
	// BaseBrierBps2 is the market baseline's Brier over the Alpha set;
	// meaningful only when Benchmarked > 0.
	BaseBrierBps2 int64
	BaseBrier     float64
	Agents        []AgentScore // aligned with the entries
}

// AgentScore is one agent's round score. Brier is over M* and meaningful
// only when Scored > 0; Alpha is over the Alpha set and meaningful only
// when Benchmarked > 0.
type AgentScore struct {
	Forfeit   bool
	BrierBps2 int64 // truncated mean of (p − 10000·x)², in [0, 10⁸]
	AlphaBps2 int64 // truncated toward zero mean of (b − 10000·x)² − (p − 10000·x)², in [−10⁸, 10⁸]
	Brier     float64
	Alpha     float64
}

// ScoreRound scores a round (SPEC F6) exactly in integer bps² with
// Solidity's semantics, and in float64 for analysis:
//
//	BrierBps2     = ⌊ Σ_{i∈M*} (p_i − 10000·x_i)² / |M*| ⌋
//	BaseBrierBps2 = ⌊ Σ_{i∈A} (b_i − 10000·x_i)² / |A| ⌋
//	AlphaBps2     = trunc( Σ_{i∈A} [(b_i − 10000·x_i)² − (p_i − 10000·x_i)²] / |A| )
//
// where M* are the markets with outcome 0 or 1, A ⊆ M* those with a
// benchmark, and trunc rounds toward zero (Solidity int256 division, and
// Go's). Alpha is one signed division of the summed differences, so it can
// differ by one from BaseBrierBps2 minus an agent's Brier over A. A forfeit
// scores p_i − x_i = 1 on every market of M*: Brier 10⁸ bps² and Alpha
// base − 10⁸.
//
// The float fields are the same quantities over probabilities p/10000 in
// [0, 1]; they agree with the integers to within the truncation (< 1 bps²,
// i.e. 1e−8). Cumulative and statistical figures are package score's job.
func ScoreRound(outcomes []int8, benchmarks []int32, entries []Entry) (RoundScore, error) {
	k := len(outcomes)
	if len(benchmarks) != k {
		return RoundScore{}, arena.Errorf(arena.EINVALID, "score round: %d benchmarks for %d markets", len(benchmarks), k)
	}
	var rs RoundScore
	var baseSum int64
	var baseF float64
	for i, x := range outcomes {
		if x != OutcomeNo && x != OutcomeYes && x != OutcomeExcluded {
			return RoundScore{}, arena.Errorf(arena.EINVALID, "score round: market %d has outcome %d", i, x)
		}
		b := benchmarks[i]
		if b != NoBenchmark && (b < 0 || b > MaxBps) {
			return RoundScore{}, arena.Errorf(arena.EINVALID, "score round: market %d has benchmark %d bps", i, b)
		}
		if x == OutcomeExcluded {
			continue
		}
		rs.Scored++
		if b != NoBenchmark {
			rs.Benchmarked++
			baseSum += sqErr(int64(b), x)
			baseF += sqErrF(float64(b)/MaxBps, x)
		}
	}
	if rs.Benchmarked > 0 {
		rs.BaseBrierBps2 = baseSum / int64(rs.Benchmarked)
		rs.BaseBrier = baseF / float64(rs.Benchmarked)
	}
	rs.Agents = make([]AgentScore, len(entries))
	for a, e := range entries {
		if e.Forfeit {
			if e.Predictions != nil {
				return RoundScore{}, arena.Errorf(arena.EINVALID, "score round: entry %d is a forfeit with predictions", a)
			}
		} else if err := CheckPredictions(e.Predictions, k); err != nil {
			return RoundScore{}, arena.Errorf(arena.EINVALID, "score round: entry %d: %v", a, err)
		}
		var brierSum, alphaSum int64
		var brierF, agentOnA float64
		for i, x := range outcomes {
			if x == OutcomeExcluded {
				continue
			}
			var sq int64 = Bps2
			sqF := 1.0
			if !e.Forfeit {
				p := e.Predictions[i]
				sq = sqErr(int64(p), x)
				sqF = sqErrF(float64(p)/MaxBps, x)
			}
			brierSum += sq
			brierF += sqF
			if b := benchmarks[i]; b != NoBenchmark {
				alphaSum += sqErr(int64(b), x) - sq
				agentOnA += sqF
			}
		}
		s := AgentScore{Forfeit: e.Forfeit}
		if rs.Scored > 0 {
			s.BrierBps2 = brierSum / int64(rs.Scored)
			s.Brier = brierF / float64(rs.Scored)
		}
		if rs.Benchmarked > 0 {
			s.AlphaBps2 = alphaSum / int64(rs.Benchmarked) // truncates toward zero, as Solidity does
			s.Alpha = rs.BaseBrier - agentOnA/float64(rs.Benchmarked)
		}
		rs.Agents[a] = s
	}
	return rs, nil
}

// sqErr is (p − 10000·x)² for p in bps.
func sqErr(p int64, x int8) int64 {
	d := p - int64(x)*MaxBps
	return d * d
}

func sqErrF(p float64, x int8) float64 {
	d := p - float64(x)
	return d * d
}
