package rounds

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/cache"
	"github.com/forecast-arena/arena/stats"
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
	// Venue keeps the markets of one venue (arena.Market.Venue); "" keeps all.
	Venue string
}

// FilterVenues lists the values Filter.Venue may take: the arena's
// venues and the simulator.
func FilterVenues() []string { return append(slices.Clone(arena.Venues), arena.SourceSim) }

func (f Filter) name() string { return fmt.Sprint(int64(f.Window), "|", f.Category, "|", f.Venue) }

// MaxCachedAnalyses bounds the views (filters) whose analysis is kept:
// the least recently read is dropped beyond it, so that however many
// filters clients ask for, the cache holds at most this many analyses.
const MaxCachedAnalyses = 32

// newAnalysisCache is a cache of analyses by view (filter name): the
// MaxCachedAnalyses read last, each recomputed in the background once its
// last computation was slower than SlowAnalysis (a failure there, which
// no reader sees, is logged).
func (s *Service) newAnalysisCache() *cache.Cache[string, *view] {
	return &cache.Cache[string, *view]{Max: MaxCachedAnalyses, Slow: SlowAnalysis,
		OnError: func(view string, err error) {
			s.log().Warn("rounds: leaderboard analysis failed", "view", view, "err", err)
		}}
}

// Stop cancels the analyses being computed in the background and returns
// once none is running, so the store can be closed after it. Later reads
// compute nothing and fail (cache.ErrClosed, context.Canceled).
func (s *Service) Stop() { s.cache().Close() }

func (s *Service) cache() *cache.Cache[string, *view] {
	s.analysesOnce.Do(func() { s.analyses = s.newAnalysisCache() })
	return s.analyses
}

// CachedAnalyses is how many views' analyses are cached (at most
// MaxCachedAnalyses).
func (s *Service) CachedAnalyses() int { return s.cache().Len() }

// view is an analysis as the cache keeps it, with the version of the
// data it was computed from (see analysisVersion), read in the same
// snapshot as the data: exactly the state the figures are of.
type view struct {
	*scoring.Analysis
	version string
}

