package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/web"
)

// chromium finds a headless browser, or skips (fails when CI requires one).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("ARENA_REQUIRE_CHROMIUM") == "1" {
		t.Fatal("no chromium on PATH, and ARENA_REQUIRE_CHROMIUM=1")
	}
	t.Skip("no chromium on PATH")
	return ""
}

// requestLog records every path the browser asked the server for.
type requestLog struct {
	mu    sync.Mutex
	paths []string
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		l.mu.Lock()
		l.paths = append(l.paths, r.URL.Path)
		l.mu.Unlock()
		h.ServeHTTP(w, r)
	})
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %d %s", url, resp.StatusCode, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

var (
	svgRe      = regexp.MustCompile(`(?s)<svg[^>]*class="chart".*?</svg>`)
	resourceRe = regexp.MustCompile(`<(?:link|script|img|iframe|source)\b[^>]*\b(?:href|src)="([^"]*)"`)
	plotRe     = regexp.MustCompile(`<rect class="plot" x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"`)
	pointRe    = regexp.MustCompile(`<g class="pt" transform="translate\(([-\d.]+) ([-\d.]+)\)"><title>([^<]*)</title>`)
)

// widths are a phone's, a laptop's and a wide screen's.
var widths = []int{390, 1400, 2600}

// pagesHarness is a test-only page that loads each of the pages (a JSON
// list) in turn in a same-origin frame {{w}} pixels wide and writes what
// it measured of each into its DOM as JSON: the page's scroll width and
// viewport width, the leaderboard's visible column heads and, when
// asked, the page's DOM. The dashboard itself runs no script.
const pagesHarness = `<!doctype html><html><body style="margin:0"><script>
const pages = %s, w = %d, withDOM = %t, out = [];
const f = document.createElement("iframe");
f.style.cssText = "width:" + w + "px;height:1200px;border:0";
let i = 0;
f.onload = () => {
  const d = f.contentDocument, e = d.documentElement;
  const heads = [...d.querySelectorAll("#leaderboard thead th")].filter(th => getComputedStyle(th).display !== "none").map(th => th.textContent.trim());
  // The smallest chart text as drawn: its font size times the scale of its
  // chart (shown width over viewBox width), over the charts on screen.
  let minFont = 0;
  for (const svg of d.querySelectorAll("svg.chart")) {
    const r = svg.getBoundingClientRect();
    if (r.width === 0) continue;
    const scale = r.width / svg.viewBox.baseVal.width;
    for (const t of svg.querySelectorAll("text")) {
      const px = parseFloat(getComputedStyle(t).fontSize) * scale;
      if (minFont === 0 || px < minFont) minFont = px;
    }
  }
  const widths = ["header", "main", "footer"].map(s => Math.round(d.querySelector(s).getBoundingClientRect().width));
  // Words of table cells broken across lines (a word's range with more than
  // one line box): a line may end at a space or after a hyphen, but not
  // inside a word or a date; digests and addresses (code, .wrap) may break
  // anywhere.
  const broken = [];
  for (const c of d.querySelectorAll("td, th")) {
    if (c.closest("code, .wrap") || c.getBoundingClientRect().width === 0) continue;
    const walk = d.createTreeWalker(c, NodeFilter.SHOW_TEXT);
    for (let n; (n = walk.nextNode()); ) {
      for (const m of n.data.matchAll(/\d{4}-\d\d-\d\d|[^\s-]+/g)) {
        if (m[0].length > 24) continue;
        const rg = d.createRange();
        rg.setStart(n, m.index); rg.setEnd(n, m.index + m[0].length);
        const lines = new Set([...rg.getClientRects()].map(x => Math.round(x.top)));
        if (lines.size > 1) broken.push(m[0]);
      }
    }
  }
  // Boxes whose table is cut off and scrolls: each must show the scroll hint.
  const unhinted = [...d.querySelectorAll("div.scroll")].filter(b => b.scrollWidth > b.clientWidth && !getComputedStyle(b).backgroundAttachment.includes("local")).length;
  out.push({path: pages[i], scroll: e.scrollWidth, inner: f.contentWindow.innerWidth, heads: heads, minFont: minFont, widths: widths, broken: broken, unhinted: unhinted, dom: withDOM ? e.outerHTML : ""});
  if (++i < pages.length) { f.src = pages[i]; return; }
  const r = document.createElement("pre");
  r.id = "result"; r.textContent = JSON.stringify(out);
  document.body.appendChild(r);
};
f.src = pages[0];
document.body.appendChild(f);
</script></body></html>`

