package rounds

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
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
	value   *view
	took    time.Duration // the last computation
	running *analysisRun
}

type analysisRun struct {
	version string
	done    chan struct{}
	value   *view
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
func (c *analysisCache) get(ctx context.Context, name, version string, compute func(context.Context) (*view, error)) (*view, error) {
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

// view is an analysis as the cache keeps it, with the version of the
// scored rounds it was computed from.
type view struct {
	*scoring.Analysis
	version string
}

// Analysis returns the track's analysis over every scored round,
// recomputed only when the set of scored rounds has changed (see
// SlowAnalysis for what a reader gets meanwhile).
func (s *Service) Analysis(ctx context.Context) (*scoring.Analysis, error) {
	v, err := s.analysisView(ctx)
	if err != nil {
		return nil, err
	}
	return v.Analysis, nil
}

func (s *Service) analysisView(ctx context.Context) (*view, error) {
	n, last, err := s.scoredVersion(ctx)
	if err != nil {
		return nil, err
	}
	version := fmt.Sprintf("%d/%d/%s", n, last.UnixNano(), s.ScoringMethod().Digest())
	return s.cache().get(ctx, Filter{}.name(), version, func(ctx context.Context) (*view, error) {
		a, err := s.analyze(ctx)
		if err != nil {
			return nil, err
		}
		a.ScoredRounds, a.LastScored = n, last
		return &view{a, version}, nil
	})
}

// AnalysisOf returns the analysis of the forecasts f selects: the same
// figures as Analysis over fewer rounds or one category. It is cached per
// filter until the selected rounds change. A category no scored forecast
// has is refused: it would select nothing, and its own cache entry would
// let clients fill the cache with made-up names.
func (s *Service) AnalysisOf(ctx context.Context, f Filter) (*scoring.Analysis, error) {
	all, err := s.analysisView(ctx)
	if err != nil {
		return nil, err
	}
	if f == (Filter{}) {
		return all.Analysis, nil
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
	for _, id := range slices.Sorted(maps.Keys(all.Deadlines)) {
		if since.IsZero() || !all.Deadlines[id].Before(since) {
			keep[id] = true
			fmt.Fprint(h, id, ",")
		}
	}
	version := fmt.Sprintf("%s|%x|%d", all.version, h.Sum64(), len(keep))
	v, err := s.cache().get(ctx, f.name(), version, func(context.Context) (*view, error) {
		var fs []arena.ScoredForecast
		seen := map[uint64]bool{}
		for _, x := range all.Forecasts {
			if keep[x.RoundID] && (f.Category == "" || x.Category == f.Category) {
				fs = append(fs, x)
				seen[x.RoundID] = true
			}
		}
		a, err := s.analyzeForecasts(fs)
		if err != nil {
			return nil, err
		}
		a.Deadlines, a.Categories = all.Deadlines, all.Categories
		a.LastScored, a.ScoredRounds = all.LastScored, len(seen)
		return &view{a, version}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.Analysis, nil
}

func (s *Service) analyze(ctx context.Context) (*scoring.Analysis, error) {
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
	}
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

func (s *Service) analyzeForecasts(fs []arena.ScoredForecast) (*scoring.Analysis, error) {
	return scoring.AnalyzeForecasts(fs, s.ScoringMethod(), s.log())
}

// ScoringMethod is the service's scoring method: Method, or DefaultMethod when unset.
func (s *Service) ScoringMethod() scoring.Method {
	if s.Method == (scoring.Method{}) {
		return scoring.DefaultMethod()
	}
	return s.Method
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
	Method scoring.Method
	Logger *slog.Logger
	cache  *analysisCache
	once   sync.Once
}

// Of is the analysis of fs, the set called name.
func (x *Analyses) Of(ctx context.Context, name string, fs []arena.ScoredForecast) (*scoring.Analysis, error) {
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
	if m == (scoring.Method{}) {
		m = scoring.DefaultMethod()
	}
	version := hex.EncodeToString(h.Sum(nil)) + "/" + m.Digest()
	v, err := x.cache.get(ctx, name, version, func(context.Context) (*view, error) {
		logger := x.Logger
		if logger == nil {
			logger = slog.Default()
		}
		a, err := scoring.AnalyzeForecasts(fs, m, logger)
		if err != nil {
			return nil, err
		}
		return &view{a, version}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.Analysis, nil
}
