package web_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web/view"
)

// The round page states the status once and what happens next in words
// (nothing more once the round is scored); its timeline lists the steps
// in the order they happened, benchmarks captured late included; the
// home page's round lists say "–" for what a scored round does next.
func TestRoundPageStatusAndTimeline(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		t0 := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 2, t0.Add(10*24*time.Hour))
		cd, rs, rd := t0.Add(time.Hour), t0.Add(time.Hour+time.Minute), t0.Add(3*time.Hour)
		r := e.createRound(ms, cd, rs, rd)
		path := fmt.Sprintf("/rounds/%d", r.ID)

		var v view.RoundPageJSON
		e.ok(200, "GET", "/api/v1/pages"+path, nil, "", &v)
		if v.Phase != "commits close in 1h 0m" {
			t.Errorf("open round: phase %q", v.Phase)
		}
		if html := e.page(path); !strings.Contains(html, "Status: <strong>open</strong>; next: commits close in 1h 0m. 0 commits.") {
			t.Errorf("open round page lacks its status line: %s", between(html, `<p class="sub">`, "</p>"))
		}

		// Benchmarks are captured after the reveals opened.
		clk.Set(cd.Add(forecast.BenchmarkTolerance + 5*time.Minute))
		if n, err := e.svc.CaptureBenchmarks(ctx); err != nil || n != 1 {
			t.Fatalf("capture: %d, %v", n, err)
		}
		e.ok(200, "GET", "/api/v1/pages"+path, nil, "", &v)
		var names []string
		for i, p := range v.Timeline {
			names = append(names, p.Name)
			if i > 0 && p.At != nil && v.Timeline[i-1].At != nil && p.At.Before(*v.Timeline[i-1].At) {
				t.Errorf("timeline step %q at %s after %q at %s", p.Name, p.At, v.Timeline[i-1].Name, v.Timeline[i-1].At)
			}
		}
		want := "created, commits close, reveals open, benchmarks captured, reveals close, outcomes frozen and scored"
		if got := strings.Join(names, ", "); got != want {
			t.Errorf("timeline %s, want %s", got, want)
		}
		html := e.page(path)
		if i, j := strings.Index(html, "reveals open"), strings.Index(html, "benchmarks captured"); i < 0 || j < i {
			t.Errorf("round page lists the benchmarks (at %d) before the reveals open (at %d)", j, i)
		}
		if !strings.Contains(html, "Status: <strong>revealing</strong>; next: reveals close in 1h 50m.") {
			t.Errorf("revealing round page lacks its status line: %s", between(html, `<p class="sub">`, "</p>"))
		}

		clk.Set(rd.Add(time.Second))
		e.ok(200, "GET", "/api/v1/pages"+path, nil, "", &v)
		if v.Phase != "scored once its markets resolve" {
			t.Errorf("round after its reveal deadline: phase %q", v.Phase)
		}
		for _, m := range ms {
			e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", m.ID), map[string]string{"outcome": "YES"}, adminToken, nil)
		}
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r.ID), nil, adminToken, nil)
		e.ok(200, "GET", "/api/v1/pages"+path, nil, "", &v)
		if v.Status != arena.RoundScored || v.Phase != "" {
			t.Errorf("scored round: status %q, phase %q", v.Status, v.Phase)
		}
		if html := e.page(path); !strings.Contains(html, "Status: <strong>scored</strong>. 0 commits.") {
			t.Errorf("scored round page lacks its status line: %s", between(html, `<p class="sub">`, "</p>"))
		}
		if v.Timeline[len(v.Timeline)-1].Name != "outcomes frozen and scored" {
			t.Errorf("scored round's timeline %+v", v.Timeline)
		}

		var home view.HomeJSON
		e.ok(200, "GET", "/api/v1/pages/home", nil, "", &home)
		if len(home.Scored) != 1 || home.Scored[0].Phase != "" || home.ScoredRounds != 1 {
			t.Fatalf("home: scored rounds %+v", home.Scored)
		}
		html = e.page("/")
		for _, want := range []string{fmt.Sprintf(`<a href="/rounds/%d">#%d</a></td><td class="l">scored</td><td class="l">–</td>`, r.ID, r.ID), "1 round scored."} {
			if !strings.Contains(html, want) {
				t.Errorf("home page lacks %q", want)
			}
		}
	})
}

// between is the text of s from the first from to the next to.
func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}

// The home page lists the latest cohorts with links to their pages, and
// its JSON carries them; trading agents, who have no agent page, link to
// their latest cohort on the home page and the leaderboard.
func TestHomeCohorts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := trSetup(t, db)
		id := e.c.ID
		var home view.HomeJSON
		e.get("/api/v1/pages/home", 200, &home)
		if home.TotalCohorts != 1 || len(home.Cohorts) != 1 || home.Cohorts[0].ID != id || home.Cohorts[0].Agents != 2 ||
			!home.Cohorts[0].WeekStart.Equal(trWeek) {
			t.Fatalf("home cohorts: %d %+v", home.TotalCohorts, home.Cohorts)
		}
		if len(home.Trading) != 2 || home.Trading[0].LatestCohort != id || home.Trading[1].LatestCohort != id {
			t.Fatalf("home trading rows %+v", home.Trading)
		}
		var lb trading.LeaderboardJSON
		e.get("/api/v1/leaderboard?track=trading", 200, &lb)
		if len(lb.Rows) != 2 || lb.Rows[0].LatestCohort != id {
			t.Fatalf("trading leaderboard %+v", lb.Rows)
		}
		for path, wants := range map[string][]string{
			"/": {fmt.Sprintf(`<a href="/cohorts/%d">Cohort&nbsp;%d</a>`, id, id), "1 weekly cohort so far.", "2026-03-01",
				fmt.Sprintf(`<a href="/cohorts/%d">Agent A</a>`, id)},
			"/leaderboard":                 {fmt.Sprintf(`<a href="/cohorts/%d">Agent A</a>`, id), fmt.Sprintf(`<a href="/cohorts/%d">Agent B</a>`, id)},
			fmt.Sprintf("/cohorts/%d", id): {`<summary title="a">Agent A: 1 position, 2 trades`},
		} {
			html := htmlPage(t, e.url+path)
			for _, want := range wants {
				if !strings.Contains(html, want) {
					t.Errorf("%s lacks %q", path, want)
				}
			}
			if strings.Contains(html, `href="/agents/`) {
				t.Errorf("%s links a trading agent to an agent page, which it has not", path)
			}
		}
	})
}

// htmlPage GETs the page at url: 200 and HTML, or the test fails.
func htmlPage(t testing.TB, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	return string(b)
}
