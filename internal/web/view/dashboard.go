package view

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web/openapi"
)

// ---- home ----

// HomePage is the home page: the open and latest scored rounds and the
// leaders of each track.
func (s *Service) HomePage(ctx context.Context) (HomeJSON, error) {
	v := HomeJSON{Open: []RoundSummaryJSON{}, Scored: []RoundSummaryJSON{}, Forecast: []ForecastRowJSON{}, HasTrading: s.Trading != nil}
	if s.Forecast != nil {
		now := s.Forecast.Clock()
		for _, st := range []string{arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring} {
			rs, err := s.Forecast.Rounds(ctx, st, 20)
			if err != nil {
				return HomeJSON{}, err
			}
			for _, rd := range rs {
				v.Open = append(v.Open, roundSummary(rd, now, nil))
			}
		}
		slices.SortFunc(v.Open, func(a, b RoundSummaryJSON) int { return cmp.Compare(a.ID, b.ID) })
		b, rows, _, err := s.forecastBoard(ctx, rounds.Filter{})
		if err != nil {
			return HomeJSON{}, err
		}
		v.ScoredRounds, v.LastUpdated, v.Methodology = b.ScoredRounds, b.LastUpdated, b.Methodology
		v.Forecast = rows[:min(len(rows), HomeTop)]
		scored, err := s.Forecast.ScoredRoundList(ctx, 5)
		if err != nil {
			return HomeJSON{}, err
		}
		for _, rd := range scored {
			t := rd.TriggeredAt.UTC()
			v.Scored = append(v.Scored, RoundSummaryJSON{ID: rd.ID, Status: arena.RoundScored, CommitDeadline: rd.CommitDeadline,
				RevealStart: rd.RevealStart, RevealDeadline: rd.RevealDeadline, TriggeredAt: &t, Markets: len(rd.Markets)})
		}
	}
	if s.Trading != nil {
		lb, err := s.Trading.Leaderboard(ctx, 0, "")
		if err != nil {
			return HomeJSON{}, err
		}
		cs, err := s.Trading.Cohorts(ctx, "")
		if err != nil {
			return HomeJSON{}, err
		}
		v.Trading = lb.Rows[:min(len(lb.Rows), HomeTop)]
		v.TotalCohorts, v.Cohorts = len(cs), make([]trading.CohortSummaryJSON, 0, min(len(cs), 5))
		for _, c := range cs[:min(len(cs), 5)] {
			v.Cohorts = append(v.Cohorts, trading.NewCohortSummaryJSON(c))
		}
	}
	if s.Oracle != nil {
		rs, err := s.Oracle.Recent(ctx, 5)
		if err != nil {
			return HomeJSON{}, err
		}
		v.HasOracle, v.Oracle = true, make([]OracleRecentJSON, 0, len(rs))
		for _, r := range rs {
			v.Oracle = append(v.Oracle, OracleRecentJSON{MarketID: r.MarketID, Question: r.Evidence.Question, Seq: r.Seq, Status: r.Status,
				Panel: string(r.Verdict.Decision), Final: string(r.Final), Architecture: r.Verdict.Architecture, Composite: r.Verdict.Composite, At: r.CreatedAt})
		}
	}
	return v, nil
}