// measured is what the harness reports of one page.
type measured struct {
	Path   string   `json:"path"`
	Scroll int      `json:"scroll"`
	Inner  int      `json:"inner"`
	Heads  []string `json:"heads"`
	DOM    string   `json:"dom"`
	// MinFont is the smallest chart text in CSS px as shown, 0 without charts.
	MinFont  float64  `json:"minFont"`
	Widths   []int    `json:"widths"` // of header, main and footer
	Broken   []string `json:"broken"` // words of table cells broken across lines
	Unhinted int      `json:"unhinted"`
}

// Every kind of page of a finished demo (home, leaderboard, questions,
// market, round, agent, cohort, oracle, oracle market, methodology,
// comparison, an error page), rendered by a real headless Chromium that
// may resolve no host but 127.0.0.1, at a phone's, a laptop's and a wide
// screen's width: none overflows the page horizontally (wide tables
// scroll in their own box), none logs to the console or loads anything
// from another host, each draws its charts with axes and shows the same
// figures as its JSON; the leaderboard shows its short columns by default
// and the market page's forecast overlay puts every revealed forecast and
// benchmark where its JSON says. One demo database serves every page;
// with ARENA_SCREENSHOT_DIR set, a screenshot of each page at each width
// goes there.
func TestDashboardInChromium(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	if testing.Short() {
		t.Skip("browser test: not in -short")
	}
	res, _ := played(t)
	var log requestLog
	var harness struct {
		sync.Mutex
		pages []string
	}
	mux := http.NewServeMux()
	mux.Handle("/", log.wrap(res.Handler))
	mux.HandleFunc("/__pages", func(w http.ResponseWriter, r *http.Request) {
		harness.Lock()
		list, _ := json.Marshal(harness.pages)
		harness.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		width, _ := strconv.Atoi(r.URL.Query().Get("w"))
		fmt.Fprintf(w, pagesHarness, list, width, r.URL.Query().Get("dom") == "1")
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	if len(res.Leaderboard.Rows) < 7 || len(res.Trading) == 0 {
		t.Fatalf("%d forecast and %d trading leaderboard rows", len(res.Leaderboard.Rows), len(res.Trading))
	}

	var lb web.LeaderboardPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/leaderboard", &lb)
	top := lb.Forecast[0]
	if len(lb.Categories) == 0 {
		t.Fatal("no market categories to filter by")
	}
	filtered := "/leaderboard?window=90d&category=" + lb.Categories[0]
	var flb web.LeaderboardPageJSON
	getJSON(t, srv.URL+"/api/v1/pages"+filtered, &flb)
	if flb.Category != lb.Categories[0] || len(flb.Forecast) == 0 {
		t.Fatalf("filtered leaderboard %+v", flb)
	}
	var round web.RoundPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/rounds/1", &round)
	var agent web.AgentPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/agents/"+top.Agent, &agent)
	var cohort web.CohortPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/cohorts/1", &cohort)
	// The first market of scored round 1 with scored forecasts (a voided
	// market has none).
	var marketID int64
	var market web.MarketPageJSON
	for _, m := range round.Markets {
		market = web.MarketPageJSON{}
		if getJSON(t, fmt.Sprintf("%s/api/v1/pages/markets/%d", srv.URL, m.MarketID), &market); market.Forecasters > 0 {
			marketID = m.MarketID
			break
		}
	}
	if marketID == 0 {
		t.Fatal("no market of scored round 1 has forecasts")
	}
	var markets web.MarketsPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/markets", &markets)
	compare := "/compare?agents=" + lb.Forecast[0].Agent + "," + lb.Forecast[1].Agent
	var cmpv web.ComparePageJSON
	getJSON(t, srv.URL+"/api/v1/pages"+compare, &cmpv)
	var orc web.OraclePageJSON
	getJSON(t, srv.URL+"/api/v1/pages/oracle", &orc)
	var home web.HomeJSON
	getJSON(t, srv.URL+"/api/v1/pages/home", &home)
	if !home.HasOracle || len(home.Oracle) == 0 {
		t.Fatal("the demo resolved no market through the oracle: no oracle market page to show")
	}
	var orm web.OracleMarketPageJSON
	getJSON(t, fmt.Sprintf("%s/api/v1/pages/oracle/%d", srv.URL, home.Oracle[0].MarketID), &orm)
	homeFigures := []string{top.Name, res.Trading[0].Name}
	if top.Score != nil {
		homeFigures = append(homeFigures, fmt.Sprintf("%.1f", *top.Score))
	}
	for _, o := range home.Oracle {
		homeFigures = append(homeFigures, fmt.Sprintf(`<a href="/oracle/%d">%d</a>`, o.MarketID, o.MarketID), fmt.Sprintf("%.3f", o.Composite))
	}
	// The error page: 404 with the site's navigation to a browser.
	const missing = "/no/such/page"
	req, _ := http.NewRequest("GET", srv.URL+missing, nil)
	req.Header.Set("Accept", "text/html,application/xhtml+xml,*/*;q=0.8")
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != 404 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("error page for a browser: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}

	f4 := func(p *float64, format string) string {
		if p == nil {
			t.Fatalf("missing figure for %s", format)
		}
		return fmt.Sprintf(format, *p)
	}
	pages := []struct {
		name, path string
		charts     int
		figures    []string // must appear in the rendered DOM
	}{
		{"home", "/", 0, homeFigures},
		{"leaderboard", "/leaderboard", 0, leaderboardFigures(t, lb)},
		{"leaderboard-sorted", "/leaderboard?sort=brier&q=informed", 0, []string{"informed"}},
		{"leaderboard-all", "/leaderboard?columns=all", 0, []string{"<details class=\"cols\" open=\"\">", "P(top 5%)"}},
		{"leaderboard-filtered", filtered, 0, append(leaderboardFigures(t, flb), lb.Categories[0]+" markets only", `<option value="90d" selected="">`)},
		{"markets", "/markets", 0, marketsFigures(markets)},
		{"market", fmt.Sprintf("/markets/%d", marketID), 1, marketFigures(market)},
		{"round", "/rounds/1", 0, roundFigures(round)},
		{"agent", "/agents/" + top.Agent, 3, []string{`id="agent-alpha">` + f4(agent.Row.Alpha, "%+.4f"), fmt.Sprintf("%.4f", agent.Row.Brier)}},
		{"compare", compare, 2, compareFigures(cmpv)},
		{"cohort", "/cohorts/1", 1, cohortFigures(cohort)},
		{"oracle", "/oracle", 0, []string{fmt.Sprintf("<strong>%d of %d</strong>", orc.Accuracy.Agreed, orc.Accuracy.N), "Waiting for an arbiter"}},
		{"oracle-market", fmt.Sprintf("/oracle/%d", orm.MarketID), 0, []string{orm.Question, fmt.Sprintf("%.3f", orm.Resolutions[0].Verdict.Composite)}},
		{"methodology", "/methodology", 0, []string{"Markets per round", "Starting cash"}},
		{"error", missing, 0, []string{"<h1>404: Not Found</h1>", "no route for GET " + missing, `<a href="/markets">Browse the questions</a>`}},
	}
	for _, p := range pages {
		harness.pages = append(harness.pages, p.path)
	}
	run := func(t *testing.T, args ...string) (string, string) {
		cctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, browser, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
			"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--enable-logging=stderr", "--v=0", "--user-data-dir=" + t.TempDir()}, args...)...)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium: %v\n%s", err, stderr.String())
		}
		return string(out), stderr.String()
	}
	resultRe := regexp.MustCompile(`(?s)<pre id="result">(.*?)</pre>`)
	shots := os.Getenv("ARENA_SCREENSHOT_DIR")
	for _, w := range widths {
		t.Run(strconv.Itoa(w), func(t *testing.T) {
			dom, stderr := run(t, "--virtual-time-budget=60000", "--window-size=2700,1300", "--dump-dom",
				fmt.Sprintf("%s/__pages?w=%d&dom=%d", srv.URL, w, map[bool]int{true: 1}[w == 1400]))
			for _, line := range strings.Split(stderr, "\n") {
				if (strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Failed to load resource")) && !strings.Contains(line, missing) {
					t.Errorf("console output: %s", line)
				}
			}
			m := resultRe.FindStringSubmatch(dom)
			if m == nil {
				t.Fatalf("the harness measured nothing: %.300s", dom)
			}
			var got []measured
			if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
				t.Fatal(err)
			}
			if len(got) != len(pages) {
				t.Fatalf("the harness measured %d of %d pages", len(got), len(pages))
			}
			for i, p := range pages {
				g := got[i]
				if g.Inner != w || g.Scroll > g.Inner {
					t.Errorf("%s at %d px: page %d px wide in a %d px viewport", p.path, w, g.Scroll, g.Inner)
				}
				if g.MinFont != 0 && g.MinFont < 11 {
					t.Errorf("%s at %d px: chart text drawn at %.1f px, want at least 11", p.path, w, g.MinFont)
				}
				if p.charts > 0 && g.MinFont == 0 {
					t.Errorf("%s at %d px: no chart on screen", p.path, w)
				}
				if len(g.Widths) != 3 || g.Widths[0] != g.Widths[1] || g.Widths[1] != g.Widths[2] {
					t.Errorf("%s at %d px: header, main and footer are %v px wide, want one width", p.path, w, g.Widths)
				}
				if len(g.Broken) > 0 {
					t.Errorf("%s at %d px: words broken across lines in table cells: %q", p.path, w, g.Broken)
				}
				if g.Unhinted > 0 {
					t.Errorf("%s at %d px: %d tables scroll without the scroll hint", p.path, w, g.Unhinted)
				}
				if p.name == "leaderboard" && !slices.Equal(g.Heads, []string{"#", "Agent", "Score [95% CI]", "Forecasts"}) {
					t.Errorf("leaderboard at %d px shows the columns %q, want the short view's", w, g.Heads)
				}
				if p.name == "leaderboard-all" && len(g.Heads) != 19 {
					t.Errorf("leaderboard with every column at %d px shows %d columns, want 19: %q", w, len(g.Heads), g.Heads)
				}
				if g.DOM != "" {
					checkPage(t, p.name, g.DOM, p.charts, p.figures)
					if p.name == "market" {
						checkOverlay(t, g.DOM, market)
					}
				}
				if shots != "" && p.name != "leaderboard-sorted" && p.name != "leaderboard-filtered" { // variants of a page: no screenshot of their own
					run(t, fmt.Sprintf("--window-size=%d,1100", w), "--screenshot="+filepath.Join(shots, fmt.Sprintf("%s-%d.png", p.name, w)), srv.URL+p.path)
				}
			}
		})
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if !strings.Contains(strings.Join(log.paths, " "), "/assets/style.css") {
		t.Errorf("the browser never fetched the stylesheet from this server: %v", log.paths)
	}
}

