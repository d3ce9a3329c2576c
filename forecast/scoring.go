package forecast

import (
	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/score"
)

// Outcomes as ScoreRound takes them.
const (
	OutcomeNo       int8 = 0
	OutcomeYes      int8 = 1
	OutcomeExcluded int8 = -1 // void (50-50) or unresolved when the set was frozen
)

// NoBenchmark marks a market without a benchmark price: it is
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

// RoundResult is a round's scores over its frozen set M*. N and
// AlphaN are named as in score.RoundScore.
type RoundResult struct {
	N      int // |M*|: markets with outcome 0 or 1
	AlphaN int // markets of M* with a benchmark: the Alpha set A
	// BaseBrierBps2 is the market baseline's Brier over A; meaningful only
	// when AlphaN > 0.
	BaseBrierBps2 int64
	BaseBrier     float64
	Agents        []AgentScore // aligned with the entries
}

// AgentScore is one agent's round score. Brier is over M* and meaningful
// only when N > 0; Alpha is over A and meaningful only when AlphaN > 0.
type AgentScore struct {
	Forfeit   bool
	BrierBps2 int64 // truncated mean of (p − 10000·x)², in [0, 10⁸]
	AlphaBps2 int64 // truncated toward zero mean of (b − 10000·x)² − (p − 10000·x)², in [−10⁸, 10⁸]
	Brier     float64
	Alpha     float64
}

// MarketOutcome is one market of a round as ScoreRound takes it.
type MarketOutcome struct {
	MarketID  int64 // names the market for the caller's rows; scoring does not read it
	Outcome   int8  // OutcomeYes, OutcomeNo, or OutcomeExcluded (void or unresolved)
	Benchmark int32 // the benchmark in bps, or NoBenchmark
}

// Scored reports whether the market is in M*, the markets scored for Brier.
func (m MarketOutcome) Scored() bool { return m.Outcome != OutcomeExcluded }

// Benchmarked reports whether the market is in A, the markets scored for
// Alpha: scored and with a benchmark.
func (m MarketOutcome) Benchmarked() bool { return m.Scored() && m.Benchmark != NoBenchmark }

// BenchmarkPrice is the benchmark as a probability, or nil without one.
func (m MarketOutcome) BenchmarkPrice() *float64 {
	if m.Benchmark == NoBenchmark {
		return nil
	}
	b := float64(m.Benchmark) / MaxBps
	return &b
}

// ScoringOutcome maps a frozen outcome (YES 1, NO 0, void, unresolved) to
// the one scored: void and unresolved are both excluded.
func ScoringOutcome(frozen int8) int8 {
	if frozen == OutcomeYes || frozen == OutcomeNo {
		return frozen
	}
	return OutcomeExcluded
}

// RoundOutcomes pairs a round's markets, with their recorded benchmarks,
// and the round's frozen outcomes (aligned with r.Markets), as ScoreRound
// takes them.
func RoundOutcomes(r *arena.Round, frozen []int8) ([]MarketOutcome, error) {
	if len(frozen) != len(r.Markets) {
		return nil, arena.Errorf(arena.EINVALID, "score round %d: %d outcomes for %d markets", r.ID, len(frozen), len(r.Markets))
	}
	ms := make([]MarketOutcome, len(r.Markets))
	for i, rm := range r.Markets {
		ms[i] = MarketOutcome{MarketID: rm.MarketID, Outcome: ScoringOutcome(frozen[i]), Benchmark: NoBenchmark}
		if rm.Benchmark != nil {
			ms[i].Benchmark = rm.BenchmarkBps
		}
	}
	return ms, nil
}

