package forecast

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/score"
)

// Analysis is the scored state of the forecast track: every agent's
// cumulative figures, Murphy and CORP decompositions, inference and
// difficulty-adjusted score, computed once per set of scored rounds.
type Analysis struct {
	// Results are ranked as the leaderboard: shrunken alpha, then Brier.
	Results []score.AgentResult
	// Adjusted is the difficulty-adjusted leaderboard (nil with no
	// questions to estimate difficulty from).
	Adjusted *score.FEResult
	// Forecasts are the frozen scored forecasts, by round then agent;
	// ByAgent and ByMarket index them.
	Forecasts []arena.ScoredForecast
	ByAgent   map[string][]int
	ByMarket  map[int64][]int
	// ScoredRounds and LastScored identify the rounds analysed.
	ScoredRounds int
	LastScored   time.Time
	Bootstrap    int
	Seed         uint64
}

// AnalysisBootstrap and AnalysisSeed fix the bootstrap of the dashboard's
// confidence intervals, so the same rounds always give the same figures.
const (
	AnalysisBootstrap        = 999
	AnalysisSeed      uint64 = 1
)

// analysisCache keeps the last analysis until another round is scored.
type analysisCache struct {
	mu    sync.Mutex
	key   string
	value *Analysis
}

// caches holds one analysisCache per *Service: a field would make the
// Service uncopyable, and callers copy it to vary the clock.
var caches sync.Map

func (s *Service) cache() *analysisCache {
	c, _ := caches.LoadOrStore(s, &analysisCache{})
	return c.(*analysisCache)
}

// Analysis returns the track's analysis, recomputed only when the set of
// scored rounds has changed since the last call.
func (s *Service) Analysis(ctx context.Context) (*Analysis, error) {
	n, last, err := s.scoredVersion(ctx)
	if err != nil {
		return nil, err
	}
	key := fmt.Sprintf("%d/%d", n, last.UnixNano())
	c := s.cache()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.value != nil && c.key == key {
		return c.value, nil
	}
	a, err := s.analyze(ctx)
	if err != nil {
		return nil, err
	}
	a.ScoredRounds, a.LastScored = n, last
	c.key, c.value = key, a
	return a, nil
}

func (s *Service) analyze(ctx context.Context) (*Analysis, error) {
	fs, err := s.Store.ScoredForecasts(ctx)
	if err != nil {
		return nil, err
	}
	a := &Analysis{Forecasts: fs, Bootstrap: AnalysisBootstrap, Seed: AnalysisSeed, ByAgent: map[string][]int{}, ByMarket: map[int64][]int{}}
	for i, f := range fs {
		a.ByAgent[f.Agent] = append(a.ByAgent[f.Agent], i)
		a.ByMarket[f.MarketID] = append(a.ByMarket[f.MarketID], i)
	}
	if len(fs) == 0 {
		return a, nil
	}
	t, err := Table(fs)
	if err != nil {
		return nil, err
	}
	res, err := score.Analyze(t, score.Options{Bootstrap: AnalysisBootstrap, Seed: AnalysisSeed})
	if err != nil {
		return nil, fmt.Errorf("forecast: analyze: %w", err)
	}
	rank(res)
	a.Results = res
	// Difficulty-adjusted scores: a question is a (round, market); every
	// agent estimates difficulty, the market baseline joins beside them.
	obs := make([]score.FEObs, 0, len(fs))
	seen := map[string]bool{}
	var est []string
	for _, f := range fs {
		q := fmt.Sprint(f.RoundID, "/", f.MarketID)
		stratum := fmt.Sprint(f.RoundID)
		d := f.Forecast - float64(f.Outcome)
		obs = append(obs, score.FEObs{Agent: f.Agent, Question: q, Stratum: stratum, Brier: d * d})
		if !slices.Contains(est, f.Agent) {
			est = append(est, f.Agent)
		}
		if f.Benchmark != nil && !seen[q] {
			seen[q] = true
			b := *f.Benchmark - float64(f.Outcome)
			obs = append(obs, score.FEObs{Agent: MarketAgent, Question: q, Stratum: stratum, Brier: b * b})
		}
	}
	if len(seen) == 0 {
		est = nil
	}
	adj, err := score.AdjustedLeaderboard(obs, score.FEOptions{Estimation: est, Bootstrap: AnalysisBootstrap, Seed: AnalysisSeed})
	if err == nil {
		a.Adjusted = adj
	} else {
		s.log().Warn("forecast: adjusted leaderboard", "err", err)
	}
	return a, nil
}

// rank orders results as the leaderboard: shrunken alpha, best first,
// agents without one last, then Brier.
func rank(res []score.AgentResult) {
	key := func(a score.AgentResult) float64 {
		if !a.Inference.ShrunkAlpha.OK {
			return -1e9
		}
		return a.Inference.ShrunkAlpha.V
	}
	sort.SliceStable(res, func(i, j int) bool {
		if ki, kj := key(res[i]), key(res[j]); ki != kj {
			return ki > kj
		}
		return res[i].Brier < res[j].Brier
	})
}

// Names maps agent addresses to display names, baselines included.
func (s *Service) Names(ctx context.Context) (map[string]string, error) {
	names := map[string]string{RandomAgent: "Random (uniform)", MarketAgent: "Market (benchmark)"}
	agents, err := s.Store.Agents(ctx)
	if err != nil {
		return nil, err
	}
	for _, a := range agents {
		if a.Name != "" {
			names[a.Address] = a.Name
		}
	}
	return names, nil
}

// scoredVersion identifies the set of scored rounds: their count and the
// latest trigger. A store that can say it in one query (ScoredVersion)
// spares loading every round.
func (s *Service) scoredVersion(ctx context.Context) (int, time.Time, error) {
	if v, ok := s.Store.(interface {
		ScoredVersion(context.Context) (int, time.Time, error)
	}); ok {
		return v.ScoredVersion(ctx)
	}
	scored, err := s.Store.Rounds(ctx, arena.RoundFilter{Status: arena.RoundScored, Now: s.now()})
	if err != nil {
		return 0, time.Time{}, err
	}
	var last time.Time
	for _, r := range scored {
		if r.TriggeredAt.After(last) {
			last = r.TriggeredAt
		}
	}
	return len(scored), last, nil
}