// checkPage checks a rendered page: it ended, loads only this host's
// resources, draws its charts with axes, title and marks, and shows the
// figures of its JSON.
func checkPage(t *testing.T, name, dom string, charts int, figures []string) {
	t.Helper()
	if !strings.Contains(dom, "</footer>") {
		t.Errorf("%s did not render: %.300s", name, dom)
		return
	}
	for _, m := range resourceRe.FindAllStringSubmatch(dom, -1) {
		if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
			t.Errorf("%s: resource %q is not served by this host", name, m[1])
		}
	}
	svgs := svgRe.FindAllString(dom, -1)
	if len(svgs) != charts {
		t.Errorf("%s: %d charts rendered, want %d", name, len(svgs), charts)
	}
	for i, s := range svgs {
		if !strings.Contains(s, `class="axis x"`) || !strings.Contains(s, `class="axis y"`) || !strings.Contains(s, "<title") ||
			!(strings.Contains(s, "<polyline") || strings.Contains(s, "<rect x=") || strings.Contains(s, `class="pt"`)) {
			t.Errorf("%s: chart %d lacks axes, title or marks: %.200s", name, i, s)
		}
	}
	for _, f := range figures {
		if !strings.Contains(dom, f) {
			t.Errorf("%s lacks %q from its JSON", name, f)
		}
	}
}

