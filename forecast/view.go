package forecast

import (
	"context"
	"fmt"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/score"
)

// View renders a round for the API: benchmarks appear once captured after
// the commit deadline, outcomes once triggered.
func (s *Service) View(ctx context.Context, r *arena.Round) (RoundJSON, error) {
	now := s.now()
	out := RoundJSON{ID: r.ID, Status: r.Status(now), CommitDeadline: r.CommitDeadline, RevealStart: r.RevealStart,
		RevealDeadline: r.RevealDeadline, Markets: make([]RoundMarketJSON, len(r.Markets))}
	ids := make([]int64, len(r.Markets))
	for i, rm := range r.Markets {
		ids[i] = rm.MarketID
	}
	ms, err := s.Store.MarketsByID(ctx, ids)
	if err != nil {
		return out, err
	}
	for i, rm := range r.Markets {
		m := ms[rm.MarketID]
		mj := RoundMarketJSON{Index: i, MarketID: m.ID, Question: m.Question, Category: m.Category, CloseTime: m.CloseTime}
		// Until the commit deadline agents see the latest price; after it,
		// the benchmark is the reference and outcomes may be near.
		if p, ok := m.YesPrice(); ok && now.Before(r.CommitDeadline) {
			mj.Price = &p
		}
		out.Markets[i] = mj
	}
	if !r.BenchmarkAt.IsZero() {
		out.Benchmarks = make([]*float64, len(r.Markets))
		for i, rm := range r.Markets {
			out.Benchmarks[i] = rm.Benchmark
		}
	}
	if !r.TriggeredAt.IsZero() {
		out.Outcomes = make([]*string, len(r.Markets))
		for i, rm := range r.Markets {
			if rm.Outcome == nil {
				continue
			}
			var o string
			switch *rm.Outcome {
			case OutcomeYes:
				o = "YES"
			case OutcomeNo:
				o = "NO"
			case OutcomeExcluded:
				o = "VOID"
			default:
				continue // unresolved when the round was triggered: null (also excluded from scoring)
			}
			out.Outcomes[i] = &o
		}
	}
	return out, nil
}

// Scores returns a scored round's per-agent scores.
func (s *Service) Scores(ctx context.Context, roundID uint64) ([]ScoreJSON, error) {
	r, err := s.Store.Round(ctx, roundID)
	if err != nil {
		return nil, err
	}
	if r.TriggeredAt.IsZero() {
		return []ScoreJSON{}, nil
	}
	scs, err := s.Store.RoundScores(ctx, roundID)
	if err != nil {
		return nil, err
	}
	out := make([]ScoreJSON, 0, len(scs))
	for _, sc := range scs {
		out = append(out, ScoreJSON{Agent: sc.Agent, Brier: sc.Brier, Alpha: sc.Alpha, BrierBps2: sc.BrierBps2,
			AlphaBps2: sc.AlphaBps2, ScoredMarkets: sc.Scored, Forfeit: sc.Forfeit})
	}
	return out, nil
}

// Table loads every frozen forecast into a scoring table (score-file rows): the
// single source for the leaderboard and the reports.
func Table(fs []arena.ScoredForecast) (*score.Table, error) {
	t := score.NewTable(len(fs))
	for i, f := range fs {
		r := score.Row{Agent: f.Agent, Round: fmt.Sprint(f.RoundID), Market: fmt.Sprint(f.MarketID), Category: f.Category,
			Event: f.Event, Forecast: f.Forecast, Outcome: float64(f.Outcome)}
		if f.Benchmark != nil {
			r.Benchmark, r.HasBenchmark = *f.Benchmark, true
		}
		if err := t.Add(r, i+1); err != nil {
			return nil, fmt.Errorf("forecast: scored forecast %d: %w", i, err)
		}
	}
	return t, nil
}

// Leaderboard is the forecast track's leaderboard over the forecasts f
// selects, and the analysis it comes from (cached until another round is
// scored).
func (s *Service) Leaderboard(ctx context.Context, f Filter) (Board, *Analysis, error) {
	a, err := s.AnalysisOf(ctx, f)
	if err != nil {
		return Board{}, nil, err
	}
	p, err := s.Profiles(ctx)
	if err != nil {
		return Board{}, nil, err
	}
	return a.Board(p), a, nil
}
