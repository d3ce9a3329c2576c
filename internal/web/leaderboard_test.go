package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/internal/web/view"
)

// The leaderboard filters by time window and category (the same figures
// as the unfiltered analysis of the selected forecasts), pairs every agent
// with the leader round by round, shows model-call costs where traces
// exist, and keeps the filters in its sort links; page and JSON agree.
func TestLeaderboardFilters(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		generate(t, db, 5, 12, 4) // rounds daily from 2026-01-01, markets' categories cycle over 4
		now := time.Date(2026, 1, 13, 0, 0, 0, 0, time.UTC)
		method := scoring.DefaultMethod()
		method.MinForecasts = 10 // 48 forecasts each, 28 in the last week
		svc := &rounds.Service{Store: db, Logger: quiet, Now: func() time.Time { return now }, Method: method}
		top := fmt.Sprintf("0x%040x", 1)
		// Round 1's provider reported what two of its three calls cost
		// (as OpenRouter does); round 2's reported nothing.
		for r, cost := range map[uint64]arena.Micros{1: 1500, 2: 500} {
			billed, billedCalls := arena.Micros(0), int64(0)
			if r == 1 {
				billed, billedCalls = 1700, 2
			}
			if err := db.SaveTrace(ctx, &arena.ForecastTrace{RoundID: r, Agent: top, AgentID: "llm", Submitted: true, Calls: 3, Cost: cost,
				Billed: billed, BilledCalls: billedCalls}); err != nil {
				t.Fatal(err)
			}
		}
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc, Forecasters: db, Boards: newBoards(t, db, svc)})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		e := &env{t: t, db: db, svc: svc, url: hs.URL, now: svc.Now}

		var all, week, sports view.LeaderboardPageJSON
		e.ok(200, "GET", "/api/v1/pages/leaderboard", nil, "", &all)
		e.ok(200, "GET", "/api/v1/pages/leaderboard?window=7d", nil, "", &week)
		e.ok(200, "GET", "/api/v1/pages/leaderboard?category=sports", nil, "", &sports)
		if all.ScoredRounds != 12 || week.ScoredRounds != 7 || sports.ScoredRounds != 12 || week.Window != "7d" || sports.Category != "sports" {
			t.Fatalf("scored rounds: all %d, 7d %d (%q), sports %d (%q)", all.ScoredRounds, week.ScoredRounds, week.Window, sports.ScoredRounds, sports.Category)
		}
		if strings.Join(all.Categories, ",") != "crypto,politics,science,sports" {
			t.Errorf("categories %v", all.Categories)
		}
		for _, r := range week.Forecast {
			if r.Rounds != 7 || r.N != 28 {
				t.Errorf("7d window: %s has %d rounds, %d forecasts; want 7, 28", r.Name, r.Rounds, r.N)
			}
		}
		for _, r := range sports.Forecast {
			if r.N != 12 {
				t.Errorf("sports: %s has %d forecasts, want 12", r.Name, r.N)
			}
		}
		var lead, second *view.ForecastRowJSON
		for i := range all.Forecast {
			switch all.Forecast[i].Rank {
			case 1:
				lead = &all.Forecast[i]
			case 2:
				second = &all.Forecast[i]
			}
		}
		if lead == nil || second == nil || lead.VsLeader != nil || second.VsLeader == nil || second.VsLeader.Rounds != 12 ||
			second.VsLeader.CILo == nil || *second.VsLeader.CILo > second.VsLeader.BrierDiff || second.VsLeader.P == nil || second.TieGroup == 0 {
			t.Fatalf("leader %+v, second %+v", lead, second)
		}
		var withCost int
		for _, r := range all.Forecast {
			if r.Cost != nil {
				withCost++
				if r.Agent != top || *r.Cost != 2000 || *r.ModelCalls != 6 || r.BilledCost == nil || *r.BilledCost != 1700 || *r.BilledCalls != 2 {
					t.Errorf("cost of %s: %v over %v calls, billed %v over %v", r.Agent, *r.Cost, *r.ModelCalls, r.BilledCost, r.BilledCalls)
				}
			} else if r.BilledCost != nil {
				t.Errorf("%s: billed %v without a trace", r.Agent, *r.BilledCost)
			}
		}
		if withCost != 1 {
			t.Errorf("%d rows with a cost, want 1", withCost)
		}

		html := e.page("/leaderboard?window=7d&category=sports")
		for _, want := range []string{`<option value="7d" selected>`, `<option selected>sports</option>`, "window=7d", "category=sports",
			"Rounds of the last 7d", "sports markets only"} {
			if !strings.Contains(html, want) {
				t.Errorf("filtered page lacks %q", want)
			}
		}
		html = e.page("/leaderboard")
		if !strings.Contains(html, "$0.0020 <small") || !strings.Contains(html, "billed $0.0017") || !strings.Contains(html, strings.ReplaceAll(fmt.Sprintf("%+.4f <small>[", second.VsLeader.BrierDiff), "+", "&#43;")) {
			t.Errorf("leaderboard page lacks the cost or the paired difference %+.4f", second.VsLeader.BrierDiff)
		}
		var apiBoard web.BoardJSON
		e.ok(200, "GET", "/api/v1/leaderboard?window=7d", nil, "", &apiBoard)
		api := apiBoard.Rows
		if len(api) != len(week.Forecast) || api[0].Rounds != 7 {
			t.Errorf("API leaderboard over 7d: %+v", api)
		}
		for _, bad := range []string{"/api/v1/pages/leaderboard?window=2w", "/api/v1/pages/leaderboard?category=nope", "/api/v1/leaderboard?window=1y"} {
			if st, body := e.call("GET", bad, nil, ""); st != 400 {
				t.Errorf("GET %s: %d %s", bad, st, body)
			}
		}
	})
}

