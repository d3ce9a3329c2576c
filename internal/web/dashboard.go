package web

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web/openapi"
	"github.com/forecast-arena/arena/internal/web/pages"
	"github.com/forecast-arena/arena/internal/web/view"
)

// registerDashboard mounts every page and its JSON twin. A page whose
// track is disabled answers 404.
func (s *Server) registerDashboard() {
	s.page("/{$}", "/api/v1/pages/home", "home.html", s.homeView)
	s.page("/leaderboard", "/api/v1/pages/leaderboard", "leaderboard.html", s.leaderboardView)
	s.page("/rounds/{id}", "/api/v1/pages/rounds/{id}", "round.html", s.roundView)
	s.page("/agents/{agent}", "/api/v1/pages/agents/{agent}", "agent.html", s.agentView)
	s.page("/markets", marketsAPI, "markets.html", s.marketsView)
	s.page("/markets/{id}", "/api/v1/pages/markets/{id}", "market.html", s.marketView)
	s.page("/compare", "/api/v1/pages/compare", "compare.html", s.compareView)
	s.page("/cohorts/{id}", "/api/v1/pages/cohorts/{id}", "cohort.html", s.cohortView)
	s.page("/methodology", "/api/v1/pages/methodology", "methodology.html", s.methodologyView)
	// The static files are no API route (the OpenAPI document leaves them out).
	s.mux.HandleFunc("GET /assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		if err := pages.ServeAsset(w, r); err != nil {
			s.Error(w, r, err)
		}
	})
}

// page registers an HTML page and its JSON twin, both built by build; a
// view with a next page (view.Paged) gets its Link header on both.
func (s *Server) page(path, api, tmpl string, build func(r *http.Request) (any, error)) {
	s.handle("GET "+path, func(w http.ResponseWriter, r *http.Request) error {
		v, err := build(r)
		if err != nil {
			return err
		}
		linkNext(w, r, v)
		return pages.Render(w, r, tmpl, v, strings.Replace(api, "{$}", "", 1))
	})
	s.handle("GET "+api, func(w http.ResponseWriter, r *http.Request) error {
		v, err := build(r)
		if err != nil {
			return err
		}
		linkNext(w, r, v)
		return s.writeJSON(w, r, v)
	})
}

func linkNext(w http.ResponseWriter, r *http.Request, v any) {
	if p, ok := v.(view.Paged); ok {
		if cursor, ok := p.Next(); ok {
			setNextLink(w, r, cursor)
		}
	}
}

func (s *Server) needForecast() error {
	if s.forecast == nil {
		return arena.Errorf(arena.ENOTFOUND, "the forecast track is not enabled")
	}
	return nil
}

func (s *Server) needTrading() error {
	if s.trading == nil {
		return arena.Errorf(arena.ENOTFOUND, "the trading track is not enabled")
	}
	return nil
}

// ---- home ----

func (s *Server) homeView(r *http.Request) (any, error) {
	ctx := r.Context()
	v := view.HomeJSON{Open: []view.RoundSummaryJSON{}, Scored: []view.RoundSummaryJSON{}, Forecast: []view.ForecastRowJSON{}, HasTrading: s.trading != nil}
	if s.forecast != nil {
		now := s.forecast.Clock()
		for _, st := range []string{arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring} {
			rs, err := s.forecast.Rounds(ctx, st, 20)
			if err != nil {
				return nil, err
			}
			for _, rd := range rs {
				v.Open = append(v.Open, roundSummary(rd, now, nil))
			}
		}
		slices.SortFunc(v.Open, func(a, b view.RoundSummaryJSON) int { return cmp.Compare(a.ID, b.ID) })
		b, rows, _, err := s.forecastBoard(ctx, rounds.Filter{})
		if err != nil {
			return nil, err
		}
		v.ScoredRounds, v.LastUpdated, v.Methodology = b.ScoredRounds, b.LastUpdated, b.Methodology
		v.Forecast = rows[:min(len(rows), HomeTop)]
		scored, err := s.forecast.ScoredRoundList(ctx, 5)
		if err != nil {
			return nil, err
		}
		for _, rd := range scored {
			t := rd.TriggeredAt.UTC()
			v.Scored = append(v.Scored, view.RoundSummaryJSON{ID: rd.ID, Status: arena.RoundScored, CommitDeadline: rd.CommitDeadline,
				RevealStart: rd.RevealStart, RevealDeadline: rd.RevealDeadline, TriggeredAt: &t, Markets: len(rd.Markets)})
		}
	}
	if s.trading != nil {
		lb, err := s.trading.Leaderboard(ctx, 0, "")
		if err != nil {
			return nil, err
		}
		cs, err := s.trading.Cohorts(ctx, "")
		if err != nil {
			return nil, err
		}
		v.Trading = lb.Rows[:min(len(lb.Rows), 5)]
		v.TotalCohorts, v.Cohorts = len(cs), make([]trading.CohortSummaryJSON, 0, min(len(cs), 5))
		for _, c := range cs[:min(len(cs), 5)] {
			v.Cohorts = append(v.Cohorts, trading.NewCohortSummaryJSON(c))
		}
	}
	if s.oracle != nil {
		rs, err := s.oracle.Recent(ctx, 5)
		if err != nil {
			return nil, err
		}
		v.HasOracle, v.Oracle = true, make([]view.OracleRecentJSON, 0, len(rs))
		for _, r := range rs {
			v.Oracle = append(v.Oracle, view.OracleRecentJSON{MarketID: r.MarketID, Question: r.Evidence.Question, Seq: r.Seq, Status: r.Status,
				Panel: string(r.Verdict.Decision), Final: string(r.Final), Architecture: r.Verdict.Architecture, Composite: r.Verdict.Composite, At: r.CreatedAt})
		}
	}
	return v, nil
}