func roundSummary(rd forecast.RoundJSON, now time.Time, triggered *time.Time) RoundSummaryJSON {
	return RoundSummaryJSON{ID: rd.ID, Status: rd.Status, Phase: phase(rd.Status, rd.CommitDeadline, rd.RevealStart, rd.RevealDeadline, now),
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
func (s *Service) forecastBoard(ctx context.Context, f rounds.Filter) (scoring.Board, []ForecastRowJSON, *scoring.Analysis, error) {
	b, a, err := s.Forecast.Leaderboard(ctx, f)
	if err != nil {
		return scoring.Board{}, nil, nil, err
	}
	costs := map[string]arena.AgentCost{}
	if s.Traces != nil {
		cs, err := s.Traces.Costs(ctx)
		if err != nil {
			return scoring.Board{}, nil, nil, err
		}
		for _, c := range cs {
			costs[strings.ToLower(c.Agent)] = c
		}
	}
	rows := make([]ForecastRowJSON, 0, len(b.Rows))
	for _, r := range b.Rows {
		row := ForecastRowJSON{Row: r}
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
func scaleBars(rows []ForecastRowJSON) {
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
			rows[i].Bar = &BarJSON{Left: at(*r.ScoreCILo), Width: math.Max(at(*r.ScoreCIHi)-at(*r.ScoreCILo), 0.5), Point: at(*r.Score)}
		}
	}
}

// leaderboardWindows are the leaderboard's time windows: rounds whose
// commit deadline lies at most this far back.
var leaderboardWindows = map[string]time.Duration{"all": 0, "7d": 7 * 24 * time.Hour, "30d": 30 * 24 * time.Hour, "90d": 90 * 24 * time.Hour}

// WindowNames are the leaderboard's windows in order.
var WindowNames = []string{"7d", "30d", "90d", "all"}

// BoardFilter is the forecasts a leaderboard's window (one of
// WindowNames; "" is all), category and venue select, and the window's
// name.
func BoardFilter(window, category, venue string) (string, rounds.Filter, error) {
	w := cmp.Or(window, "all")
	d, ok := leaderboardWindows[w]
	if !ok {
		return "", rounds.Filter{}, arena.Errorf(arena.EINVALID, "window %q: want %s", w, openapi.OneOf(WindowNames))
	}
	return w, rounds.Filter{Window: d, Category: strings.TrimSpace(category), Venue: strings.TrimSpace(venue)}, nil
}

// nameOf is an agent's display name, its id when it has none.
func nameOf(names map[string]string, agent string) string { return cmp.Or(names[agent], agent) }

// sortNames are ForecastSorts' keys in the order an error lists them.
var sortNames = []string{"rank", "name", "score", "rounds", "n", "brier", "brier_index", "bss", "peer", "alpha", "adjusted", "p", "p_rank1",
	"rounds_to_significance"}

// LeaderboardParams are the leaderboard page's parameters, as its query
// gives them; "" takes the default.
type LeaderboardParams struct {
	Sort    string // a key of ForecastSorts; default rank
	Dir     string // asc or desc; default the column's better end first
	Query   string // only the agents whose name or address contains it
	Columns string // all: every column
	// HidePrelim leaves out the agents with too few forecasts to rank.
	HidePrelim bool
	Window     string // a key of WindowNames; default all
	Category   string
	Venue      string
	// TradingSort orders the trading table (trading.Sorts).
	TradingSort string
}

// LeaderboardPage is the leaderboard page: the forecast table ordered,
// filtered and windowed as p asks, beside the trading and backtest tables.
func (s *Service) LeaderboardPage(ctx context.Context, p LeaderboardParams) (LeaderboardPageJSON, error) {
	v := LeaderboardPageJSON{Sort: cmp.Or(p.Sort, "rank"), Query: strings.TrimSpace(p.Query), Forecast: []ForecastRowJSON{},
		HidePrelim: p.HidePrelim, Columns: p.Columns}
	better, ok := ForecastSorts[v.Sort]
	if !ok {
		return LeaderboardPageJSON{}, arena.Errorf(arena.EINVALID, "sort %q: want %s", v.Sort, openapi.OneOf(sortNames))
	}
	if v.Columns != "" && v.Columns != "all" {
		return LeaderboardPageJSON{}, arena.Errorf(arena.EINVALID, "columns %q: want all, or leave it out for the short view", v.Columns)
	}
	switch d := p.Dir; d {
	case "":
		v.Desc = better
	case "asc", "desc":
		v.Desc = d == "desc"
	default:
		return LeaderboardPageJSON{}, arena.Errorf(arena.EINVALID, "dir %q: want asc or desc", d)
	}
	window, f, err := BoardFilter(p.Window, p.Category, p.Venue)
	if err != nil {
		return LeaderboardPageJSON{}, err
	}
	v.Window, v.Category, v.Venue, v.Windows, v.Categories, v.Venues = window, f.Category, f.Venue, []string{"all", "7d", "30d", "90d"}, []string{}, []string{}
	if s.Forecast != nil {
		all, err := s.Forecast.Analysis(ctx)
		if err != nil {
			return LeaderboardPageJSON{}, err
		}
		if all.Categories != nil {
			v.Categories = all.Categories
		}
		if all.Venues != nil {
			v.Venues = all.Venues
		}
		if len(v.Venues) > 1 && f.Venue == "" {
			vb, err := s.Forecast.VenueBoard(ctx, f)
			if err != nil {
				return LeaderboardPageJSON{}, err
			}
			v.ByVenue = &vb
		}
		b, rows, a, err := s.forecastBoard(ctx, f)
		if err != nil {
			return LeaderboardPageJSON{}, err
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
	if s.Trading != nil {
		lb, err := s.Trading.Leaderboard(ctx, f.Window, p.TradingSort)
		if err != nil {
			return LeaderboardPageJSON{}, err
		}
		v.Trading = &lb
	}
	if s.Boards != nil {
		b, err := s.Boards.Board(ctx)
		if err != nil {
			return LeaderboardPageJSON{}, err
		}
		v.Backtest = &b
	}
	return v, nil
}

// sortRows orders rows by a column; missing values (and, by rank, the
// unranked preliminary agents) sort last either way.
func sortRows(rows []ForecastRowJSON, by string, desc bool) {
	key := func(r ForecastRowJSON) (float64, bool) {
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
	slices.SortStableFunc(rows, func(a, b ForecastRowJSON) int {
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

// RoundPage is a round's page: its markets, submissions and, once scored,
// its scores.
func (s *Service) RoundPage(ctx context.Context, id uint64) (RoundPageJSON, error) {
	if err := s.NeedForecast(); err != nil {
		return RoundPageJSON{}, err
	}
	d, err := s.Forecast.RoundDetail(ctx, id)
	if err != nil {
		return RoundPageJSON{}, err
	}
	names, err := s.Forecast.Names(ctx)
	if err != nil {
		return RoundPageJSON{}, err
	}
	now := s.Forecast.Clock()
	rd := d.Round
	v := RoundPageJSON{ID: rd.ID, Status: d.View.Status, Phase: phase(d.View.Status, rd.CommitDeadline, rd.RevealStart, rd.RevealDeadline, now),
		Commits: d.Commits, Triggered: !rd.TriggeredAt.IsZero(), Entries: []RoundEntryJSON{}, Timeline: timeline(rd, now)}
	for i, rm := range rd.Markets {
		m := d.Markets[rm.MarketID]
		mj := RoundMarketPageJSON{Index: i, MarketID: rm.MarketID}
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
		v.Entries = append(v.Entries, RoundEntryJSON{Agent: e.Agent, Name: nameOf(names, e.Agent), Revealed: e.Revealed, Forfeit: sc.Forfeit,
			Brier: scorePtr(sc, true), Alpha: sc.Alpha, Predictions: preds, Reasoning: e.Reasoning})
	}
	for _, sc := range d.Scores { // baselines score without a submission
		if !seen[sc.Agent] {
			v.Entries = append(v.Entries, RoundEntryJSON{Agent: sc.Agent, Name: nameOf(names, sc.Agent), Baseline: true, Forfeit: sc.Forfeit,
				Brier: scorePtr(sc, true), Alpha: sc.Alpha, Predictions: baselinePredictions(sc.Agent, rd)})
		}
	}
	slices.SortStableFunc(v.Entries, func(a, b RoundEntryJSON) int {
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
func timeline(rd *arena.Round, now time.Time) []PhaseJSON {
	type step struct {
		PhaseJSON
		due time.Time
	}
	dueOr := func(t, due time.Time) time.Time {
		if t.IsZero() {
			return due
		}
		return t
	}
	steps := []step{
		{PhaseJSON{Name: "created", At: utcPtr(rd.CreatedAt), Done: true}, rd.CreatedAt},
		{PhaseJSON{Name: "commits close", At: utcPtr(rd.CommitDeadline), Done: !now.Before(rd.CommitDeadline)}, rd.CommitDeadline},
		{PhaseJSON{Name: "benchmarks captured", At: utcPtr(rd.BenchmarkAt), Done: !rd.BenchmarkAt.IsZero()}, dueOr(rd.BenchmarkAt, rd.CommitDeadline)},
		{PhaseJSON{Name: "reveals open", At: utcPtr(rd.RevealStart), Done: !now.Before(rd.RevealStart)}, rd.RevealStart},
		{PhaseJSON{Name: "reveals close", At: utcPtr(rd.RevealDeadline), Done: !now.Before(rd.RevealDeadline)}, rd.RevealDeadline},
		{PhaseJSON{Name: "outcomes frozen and scored", At: utcPtr(rd.TriggeredAt), Done: !rd.TriggeredAt.IsZero()}, dueOr(rd.TriggeredAt, rd.RevealDeadline)},
	}
	slices.SortStableFunc(steps, func(a, b step) int { return a.due.Compare(b.due) })
	out := make([]PhaseJSON, len(steps))
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

// MarketPage is a market's page: its price history, its oracle
// resolutions and the scored forecasts of it.
func (s *Service) MarketPage(ctx context.Context, id int64) (MarketPageJSON, error) {
	m, err := s.Markets.Market(ctx, id)
	if err != nil {
		return MarketPageJSON{}, err
	}
	v := MarketPageJSON{Market: arena.NewMarketJSON(m), URL: m.URL, Criteria: m.Criteria, Ambiguous: m.Ambiguous, ResolvedBy: m.ResolvedBy, Prices: []PriceJSON{}, Rounds: []uint64{},
		Oracle: []arena.OracleResolution{}, Forecasts: []MarketForecastJSON{}}
	if s.Oracle != nil {
		rs, err := s.Oracle.Resolutions(ctx, id)
		switch {
		case arena.ErrorKind(err) == arena.ENOTFOUND: // the oracle never ran on it
		case err != nil:
			return MarketPageJSON{}, err
		default:
			v.Oracle = rs
		}
	}
	if !m.ResolvedAt.IsZero() {
		t := m.ResolvedAt.UTC()
		v.ResolvedAt, v.ResolvedEarly = &t, !m.CloseTime.IsZero() && t.Before(m.CloseTime)
	}
	pts, err := s.Markets.Prices(ctx, m)
	if err != nil {
		return MarketPageJSON{}, err
	}
	for _, p := range pts {
		v.Prices = append(v.Prices, PriceJSON{At: p.Time.UTC(), Price: p.Price, Source: string(p.Source)})
	}
	if s.Forecast != nil {
		a, err := s.Forecast.Analysis(ctx)
		if err != nil {
			return MarketPageJSON{}, err
		}
		names, err := s.Forecast.Names(ctx)
		if err != nil {
			return MarketPageJSON{}, err
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
func marketForecasts(a *scoring.Analysis, id int64, names map[string]string) ([]MarketForecastJSON, []uint64, int) {
	out, rounds, agents := []MarketForecastJSON{}, []uint64{}, map[string]bool{}
	brier := func(p float64, o int8) float64 { return (p - float64(o)) * (p - float64(o)) }
	for _, i := range a.ByMarket[id] {
		f := a.Forecasts[i]
		at := a.Deadlines[f.RoundID].UTC()
		if !slices.Contains(rounds, f.RoundID) {
			rounds = append(rounds, f.RoundID)
			if f.Benchmark != nil {
				b := *f.Benchmark
				out = append(out, MarketForecastJSON{Round: f.RoundID, At: at, Agent: forecast.MarketAgent, Name: nameOf(names, forecast.MarketAgent),
					Baseline: true, Forecast: &b, Outcome: f.Outcome, Brier: brier(b, f.Outcome)})
			}
		}
		row := MarketForecastJSON{Round: f.RoundID, At: at, Agent: f.Agent, Name: nameOf(names, f.Agent), Baseline: f.Agent == forecast.RandomAgent,
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
	slices.SortStableFunc(out, func(x, y MarketForecastJSON) int {
		return cmp.Or(cmp.Compare(x.Brier, y.Brier), cmp.Compare(x.Round, y.Round), strings.Compare(x.Name, y.Name))
	})
	slices.Sort(rounds)
	return out, rounds, len(agents)
}

// ---- methodology ----

// MethodologyPage is the methodology page: the scoring method, its
// configuration and how to verify the arena, at PublicURL or else at
// host, the host the page was asked of.
func (s *Service) MethodologyPage(ctx context.Context, host string) (MethodologyJSON, error) {
	var v MethodologyJSON
	if f := s.Forecast; f != nil {
		pw := f.ScoringMethod().Power
		v.Forecast = &ForecastMethodJSON{MarketsPerRound: cmp.Or(f.K, rounds.DefaultK), Rules: f.Rules, Grace: arena.Duration(f.Grace),
			BenchmarkTolerance: arena.Duration(forecast.BenchmarkTolerance), ProvisionalBelow: f.ScoringMethod().ShrinkN,
			Bootstrap: f.ScoringMethod().Bootstrap, Seed: f.ScoringMethod().Seed, ChainID: f.Domain.ChainID,
			Method: f.ScoringMethod(), Methodology: f.ScoringMethod().Stamp(),
			VerifyingContract: f.Domain.Contract.Hex(), DomainName: forecast.DomainName, DomainVersion: forecast.DomainVersion,
			SignificanceKappa: pw.Kappa, SignificancePower: pw.Power, AssumedBoldness: pw.Boldness, AssumedMarketsInPower: pw.K}
	}
	if s.Trading != nil {
		st := s.Trading.Settings()
		v.Trading = &TradingMethodJSON{InitialCash: arena.Dollars(st.InitialCash), TopMarkets: st.TopMarkets, MaxBetShare: st.MaxBetShare,
			MaxAttempts: st.MaxAttempts, LineupAgents: st.LineupAgents}
	}
	if s.LogVKey != "" {
		base := strings.TrimSuffix(s.PublicURL, "/")
		if base == "" {
			base = "http://" + host
		}
		v.Verify = &VerifyJSON{VKey: s.LogVKey, Checkpoint: base + "/log/checkpoint", Export: base + "/exports/latest/",
			Command: "arena verify --url " + base + " --vkey " + s.LogVKey}
	}
	return v, nil
}
