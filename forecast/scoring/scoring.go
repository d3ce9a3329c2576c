package scoring

import (
	"math/rand/v2"
	"time"

	"github.com/forecast-arena/arena/forecast"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
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
const Bps2 = forecast.MaxBps * forecast.MaxBps

// Entry is one agent's part in a round: its revealed predictions, or a
// forfeit (committed, never revealed).
type Entry struct {
	Predictions []uint16 // k values in bps; nil for a forfeit
	Forfeit     bool
}

// RoundResult is a round's scores over its frozen set M*. N and
// AlphaN are named as in stats.RoundScore.
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
	b := float64(m.Benchmark) / forecast.MaxBps
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
// The float fields come from package stats's kernels (stats.RoundBrier and
// stats.RoundBrierAlpha) over p/10000, so they are the very numbers the
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
		if b := m.Benchmark; b != NoBenchmark && (b < 0 || b > forecast.MaxBps) {
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
		xa[j], ba[j] = float64(markets[i].Outcome), float64(markets[i].Benchmark)/forecast.MaxBps
	}
	ps, pa := make([]float64, rs.N), make([]float64, rs.AlphaN)

	rs.Agents = make([]AgentScore, len(entries))
	for a, e := range entries {
		if e.Forfeit {
			if e.Predictions != nil {
				return RoundResult{}, arena.Errorf(arena.EINVALID, "score round: entry %d is a forfeit with predictions", a)
			}
		} else if err := forecast.CheckPredictions(e.Predictions, k); err != nil {
			return RoundResult{}, arena.Errorf(arena.EINVALID, "score round: entry %d: %w", a, err)
		}
		var brierSum, alphaSum int64
		for j, i := range scored {
			p := e.scoredBps(i, markets[i].Outcome)
			brierSum += sqErr(p, markets[i].Outcome)
			ps[j] = float64(p) / forecast.MaxBps
		}
		for j, i := range alphaSet {
			m := markets[i]
			p := e.scoredBps(i, m.Outcome)
			alphaSum += sqErr(int64(m.Benchmark), m.Outcome) - sqErr(p, m.Outcome)
			pa[j] = float64(p) / forecast.MaxBps
		}
		s := AgentScore{Forfeit: e.Forfeit}
		if rs.N > 0 {
			s.BrierBps2 = brierSum / int64(rs.N)
			s.Brier = stats.RoundBrier(ps, xs)
		}
		if rs.AlphaN > 0 {
			s.AlphaBps2 = alphaSum / int64(rs.AlphaN) // truncates toward zero, as Solidity does
			_, rs.BaseBrier, s.Alpha = stats.RoundBrierAlpha(pa, ba, xa)
		}
		rs.Agents[a] = s
	}
	if rs.AlphaN > 0 && len(entries) == 0 {
		_, rs.BaseBrier, _ = stats.RoundBrierAlpha(ba, ba, xa)
	}
	return rs, nil
}

// scoredBps is the entry's prediction in bps on market i as scored, whose
// outcome is x: a forfeit is the opposite of the outcome.
func (e Entry) scoredBps(i int, x int8) int64 {
	if e.Forfeit {
		return int64(1-x) * forecast.MaxBps
	}
	return int64(e.Predictions[i])
}

// Forecast is the entry's probability on market i as scored, whose outcome
// is x (YES or NO): a forfeit forecasts the opposite of the outcome, a
// Brier of 1.
func (e Entry) Forecast(i int, x int8) float64 { return float64(e.scoredBps(i, x)) / forecast.MaxBps }

// sqErr is (p − 10000·x)² for p in bps.
func sqErr(p int64, x int8) int64 {
	d := p - int64(x)*forecast.MaxBps
	return d * d
}

// OutcomeUnresolved is the frozen outcome of a market that had not
// resolved when the round was triggered; like a void market
// (OutcomeExcluded) it is excluded from scoring, but the API shows it as
// unresolved (null), not as VOID.
const OutcomeUnresolved int8 = -2