// analysisVersion is the version of what an analysis reads: the scored
// rounds' data (their outcomes, scores and scored forecasts, which every
// trigger and re-score moves) and the scoring method.
func (s *Service) analysisVersion(vs arena.Versions) string {
	return vs.Key(arena.DomainScores) + "/" + s.ScoringMethod().Digest()
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

// Refresh starts computing the analysis of the scored rounds as they now
// stand, if it is not cached, and returns without waiting for it: the
// cache computes it in the background (Stop ends it) and logs a failure,
// so that the next reader need not wait.
func (s *Service) Refresh(ctx context.Context) error {
	_, err := s.analysisAt(ctx, false)
	return err
}

func (s *Service) analysisView(ctx context.Context) (*view, error) {
	return s.analysisAt(ctx, true)
}

// analysisAt reads the version of the scored rounds on ctx and gets their
// analysis, waiting for its computation unless wait is false (then a nil
// view when it is not ready). The computation reads the data in a
// snapshot taken after the version was read: its figures are of that
// version or a later one, never an earlier one.
func (s *Service) analysisAt(ctx context.Context, wait bool) (*view, error) {
	vs, err := s.Store.Versions(ctx)
	if err != nil {
		return nil, err
	}
	get := ctx
	if !wait {
		var cancel context.CancelFunc
		get, cancel = context.WithCancel(ctx)
		cancel() // Get starts the computation, which does not inherit this cancellation, then returns
	}
	v, err := s.cache().Get(get, Filter{}.name(), s.analysisVersion(vs), func(ctx context.Context) (*view, error) {
		sn, ok := s.Store.(arena.Snapshotter)
		if !ok {
			return s.analyze(ctx, s.Store)
		}
		var v *view
		err := sn.Snapshot(ctx, func(st arena.StoreSnapshot) (err error) {
			v, err = s.analyze(ctx, st)
			return err
		})
		return v, err
	})
	if !wait && errors.Is(err, context.Canceled) && ctx.Err() == nil {
		return nil, nil
	}
	return v, err
}

// AnalysisOf returns the analysis of the forecasts f selects: the same
// figures as Analysis over fewer rounds or one category. It is cached per
// filter until the selected rounds change. A category or venue no scored
// forecast has is refused: it would select nothing, and its own cache
// entry would let clients fill the cache with made-up names. A venue is
// one of a fixed list, so one with no scored forecast yet selects nothing.
func (s *Service) AnalysisOf(ctx context.Context, f Filter) (*scoring.Analysis, error) {
	all, err := s.analysisView(ctx)
	if err != nil {
		return nil, err
	}
	if f == (Filter{}) {
		return all.Analysis, nil
	}
	if err := known("category", "categories", f.Category, all.Categories); err != nil {
		return nil, err
	}
	if err := known("venue", "venues", f.Venue, FilterVenues()); err != nil {
		return nil, err
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
	v, err := s.cache().Get(ctx, f.name(), version, func(ctx context.Context) (*view, error) {
		var fs []arena.ScoredForecast
		seen := map[uint64]bool{}
		for _, x := range all.Forecasts {
			if keep[x.RoundID] && (f.Category == "" || x.Category == f.Category) && (f.Venue == "" || x.Venue == f.Venue) {
				fs = append(fs, x)
				seen[x.RoundID] = true
			}
		}
		a, err := s.analyzeForecasts(ctx, fs)
		if err != nil {
			return nil, err
		}
		a.Deadlines, a.Categories, a.Venues = all.Deadlines, all.Categories, all.Venues
		a.LastScored, a.ScoredRounds = all.LastScored, len(seen)
		return &view{a, version}, nil
	})
	if err != nil {
		return nil, err
	}
	return v.Analysis, nil
}

// analyze computes the analysis of every scored round as st holds them,
// with the version st's data is at: st is read first for its versions,
// so a store written meanwhile (not a snapshot) gives figures of a later
// state than the version, never of an earlier one.
func (s *Service) analyze(ctx context.Context, st arena.ForecastStore) (*view, error) {
	vs, err := st.Versions(ctx)
	if err != nil {
		return nil, err
	}
	fs, err := st.ScoredForecasts(ctx)
	if err != nil {
		return nil, err
	}
	scored, err := st.Rounds(ctx, arena.RoundFilter{Status: arena.RoundScored, Now: s.now()})
	if err != nil {
		return nil, err
	}
	a, err := s.analyzeForecasts(ctx, fs)
	if err != nil {
		return nil, err
	}
	a.Deadlines = make(map[uint64]time.Time, len(scored))
	for _, r := range scored {
		a.Deadlines[r.ID] = r.CommitDeadline
		if r.TriggeredAt.After(a.LastScored) {
			a.LastScored = r.TriggeredAt
		}
	}
	a.ScoredRounds = len(scored)
	cats, venues := map[string]bool{}, map[string]bool{}
	for _, f := range fs {
		cats[f.Category], venues[f.Venue] = true, true
	}
	delete(cats, "")
	delete(venues, "")
	a.Categories, a.Venues = slices.Sorted(maps.Keys(cats)), slices.Sorted(maps.Keys(venues))
	return &view{a, s.analysisVersion(vs)}, nil
}

// boardAt is the leaderboard of the scored rounds as st, a snapshot,
// holds them: the cached analysis when it was computed at exactly st's
// version, else one computed from st now. Never another state's, so an
// export's leaderboard is of its own tables.
func (s *Service) boardAt(ctx context.Context, st arena.StoreSnapshot) (scoring.Board, error) {
	vs, err := st.Versions(ctx)
	if err != nil {
		return scoring.Board{}, err
	}
	v, ok := s.cache().Peek(Filter{}.name(), s.analysisVersion(vs))
	if !ok || v.version != s.analysisVersion(vs) {
		if v, err = s.analyze(ctx, st); err != nil {
			return scoring.Board{}, err
		}
	}
	p, err := profiles(ctx, st)
	if err != nil {
		return scoring.Board{}, err
	}
	return v.Board(p), nil
}

// ScoredTable is the table of every scored forecast the store holds (void
// and unresolved markets left out, forfeits as Brier-1 forecasts), in the
// order the service's analysis takes them, so that bootstraps over it
// draw the same; nil when there is none.
func (s *Service) ScoredTable(ctx context.Context) (*stats.Table, error) {
	fs, err := s.Store.ScoredForecasts(ctx)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	return scoring.Table(ctx, scoring.Ordered(fs))
}

func (s *Service) analyzeForecasts(ctx context.Context, fs []arena.ScoredForecast) (*scoring.Analysis, error) {
	return scoring.AnalyzeForecasts(ctx, fs, s.ScoringMethod(), s.log())
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

// FollowEvery is how often Follow reads the data versions.
const FollowEvery = 2 * time.Second

// Follow starts the analysis of the scored rounds, in the cache's
// background, whenever their version moves, whoever wrote (this process,
// a command, another replica on the same database), until ctx ends: it
// reads the versions every FollowEvery, so a served leaderboard whose
// analysis is slow (see SlowAnalysis) is recomputed within that time of
// a correction, not when a reader first asks.
func (s *Service) Follow(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	last := ""
	for {
		if vs, err := s.Store.Versions(ctx); err == nil {
			if v := s.analysisVersion(vs); v != last {
				if err := s.Refresh(ctx); err == nil {
					last = v
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// known refuses a filter's value (of the parameter what, whose plural is
// whats) that is not one of have, the values the scored forecasts have;
// "" is any.
func known(what, whats, value string, have []string) error {
	if value == "" || slices.Contains(have, value) {
		return nil
	}
	name := value
	if len(name) > 64 { // a client's text, echoed only in part
		name = strings.ToValidUTF8(name[:64], "") + "…"
	}
	return arena.Errorf(arena.EINVALID, "%s %q: no scored forecast has it (%s: %s)", what, name, whats, strings.Join(have, ", "))
}