// checkOverlay finds on the market page's chart a titled point for every
// revealed forecast and benchmark of its JSON, at the height its
// probability gives on the chart's 0–1 axis, the forecasts of one round
// at one time and later rounds further right, and no other point but the
// outcome's.
func checkOverlay(t *testing.T, dom string, v web.MarketPageJSON) {
	t.Helper()
	chart := svgRe.FindString(dom)
	pm := plotRe.FindStringSubmatch(chart)
	if pm == nil {
		t.Fatal("market chart: no plot area")
	}
	num := func(s string) float64 { f, _ := strconv.ParseFloat(s, 64); return f }
	top, height := num(pm[2]), num(pm[4])
	type point struct{ x, y float64 }
	pts := map[string]point{}
	for _, m := range pointRe.FindAllStringSubmatch(chart, -1) {
		pts[html.UnescapeString(m[3])] = point{num(m[1]), num(m[2])}
	}
	xs := map[uint64]float64{}
	want := 0
	for _, f := range v.Forecasts {
		if f.Forecast == nil || f.Agent == "random" {
			continue
		}
		want++
		label := fmt.Sprintf("%s, round #%d: %.4f", f.Name, f.Round, *f.Forecast)
		p, ok := pts[label]
		if !ok {
			t.Errorf("market chart lacks the point %q", label)
			continue
		}
		if y := top + (1-*f.Forecast)*height; math.Abs(p.y-y) > 0.06 {
			t.Errorf("%q drawn at y %v, want %v", label, p.y, y)
		}
		if x, seen := xs[f.Round]; seen && x != p.x {
			t.Errorf("round %d's forecasts drawn at x %v and %v", f.Round, x, p.x)
		}
		xs[f.Round] = p.x
	}
	for _, a := range v.Forecasts {
		for _, b := range v.Forecasts {
			if a.At.Before(b.At) && xs[a.Round] >= xs[b.Round] {
				t.Errorf("round %d (at %s) drawn right of round %d (at %s)", a.Round, a.At, b.Round, b.At)
			}
		}
	}
	if r := v.Market.Resolution; r != nil && (*r == "Yes" || *r == "No") {
		want++
	}
	if len(pts) != want {
		t.Errorf("market chart has %d titled points, want %d (the revealed forecasts, the benchmarks and the outcome)", len(pts), want)
	}
}