// ScoreRound scores a round exactly in integer bps² with
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
// scores |p_i − x_i| = 1 on every market of M*: Brier 10⁸ bps² and Alpha
// over A of base − 10⁸. Each entry's predictions are aligned with markets.
//
// The float fields come from package score's kernels (score.RoundBrier and
// score.RoundBrierAlpha) over p/10000, so they are the very numbers the
// analysis computes; they agree with the integers to within the truncation
// (< 1 bps², i.e. 1e−8).
func ScoreRound(markets []MarketOutcome, entries []Entry) (RoundResult, error) {
	k := len(markets)
	var rs RoundResult
	var scored, alphaSet []int // market indices of M* and A
	var baseSum int64
	for i, m := range markets {
		if x := m.Outcome; x != OutcomeNo && x != OutcomeYes && x != OutcomeExcluded {
			return RoundResult{}, arena.Errorf(arena.EINVALID, "score round: market %d has outcome %d", i, x)
		}
		if b := m.Benchmark; b != NoBenchmark && (b < 0 || b > MaxBps) {
			return RoundResult{}, arena.Errorf(arena.EINVALID, "score round: market %d has benchmark %d bps", i, b)
		}
		if !m.Scored() {
			continue
		}
		scored = append(scored, i)
		if m.Benchmarked() {
			alphaSet = append(alphaSet, i)
			baseSum += sqErr(int64(m.Benchmark), m.Outcome)
		}
	}
	rs.N, rs.AlphaN = len(scored), len(alphaSet)
	if rs.AlphaN > 0 {
		rs.BaseBrierBps2 = baseSum / int64(rs.AlphaN)
	}
	// Float inputs: outcomes and benchmarks on M* and A; predictions per agent.
	xs, xa, ba := make([]float64, rs.N), make([]float64, rs.AlphaN), make([]float64, rs.AlphaN)
	for j, i := range scored {
		xs[j] = float64(markets[i].Outcome)
	}
	for j, i := range alphaSet {
		xa[j], ba[j] = float64(markets[i].Outcome), float64(markets[i].Benchmark)/MaxBps
	}
	ps, pa := make([]float64, rs.N), make([]float64, rs.AlphaN)

	rs.Agents = make([]AgentScore, len(entries))
	for a, e := range entries {
		if e.Forfeit {
			if e.Predictions != nil {
				return RoundResult{}, arena.Errorf(arena.EINVALID, "score round: entry %d is a forfeit with predictions", a)
			}
		} else if err := CheckPredictions(e.Predictions, k); err != nil {
			return RoundResult{}, arena.Errorf(arena.EINVALID, "score round: entry %d: %w", a, err)
		}
		var brierSum, alphaSum int64
		for j, i := range scored {
			p := e.scoredBps(i, markets[i].Outcome)
			brierSum += sqErr(p, markets[i].Outcome)
			ps[j] = float64(p) / MaxBps
		}
		for j, i := range alphaSet {
			m := markets[i]
			p := e.scoredBps(i, m.Outcome)
			alphaSum += sqErr(int64(m.Benchmark), m.Outcome) - sqErr(p, m.Outcome)
			pa[j] = float64(p) / MaxBps
		}
		s := AgentScore{Forfeit: e.Forfeit}
		if rs.N > 0 {
			s.BrierBps2 = brierSum / int64(rs.N)
			s.Brier = score.RoundBrier(ps, xs)
		}
		if rs.AlphaN > 0 {
			s.AlphaBps2 = alphaSum / int64(rs.AlphaN) // truncates toward zero, as Solidity does
			_, rs.BaseBrier, s.Alpha = score.RoundBrierAlpha(pa, ba, xa)
		}
		rs.Agents[a] = s
	}
	if rs.AlphaN > 0 && len(entries) == 0 {
		_, rs.BaseBrier, _ = score.RoundBrierAlpha(ba, ba, xa)
	}
	return rs, nil
}

// scoredBps is the entry's prediction in bps on market i as scored, whose
// outcome is x: a forfeit is the opposite of the outcome.
func (e Entry) scoredBps(i int, x int8) int64 {
	if e.Forfeit {
		return int64(1-x) * MaxBps
	}
	return int64(e.Predictions[i])
}

// Forecast is the entry's probability on market i as scored, whose outcome
// is x (YES or NO): a forfeit forecasts the opposite of the outcome, a
// Brier of 1.
func (e Entry) Forecast(i int, x int8) float64 { return float64(e.scoredBps(i, x)) / MaxBps }

// sqErr is (p − 10000·x)² for p in bps.
func sqErr(p int64, x int8) int64 {
	d := p - int64(x)*MaxBps
	return d * d
}
