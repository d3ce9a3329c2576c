package web_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ethereum/go-ethereum/common"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/clock"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/internal/web/view"
)

// browserAccept is the Accept header Chromium sends for a page.
const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,image/apng,*/*;q=0.8"

// request GETs (or sends method to) u with an Accept header ("" for none).
func request(t testing.TB, method, u, accept string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

// getJSONLink GETs a JSON page into v and returns its Link header's next URL.
func (e *env) getJSONLink(path string, v any) string {
	e.t.Helper()
	resp, body := request(e.t, "GET", e.url+path, "")
	if resp.StatusCode != 200 {
		e.t.Fatalf("GET %s: %d %s", path, resp.StatusCode, body)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		e.t.Fatalf("GET %s: %v", path, err)
	}
	m := regexp.MustCompile(`^<([^>]+)>; rel="next"$`).FindStringSubmatch(resp.Header.Get("Link"))
	if m == nil {
		return ""
	}
	return m[1]
}

// The question browser lists every market newest first with its status,
// category, source, close time, price and resolution; its filters select
// as the store does, its pages follow Link rel="next" (and the page's
// next link) through every market once; a filter value no market has is
// refused naming those allowed, on the page and its JSON alike.
func TestMarketBrowser(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		e := startServer(t, db, clock.New(t0).Now, forecast.Domain{})
		ms := seedMarkets(t, db, 9, t0.Add(10*24*time.Hour))
		multi := &arena.Market{Source: arena.SourceSim, Origin: arena.SourceKalshi, SourceID: "who", Kind: arena.KindMarket, Question: "Who wins the cup?", Category: "sports",
			Type: arena.Multi, Outcomes: []string{"Lakers", "Celtics", "Heat"}, Prices: map[string]float64{"Lakers": 0.3, "Celtics": 0.5, "Heat": 0.2},
			CloseTime: t0.Add(48 * time.Hour), Status: arena.StatusOpen}
		if _, err := db.SaveMarkets(context.Background(), []*arena.Market{multi}); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ResolveMarket(context.Background(), ms[2].ID, "NO", t0); err != nil {
			t.Fatal(err)
		}

		var v view.MarketsPageJSON
		e.getJSONLink("/api/v1/pages/markets", &v)
		if v.Total != 10 || len(v.Markets) != 10 || v.NextCursor != nil || v.Limit != 50 {
			t.Fatalf("all markets: total %d, %d rows, next %v, limit %d", v.Total, len(v.Markets), v.NextCursor, v.Limit)
		}
		if v.Markets[0].ID != multi.ID || v.Markets[0].PriceOutcome != "Celtics" || *v.Markets[0].Price != 0.5 {
			t.Errorf("newest first, with the leading outcome's price: %+v", v.Markets[0])
		}
		last := v.Markets[len(v.Markets)-1]
		if last.ID != ms[0].ID || last.PriceOutcome != arena.Yes || *last.Price != ms[0].Prices[arena.Yes] || *last.CloseTime != ms[0].CloseTime.Format(time.RFC3339) {
			t.Errorf("oldest market row %+v", last)
		}
		if !slices.Equal(v.Venues, []string{arena.SourceKalshi, "test"}) || v.Markets[0].Venue != arena.SourceKalshi || v.Markets[1].Venue != "test" {
			t.Errorf("venues: %v; rows of %q, %q", v.Venues, v.Markets[0].Venue, v.Markets[1].Venue)
		}
		if !slices.Equal(v.Sources, []string{arena.SourceSim, "test"}) || len(v.Categories) != 8 || !slices.Equal(v.Statuses, []string{"open", "closed", "resolved"}) {
			t.Errorf("filter values: %v %v %v", v.Sources, v.Categories, v.Statuses)
		}

		// Filters.
		for q, want := range map[string][]int64{
			"status=resolved":             {ms[2].ID},
			"category=sports":             {multi.ID, ms[1].ID},
			"source=sim":                  {multi.ID},
			"source=test&category=sports": {ms[1].ID},
			"venue=kalshi":                {multi.ID},
			"source=sim&venue=test":       nil,
		} {
			var f view.MarketsPageJSON
			e.getJSONLink("/api/v1/pages/markets?"+q, &f)
			var got []int64
			for _, m := range f.Markets {
				got = append(got, m.ID)
			}
			if !slices.Equal(got, want) || f.Total != len(want) {
				t.Errorf("%s: %v (total %d), want %v", q, got, f.Total, want)
			}
		}
		var res view.MarketsPageJSON
		e.getJSONLink("/api/v1/pages/markets?status=resolved", &res)
		if r := res.Markets[0].Resolution; r == nil || *r != arena.No {
			t.Errorf("resolved market: resolution %v", r)
		}

		// Paging: JSON by the Link header, HTML by its next link.
		var seen []int64
		next := "/api/v1/pages/markets?limit=3"
		for pages := 0; next != ""; pages++ {
			if pages > 4 {
				t.Fatal("paging does not end")
			}
			var p view.MarketsPageJSON
			next = e.getJSONLink(next, &p)
			if p.Total != 10 || len(p.Markets) > 3 {
				t.Fatalf("page %d: total %d, %d rows", pages, p.Total, len(p.Markets))
			}
			for _, m := range p.Markets {
				seen = append(seen, m.ID)
			}
			if (next == "") != (p.NextCursor == nil) {
				t.Fatalf("page %d: Link %q but next_cursor %v", pages, next, p.NextCursor)
			}
		}
		want := []int64{multi.ID}
		for i := len(ms) - 1; i >= 0; i-- {
			want = append(want, ms[i].ID)
		}
		if !slices.Equal(seen, want) {
			t.Errorf("paged through %v, want %v", seen, want)
		}
		resp, html := request(t, "GET", e.url+"/markets?limit=3&category=sports", browserAccept)
		if resp.StatusCode != 200 || resp.Header.Get("Link") != "" || strings.Contains(html, `rel="next"`) {
			t.Errorf("two sports markets in a page of three: %d, Link %q, or a next link", resp.StatusCode, resp.Header.Get("Link"))
		}
		resp, html = request(t, "GET", e.url+"/markets?limit=3", browserAccept)
		link := fmt.Sprintf(`<a rel="next" href="/markets?cursor=%d&amp;limit=3">`, want[2])
		if resp.StatusCode != 200 || !strings.Contains(html, link) || !strings.Contains(resp.Header.Get("Link"), fmt.Sprintf("cursor=%d", want[2])) {
			t.Errorf("HTML page 1 of 3 lacks its next link %s (Link %q)", link, resp.Header.Get("Link"))
		}
		for _, m := range []*arena.Market{multi, ms[9-1], ms[9-2]} {
			if !strings.Contains(html, fmt.Sprintf(`<a href="/markets/%d">%s</a>`, m.ID, m.Question)) {
				t.Errorf("HTML page 1 lacks market %d", m.ID)
			}
		}
		if !strings.Contains(html, "<small>Celtics</small> 0.50") || !strings.Contains(html, "2026-04-11 09:00") {
			t.Error("HTML page 1 lacks the leading outcome's price or the close time")
		}

		// Refusals name the values allowed, page and JSON alike.
		for _, c := range []struct{ query, msg string }{
			{"status=bogus", `status="bogus": want open, closed or resolved`},
			{"category=nope", `category "nope": no market has it (want crypto, culture, economics, politics, science, sports, tech or weather)`},
			{"source=nope", `source "nope": no market has it (want sim or test)`},
			{"venue=sim", `venue "sim": no market has it (want kalshi or test)`},
			{"limit=0", `limit="0": want an integer from 1 to 500`},
			{"cursor=x", `cursor="x": want an integer from 0`},
		} {
			for _, path := range []string{"/api/v1/pages/markets?", "/markets?"} {
				resp, body := request(t, "GET", e.url+path+c.query, "application/json")
				ae := errorOf(t, []byte(body))
				if resp.StatusCode != 400 || ae.Error.Code != "invalid_parameter" || ae.Error.Message != c.msg {
					t.Errorf("%s%s: %d %+v, want 400 %q", path, c.query, resp.StatusCode, ae.Error, c.msg)
				}
			}
		}
	})
}

// A market's page overlays and lists only the forecasts of rounds whose
// outcomes are triggered: while a second round holding the same market
// is still being revealed, none of its predictions appears on the market
// page, the question browser or their JSON, nor counts as a forecaster;
// once that round is triggered they do (both rounds' reveals closed, the
// market resolved: only the trigger tells them apart). The overlay's points carry each
// agent's forecast, the benchmark and the outcome, as in the JSON.
func TestMarketPageShowsOnlyTriggeredForecasts(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		t0 := time.Date(2026, 4, 1, 9, 0, 0, 0, time.UTC)
		clk := clock.New(t0)
		e := startServer(t, db, clk.Now, forecast.Domain{})
		ms := seedMarkets(t, db, 3, t0.Add(10*24*time.Hour))
		ms[0].History = []arena.PricePoint{{Outcome: arena.Yes, Time: t0.Add(58 * time.Minute), Price: 0.33, Source: arena.PriceSim},
			{Outcome: arena.Yes, Time: t0.Add(118 * time.Minute), Price: 0.41, Source: arena.PriceSim}}
		if _, err := db.SaveMarkets(context.Background(), ms[:1]); err != nil {
			t.Fatal(err)
		}
		r1 := e.createRound(ms[:2], t0.Add(time.Hour), t0.Add(time.Hour+time.Minute), t0.Add(3*time.Hour))
		r2 := e.createRound([]*arena.Market{ms[0], ms[2]}, t0.Add(2*time.Hour), t0.Add(2*time.Hour+time.Minute), t0.Add(4*time.Hour))
		a, b := newKey("overlay-a"), newKey("overlay-b")
		e.commit(a, r1.ID, []uint16{6100, 2300}, saltOf("a1"), common.Hash{}, 0)
		e.commit(a, r2.ID, []uint16{4321, 8765}, saltOf("a2"), common.Hash{}, 1)
		e.commit(b, r1.ID, []uint16{7100, 3300}, saltOf("b1"), common.Hash{}, 0) // never revealed: a forfeit
		clk.Set(t0.Add(2*time.Hour + 2*time.Minute))
		e.reveal(a, r1.ID, []uint16{6100, 2300}, saltOf("a1"), 2)
		e.reveal(a, r2.ID, []uint16{4321, 8765}, saltOf("a2"), 3)
		// Both rounds' reveals are closed and market 0 resolved; round 1
		// is triggered, round 2 not yet.
		clk.Set(t0.Add(4*time.Hour + time.Second))
		for i, o := range []string{"YES", "NO"} {
			e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[i].ID), map[string]string{"outcome": o}, adminToken, nil)
		}
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r1.ID), nil, adminToken, nil)

		secrets := []string{"0.4321", "0.8765", "4321", "8765", fmt.Sprintf("round #%d", r2.ID)}
		pages := []string{fmt.Sprintf("/markets/%d", ms[0].ID), fmt.Sprintf("/markets/%d", ms[2].ID), "/markets", "/markets?status=open",
			fmt.Sprintf("/api/v1/pages/markets/%d", ms[0].ID), fmt.Sprintf("/api/v1/pages/markets/%d", ms[2].ID), "/api/v1/pages/markets"}
		leaks := func() []string {
			var out []string
			for _, p := range pages {
				_, body := request(t, "GET", e.url+p, "")
				for _, s := range secrets {
					if strings.Contains(body, s) {
						out = append(out, p+": "+s)
					}
				}
			}
			return out
		}
		if l := leaks(); len(l) > 0 {
			t.Errorf("round %d is not triggered, yet its forecasts show: %v", r2.ID, l)
		}
		var v view.MarketPageJSON
		e.ok(200, "GET", fmt.Sprintf("/api/v1/pages/markets/%d", ms[0].ID), nil, "", &v)
		if v.Forecasters != 1 || !slices.Equal(v.Rounds, []uint64{r1.ID}) {
			t.Fatalf("market page: %d forecasters in rounds %v, want 1 in [%d]", v.Forecasters, v.Rounds, r1.ID)
		}
		byAgent := map[string]view.MarketForecastJSON{}
		for i, f := range v.Forecasts {
			if f.Round != r1.ID {
				t.Errorf("forecast of round %d listed", f.Round)
			}
			if i > 0 && f.Brier < v.Forecasts[i-1].Brier {
				t.Errorf("forecasts not best first: %v after %v", f.Brier, v.Forecasts[i-1].Brier)
			}
			byAgent[f.Agent] = f
		}
		mine, theirs, bench := byAgent[a.Address().Hex()], byAgent[b.Address().Hex()], byAgent[forecast.MarketAgent]
		if mine.Forecast == nil || *mine.Forecast != 0.61 || mine.Outcome != 1 || mine.Brier < 0.152 || mine.Brier > 0.1522 || !mine.At.Equal(t0.Add(time.Hour)) {
			t.Errorf("the revealed forecast: %+v", mine)
		}
		if !theirs.Forfeit || theirs.Forecast != nil || theirs.Brier != 1 {
			t.Errorf("the forfeit: %+v", theirs)
		}
		if !bench.Baseline || bench.Forecast == nil || *bench.Forecast != 0.33 || !near(bench.Brier, 0.67*0.67) {
			t.Errorf("the benchmark: %+v", bench)
		}
		if _, ok := byAgent[forecast.RandomAgent]; !ok {
			t.Error("no random baseline")
		}
		var list view.MarketsPageJSON
		e.getJSONLink("/api/v1/pages/markets", &list)
		for _, m := range list.Markets {
			if want := map[int64]int{ms[0].ID: 1, ms[1].ID: 1}[m.ID]; m.Forecasters != want {
				t.Errorf("market %d: %d forecasters, want %d", m.ID, m.Forecasters, want)
			}
		}
		html := e.page(fmt.Sprintf("/markets/%d", ms[0].ID))
		for _, want := range []string{
			fmt.Sprintf(`<title>%s, round #%d: 0.6100</title>`, a.Address().Hex(), r1.ID),
			fmt.Sprintf(`<title>Market (benchmark), round #%d: 0.3300</title>`, r1.ID),
			`<title>Outcome Yes, resolved`,
			"1 agent forecast this question in 1 scored round", `<span class="tag forfeit"`,
		} {
			if !strings.Contains(html, want) {
				t.Errorf("market page lacks %q", want)
			}
		}
		// The chart comes twice, wide and narrow, each with every point.
		if n := strings.Count(html, `<g class="pt"`); n != 6 || strings.Count(html, `<svg`) != 2 || !strings.Contains(html, `class="chart narrow"`) {
			t.Errorf("%d overlay points in %d charts, want the forecast, the benchmark and the outcome in the wide and the narrow chart", n, strings.Count(html, `<svg`))
		}

		// Once round 2 is triggered, its forecasts are public.
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/markets/%d/resolve", ms[2].ID), map[string]string{"outcome": "YES"}, adminToken, nil)
		// Its page says an operator resolved it, not its source.
		if p := e.page(fmt.Sprintf("/markets/%d", ms[2].ID)); !strings.Contains(p, "an operator's resolution") || strings.Contains(p, "the upstream source") {
			t.Error("the market page of an operator's resolution does not say so")
		}
		e.ok(200, "POST", fmt.Sprintf("/api/v1/admin/rounds/%d/trigger", r2.ID), nil, adminToken, nil)
		if l := leaks(); len(l) == 0 {
			t.Error("round 2's forecasts do not show after its trigger")
		}
		e.ok(200, "GET", fmt.Sprintf("/api/v1/pages/markets/%d", ms[0].ID), nil, "", &v)
		if !slices.Equal(v.Rounds, []uint64{r1.ID, r2.ID}) || v.Forecasters != 1 {
			t.Errorf("after round 2's trigger: rounds %v, %d forecasters", v.Rounds, v.Forecasters)
		}
	})
}

// The comparison draws each agent's cumulative Alpha and each later
// agent's per-round Brier difference from the first, equal to the rounds'
// scores; agents are named by address or display name; a list of one or
// five agents, an unknown, ambiguous, repeated or empty name answers 400,
// as JSON to clients and as a page to browsers.
func TestComparePage(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		generate(t, db, 5, 4, 3)
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: &rounds.Service{Store: db, Logger: quiet}})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		e := &env{t: t, url: hs.URL}
		addr := func(i int) string { return fmt.Sprintf("0x%040x", i+1) }

		var pick view.ComparePageJSON
		e.ok(200, "GET", "/api/v1/pages/compare", nil, "", &pick)
		if len(pick.Agents) != 0 || len(pick.Choices) < 5 {
			t.Fatalf("without agents: %d agents, %d choices", len(pick.Agents), len(pick.Choices))
		}
		var v view.ComparePageJSON
		e.ok(200, "GET", "/api/v1/pages/compare?agents="+url.QueryEscape("agent-001, 0X"+strings.ToUpper(addr(3))[2:]+","+addr(0)), nil, "", &v)
		if len(v.Agents) != 3 || v.Agents[0].Name != "agent-001" || v.Agents[1].Agent != addr(3) || v.Agents[2].Agent != addr(0) || len(v.Diffs) != 2 {
			t.Fatalf("compared %+v", v.Agents)
		}
		var board web.BoardJSON
		e.ok(200, "GET", "/api/v1/leaderboard", nil, "", &board)
		for _, ca := range v.Agents {
			var alphas []float64
			for i, h := range ca.History {
				if h.Alpha != nil {
					alphas = append(alphas, *h.Alpha)
				}
				var sum float64
				for _, x := range alphas {
					sum += x
				}
				if h.CumAlpha == nil || !near(*h.CumAlpha, sum/float64(len(alphas))) {
					t.Errorf("%s round %d: cumulative Alpha %v, want the mean %v", ca.Name, i, h.CumAlpha, sum/float64(len(alphas)))
				}
				if h.At.IsZero() {
					t.Errorf("%s round %s has no time", ca.Name, h.Round)
				}
			}
			if len(ca.History) != 4 || ca.Row == nil || !near(*ca.Row.Alpha, *ca.History[3].CumAlpha) {
				t.Errorf("%s: %d rounds, row %+v", ca.Name, len(ca.History), ca.Row)
			}
		}
		for k, d := range v.Diffs {
			other := v.Agents[k+1]
			if d.Agent != other.Agent || d.Versus != "agent-001" || len(d.Rounds) != 4 {
				t.Fatalf("difference %+v", d)
			}
			var sum float64
			for i, rd := range d.Rounds {
				want := other.History[i].Brier - v.Agents[0].History[i].Brier
				if rd.Round != other.History[i].Round || !near(rd.Diff, want) {
					t.Errorf("%s round %s: difference %v, want %v", d.Name, rd.Round, rd.Diff, want)
				}
				sum += rd.Diff
			}
			if d.Mean == nil || !near(*d.Mean, sum/4) || d.Better+d.Worse > 4 {
				t.Errorf("%s: mean %v, better %d, worse %d", d.Name, d.Mean, d.Better, d.Worse)
			}
		}
		html := e.page("/compare?agents=agent-001,agent-003")
		for _, want := range []string{`<h1><span class="nw">agent-001</span> vs <span class="nw">agent-003</span></h1>`, `<title id="cumalpha-title">Cumulative Alpha</title>`,
			`<title id="brierdiff-title">Per-round Brier difference from agent-001</title>`, `value="` + addr(1) + `,` + addr(3) + `"`} {
			if !strings.Contains(html, want) {
				t.Errorf("compare page lacks %q", want)
			}
		}

		for _, c := range []struct{ agents, msg string }{
			{"agent-001", "agents: want 2 to 4 agents, comma-separated addresses or names (got 1)"},
			{"agent-000,agent-001,agent-002,agent-003,agent-004", "agents: want 2 to 4 agents, comma-separated addresses or names (got 5)"},
			{"agent-001,nobody", `agent "nobody" has no scored forecasts (the leaderboard lists the agents)`},
			{"agent-001,agent-003,", `agents "agent-001,agent-003,": an empty name between commas`},
			{"agent-001,0X0000000000000000000000000000000000000002", `agent "0X0000000000000000000000000000000000000002" is named twice`},
		} {
			q := "?agents=" + url.QueryEscape(c.agents)
			resp, body := request(t, "GET", hs.URL+"/api/v1/pages/compare"+q, browserAccept)
			ae := errorOf(t, []byte(body))
			if resp.StatusCode != 400 || ae.Error.Code != "invalid_parameter" || ae.Error.Message != c.msg {
				t.Errorf("%s: %d %+v, want 400 %q", c.agents, resp.StatusCode, ae.Error, c.msg)
			}
			resp, body = request(t, "GET", hs.URL+"/compare"+q, browserAccept)
			if resp.StatusCode != 400 || !strings.Contains(body, "<strong>"+htmlEscape(c.msg)+"</strong>") || !strings.Contains(body, `<a href="/compare">/compare without these parameters</a>`) {
				t.Errorf("%s: page %d lacks the message and the way back: %.300s", c.agents, resp.StatusCode, between(body, "<main", "</main>"))
			}
		}
		if n := srv.InternalErrors(); n != 0 {
			t.Errorf("%d internal errors", n)
		}
	})
}

func htmlEscape(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&#34;", "'", "&#39;").Replace(s)
}

// A browser (Accept ranking text/html first) gets every error outside
// /api/ as a page with the site's navigation, the error and where to go
// next, with the error's status; every other client, and every request
// under /api/, gets the JSON error shape with the same status.
func TestErrorPages(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		seedMarkets(t, db, 1, time.Now().Add(48*time.Hour))
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: &rounds.Service{Store: db, Logger: quiet}})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		for _, c := range []struct {
			name, method, path, accept string
			status                     int
			html                       bool
			want                       []string // in the page, or the JSON error's code and message
		}{
			{"unknown page, browser", "GET", "/no/such/page", browserAccept, 404, true,
				[]string{"no route for GET /no/such/page", `<a href="/markets">Browse the questions</a>`, `<a href="/leaderboard">`}},
			{"unknown page, JSON client", "GET", "/no/such/page", "application/json", 404, false, []string{"route_not_found", "no route for GET /no/such/page"}},
			{"unknown page, curl", "GET", "/no/such/page", "*/*", 404, false, []string{"route_not_found"}},
			{"unknown page, no Accept", "GET", "/no/such/page", "", 404, false, []string{"route_not_found"}},
			{"JSON ranked above HTML", "GET", "/no/such/page", "text/html;q=0.5, application/json", 404, false, []string{"route_not_found"}},
			{"HTML refused", "GET", "/no/such/page", "text/html;q=0, */*;q=0.1", 404, false, []string{"route_not_found"}},
			{"API route, browser", "GET", "/api/v1/no/such", browserAccept, 404, false, []string{"route_not_found"}},
			{"API page data, browser", "GET", "/api/v1/pages/markets?status=bogus", browserAccept, 400, false,
				[]string{"invalid_parameter", `status="bogus": want open, closed or resolved`}},
			{"agent that is not an address", "GET", "/agents/nobody", browserAccept, 404, true,
				[]string{`<ul class="next"><li><a href="/leaderboard">`}},
			{"agent that is not an address, JSON", "GET", "/agents/nobody", "", 404, false, []string{"not_found"}},
			{"unknown market", "GET", "/markets/999", browserAccept, 404, true, []string{"market 999 not found", `<ul class="next"><li><a href="/markets">`}},
			{"unknown round", "GET", "/rounds/999", browserAccept, 404, true, []string{`<ul class="next"><li><a href="/">`}},
			{"bad filter", "GET", "/markets?status=bogus", browserAccept, 400, true,
				[]string{"status=&#34;bogus&#34;: want open, closed or resolved", `<a href="/markets">/markets without these parameters</a>`}},
			{"wrong method", "POST", "/leaderboard", browserAccept, 405, true, []string{"method POST not allowed on /leaderboard (allowed: GET, HEAD)"}},
		} {
			t.Run(c.name, func(t *testing.T) {
				resp, body := request(t, c.method, hs.URL+c.path, c.accept)
				if resp.StatusCode != c.status {
					t.Errorf("status %d, want %d", resp.StatusCode, c.status)
				}
				if c.status == 405 && resp.Header.Get("Allow") != "GET, HEAD" {
					t.Errorf("Allow %q", resp.Header.Get("Allow"))
				}
				if !c.html {
					ae := errorOf(t, []byte(body))
					if ae.Error.Code != c.want[0] || (len(c.want) > 1 && ae.Error.Message != c.want[1]) {
						t.Errorf("JSON error %+v, want %v", ae.Error, c.want)
					}
					return
				}
				if ct := resp.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" || !strings.Contains(resp.Header.Get("Vary"), "Accept") {
					t.Errorf("content type %q, Vary %q", ct, resp.Header.Get("Vary"))
				}
				for _, want := range append(c.want, `<nav><a href="/">Home</a>`, fmt.Sprintf("<h1>%d: %s</h1>", c.status, http.StatusText(c.status)), "</footer>") {
					if !strings.Contains(body, want) {
						t.Errorf("page lacks %q: %.400s", want, between(body, "<main", "</main>"))
					}
				}
			})
		}
		if n := srv.InternalErrors(); n != 0 {
			t.Errorf("%d internal errors", n)
		}
	})
}