func roundSummary(rd forecast.RoundJSON, now time.Time, triggered *time.Time) view.RoundSummaryJSON {
	return view.RoundSummaryJSON{ID: rd.ID, Status: rd.Status, Phase: phase(rd.Status, rd.CommitDeadline, rd.RevealStart, rd.RevealDeadline, now),
		CommitDeadline: rd.CommitDeadline, RevealStart: rd.RevealStart, RevealDeadline: rd.RevealDeadline, TriggeredAt: triggered, Markets: len(rd.Markets)}
}

// phase says in words what happens next to a round: "" once it is
// finished (scored or invalidated), where its status says it all.
func phase(status string, commit, revealStart, revealEnd, now time.Time) string {
	switch {
	case status == arena.RoundScored || status == arena.RoundInvalidated:
		return ""
	case now.Before(commit):
		return "commits close in " + until(commit.Sub(now))
	case now.Before(revealStart):
		return "reveals open in " + until(revealStart.Sub(now))
	case now.Before(revealEnd):
		return "reveals close in " + until(revealEnd.Sub(now))
	}
	return "scored once its markets resolve"
}

func until(d time.Duration) string {
	switch {
	case d >= 48*time.Hour:
		return fmt.Sprintf("%dd", int(d.Hours()/24))
	case d >= time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	case d >= time.Minute:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	}
	return fmt.Sprintf("%ds", int(d.Seconds()))
}

// ---- leaderboards ----

// HomeTop is how many rows of each leaderboard the home page shows.
const HomeTop = 5

// forecastBoard is the forecast leaderboard of the forecasts f select and
// its rows with what each agent's model calls cost, drawn on one scale.
func (s *Server) forecastBoard(ctx context.Context, f rounds.Filter) (scoring.Board, []view.ForecastRowJSON, *scoring.Analysis, error) {
	b, a, err := s.forecast.Leaderboard(ctx, f)
	if err != nil {
		return scoring.Board{}, nil, nil, err
	}
	costs := map[string]arena.AgentCost{}
	if s.traces != nil {
		cs, err := s.traces.Costs(ctx)
		if err != nil {
			return scoring.Board{}, nil, nil, err
		}
		for _, c := range cs {
			costs[strings.ToLower(c.Agent)] = c
		}
	}
	rows := make([]view.ForecastRowJSON, 0, len(b.Rows))
	for _, r := range b.Rows {
		row := view.ForecastRowJSON{Row: r}
		if c, ok := costs[strings.ToLower(r.Agent)]; ok {
			usd := arena.Dollars(c.Cost)
			row.Cost, row.ModelCalls = &usd, &c.Calls
			if c.BilledCalls > 0 {
				billed := arena.Dollars(c.Billed)
				row.BilledCost, row.BilledCalls = &billed, &c.BilledCalls
			}
		}
		rows = append(rows, row)
	}
	scaleBars(rows)
	return b, rows, a, nil
}

