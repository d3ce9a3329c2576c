package scoring

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena/forecast"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
)

// Analysis is the scored state of the forecast track: every agent's
// cumulative figures, Murphy and CORP decompositions, inference and
// difficulty-adjusted score, computed once per set of scored rounds.
type Analysis struct {
	// Results are in leaderboard order (see Order).
	Results []stats.AgentResult
	// Adjusted is the difficulty-adjusted leaderboard (nil with no
	// questions to estimate difficulty from).
	Adjusted *stats.FEResult
	// Forecasts are the frozen scored forecasts, by round then agent;
	// ByAgent and ByMarket index them.
	Forecasts []arena.ScoredForecast
	ByAgent   map[string][]int
	ByMarket  map[int64][]int
	// ScoredRounds and LastScored identify the rounds analysed.
	ScoredRounds int
	LastScored   time.Time
	// Method is the scoring method the figures come from; Peers the
	// agents' peer scores.
	Method Method
	Peers  map[string]stats.Peer
	// Deadlines are the commit deadlines of the scored rounds (of every
	// scored round, also in a filtered analysis); Categories and Venues
	// the market categories and venues among all scored forecasts.
	Deadlines  map[uint64]time.Time
	Categories []string
	Venues     []string
}

// AnalysisBootstrap and AnalysisSeed are the default method's bootstrap
// (see DefaultMethod): fixed, so the same rounds always give the same
// figures. AnalysisBootstrapWork caps the difficulty-adjusted fit's
// bootstrap at 2³² observations visited, some seconds of a core: an
// arena of 100 agents answering every market of 500 rounds of 7 (350,000
// forecasts) spends about 10⁹ on its 999 replicates, while a round of
// 60,000 one-shot agents, or a history whose fit converges slowly, may
// run fewer (BenchmarkAnalyzeFlood).
const (
	AnalysisBootstrap            = 999
	AnalysisSeed          uint64 = 1
	AnalysisBootstrapWork int64  = 1 << 32
)

// AnalyzeForecasts is the analysis of frozen scored forecasts with
// method m: what the dashboard shows and an export's verifier recomputes.
// The bootstraps resample in the order the forecasts come in, so they are
// taken by round, agent and market (byte order) whatever order the
// caller's store returned. logger receives a failure of the
// difficulty-adjusted fit, which leaves Adjusted nil. It stops with ctx,
// returning ctx's error.
func AnalyzeForecasts(ctx context.Context, fs []arena.ScoredForecast, m Method, logger *slog.Logger) (*Analysis, error) {
	fs = Ordered(fs)
	a := &Analysis{Forecasts: fs, Method: m, ByAgent: map[string][]int{}, ByMarket: map[int64][]int{}}
	for i, f := range fs {
		a.ByAgent[f.Agent] = append(a.ByAgent[f.Agent], i)
		a.ByMarket[f.MarketID] = append(a.ByMarket[f.MarketID], i)
	}
	if len(fs) == 0 {
		return a, nil
	}
	t, err := Table(ctx, fs)
	if err != nil {
		return nil, err
	}
	s, err := AnalyzeTable(ctx, t, m, logger)
	if err != nil {
		return nil, err
	}
	a.Results, a.Adjusted, a.Peers = s.Results, s.Adjusted, s.Peers
	return a, nil
}

// Scored is what AnalyzeTable computes from a scoring table.
type Scored struct {
	// Results are in leaderboard order (see Order).
	Results []stats.AgentResult
	// Adjusted is the difficulty-adjusted fit; nil when it failed.
	Adjusted *stats.FEResult
	// Peers are the agents' peer scores by agent.
	Peers map[string]stats.Peer
}

// AnalyzeTable scores every agent of t with method m: cumulative figures,
// the difficulty-adjusted fit with its bootstrap (a question is a round
// and market, resampled within its round; every agent estimates
// difficulty, the market baseline joins beside them) and peer scores,
// with results in leaderboard order. The agents with at least
// m.MinForecasts forecasts compete for the bootstrap's places; the paired
// tests are the best one's against every other (all pairs would grow with
// the square of the agents). It stops with ctx, returning ctx's error.
func AnalyzeTable(ctx context.Context, t *stats.Table, m Method, logger *slog.Logger) (*Scored, error) {
	res, err := stats.Analyze(ctx, t, m.options())
	if err != nil {
		return nil, fmt.Errorf("forecast: analyze: %w", err)
	}
	out := &Scored{Results: res, Peers: map[string]stats.Peer{}}
	adj, obs, err := Adjusted(ctx, t, res, m, nil)
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("forecast: analyze: %w", ctx.Err())
	case err == nil:
		out.Adjusted = adj
	default:
		logger.Warn("forecast: adjusted leaderboard", "err", err)
	}
	for _, p := range stats.PeerScores(obs) {
		out.Peers[p.Agent] = p
	}
	Order(out.Results, out.Adjusted, m)
	return out, nil
}