// Every page's footer links its JSON with the page's own query, and that
// link answers: the JSON twin accepts every parameter the page does (the
// leaderboard's columns and preliminary were once refused there, and a
// misnamed provisional accepted and ignored).
func TestFooterJSONLinks(t *testing.T) {
	t.Parallel()
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		generate(t, db, 3, 2, 4)
		srv := web.New(web.Parts{Markets: db, DB: db, Logger: quiet, Forecast: &rounds.Service{Store: db, Logger: quiet}})
		hs := httptest.NewServer(srv.Handler())
		defer hs.Close()
		footer := regexp.MustCompile(`This page's data as JSON: <a href="([^"]+)">`)
		for _, page := range []string{"/", "/leaderboard?columns=all&preliminary=hide&sort=brier&window=90d", "/markets?status=resolved&limit=2",
			"/markets/1", "/rounds/1", "/compare?agents=agent-000,agent-001", "/compare", "/methodology"} {
			m := footer.FindStringSubmatch(htmlPage(t, hs.URL+page))
			if m == nil {
				t.Errorf("%s: no JSON link in the footer", page)
				continue
			}
			link := strings.ReplaceAll(m[1], "&amp;", "&")
			resp, body := request(t, "GET", hs.URL+link, "")
			if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s: its JSON %s answers %d %.200s", page, link, resp.StatusCode, body)
			}
		}
		var v view.LeaderboardPageJSON
		e := &env{t: t, url: hs.URL}
		e.ok(200, "GET", "/api/v1/pages/leaderboard?columns=all&preliminary=hide", nil, "", &v)
		if v.Columns != "all" || !v.HidePrelim {
			t.Errorf("leaderboard JSON: columns %q, hide_preliminary %v", v.Columns, v.HidePrelim)
		}
		if st, _ := e.call("GET", "/api/v1/pages/leaderboard?provisional=hide", nil, ""); st != 400 {
			t.Errorf("provisional=hide, which nothing reads: %d, want 400", st)
		}
	})
}