// scaleBars places every row's score interval on one scale, from the
// lowest interval end to the highest, so the bars compare across rows.
func scaleBars(rows []view.ForecastRowJSON) {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, r := range rows {
		if r.ScoreCILo != nil {
			lo, hi = math.Min(lo, *r.ScoreCILo), math.Max(hi, *r.ScoreCIHi)
		}
	}
	if !(hi > lo) {
		return
	}
	pad := (hi - lo) * 0.05
	lo, hi = lo-pad, hi+pad
	at := func(v float64) float64 { return math.Round((v-lo)/(hi-lo)*1000) / 10 }
	for i := range rows {
		if r := rows[i]; r.ScoreCILo != nil && r.Score != nil {
			rows[i].Bar = &view.BarJSON{Left: at(*r.ScoreCILo), Width: math.Max(at(*r.ScoreCIHi)-at(*r.ScoreCILo), 0.5), Point: at(*r.Score)}
		}
	}
}

// leaderboardWindows are the leaderboard's time windows: rounds whose
// commit deadline lies at most this far back.
var leaderboardWindows = map[string]time.Duration{"all": 0, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "90d": 90 * 24 * time.Hour}

// windowNames are leaderboardWindows' names in order.
var windowNames = []string{"7d", "30d", "90d", "all"}

// leaderboardFilter reads the window, category and venue query parameters.
func leaderboardFilter(r *http.Request) (string, rounds.Filter, error) {
	q := r.URL.Query()
	w := cmp.Or(q.Get("window"), "all")
	d, ok := leaderboardWindows[w]
	if !ok {
		return "", rounds.Filter{}, arena.Errorf(arena.EINVALID, "window %q: want %s", w, openapi.OneOf(windowNames))
	}
	return w, rounds.Filter{Window: d, Category: strings.TrimSpace(q.Get("category")), Venue: strings.TrimSpace(q.Get("venue"))}, nil
}

func nameOf(names map[string]string, agent string) string {
	if n := names[agent]; n != "" {
		return n
	}
	return agent
}

// sortNames are view.ForecastSorts' keys in the order an error lists them.
var sortNames = []string{"rank", "name", "score", "rounds", "n", "brier", "brier_index", "bss", "peer", "alpha", "adjusted", "p", "p_rank1",
	"rounds_to_significance"}

func (s *Server) leaderboardView(r *http.Request) (any, error) {
	q := r.URL.Query()
	v := view.LeaderboardPageJSON{Sort: cmp.Or(q.Get("sort"), "rank"), Query: strings.TrimSpace(q.Get("q")), Forecast: []view.ForecastRowJSON{},
		HidePrelim: q.Get("preliminary") == "hide", Columns: q.Get("columns")}
	better, ok := view.ForecastSorts[v.Sort]
	if !ok {
		return nil, arena.Errorf(arena.EINVALID, "sort %q: want %s", v.Sort, openapi.OneOf(sortNames))
	}
	if v.Columns != "" && v.Columns != "all" {
		return nil, arena.Errorf(arena.EINVALID, "columns %q: want all, or leave it out for the short view", v.Columns)
	}
	switch d := q.Get("dir"); d {
	case "":
		v.Desc = better
	case "asc", "desc":
		v.Desc = d == "desc"
	default:
		return nil, arena.Errorf(arena.EINVALID, "dir %q: want asc or desc", d)
	}
	window, f, err := leaderboardFilter(r)
	if err != nil {
		return nil, err
	}
	v.Window, v.Category, v.Venue, v.Windows, v.Categories, v.Venues = window, f.Category, f.Venue, []string{"all", "7d", "30d", "90d"}, []string{}, []string{}
	if s.forecast != nil {
		all, err := s.forecast.Analysis(r.Context())
		if err != nil {
			return nil, err
		}
		if all.Categories != nil {
			v.Categories = all.Categories
		}
		if all.Venues != nil {
			v.Venues = all.Venues
		}
		if len(v.Venues) > 1 && f.Venue == "" {
			vb, err := s.forecast.VenueBoard(r.Context(), f)
			if err != nil {
				return nil, err
			}
			v.ByVenue = &vb
		}
		b, rows, a, err := s.forecastBoard(r.Context(), f)
		if err != nil {
			return nil, err
		}
		v.Methodology, v.ScoredRounds, v.LastUpdated, v.Hidden = b.Methodology, b.ScoredRounds, b.LastUpdated, b.Hidden
		v.MinForecasts, v.Bootstrap, v.Seed = a.Method.MinForecasts, a.Method.Bootstrap, a.Method.Seed
		for _, row := range rows {
			if v.HidePrelim && row.Preliminary {
				continue
			}
			if v.Query != "" && !strings.Contains(strings.ToLower(row.Name+" "+row.Organisation+" "+row.Model+" "+row.Agent), strings.ToLower(v.Query)) {
				continue
			}
			v.Forecast = append(v.Forecast, row)
		}
		sortRows(v.Forecast, v.Sort, v.Desc)
	}
	if s.trading != nil {
		lb, err := s.trading.Leaderboard(r.Context(), f.Window, q.Get("trading_sort"))
		if err != nil {
			return nil, err
		}
		v.Trading = &lb
	}
	if s.boards != nil {
		b, err := s.boards.Board(r.Context())
		if err != nil {
			return nil, err
		}
		v.Backtest = &b
	}
	return v, nil
}

