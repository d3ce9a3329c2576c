package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
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

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/internal/web/view"
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
	narrowRe   = regexp.MustCompile(`(?s)<svg[^>]*class="chart narrow".*?</svg>`)
	nwRe       = regexp.MustCompile(`<span class="nw">([^<]*)</span>`)
	resourceRe = regexp.MustCompile(`<(?:link|script|img|iframe|source)\b[^>]*\b(?:href|src)="([^"]*)"`)
	plotRe     = regexp.MustCompile(`<rect class="plot" x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)"`)
	pointRe    = regexp.MustCompile(`<g class="pt" transform="translate\(([-\d.]+) ([-\d.]+)\)"><title>([^<]*)</title>`)
)

// widths are a phone's, a laptop's and a wide screen's.
var widths = []int{390, 1400, 2600}

// pagesHarness is a test-only page that loads each of the pages (a JSON
// list) in turn in a same-origin frame {{w}} pixels wide and writes what
// it measured of each into its DOM as JSON: the page's scroll width and
// viewport width, the leaderboard's visible column heads, the tables whose
// key columns are out of view, the scroll hints, the links of its footer
// and, when asked, the page's DOM. The dashboard itself runs no script.
const pagesHarness = `<!doctype html><html><body style="margin:0"><script>
const pages = %s, w = %d, withDOM = %t, out = [];
// A failure of the harness itself ends it with its message.
const fail = m => { const r = document.createElement("pre"); r.id = "failed"; r.textContent = String(m); document.body.appendChild(r); };
window.addEventListener("unhandledrejection", ev => fail(ev.reason && ev.reason.stack || ev.reason));
window.addEventListener("error", ev => fail(ev.message));
const f = document.createElement("iframe");
f.style.cssText = "width:" + w + "px;height:1200px;border:0";
let i = 0;
// Boxes whose table is cut off and scrolls must say so in words: each
// has the scroll hint's animation on its own scroll timeline and the
// hint's image (TestScrollHint checks that these show the hint exactly
// while columns are out of view; a page in a frame here gets too few
// animation frames under virtual time to read it reliably).
const unhintedBoxes = d => [...d.querySelectorAll("div.scroll")].filter(b => {
  const cs = getComputedStyle(b);
  return b.scrollWidth > b.clientWidth + 1 && !(cs.animationName === "more-columns" && cs.animationTimeline === "scroll(self inline)" && cs.backgroundImage.includes("/assets/more.svg"));
}).map(b => ((b.querySelector("table") || b).id || b.textContent.trim().slice(0, 30)) + " (" + b.scrollWidth + " px in " + b.clientWidth + ")");
f.onload = () => {
  const d = f.contentDocument, e = d.documentElement;
  const unhinted = unhintedBoxes(d);
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
  const widths = ["body > header", "body > main", "body > footer"].map(s => Math.round(d.querySelector(s).getBoundingClientRect().width));
  // Words of table cells broken across lines (a word's range with more than
  // one line box): a line may end at a space or after a hyphen, but not
  // inside a word or a date; digests and addresses (code, .wrap) may break
  // anywhere. Agents' names (td.agent) may not break even after a hyphen.
  const broken = [];
  const lines = rects => new Set([...rects].map(x => Math.round(x.top))).size;
  for (const c of d.querySelectorAll("td, th")) {
    if (c.closest("code, .wrap") || c.getBoundingClientRect().width === 0) continue;
    const walk = d.createTreeWalker(c, NodeFilter.SHOW_TEXT), words = c.classList.contains("agent") ? /\S+/g : /\d{4}-\d\d-\d\d|[^\s-]+/g;
    for (let n; (n = walk.nextNode()); ) {
      for (const m of n.data.matchAll(words)) {
        if (m[0].length > 24) continue;
        const rg = d.createRange();
        rg.setStart(n, m.index); rg.setEnd(n, m.index + m[0].length);
        if (lines(rg.getClientRects()) > 1) broken.push(m[0]);
      }
    }
  }
  for (const n of d.querySelectorAll(".nw, code.addr, .t")) {
    if (n.getBoundingClientRect().width > 0 && lines(n.getClientRects()) > 1) broken.push(n.textContent);
  }
  // Every table on screen names its key columns (th.key): with its heads
  // shown, each key column lies inside the box it scrolls in before any
  // scrolling; set as cards (no heads), the cards fit the box.
  const tables = [];
  for (const tb of d.querySelectorAll("main table")) {
    if (tb.getBoundingClientRect().width === 0) continue;
    const box = tb.closest(".scroll") || d.querySelector("main"), br = box.getBoundingClientRect();
    const keys = [...tb.querySelectorAll("thead th.key")], out = [];
    if (keys.length === 0) out.push("no key column");
    if (tb.tHead && getComputedStyle(tb.tHead).display !== "none") {
      for (const th of keys) {
        const r = th.getBoundingClientRect();
        if (r.width === 0 || r.left < br.left - 1 || r.right > br.right + 1) out.push(th.textContent.trim());
      }
    } else if (box.scrollWidth > box.clientWidth + 1) out.push("cards wider than the box");
    if (out.length) tables.push((tb.id || tb.querySelector("th, td").textContent.trim()) + ": " + out.join(", "));
  }
  const links = [...d.querySelectorAll("body > footer a")].map(a => a.getAttribute("href"));
  out.push({path: pages[i], scroll: e.scrollWidth, inner: f.contentWindow.innerWidth, heads: heads, minFont: minFont, widths: widths, broken: broken,
    tables: tables, unhinted: unhinted, links: links, dom: withDOM ? e.outerHTML : ""});
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
	MinFont float64  `json:"minFont"`
	Widths  []int    `json:"widths"` // of header, main and footer
	Broken  []string `json:"broken"` // words of table cells, names, addresses and dates broken across lines
	// Tables lists the tables whose key columns are out of view, with them.
	Tables   []string `json:"tables"`
	Unhinted []string `json:"unhinted"`
	Links    []string `json:"links"` // of the footer: the page's JSON, the API description
}

// Every kind of page of a finished demo (home, leaderboard, questions,
// market, round, agent, cohort, oracle, oracle market, methodology,
// comparison, an error page) and the human board's pages, rendered by a
// real headless Chromium that may resolve no host but 127.0.0.1, at a
// phone's, a laptop's and a wide screen's width: none overflows the page
// horizontally (wide tables scroll in their own box, which says so in
// words while columns are out of view, and only then), every table's key
// columns are in view before any scrolling (or its rows are cards that
// fit), no word, name, address or date breaks across lines, none logs to
// the console or loads anything from another host, each page's JSON link
// answers 200, each draws its charts with axes and shows the same figures
// as its JSON; the leaderboard shows its short columns by default and the
// market page's forecast overlay puts every revealed forecast and
// benchmark where its JSON says, a round's side by side. One demo database
// serves every page but the human board's, whose round a store of its own
// holds; with ARENA_SCREENSHOT_DIR set, a screenshot of each page at each
// width goes there.
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
	humans := log.wrap(humanBoard(t))
	for _, p := range []string{"/backtest/humans", "/backtest/humans/", "/api/v1/pages/backtest/humans", "/api/v1/pages/backtest/humans/"} {
		mux.Handle(p, humans)
	}
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

	var lb view.LeaderboardPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/leaderboard", &lb)
	top := lb.Forecast[0]
	if len(lb.Categories) == 0 {
		t.Fatal("no market categories to filter by")
	}
	filtered := "/leaderboard?window=90d&category=" + lb.Categories[0]
	var flb view.LeaderboardPageJSON
	getJSON(t, srv.URL+"/api/v1/pages"+filtered, &flb)
	if flb.Category != lb.Categories[0] || len(flb.Forecast) == 0 {
		t.Fatalf("filtered leaderboard %+v", flb)
	}
	var round view.RoundPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/rounds/1", &round)
	var agent view.AgentPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/agents/"+top.Agent, &agent)
	var cohort view.CohortPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/cohorts/1", &cohort)
	// The first market of scored round 1 with scored forecasts (a voided
	// market has none).
	var marketID int64
	var market view.MarketPageJSON
	for _, m := range round.Markets {
		market = view.MarketPageJSON{}
		if getJSON(t, fmt.Sprintf("%s/api/v1/pages/markets/%d", srv.URL, m.MarketID), &market); market.Forecasters > 0 {
			marketID = m.MarketID
			break
		}
	}
	if marketID == 0 {
		t.Fatal("no market of scored round 1 has forecasts")
	}
	var markets view.MarketsPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/markets", &markets)
	compare := "/compare?agents=" + lb.Forecast[0].Agent + "," + lb.Forecast[1].Agent
	var cmpv view.ComparePageJSON
	getJSON(t, srv.URL+"/api/v1/pages"+compare, &cmpv)
	var orc view.OraclePageJSON
	getJSON(t, srv.URL+"/api/v1/pages/oracle", &orc)
	var home view.HomeJSON
	getJSON(t, srv.URL+"/api/v1/pages/home", &home)
	if !home.HasOracle || len(home.Oracle) == 0 {
		t.Fatal("the demo resolved no market through the oracle: no oracle market page to show")
	}
	var orm view.OracleMarketPageJSON
	getJSON(t, fmt.Sprintf("%s/api/v1/pages/oracle/%d", srv.URL, home.Oracle[0].MarketID), &orm)
	var hb view.HumanBoardPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/backtest/humans", &hb)
	// A dataset question of several dates and a market question.
	var dataset, market1 *view.HumanQuestionJSON
	for i, q := range hb.Questions {
		switch {
		case q.Kind == "dataset" && len(q.Items) > 1 && dataset == nil:
			dataset = &hb.Questions[i]
		case q.Kind == "market" && market1 == nil:
			market1 = &hb.Questions[i]
		}
	}
	if len(hb.Rows) < 3 || dataset == nil || market1 == nil {
		t.Fatalf("human board: %d rows, questions %+v", len(hb.Rows), hb.Questions)
	}
	var hi view.HumanItemPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/backtest/humans/"+dataset.Items[1].Item, &hi)
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
		{"humans", "/backtest/humans", 0, humansFigures(hb, dataset)},
		{"human-item", "/backtest/humans/" + dataset.Items[1].Item, 0, []string{`<h1 class="question">` + hi.Brief + "</h1>", hi.Question[len(hi.Question)-40:],
			`href="/backtest/humans/` + dataset.Items[0].Item + `"`}},
		{"human-market", "/backtest/humans/" + market1.Items[0].Item, 0, []string{market1.Question}},
		{"error", missing, 0, []string{"<h1>404: Not Found</h1>", "no route for GET " + missing, `<a href="/markets">Browse the questions</a>`}},
	}
	for _, p := range pages {
		harness.pages = append(harness.pages, p.path)
	}
	run := func(t *testing.T, args ...string) (string, string) { return headless(t, browser, args...) }
	resultRe := regexp.MustCompile(`(?s)<pre id="result">(.*?)</pre>`)
	failedRe := regexp.MustCompile(`(?s)<pre id="failed">(.*?)</pre>`)
	links := map[string][]string{} // the footers' links, and the pages that show each
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
			if m := failedRe.FindStringSubmatch(dom); m != nil {
				t.Fatalf("the harness failed: %s", html.UnescapeString(m[1]))
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
				if len(g.Unhinted) > 0 {
					t.Errorf("%s at %d px: tables that scroll without the scroll hint: %q", p.path, w, g.Unhinted)
				}
				if len(g.Tables) > 0 {
					t.Errorf("%s at %d px: key columns out of view: %q", p.path, w, g.Tables)
				}
				if p.name != "error" && (len(g.Links) != 2 || !strings.HasPrefix(g.Links[0], "/api/v1/pages/")) {
					t.Errorf("%s at %d px: footer links %q, want the page's JSON and the API description", p.path, w, g.Links)
				}
				for _, l := range g.Links {
					links[l] = append(links[l], p.path)
				}
				if p.name == "leaderboard" && !slices.Equal(g.Heads, []string{"#", "Agent", "Score [95% CI]", "Forecasts", "Brier ±SE", "Alpha ±SE"}) {
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
					// The board shows questions by their first sentence: the
					// worked example is on their own pages only.
					if shows := strings.Contains(g.DOM, "e.g. If the forecast due date"); shows != (p.name == "human-item") {
						t.Errorf("%s: shows a dataset question's worked example: %v, want %v", p.name, shows, !shows)
					}
				}
				if shots != "" && p.name != "leaderboard-sorted" && p.name != "leaderboard-filtered" && p.name != "human-market" { // variants of a page: no screenshot of their own
					run(t, fmt.Sprintf("--window-size=%d,1100", w), "--screenshot="+filepath.Join(shots, fmt.Sprintf("%s-%d.png", p.name, w)), srv.URL+p.path)
				}
			}
		})
	}
	// Every page's JSON link (and the API description) answers 200.
	for l, from := range links {
		resp, err := http.Get(srv.URL + l)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("the JSON link %s of %q answers %d", l, from[0], resp.StatusCode)
		}
	}
	log.mu.Lock()
	defer log.mu.Unlock()
	if !strings.Contains(strings.Join(log.paths, " "), "/assets/style.css") {
		t.Errorf("the browser never fetched the stylesheet from this server: %v", log.paths)
	}
	if !strings.Contains(strings.Join(log.paths, " "), "/assets/more.svg") {
		t.Errorf("the browser never fetched the scroll hint from this server: %v", log.paths)
	}
}

// headless runs the browser headless with args, resolving no host but
// 127.0.0.1, and returns its output and its log.
func headless(t *testing.T, browser string, args ...string) (string, string) {
	t.Helper()
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

// hintPage holds three boxes of the dashboard's scroll class with the
// dashboard's stylesheet: a table wider than its box, one that fits, and
// a wide one scrolled to its end. After a few animation frames it writes
// each box's --more (the width of its "more columns" hint) and bottom
// padding (the room the hint takes) into its DOM.
const hintPage = `<!doctype html><html><head><link rel="stylesheet" href="/assets/style.css"></head><body>
<div class="scroll" id="over" style="width:300px"><table><tr><td>a cell far wider than the box it scrolls in, so columns are out of view</td></tr></table></div>
<div class="scroll" id="fits" style="width:300px"><table><tr><td>short</td></tr></table></div>
<div class="scroll" id="end" style="width:300px"><table><tr><td>a cell far wider than the box it scrolls in, so columns are out of view</td></tr></table></div>
<script>
document.getElementById("end").scrollLeft = 1e6;
const frames = n => n > 0 ? requestAnimationFrame(() => frames(n - 1)) : done();
const done = () => {
  const r = document.createElement("pre");
  r.id = "result";
  r.textContent = JSON.stringify(["over", "fits", "end"].map(id => { const cs = getComputedStyle(document.getElementById(id)); return [cs.getPropertyValue("--more"), cs.paddingBottom]; }));
  document.body.appendChild(r);
};
frames(3);
</script></body></html>`

// The scroll hint says "more columns: scroll →" under a table exactly
// while some of its columns are out of view: a box that fits shows none
// and takes no room for it, and neither does a box scrolled to its end.
func TestScrollHint(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	ctx := context.Background()
	db, err := store.Open(ctx, "sqlite:"+filepath.Join(t.TempDir(), "hint.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	mux := http.NewServeMux()
	mux.Handle("/", web.New(web.Parts{Markets: db, DB: db, Logger: slog.New(slog.DiscardHandler)}).Handler())
	mux.HandleFunc("/__hint", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, hintPage) })
	srv := httptest.NewServer(mux)
	defer srv.Close()
	// On a loaded machine headless Chromium can dump the DOM before the
	// page's animation frames have run: a page without its result is
	// loaded again, up to three times (a wrong result is never retried).
	var dom string
	var m []string
	for try := 0; try < 3 && m == nil; try++ {
		dom, _ = headless(t, browser, "--virtual-time-budget=10000", "--window-size=800,600", "--dump-dom", srv.URL+"/__hint")
		m = regexp.MustCompile(`<pre id="result">(.*?)</pre>`).FindStringSubmatch(dom)
	}
	if m == nil {
		t.Fatalf("the hint page measured nothing: %.400s", dom)
	}
	var got [][2]string
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &got); err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"192px", "20.8px"}, {"0px", "0px"}, {"0px", "0px"}}
	if !slices.Equal(got, want) {
		t.Errorf("--more and padding of the boxes that scroll, fit and are scrolled to the end: %q, want %q", got, want)
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
	// A hyphenated word of a name is set in a span that keeps it on one line.
	dom = nwRe.ReplaceAllString(dom, "$1")
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

// checkOverlay finds on the market page's charts, wide and narrow, a
// titled point for every revealed forecast and benchmark of its JSON, at
// the height its probability gives on the chart's 0–1 axis, the points of
// one round side by side (none hiding another) and later rounds further
// right, and no other point but the outcome's.
func checkOverlay(t *testing.T, dom string, v view.MarketPageJSON) {
	t.Helper()
	for _, chart := range []string{svgRe.FindString(dom), narrowRe.FindString(dom)} {
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
		xs := map[uint64][]float64{}
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
			xs[f.Round] = append(xs[f.Round], p.x)
		}
		for r, x := range xs {
			slices.Sort(x)
			for k := 1; k < len(x); k++ {
				if x[k]-x[k-1] < 6 { // a marker is about 8 units wide
					t.Errorf("round %d's points drawn %v units apart, on top of each other: %v", r, x[k]-x[k-1], x)
				}
			}
		}
		for _, a := range v.Forecasts {
			for _, b := range v.Forecasts {
				if a.At.Before(b.At) && len(xs[a.Round]) > 0 && len(xs[b.Round]) > 0 && slices.Max(xs[a.Round]) >= slices.Min(xs[b.Round]) {
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
}

// humansFigures are what the human board page shows of its JSON: each
// forecaster, each question by its first sentence, and a dataset
// question's dates each once with its median, beside one cell of the
// question spanning its rows.
// textEscaper escapes text as Chromium serialises a text node.
var textEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func humansFigures(v view.HumanBoardPageJSON, dataset *view.HumanQuestionJSON) []string {
	var out []string
	for _, r := range v.Rows {
		out = append(out, r.Forecaster)
	}
	for _, q := range v.Questions {
		out = append(out, ">"+textEscaper.Replace(q.Question)+"</a>")
	}
	for _, it := range dataset.Items {
		out = append(out, fmt.Sprintf(`">%s</a></td><td data-label="median">%.3f</td>`, it.ResolutionDate, it.Median))
	}
	return append(out, `rowspan="`+strconv.Itoa(len(dataset.Items))+`"`)
}