// A category no scored forecast has answers 400 on the API as on the page,
// with the client's text echoed only in part, and leaves no cache entry:
// 200 made-up categories, every 50th of them 200 KB long, keep the
// analysis cache at its one view.
func TestLeaderboardUnknownCategory(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		generate(t, db, 3, 2, 4)
		svc := &rounds.Service{Store: db, Logger: quiet}
		h := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc}).Handler()
		get := func(path string) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			return rec
		}
		if rec := get("/api/v1/leaderboard?category=sports"); rec.Code != 200 {
			t.Fatalf("a known category: %d %s", rec.Code, rec.Body)
		}
		cached := svc.CachedAnalyses()
		for i := range 200 {
			pad := "c"
			if i%50 == 0 {
				pad = strings.Repeat("c", 200<<10)
			}
			rec := get(fmt.Sprintf("/api/v1/leaderboard?category=%d%s", i, pad))
			if rec.Code != 400 || rec.Body.Len() > 1<<10 {
				t.Fatalf("made-up category %d: %d, %d bytes", i, rec.Code, rec.Body.Len())
			}
		}
		if got := svc.CachedAnalyses(); got != cached {
			t.Errorf("200 made-up categories grew the analysis cache from %d to %d views", cached, got)
		}
	})
}

// The leaderboard API pages its rows (limit, cursor: Link rel=next and
// X-Total-Count), the pages together being the whole board, for the
// forecast and the trading track; a parameter that does not apply to the
// track answers 400 instead of being ignored.
func TestLeaderboardPaging(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		generate(t, db, 5, 3, 4)
		eng, _ := generateCohorts(t, db, 1, 3)
		svc := &rounds.Service{Store: db, Logger: quiet}
		h := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc, Trading: eng, Forecasters: db, Boards: newBoards(t, db, svc)}).Handler()
		get := func(path string) *httptest.ResponseRecorder {
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, httptest.NewRequest("GET", path, nil))
			return rec
		}
		// walk follows the Link headers from path and returns every row's
		// agent, page after page.
		walk := func(path string, rows func([]byte) []string) (agents []string, pages int) {
			for path != "" {
				rec := get(path)
				if rec.Code != 200 {
					t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
				}
				agents = append(agents, rows(rec.Body.Bytes())...)
				pages++
				path = ""
				if l := rec.Header().Get("Link"); l != "" {
					path = strings.TrimSuffix(strings.TrimPrefix(l, "<"), `>; rel="next"`)
				}
			}
			return agents, pages
		}
		forecastRows := func(b []byte) []string {
			var board web.BoardJSON
			if err := json.Unmarshal(b, &board); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range board.Rows {
				out = append(out, r.Agent)
			}
			return out
		}
		tradingRows := func(b []byte) []string {
			var lb trading.LeaderboardJSON
			if err := json.Unmarshal(b, &lb); err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, r := range lb.Rows {
				out = append(out, r.Agent)
			}
			return out
		}
		for _, c := range []struct {
			track string
			rows  func([]byte) []string
			n     int
		}{{"forecast", forecastRows, 6}, {"trading", tradingRows, 3}} {
			all, _ := walk("/api/v1/leaderboard?track="+c.track, c.rows)
			paged, pages := walk("/api/v1/leaderboard?limit=2&track="+c.track, c.rows)
			if len(all) < c.n || !slices.Equal(all, paged) || pages != (len(all)+1)/2 {
				t.Errorf("%s: whole board %v; in %d pages of 2: %v", c.track, all, pages, paged)
			}
			if n := get("/api/v1/leaderboard?limit=2&track=" + c.track).Header().Get("X-Total-Count"); n != fmt.Sprint(len(all)) {
				t.Errorf("%s: X-Total-Count %s, want %d", c.track, n, len(all))
			}
		}
		for _, bad := range []string{"/api/v1/leaderboard?track=backtest&window=7d", "/api/v1/leaderboard?track=backtest&category=sports",
			"/api/v1/leaderboard?sort=brier", "/api/v1/leaderboard?track=trading&category=sports", "/api/v1/leaderboard?offset=2"} {
			if rec := get(bad); rec.Code != 400 || !strings.Contains(rec.Body.String(), "_parameter") {
				t.Errorf("GET %s: %d %s", bad, rec.Code, rec.Body)
			}
		}
	})
}