// sortRows orders rows by a column; missing values (and, by rank, the
// unranked preliminary agents) sort last either way.
func sortRows(rows []view.ForecastRowJSON, by string, desc bool) {
	key := func(r view.ForecastRowJSON) (float64, bool) {
		switch by {
		case "score":
			return deref(r.Score)
		case "rounds":
			return float64(r.Rounds), true
		case "n":
			return float64(r.N), true
		case "brier":
			return r.Brier, true
		case "brier_index":
			return r.BrierIndex, true
		case "bss":
			return r.BSS, true
		case "peer":
			return deref(r.Peer)
		case "alpha":
			return deref(r.Alpha)
		case "adjusted":
			return deref(r.Adjusted)
		case "p":
			return deref(r.P)
		case "p_rank1":
			return deref(r.PRank1)
		case "rounds_to_significance":
			return deref(r.RoundsToSignificance)
		}
		return float64(r.Rank), r.Rank > 0
	}
	slices.SortStableFunc(rows, func(a, b view.ForecastRowJSON) int {
		if by == "name" {
			c := cmp.Compare(strings.ToLower(a.Name), strings.ToLower(b.Name))
			if desc {
				c = -c
			}
			return c
		}
		ka, oka := key(a)
		kb, okb := key(b)
		switch {
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		case desc:
			return cmp.Compare(kb, ka)
		}
		return cmp.Compare(ka, kb)
	})
}

func deref(p *float64) (float64, bool) {
	if p == nil {
		return 0, false
	}
	return *p, true
}

// ---- round ----

func (s *Server) roundView(r *http.Request) (any, error) {
	if err := s.needForecast(); err != nil {
		return nil, err
	}
	id, err := roundID(r)
	if err != nil {
		return nil, err
	}
	d, err := s.forecast.RoundDetail(r.Context(), id)
	if err != nil {
		return nil, err
	}
	names, err := s.forecast.Names(r.Context())
	if err != nil {
		return nil, err
	}
	now := s.forecast.Clock()
	rd := d.Round
	v := view.RoundPageJSON{ID: rd.ID, Status: d.View.Status, Phase: phase(d.View.Status, rd.CommitDeadline, rd.RevealStart, rd.RevealDeadline, now),
		Commits: d.Commits, Triggered: !rd.TriggeredAt.IsZero(), Entries: []view.RoundEntryJSON{}, Timeline: timeline(rd, now)}
	for i, rm := range rd.Markets {
		m := d.Markets[rm.MarketID]
		mj := view.RoundMarketPageJSON{Index: i, MarketID: rm.MarketID}
		if m != nil {
			mj.Question, mj.Category, mj.Source, mj.SourceID = m.Question, m.Category, m.Source, m.SourceID
		}
		if d.View.Benchmarks != nil {
			mj.Benchmark = rm.Benchmark
			if rm.Benchmark != nil {
				mj.BenchmarkSource, mj.BenchmarkTime = string(rm.BenchmarkSource), utcPtr(rm.BenchmarkTime)
			}
		}
		if d.View.Outcomes != nil {
			mj.Outcome = d.View.Outcomes[i]
		}
		v.Markets = append(v.Markets, mj)
	}
	scores := map[string]forecast.ScoreJSON{}
	for _, sc := range d.Scores {
		scores[sc.Agent] = sc
	}
	seen := map[string]bool{}
	for _, e := range d.Entries {
		sc := scores[e.Agent]
		seen[e.Agent] = true
		preds := make([]*float64, len(e.Predictions))
		for i := range e.Predictions {
			preds[i] = &e.Predictions[i]
		}
		v.Entries = append(v.Entries, view.RoundEntryJSON{Agent: e.Agent, Name: nameOf(names, e.Agent), Revealed: e.Revealed, Forfeit: sc.Forfeit,
			Brier: scorePtr(sc, true), Alpha: sc.Alpha, Predictions: preds, Reasoning: e.Reasoning})
	}
	for _, sc := range d.Scores { // baselines score without a submission
		if !seen[sc.Agent] {
			v.Entries = append(v.Entries, view.RoundEntryJSON{Agent: sc.Agent, Name: nameOf(names, sc.Agent), Baseline: true, Forfeit: sc.Forfeit,
				Brier: scorePtr(sc, true), Alpha: sc.Alpha, Predictions: baselinePredictions(sc.Agent, rd)})
		}
	}
	slices.SortStableFunc(v.Entries, func(a, b view.RoundEntryJSON) int {
		ka, _ := deref(a.Brier)
		kb, _ := deref(b.Brier)
		return cmp.Compare(ka, kb)
	})
	return v, nil
}