func marketsFigures(v view.MarketsPageJSON) []string {
	out := []string{fmt.Sprintf("%d questions", v.Total)}
	for _, m := range v.Markets[:min(5, len(v.Markets))] {
		out = append(out, fmt.Sprintf(`<a href="/markets/%d">%s</a>`, m.ID, m.Question), fmt.Sprintf(`<td data-label="forecasters">%d</td>`, m.Forecasters))
	}
	return out
}

func marketFigures(v view.MarketPageJSON) []string {
	out := []string{v.Market.Question, fmt.Sprintf("%d agents forecast this question", v.Forecasters)}
	for _, f := range v.Forecasts {
		out = append(out, fmt.Sprintf("<td>%.4f</td>", f.Brier))
	}
	return out
}

func compareFigures(v view.ComparePageJSON) []string {
	var out []string
	for _, a := range v.Agents {
		out = append(out, a.Name)
	}
	for _, d := range v.Diffs {
		out = append(out, fmt.Sprintf("<td>%d</td><td>%+.4f</td>", len(d.Rounds), *d.Mean))
	}
	return out
}

func leaderboardFigures(t *testing.T, lb view.LeaderboardPageJSON) []string {
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

func roundFigures(r view.RoundPageJSON) []string {
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

func cohortFigures(c view.CohortPageJSON) []string {
	var out []string
	for _, a := range c.Agents {
		out = append(out, a.Name, fmt.Sprintf("%+.2f%%", a.PnLPct))
	}
	return out
}