// countingBacktests counts the reads of every backtest row.
type countingBacktests struct {
	*store.DB
	reads atomic.Int32
}

func (c *countingBacktests) BacktestForecasts(ctx context.Context) ([]arena.BacktestForecast, error) {
	c.reads.Add(1)
	return c.DB.BacktestForecasts(ctx)
}

// The backtest leaderboard is computed once per set of rows: views read
// the store's version of the rows, not the rows, until a save changes it.
func TestBacktestLeaderboardCached(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
		ms := seedMarkets(t, db, 6, at.Add(24*time.Hour))
		var rows []arena.BacktestForecast
		for i := range 6 {
			b := 0.5
			rows = append(rows, arena.BacktestForecast{Agent: "a", MarketID: ms[i].ID, Round: fmt.Sprint(i / 3), SourceID: fmt.Sprint(i),
				Category: "c", Forecast: 7000, Benchmark: &b, Outcome: int8(i % 2), CreatedAt: at})
		}
		if err := db.SaveBacktest(ctx, rows); err != nil {
			t.Fatal(err)
		}
		st := &countingBacktests{DB: db}
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: &rounds.Service{Store: db, Logger: quiet}, Forecasters: st, Boards: newBoards(t, st, nil)})
		board := func() scoring.Board {
			t.Helper()
			rec := httptest.NewRecorder()
			srv.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/api/v1/leaderboard?track=backtest", nil))
			var b struct{ scoring.Board }
			if rec.Code != 200 || json.Unmarshal(rec.Body.Bytes(), &b) != nil {
				t.Fatalf("backtest leaderboard: %d %s", rec.Code, rec.Body)
			}
			return b.Board
		}
		agentA := func(b scoring.Board) scoring.Row {
			t.Helper()
			for _, r := range b.Rows {
				if r.Agent == "a" {
					return r
				}
			}
			t.Fatalf("agent a is not on the board %+v", b.Rows)
			return scoring.Row{}
		}
		first := agentA(board())
		board()
		if n := st.reads.Load(); n != 1 || first.N != 6 {
			t.Fatalf("%d reads of the rows for two views, agent a %+v", n, first)
		}
		// A replaced forecast, saved with the same time stamp, is seen.
		rows[0].Forecast = 1000
		if err := db.SaveBacktest(ctx, rows[:1]); err != nil {
			t.Fatal(err)
		}
		if a := agentA(board()); st.reads.Load() != 2 || a.Brier == first.Brier {
			t.Fatalf("after a replaced row: %d reads, Brier %v (was %v)", st.reads.Load(), a.Brier, first.Brier)
		}
	})
}