// timeline is a round's steps in the order they happened or will: by
// time, where a step not yet done without a time of its own (benchmarks
// not captured, outcomes not frozen) stands at the time it is due
// (the commit deadline, the reveal deadline).
func timeline(rd *arena.Round, now time.Time) []view.PhaseJSON {
	type step struct {
		view.PhaseJSON
		due time.Time
	}
	dueOr := func(t, due time.Time) time.Time {
		if t.IsZero() {
			return due
		}
		return t
	}
	steps := []step{
		{view.PhaseJSON{Name: "created", At: utcPtr(rd.CreatedAt), Done: true}, rd.CreatedAt},
		{view.PhaseJSON{Name: "commits close", At: utcPtr(rd.CommitDeadline), Done: !now.Before(rd.CommitDeadline)}, rd.CommitDeadline},
		{view.PhaseJSON{Name: "benchmarks captured", At: utcPtr(rd.BenchmarkAt), Done: !rd.BenchmarkAt.IsZero()}, dueOr(rd.BenchmarkAt, rd.CommitDeadline)},
		{view.PhaseJSON{Name: "reveals open", At: utcPtr(rd.RevealStart), Done: !now.Before(rd.RevealStart)}, rd.RevealStart},
		{view.PhaseJSON{Name: "reveals close", At: utcPtr(rd.RevealDeadline), Done: !now.Before(rd.RevealDeadline)}, rd.RevealDeadline},
		{view.PhaseJSON{Name: "outcomes frozen and scored", At: utcPtr(rd.TriggeredAt), Done: !rd.TriggeredAt.IsZero()}, dueOr(rd.TriggeredAt, rd.RevealDeadline)},
	}
	slices.SortStableFunc(steps, func(a, b step) int { return a.due.Compare(b.due) })
	out := make([]view.PhaseJSON, len(steps))
	for i, st := range steps {
		out[i] = st.PhaseJSON
	}
	return out
}

// utcPtr is t in UTC, nil for the zero time.
func utcPtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	t = t.UTC()
	return &t
}

func scorePtr(sc forecast.ScoreJSON, ok bool) *float64 {
	if sc.Agent == "" || !ok {
		return nil
	}
	b := sc.Brier
	return &b
}

// ---- market ----

func (s *Server) marketView(r *http.Request) (any, error) {
	id, err := pathID(r, "id", "market")
	if err != nil {
		return nil, err
	}
	m, err := s.markets.Market(r.Context(), id)
	if err != nil {
		return nil, err
	}
	v := view.MarketPageJSON{Market: arena.NewMarketJSON(m), URL: m.URL, Criteria: m.Criteria, Ambiguous: m.Ambiguous, ResolvedBy: m.ResolvedBy, Prices: []view.PriceJSON{}, Rounds: []uint64{},
		Oracle: []arena.OracleResolution{}, Forecasts: []view.MarketForecastJSON{}}
	if s.oracle != nil {
		rs, err := s.oracle.Resolutions(r.Context(), id)
		switch {
		case arena.ErrorKind(err) == arena.ENOTFOUND: // the oracle never ran on it
		case err != nil:
			return nil, err
		default:
			v.Oracle = rs
		}
	}
	if !m.ResolvedAt.IsZero() {
		t := m.ResolvedAt.UTC()
		v.ResolvedAt, v.ResolvedEarly = &t, !m.CloseTime.IsZero() && t.Before(m.CloseTime)
	}
	pts, err := s.markets.Prices(r.Context(), m)
	if err != nil {
		return nil, err
	}
	for _, p := range pts {
		v.Prices = append(v.Prices, view.PriceJSON{At: p.Time.UTC(), Price: p.Price, Source: string(p.Source)})
	}
	if s.forecast != nil {
		a, err := s.forecast.Analysis(r.Context())
		if err != nil {
			return nil, err
		}
		names, err := s.forecast.Names(r.Context())
		if err != nil {
			return nil, err
		}
		v.Forecasts, v.Rounds, v.Forecasters = marketForecasts(a, id, names)
	}
	return v, nil
}