// ScoreFrozen scores a round from its frozen outcomes (as stored: YES 1,
// NO 0, void and unresolved excluded), its benchmarks and its submissions
// (an unrevealed commit is a forfeit), plus the random baseline, and the
// market baseline when some market has a benchmark: the scores and scored
// forecasts the trigger saves; markets (aligned with r.Markets) give the
// scored forecasts' categories and events. A re-resolution re-scores with
// it too (see Rescore). With no market scored YES or NO there are no
// scores.
func ScoreFrozen(r *arena.Round, frozen []int8, markets []*arena.Market, subs []*arena.Submission) ([]arena.RoundScore, []arena.ScoredForecast, error) {
	if len(markets) != len(r.Markets) {
		return nil, nil, arena.Errorf(arena.EINVALID, "score round %d: %d markets for %d round markets", r.ID, len(markets), len(r.Markets))
	}
	outcomes, err := RoundOutcomes(r, frozen)
	if err != nil {
		return nil, nil, err
	}
	agents := make([]string, 0, len(subs)+1)
	entries := make([]Entry, 0, len(subs)+1)
	for _, sub := range subs {
		agents = append(agents, sub.Agent)
		if sub.Revealed() {
			entries = append(entries, Entry{Predictions: sub.Predictions})
		} else {
			entries = append(entries, Entry{Forfeit: true})
		}
	}
	agents = append(agents, forecast.RandomAgent)
	entries = append(entries, Entry{Predictions: RandomPredictions(r.ID, r.CommitDeadline, len(r.Markets))})
	res, err := ScoreRound(outcomes, entries)
	if err != nil {
		return nil, nil, err
	}
	if res.N == 0 {
		return nil, nil, nil
	}
	var scores []arena.RoundScore
	var rows []arena.ScoredForecast
	for a, as := range res.Agents {
		sc := arena.RoundScore{RoundID: r.ID, Agent: agents[a], Brier: as.Brier, BrierBps2: as.BrierBps2,
			Scored: res.N, Benchmarked: res.AlphaN, Forfeit: as.Forfeit}
		if res.AlphaN > 0 {
			alpha, abps := as.Alpha, as.AlphaBps2
			sc.Alpha, sc.AlphaBps2 = &alpha, &abps
		}
		scores = append(scores, sc)
		for i, mo := range outcomes {
			if !mo.Scored() {
				continue
			}
			rows = append(rows, arena.ScoredForecast{RoundID: r.ID, Agent: agents[a], MarketID: mo.MarketID, Category: markets[i].Category,
				Event: markets[i].EventID, Venue: markets[i].Venue(), Outcome: mo.Outcome, Benchmark: mo.BenchmarkPrice(), Forfeit: as.Forfeit,
				Forecast: entries[a].Forecast(i, mo.Outcome)})
		}
	}
	if res.AlphaN > 0 {
		zero, zeroBps := 0.0, int64(0)
		scores = append(scores, arena.RoundScore{RoundID: r.ID, Agent: forecast.MarketAgent, Brier: res.BaseBrier, BrierBps2: res.BaseBrierBps2,
			Alpha: &zero, AlphaBps2: &zeroBps, Scored: res.AlphaN, Benchmarked: res.AlphaN})
	}
	return scores, rows, nil
}

// RandomPredictions is the random baseline of a round: uniform in
// [0, 10000], seeded by the round id and commit deadline (public, fixed
// before anyone commits) so anyone can recompute it, and two arenas'
// round 1 differ.
func RandomPredictions(roundID uint64, commitDeadline time.Time, k int) []uint16 {
	rng := rand.New(rand.NewPCG(roundID, uint64(commitDeadline.Unix())))
	out := make([]uint16, k)
	for i := range out {
		out[i] = uint16(rng.IntN(forecast.MaxBps + 1))
	}
	return out
}
