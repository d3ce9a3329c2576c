package forecast

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/score"
)

// Analysis is the scored state of the forecast track: every agent's
// cumulative figures, Murphy and CORP decompositions, inference and
// difficulty-adjusted score, computed once per set of scored rounds.
type Analysis struct {
	// Results are in leaderboard order (see Order).
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
	// Method is the scoring method the figures come from; Peers the
	// agents' peer scores.
	Method Method
	Peers  map[string]score.Peer
	// Deadlines are the commit deadlines of the scored rounds (of every
	// scored round, also in a filtered analysis); Categories the market
	// categories among all scored forecasts.
	Deadlines  map[uint64]time.Time
	Categories []string

	version    string
	roundIDs   []uint64
	roundsSeen map[uint64]struct{}
}

// AnalysisBootstrap and AnalysisSeed are the default method's bootstrap
// (see DefaultMethod): fixed, so the same rounds always give the same figures.
const (
	AnalysisBootstrap        = 999
	AnalysisSeed      uint64 = 1
)

// SlowAnalysis is how long an analysis may take and still be waited for.
// Once the last computation of a view took longer (a large database), a
// reader whose figures are out of date (another round was scored) gets the
// previous analysis at once while the new one is computed in the
// background, instead of waiting for its bootstrap; a quick one (every
// test database) is always waited for, so a read after a trigger is fresh.
const SlowAnalysis = time.Second

// Filter selects the scored forecasts an analysis covers.
type Filter struct {
	// Window keeps the rounds whose commit deadline is at most this long
	// before now; 0 keeps every round.
	Window time.Duration
	// Category keeps the markets of one category; "" keeps all.
	Category string
}

func (f Filter) name() string { return fmt.Sprint(int64(f.Window), "|", f.Category) }

// MaxCachedAnalyses bounds the views (filters) whose analysis is kept:
// the least recently read is dropped beyond it, so that however many
// filters clients ask for, the cache holds at most this many analyses.
const MaxCachedAnalyses = 32

// analysisCache keeps, per filter, the last analysis and the computation
// under way, for the MaxCachedAnalyses views read last.
type analysisCache struct {
	mu      sync.Mutex
	entries *simplelru.LRU[string, *cacheEntry]
	// Computations run on base (cancelled by Stop) and are counted in
	// running, so that Stop returns once none is left to use the store.
	base    context.Context
	stop    context.CancelFunc
	running sync.WaitGroup
}

func newAnalysisCache() *analysisCache {
	l, err := simplelru.NewLRU[string, *cacheEntry](MaxCachedAnalyses, nil)
	if err != nil {
		panic(err) // only for a size below 1
	}
	base, stop := context.WithCancel(context.Background())
	return &analysisCache{entries: l, base: base, stop: stop}
}

// Stop cancels the analyses being computed in the background and returns
// once none is running, so the store can be closed after it. Later reads
// compute nothing and fail with context.Canceled.
func (s *Service) Stop() {
	c := s.cache()
	c.mu.Lock() // get checks and counts a new computation under mu
	c.stop()
	c.mu.Unlock()
	c.running.Wait()
}

type cacheEntry struct {
	version string // of value
	value   *Analysis
	took    time.Duration // the last computation
	running *analysisRun
}

type analysisRun struct {
	version string
	done    chan struct{}
	value   *Analysis
	err     error
}

// caches holds one analysisCache per *Service: a field would make the
// Service uncopyable, and callers copy it to vary the clock.
var caches sync.Map

func (s *Service) cache() *analysisCache {
	if c, ok := caches.Load(s); ok {
		return c.(*analysisCache)
	}
	c, _ := caches.LoadOrStore(s, newAnalysisCache())
	return c.(*analysisCache)
}

// CachedAnalyses is how many views' analyses are cached (at most
// MaxCachedAnalyses).
func (s *Service) CachedAnalyses() int {
	c := s.cache()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.entries.Len()
}