// baselinePredictions are what a baseline forecast in a triggered round:
// the market baseline echoes each benchmark (none where a market has
// none), the random one its draws from the round's public seed.
func baselinePredictions(agent string, rd *arena.Round) []*float64 {
	out := make([]*float64, len(rd.Markets))
	switch agent {
	case forecast.MarketAgent:
		for i, m := range rd.Markets {
			if m.Benchmark != nil { // scored in basis points, as logged
				b := float64(m.BenchmarkBps) / forecast.MaxBps
				out[i] = &b
			}
		}
	case forecast.RandomAgent:
		for i, p := range scoring.RandomPredictions(rd.ID, rd.CommitDeadline, len(rd.Markets)) {
			f := float64(p) / forecast.MaxBps
			out[i] = &f
		}
	default:
		return nil
	}
	return out
}

// marketForecasts are a market's scored forecasts, best Brier first, the
// rounds they come from and how many agents revealed one. Only scored
// rounds have scored forecasts, so nothing of a round whose outcomes are
// not yet triggered can appear here.
func marketForecasts(a *scoring.Analysis, id int64, names map[string]string) ([]view.MarketForecastJSON, []uint64, int) {
	out, rounds, agents := []view.MarketForecastJSON{}, []uint64{}, map[string]bool{}
	brier := func(p float64, o int8) float64 { return (p - float64(o)) * (p - float64(o)) }
	for _, i := range a.ByMarket[id] {
		f := a.Forecasts[i]
		at := a.Deadlines[f.RoundID].UTC()
		if !slices.Contains(rounds, f.RoundID) {
			rounds = append(rounds, f.RoundID)
			if f.Benchmark != nil {
				b := *f.Benchmark
				out = append(out, view.MarketForecastJSON{Round: f.RoundID, At: at, Agent: forecast.MarketAgent, Name: nameOf(names, forecast.MarketAgent),
					Baseline: true, Forecast: &b, Outcome: f.Outcome, Brier: brier(b, f.Outcome)})
			}
		}
		row := view.MarketForecastJSON{Round: f.RoundID, At: at, Agent: f.Agent, Name: nameOf(names, f.Agent), Baseline: f.Agent == forecast.RandomAgent,
			Forfeit: f.Forfeit, Outcome: f.Outcome, Brier: brier(f.Forecast, f.Outcome)}
		if !f.Forfeit {
			p := f.Forecast
			row.Forecast = &p
			if !row.Baseline {
				agents[f.Agent] = true
			}
		}
		out = append(out, row)
	}
	slices.SortStableFunc(out, func(x, y view.MarketForecastJSON) int {
		return cmp.Or(cmp.Compare(x.Brier, y.Brier), cmp.Compare(x.Round, y.Round), strings.Compare(x.Name, y.Name))
	})
	slices.Sort(rounds)
	return out, rounds, len(agents)
}

// ---- cohort ----

// cohortRanges are the curve windows, ending at the latest snapshot; the
// step keeps a readable number of points in each.
var cohortRanges = map[string]struct {
	window time.Duration
	step   string
}{"10m": {10 * time.Minute, "10m"}, "1h": {time.Hour, "10m"}, "1d": {24 * time.Hour, "10m"}, "1w": {7 * 24 * time.Hour, "1h"}, "all": {0, "1h"}}

