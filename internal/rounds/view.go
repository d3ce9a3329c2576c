package rounds

import (
	"context"
	"fmt"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"

	"github.com/forecast-arena/arena"
)

// View renders a round for the API: benchmarks appear once captured after
// the commit deadline, outcomes once triggered.
func (s *Service) View(ctx context.Context, r *arena.Round) (forecast.RoundJSON, error) {
	now := s.now()
	out := forecast.RoundJSON{ID: r.ID, Status: r.Status(now), CommitDeadline: r.CommitDeadline, RevealStart: r.RevealStart,
		RevealDeadline: r.RevealDeadline, Markets: make([]forecast.RoundMarketJSON, len(r.Markets))}
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
		mj := forecast.RoundMarketJSON{Index: i, MarketID: m.ID, Question: m.Question, Category: m.Category, Venue: m.Venue(), CloseTime: m.CloseTime}
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
			case scoring.OutcomeYes:
				o = "YES"
			case scoring.OutcomeNo:
				o = "NO"
			case scoring.OutcomeExcluded:
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
func (s *Service) Scores(ctx context.Context, roundID uint64) ([]forecast.ScoreJSON, error) {
	r, err := s.Store.Round(ctx, roundID)
	if err != nil {
		return nil, err
	}
	if r.TriggeredAt.IsZero() {
		return []forecast.ScoreJSON{}, nil
	}
	scs, err := s.Store.RoundScores(ctx, roundID)
	if err != nil {
		return nil, err
	}
	out := make([]forecast.ScoreJSON, 0, len(scs))
	for _, sc := range scs {
		out = append(out, forecast.ScoreJSON{Agent: sc.Agent, Brier: sc.Brier, Alpha: sc.Alpha, BrierBps2: sc.BrierBps2,
			AlphaBps2: sc.AlphaBps2, ScoredMarkets: sc.Scored, Forfeit: sc.Forfeit})
	}
	return out, nil
}

// Leaderboard is the forecast track's leaderboard over the forecasts f
// selects, and the analysis it comes from (cached until another round is
// scored).
func (s *Service) Leaderboard(ctx context.Context, f Filter) (scoring.Board, *scoring.Analysis, error) {
	a, err := s.AnalysisOf(ctx, f)
	if err != nil {
		return scoring.Board{}, nil, err
	}
	p, err := s.Profiles(ctx)
	if err != nil {
		return scoring.Board{}, nil, err
	}
	return a.Board(p), a, nil
}

// VenueBoard sets the leaderboards of f's forecasts on each venue side by
// side, with the combined score that weighs the venues equally
// (scoring.CombineVenues); f.Venue must be empty.
func (s *Service) VenueBoard(ctx context.Context, f Filter) (scoring.VenueBoard, error) {
	if f.Venue != "" {
		return scoring.VenueBoard{}, arena.Errorf(arena.EINVALID, "venue: the venues' board sets every venue side by side; leave venue out")
	}
	all, err := s.Analysis(ctx)
	if err != nil {
		return scoring.VenueBoard{}, err
	}
	boards := map[string]scoring.Board{}
	for _, v := range all.Venues {
		f.Venue = v
		if boards[v], _, err = s.Leaderboard(ctx, f); err != nil {
			return scoring.VenueBoard{}, err
		}
	}
	return scoring.CombineVenues(boards), nil
}

// Board is the leaderboard over every scored round: what the export
// writes (see export.Forecasts).
func (s *Service) Board(ctx context.Context) (scoring.Board, error) {
	b, _, err := s.Leaderboard(ctx, Filter{})
	return b, err
}

// ForecastStore is the service's store (see export.Forecasts).
func (s *Service) ForecastStore() arena.ForecastStore { return s.Store }

// SigningDomain is the EIP-712 domain the service verifies submissions
// under (see export.Forecasts).
func (s *Service) SigningDomain() forecast.Domain { return s.Domain }

// Snapshot calls fn with the service's store as of one moment and the
// leaderboard of that state (see export.Forecasts): what an export of one
// state reads.
func (s *Service) Snapshot(ctx context.Context, fn func(arena.StoreSnapshot, func(context.Context) (scoring.Board, error)) error) error {
	sn, ok := s.Store.(arena.Snapshotter)
	if !ok {
		return fmt.Errorf("rounds: the store cannot read one state of itself")
	}
	return sn.Snapshot(ctx, func(st arena.StoreSnapshot) error {
		return fn(st, func(ctx context.Context) (scoring.Board, error) { return s.boardAt(ctx, st) })
	})
}