// get returns the analysis of version for the view called name, computing
// it (once, however many readers ask) when the cached one is of another
// version. A computation outlives the request that started it (and its
// entry, should that be dropped meanwhile).
func (c *analysisCache) get(ctx context.Context, name, version string, compute func(context.Context) (*Analysis, error)) (*Analysis, error) {
	c.mu.Lock()
	e, ok := c.entries.Get(name)
	if !ok {
		e = &cacheEntry{}
		c.entries.Add(name, e)
	}
	if e.value != nil && e.version == version {
		c.mu.Unlock()
		return e.value, nil
	}
	run := e.running
	if c.base.Err() != nil {
		c.mu.Unlock()
		return nil, fmt.Errorf("forecast: analysis: the service is stopped: %w", c.base.Err())
	}
	if run == nil || run.version != version {
		run = &analysisRun{version: version, done: make(chan struct{})}
		e.running = run
		c.running.Add(1)
		go func() {
			defer c.running.Done()
			// The computation outlives the request that started it, not
			// the service: Stop cancels it.
			cctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
			defer context.AfterFunc(c.base, cancel)()
			defer cancel()
			start := time.Now()
			run.value, run.err = compute(cctx)
			c.mu.Lock()
			if run.err == nil && e.running == run {
				e.value, e.version, e.took = run.value, run.version, time.Since(start)
			}
			if e.running == run {
				e.running = nil
			}
			c.mu.Unlock()
			close(run.done)
		}()
	}
	stale, slow := e.value, e.took > SlowAnalysis
	c.mu.Unlock()
	if stale != nil && slow {
		return stale, nil
	}
	select {
	case <-run.done:
		return run.value, run.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Analysis returns the track's analysis over every scored round,
// recomputed only when the set of scored rounds has changed (see
// SlowAnalysis for what a reader gets meanwhile).
func (s *Service) Analysis(ctx context.Context) (*Analysis, error) {
	n, last, err := s.scoredVersion(ctx)
	if err != nil {
		return nil, err
	}
	version := fmt.Sprintf("%d/%d/%s", n, last.UnixNano(), s.ScoringMethod().Digest())
	return s.cache().get(ctx, Filter{}.name(), version, func(ctx context.Context) (*Analysis, error) {
		a, err := s.analyze(ctx)
		if err != nil {
			return nil, err
		}
		a.ScoredRounds, a.LastScored, a.version = n, last, version
		return a, nil
	})
}

// AnalysisOf returns the analysis of the forecasts f selects: the same
// figures as Analysis over fewer rounds or one category. It is cached per
// filter until the selected rounds change. A category no scored forecast
// has is refused: it would select nothing, and its own cache entry would
// let clients fill the cache with made-up names.
func (s *Service) AnalysisOf(ctx context.Context, f Filter) (*Analysis, error) {
	all, err := s.Analysis(ctx)
	if err != nil || f == (Filter{}) {
		return all, err
	}
	if f.Category != "" && !slices.Contains(all.Categories, f.Category) {
		name := f.Category
		if len(name) > 64 { // a client's text, echoed only in part
			name = strings.ToValidUTF8(name[:64], "") + "…"
		}
		return nil, arena.Errorf(arena.EINVALID, "category %q: no scored forecast has it (categories: %s)", name, strings.Join(all.Categories, ", "))
	}
	since := time.Time{}
	if f.Window > 0 {
		since = s.now().Add(-f.Window)
	}
	keep := map[uint64]bool{}
	h := fnv.New64a()
	for _, id := range all.roundIDs {
		if since.IsZero() || !all.Deadlines[id].Before(since) {
			keep[id] = true
			fmt.Fprint(h, id, ",")
		}
	}
	version := fmt.Sprintf("%s|%x|%d", all.version, h.Sum64(), len(keep))
	return s.cache().get(ctx, f.name(), version, func(context.Context) (*Analysis, error) {
		var fs []arena.ScoredForecast
		for _, x := range all.Forecasts {
			if keep[x.RoundID] && (f.Category == "" || x.Category == f.Category) {
				fs = append(fs, x)
			}
		}
		a, err := s.analyzeForecasts(fs)
		if err != nil {
			return nil, err
		}
		a.Deadlines, a.roundIDs, a.Categories, a.version = all.Deadlines, all.roundIDs, all.Categories, version
		a.LastScored = all.LastScored
		for id := range keep {
			if _, ok := a.roundsSeen[id]; ok {
				a.ScoredRounds++
			}
		}
		return a, nil
	})
}

func (s *Service) analyze(ctx context.Context) (*Analysis, error) {
	fs, err := s.Store.ScoredForecasts(ctx)
	if err != nil {
		return nil, err
	}
	scored, err := s.Store.Rounds(ctx, arena.RoundFilter{Status: arena.RoundScored, Now: s.now()})
	if err != nil {
		return nil, err
	}
	a, err := s.analyzeForecasts(fs)
	if err != nil {
		return nil, err
	}
	a.Deadlines = make(map[uint64]time.Time, len(scored))
	for _, r := range scored {
		a.Deadlines[r.ID] = r.CommitDeadline
		a.roundIDs = append(a.roundIDs, r.ID)
	}
	slices.Sort(a.roundIDs)
	cats := map[string]bool{}
	for _, f := range fs {
		if f.Category != "" && !cats[f.Category] {
			cats[f.Category] = true
			a.Categories = append(a.Categories, f.Category)
		}
	}
	slices.Sort(a.Categories)
	return a, nil
}

func (s *Service) analyzeForecasts(fs []arena.ScoredForecast) (*Analysis, error) {
	return AnalyzeForecasts(fs, s.ScoringMethod(), s.log())
}

// ScoringMethod is the service's scoring method: Method, or DefaultMethod when unset.
func (s *Service) ScoringMethod() Method {
	if s.Method == (Method{}) {
		return DefaultMethod()
	}
	return s.Method
}

// AnalyzeForecasts is the analysis of frozen scored forecasts with
// method m: what the dashboard shows and an export's verifier recomputes.
// The bootstraps resample in the order the forecasts come in, so they are
// taken by round, agent and market (byte order) whatever order the
// caller's store returned. logger receives a failure of the
// difficulty-adjusted fit, which leaves Adjusted nil.
func AnalyzeForecasts(fs []arena.ScoredForecast, m Method, logger *slog.Logger) (*Analysis, error) {
	if !slices.IsSortedFunc(fs, CompareForecasts) {
		fs = slices.Clone(fs)
		slices.SortStableFunc(fs, CompareForecasts)
	}
	a := &Analysis{Forecasts: fs, Method: m, ByAgent: map[string][]int{}, ByMarket: map[int64][]int{},
		roundsSeen: map[uint64]struct{}{}}
	for i, f := range fs {
		a.ByAgent[f.Agent] = append(a.ByAgent[f.Agent], i)
		a.ByMarket[f.MarketID] = append(a.ByMarket[f.MarketID], i)
		a.roundsSeen[f.RoundID] = struct{}{}
	}
	if len(fs) == 0 {
		return a, nil
	}
	t, err := Table(fs)
	if err != nil {
		return nil, err
	}
	s, err := AnalyzeTable(t, m, logger)
	if err != nil {
		return nil, err
	}
	a.Results, a.Adjusted, a.Peers = s.Results, s.Adjusted, s.Peers
	return a, nil
}

// Scored is what AnalyzeTable computes from a scoring table.
type Scored struct {
	// Results are in leaderboard order (see Order).
	Results []score.AgentResult
	// Adjusted is the difficulty-adjusted fit; nil when it failed.
	Adjusted *score.FEResult
	// Peers are the agents' peer scores by agent.
	Peers map[string]score.Peer
}

// AnalyzeTable scores every agent of t with method m: cumulative figures,
// the difficulty-adjusted fit with its bootstrap (a question is a round
// and market, resampled within its round; every agent estimates
// difficulty, the market baseline joins beside them) and peer scores,
// with results in leaderboard order. The agents with at least
// m.MinForecasts forecasts compete for the bootstrap's places; the paired
// tests are the best one's against every other (all pairs would grow with
// the square of the agents).
func AnalyzeTable(t *score.Table, m Method, logger *slog.Logger) (*Scored, error) {
	res, err := score.Analyze(t, m.options())
	if err != nil {
		return nil, fmt.Errorf("forecast: analyze: %w", err)
	}
	out := &Scored{Results: res, Peers: map[string]score.Peer{}}
	adj, obs, err := Adjusted(t, res, m, nil)
	if err == nil {
		out.Adjusted = adj
	} else {
		logger.Warn("forecast: adjusted leaderboard", "err", err)
	}
	for _, p := range score.PeerScores(obs) {
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
// observations it fitted (peer scores use them).
func Adjusted(t *score.Table, res []score.AgentResult, m Method, est []string) (*score.FEResult, []score.FEObs, error) {
	obs := make([]score.FEObs, 0, t.Len())
	seen := map[string]bool{}
	for i := range t.Len() {
		r := t.Row(i)
		q := r.Round + "\x00" + r.Market // ids may hold any character but NUL
		d := r.Forecast - r.Outcome
		obs = append(obs, score.FEObs{Agent: r.Agent, Question: q, Stratum: r.Round, Brier: d * d})
		if r.HasBenchmark && !seen[q] {
			seen[q] = true
			b := r.Benchmark - r.Outcome
			obs = append(obs, score.FEObs{Agent: MarketAgent, Question: q, Stratum: r.Round, Brier: b * b})
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
	adj, err := score.AdjustedLeaderboard(obs, score.FEOptions{Estimation: est, Bootstrap: boot, Seed: m.Seed, Level: m.Level,
		Contenders: contenders, TopShare: m.TopShare, PairsWithBest: true})
	return adj, obs, err
}

// CompareForecasts orders scored forecasts by round, agent and market:
// the order an analysis takes them in.
func CompareForecasts(a, b arena.ScoredForecast) int {
	return cmp.Or(cmp.Compare(a.RoundID, b.RoundID), strings.Compare(a.Agent, b.Agent), cmp.Compare(a.MarketID, b.MarketID))
}

// BaselineNames are the display names of the baselines scored in every
// round.
func BaselineNames() map[string]string {
	return map[string]string{RandomAgent: "Random (uniform)", MarketAgent: "Market (benchmark)"}
}

// Names maps agent ids to display names, baselines included: the names
// of Profiles, for callers that need no more.
func (s *Service) Names(ctx context.Context) (map[string]string, error) {
	ps, err := s.Profiles(ctx)
	if err != nil {
		return nil, err
	}
	names := make(map[string]string, len(ps))
	for id, a := range ps {
		if a.Name != "" {
			names[id] = a.Name
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

// Analyses caches the analyses of forecasts a Service does not read
// itself (the backtest track's), by a digest of the forecasts: a set
// seen before is not analysed again. Method zero is DefaultMethod.
type Analyses struct {
	Method Method
	Logger *slog.Logger
	cache  *analysisCache
	once   sync.Once
}

// Of is the analysis of fs, the set called name.
func (x *Analyses) Of(ctx context.Context, name string, fs []arena.ScoredForecast) (*Analysis, error) {
	x.once.Do(func() { x.cache = newAnalysisCache() })
	h := sha256.New()
	for _, f := range fs {
		b := -1.0
		if f.Benchmark != nil {
			b = *f.Benchmark
		}
		fmt.Fprintf(h, "%d|%s|%d|%s|%s|%v|%v|%d\n", f.RoundID, f.Agent, f.MarketID, f.Category, f.Event, f.Forecast, b, f.Outcome)
	}
	m := x.Method
	if m == (Method{}) {
		m = DefaultMethod()
	}
	version := hex.EncodeToString(h.Sum(nil)) + "/" + m.Digest()
	return x.cache.get(ctx, name, version, func(context.Context) (*Analysis, error) {
		logger := x.Logger
		if logger == nil {
			logger = slog.Default()
		}
		return AnalyzeForecasts(fs, m, logger)
	})
}