func (s *Server) cohortView(r *http.Request) (any, error) {
	if err := s.needTrading(); err != nil {
		return nil, err
	}
	id, err := pathID(r, "id", "cohort")
	if err != nil {
		return nil, err
	}
	rng := cmp.Or(r.URL.Query().Get("range"), "all")
	rc, ok := cohortRanges[rng]
	if !ok {
		return nil, arena.Errorf(arena.EINVALID, "range %q: want %s", rng, openapi.OneOf(view.RangeNames))
	}
	detail, err := s.cohortDetail(r.Context(), id)
	if err != nil {
		return nil, err
	}
	curves, err := s.trading.Curves(r.Context(), id, "")
	if err != nil {
		return nil, err
	}
	step := snapshotSteps[rc.step]
	var last time.Time
	for _, c := range curves {
		if n := len(c.Snapshots); n > 0 && c.Snapshots[n-1].At.After(last) {
			last = c.Snapshots[n-1].At
		}
	}
	v := view.CohortPageJSON{CohortDetailJSON: detail, Range: rng, Curves: make([]view.CurveJSON, 0, len(curves)), Holdings: []view.HoldingsJSON{}}
	for _, c := range curves {
		var snaps []arena.ValuationSnapshot
		for _, sn := range c.Snapshots {
			if rc.window == 0 || !sn.At.Before(last.Add(-rc.window)) {
				snaps = append(snaps, sn)
			}
		}
		v.Curves = append(v.Curves, curveJSON(c.AgentID, snaps, step))
	}
	hs, err := s.trading.Holdings(r.Context(), id)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, l := range detail.Lineup {
		names[l.Agent] = l.Name
	}
	for _, h := range hs {
		hj := view.HoldingsJSON{Agent: h.AgentID, Name: cmpOr(names[h.AgentID], h.AgentID), Positions: []view.PositionJSON{}, Trades: []view.TradeJSON{}}
		for _, p := range h.Positions {
			pj := view.PositionJSON{ID: p.ID, MarketID: p.MarketID, Side: p.Side, Shares: float64(p.Shares) / 1e6, CostBasis: arena.Dollars(p.CostBasis),
				Mark: p.Mark.Float(), Status: string(p.Status), OpenedAt: p.OpenedAt.UTC()}
			if !p.ClosedAt.IsZero() {
				t := p.ClosedAt.UTC()
				pj.ClosedAt = &t
			}
			hj.Positions = append(hj.Positions, pj)
		}
		for _, t := range h.Trades {
			hj.Trades = append(hj.Trades, view.TradeJSON{ID: t.ID, DecisionID: t.DecisionID, MarketID: t.MarketID, Side: t.Side, Kind: string(t.Kind),
				Amount: arena.Dollars(t.Amount), Price: t.Price.Float(), At: t.CreatedAt.UTC()})
		}
		v.Holdings = append(v.Holdings, hj)
	}
	return v, nil
}

// ---- methodology ----

func (s *Server) methodologyView(r *http.Request) (any, error) {
	var v view.MethodologyJSON
	if f := s.forecast; f != nil {
		pw := f.ScoringMethod().Power
		v.Forecast = &view.ForecastMethodJSON{MarketsPerRound: cmp.Or(f.K, rounds.DefaultK), Rules: f.Rules, Grace: arena.Duration(f.Grace),
			BenchmarkTolerance: arena.Duration(forecast.BenchmarkTolerance), ProvisionalBelow: f.ScoringMethod().ShrinkN,
			Bootstrap: f.ScoringMethod().Bootstrap, Seed: f.ScoringMethod().Seed, ChainID: f.Domain.ChainID,
			Method: f.ScoringMethod(), Methodology: f.ScoringMethod().Stamp(),
			VerifyingContract: f.Domain.Contract.Hex(), DomainName: forecast.DomainName, DomainVersion: forecast.DomainVersion,
			SignificanceKappa: pw.Kappa, SignificancePower: pw.Power, AssumedBoldness: pw.Boldness, AssumedMarketsInPower: pw.K}
	}
	if s.trading != nil {
		st := s.trading.Settings()
		v.Trading = &view.TradingMethodJSON{InitialCash: arena.Dollars(st.InitialCash), TopMarkets: st.TopMarkets, MaxBetShare: st.MaxBetShare,
			MaxAttempts: st.MaxAttempts, LineupAgents: st.LineupAgents}
	}
	if s.logVKey != "" {
		base := strings.TrimSuffix(s.publicURL, "/")
		if base == "" {
			base = "http://" + r.Host
		}
		v.Verify = &view.VerifyJSON{VKey: s.logVKey, Checkpoint: base + "/log/checkpoint", Export: base + "/exports/latest/",
			Command: "arena verify --url " + base + " --vkey " + s.logVKey}
	}
	return v, nil
}