func marketsFigures(v web.MarketsPageJSON) []string {
	out := []string{fmt.Sprintf("%d questions", v.Total)}
	for _, m := range v.Markets[:min(5, len(v.Markets))] {
		out = append(out, fmt.Sprintf(`<a href="/markets/%d">%s</a>`, m.ID, m.Question), fmt.Sprintf("<td>%d</td></tr>", m.Forecasters))
	}
	return out
}

func marketFigures(v web.MarketPageJSON) []string {
	out := []string{v.Market.Question, fmt.Sprintf("%d agents forecast this question", v.Forecasters)}
	for _, f := range v.Forecasts {
		out = append(out, fmt.Sprintf("<td>%.4f</td>", f.Brier))
	}
	return out
}

func compareFigures(v web.ComparePageJSON) []string {
	var out []string
	for _, a := range v.Agents {
		out = append(out, a.Name)
	}
	for _, d := range v.Diffs {
		out = append(out, fmt.Sprintf("<td>%d</td><td>%+.4f</td>", len(d.Rounds), *d.Mean))
	}
	return out
}

func leaderboardFigures(t *testing.T, lb web.LeaderboardPageJSON) []string {
	var out []string
	for _, r := range lb.Forecast {
		out = append(out, r.Name, fmt.Sprintf("%.4f", r.Brier))
		if r.Alpha != nil {
			out = append(out, fmt.Sprintf("%+.4f", *r.Alpha))
		}
		if r.AlphaCILo != nil {
			out = append(out, fmt.Sprintf("[%+.4f, %+.4f]", *r.AlphaCILo, *r.AlphaCIHi))
		}
		if v := r.VsLeader; v != nil && v.CILo != nil {
			out = append(out, fmt.Sprintf("%+.4f <small>[%+.4f, %+.4f]</small>", v.BrierDiff, *v.CILo, *v.CIHi))
		}
	}
	if lb.Trading == nil || len(lb.Trading.Rows) == 0 {
		t.Fatal("no trading leaderboard")
	}
	for _, r := range lb.Trading.Rows {
		out = append(out, r.Name, fmt.Sprintf("%+.2f%%", r.MeanReturnPct))
		if r.Cost != nil {
			out = append(out, fmt.Sprintf("$%.4f", float64(*r.Cost)/1e6))
		}
	}
	return out
}

func roundFigures(r web.RoundPageJSON) []string {
	out := []string{"outcomes frozen and scored"}
	for _, m := range r.Markets {
		out = append(out, m.Question)
	}
	for _, e := range r.Entries {
		if e.Brier != nil {
			out = append(out, fmt.Sprintf("%.4f", *e.Brier))
		}
	}
	return out
}

func cohortFigures(c web.CohortPageJSON) []string {
	var out []string
	for _, a := range c.Agents {
		out = append(out, a.Name, fmt.Sprintf("%+.2f%%", a.PnLPct))
	}
	return out
}