// Adjusted is the difficulty-adjusted leaderboard of t, the one the
// dashboard, `arena report leaderboard --adjusted` and the export
// verifier show: a question is a (round, market), its bootstrap stratum
// the round, b_ij the agent's squared error on it; the market baseline
// joins beside the agents when benchmarks are present. The estimation
// set is est, or by default every agent of t (none without benchmarks,
// when the fit needs no anchor). The agents of res with at least
// m.MinForecasts forecasts compete for the bootstrap's places; the paired
// tests are the best one's against every other. It also returns the
// observations it fitted (peer scores use them). It stops with ctx,
// returning ctx's error.
func Adjusted(ctx context.Context, t *stats.Table, res []stats.AgentResult, m Method, est []string) (*stats.FEResult, []stats.FEObs, error) {
	obs := make([]stats.FEObs, 0, t.Len())
	seen := map[string]bool{}
	for i := range t.Len() {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return nil, nil, fmt.Errorf("forecast: adjusted leaderboard: %w", ctx.Err())
		}
		r := t.Row(i)
		q := r.Round + "\x00" + r.Market // ids may hold any character but NUL
		d := r.Forecast - r.Outcome
		obs = append(obs, stats.FEObs{Agent: r.Agent, Question: q, Stratum: r.Round, Brier: d * d})
		if r.HasBenchmark && !seen[q] {
			seen[q] = true
			b := r.Benchmark - r.Outcome
			obs = append(obs, stats.FEObs{Agent: forecast.MarketAgent, Question: q, Stratum: r.Round, Brier: b * b})
		}
	}
	if est == nil && len(seen) > 0 {
		est = slices.Clone(t.Agents.Names)
	}
	contenders := []string{}
	for _, x := range res {
		if x.N >= m.MinForecasts {
			contenders = append(contenders, x.Agent)
		}
	}
	boot := m.Bootstrap
	if boot == 0 {
		boot = -1 // FEOptions: negative skips the bootstrap
	}
	adj, err := stats.AdjustedLeaderboard(ctx, obs, stats.FEOptions{Estimation: est, Bootstrap: boot, MaxWork: m.BootstrapWork, Seed: m.Seed,
		Level: m.Level, Contenders: contenders, TopShare: m.TopShare, PairsWithBest: true})
	return adj, obs, err
}

// checkEvery is how many rows a loop over forecasts goes between looks
// at its context: some milliseconds of work at most.
const checkEvery = 1 << 16

// Ordered is fs in the order an analysis takes them (CompareForecasts):
// fs itself when so ordered already, else a sorted copy.
func Ordered(fs []arena.ScoredForecast) []arena.ScoredForecast {
	if !slices.IsSortedFunc(fs, CompareForecasts) {
		fs = slices.Clone(fs)
		slices.SortStableFunc(fs, CompareForecasts)
	}
	return fs
}

// CompareForecasts orders scored forecasts by round, agent and market:
// the order an analysis takes them in.
func CompareForecasts(a, b arena.ScoredForecast) int {
	return cmp.Or(cmp.Compare(a.RoundID, b.RoundID), strings.Compare(a.Agent, b.Agent), cmp.Compare(a.MarketID, b.MarketID))
}

// Table loads every frozen forecast into a scoring table (score-file rows): the
// single source for the leaderboard and the reports. It stops with ctx,
// returning ctx's error.
func Table(ctx context.Context, fs []arena.ScoredForecast) (*stats.Table, error) {
	t := stats.NewTable(len(fs))
	for i, f := range fs {
		if i%checkEvery == 0 && ctx.Err() != nil {
			return nil, fmt.Errorf("forecast: scoring table: %w", ctx.Err())
		}
		r := stats.Row{Agent: f.Agent, Round: fmt.Sprint(f.RoundID), Market: fmt.Sprint(f.MarketID), Category: f.Category,
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