// Markets of two venues: the leaderboard filters by venue, sets the
// venues' boards side by side with a combined score that is the mean of
// the venue scores, and page and JSON agree; a venue with no forecast yet
// gives an empty board, a name that is no venue is refused.
func TestLeaderboardByVenue(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		generate(t, db, 5, 12, 4)
		ms, err := db.Markets(ctx, arena.MarketFilter{})
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ms {
			m.Origin = []string{arena.SourceKalshi, arena.SourceManifold}[m.ID%2]
		}
		if _, err := db.SaveMarkets(ctx, ms); err != nil {
			t.Fatal(err)
		}
		now := time.Date(2026, 1, 13, 0, 0, 0, 0, time.UTC)
		method := scoring.DefaultMethod()
		method.MinForecasts = 10 // 48 forecasts each, 24 on each venue
		svc := &rounds.Service{Store: db, Logger: quiet, Now: func() time.Time { return now }, Method: method,
			Rules: rounds.DefaultRulesFor([]string{arena.SourceKalshi, arena.SourceManifold})}
		hs := httptest.NewServer(web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: svc, Forecasters: db, Boards: newBoards(t, db, svc)}).Handler())
		defer hs.Close()
		e := &env{t: t, db: db, svc: svc, url: hs.URL, now: svc.Now}

		var all view.LeaderboardPageJSON
		e.ok(200, "GET", "/api/v1/pages/leaderboard", nil, "", &all)
		if want := []string{arena.SourceKalshi, arena.SourceManifold}; !slices.Equal(all.Venues, want) || all.ByVenue == nil || !slices.Equal(all.ByVenue.Venues, want) {
			t.Fatalf("venues %v, by venue %+v", all.Venues, all.ByVenue)
		}
		var vb scoring.VenueBoard
		e.ok(200, "GET", "/api/v1/leaderboard/venues", nil, "", &vb)
		if len(vb.Rows) != len(all.ByVenue.Rows) || len(vb.Rows) < 5 {
			t.Fatalf("board by venue: %d rows, page %d", len(vb.Rows), len(all.ByVenue.Rows))
		}
		byVenue := map[string]map[string]view.ForecastRowJSON{}
		for _, v := range vb.Venues {
			var one view.LeaderboardPageJSON
			e.ok(200, "GET", "/api/v1/pages/leaderboard?venue="+v, nil, "", &one)
			if one.Venue != v || one.ByVenue != nil {
				t.Errorf("%s: venue %q, by venue %v", v, one.Venue, one.ByVenue)
			}
			byVenue[v] = map[string]view.ForecastRowJSON{}
			for _, r := range one.Forecast {
				byVenue[v][r.Agent] = r
				if r.N != 24 {
					t.Errorf("%s: %s has %d forecasts, want 24", v, r.Name, r.N)
				}
			}
		}
		combined := 0
		for _, r := range vb.Rows {
			sum := 0.0
			for _, v := range vb.Venues {
				row, s := byVenue[v][r.Agent], r.Scores[v]
				if (s == nil) != (row.Score == nil) || s != nil && *s != *row.Score || slices.Contains(r.Preliminary, v) != row.Preliminary {
					t.Errorf("%s on %s: %v (preliminary on %v), the venue's board says %v (preliminary %v)", r.Name, v, s, r.Preliminary, row.Score, row.Preliminary)
				}
				if s != nil {
					sum += *s
				}
			}
			if r.Combined != nil {
				combined++
				if d := *r.Combined - sum/2; d > 1e-9 || d < -1e-9 {
					t.Errorf("%s: combined %v, mean of the venues %v", r.Name, *r.Combined, sum/2)
				}
			}
		}
		if combined == 0 {
			t.Error("no agent has a combined score")
		}
		var none view.LeaderboardPageJSON
		e.ok(200, "GET", "/api/v1/pages/leaderboard?venue=metaculus", nil, "", &none)
		if none.ScoredRounds != 0 || len(none.Forecast) != 0 {
			t.Errorf("a venue without forecasts: %d rounds, %d rows", none.ScoredRounds, len(none.Forecast))
		}
		for _, bad := range []string{"/api/v1/pages/leaderboard?venue=predictit", "/api/v1/leaderboard?track=forecast&venue=nope",
			"/api/v1/leaderboard/venues?venue=kalshi", "/api/v1/leaderboard?track=trading&venue=kalshi"} {
			if st, body := e.call("GET", bad, nil, ""); st != 400 {
				t.Errorf("GET %s: %d %s", bad, st, body)
			}
		}
		html := e.page("/leaderboard")
		for _, want := range []string{"<h2>By venue</h2>", `<select name="venue">`, `href="/leaderboard?venue=kalshi"`} {
			if !strings.Contains(html, want) {
				t.Errorf("leaderboard page lacks %q", want)
			}
		}
		if html := e.page("/methodology"); !strings.Contains(html, "kalshi share 1, volume ≥ 1000, liquidity ≥ 0</span>; ") {
			t.Error("the methodology page does not give the venues' shares and minimums")
		}
		if html := e.page("/leaderboard?venue=kalshi"); !strings.Contains(html, "Markets of kalshi only.") || strings.Contains(html, "By venue") ||
			!strings.Contains(html, "<option selected>kalshi</option>") {
			t.Error("the venue's page does not say which venue it shows")
		}
	})
}

// newBoards returns the boards of st, scored as svc scores (nil: the
// default method), closed when the test ends, before the store.
func newBoards(t testing.TB, st arena.BacktestStore, svc *rounds.Service) *backtest.Boards {
	var m scoring.Method
	if svc != nil {
		m = svc.ScoringMethod()
	}
	b := backtest.NewBoards(st, m, quiet)
	t.Cleanup(b.Close)
	return b
}
