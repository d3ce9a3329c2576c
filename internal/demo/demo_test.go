package demo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/demo"
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
)

// Every page type of a finished demo, rendered by a real headless
// Chromium that may resolve no host but 127.0.0.1: each answers 200, logs
// nothing to the console, loads only local resources, draws its charts
// with axes, and shows the same key figures as its JSON.
func TestDashboardInChromium(t *testing.T) {
	browser := chromium(t)
	if testing.Short() {
		t.Skip("browser test: not in -short")
	}
	ctx := context.Background()
	res, err := demo.Run(ctx, demo.Config{Seed: 3, Rounds: 6, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	var log requestLog
	srv := httptest.NewServer(log.wrap(res.Handler))
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
	marketID := round.Markets[0].MarketID
	var market web.MarketPageJSON
	getJSON(t, fmt.Sprintf("%s/api/v1/pages/markets/%d", srv.URL, marketID), &market)
	var orc web.OraclePageJSON
	getJSON(t, srv.URL+"/api/v1/pages/oracle", &orc)
	var home web.HomeJSON
	getJSON(t, srv.URL+"/api/v1/pages/home", &home)
	homeFigures := []string{top.Name, res.Trading[0].Name}
	if top.Score != nil {
		homeFigures = append(homeFigures, fmt.Sprintf("%.1f", *top.Score))
	}
	// The oracle's block: its latest resolutions, or (the demo runs no
	// model panel) the sentence that says there are none.
	if !home.HasOracle {
		t.Fatal("home page: no oracle block")
	}
	if len(home.Oracle) == 0 {
		homeFigures = append(homeFigures, "No market has gone through the oracle yet.")
	}
	for _, o := range home.Oracle {
		homeFigures = append(homeFigures, fmt.Sprintf(`<a href="/oracle/%d">%d</a>`, o.MarketID, o.MarketID), fmt.Sprintf("%.3f", o.Composite))
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
		{"round", "/rounds/1", 0, roundFigures(round)},
		{"agent", "/agents/" + top.Agent, 3, []string{`id="agent-alpha">` + f4(agent.Row.Alpha, "%+.4f"), fmt.Sprintf("%.4f", agent.Row.Brier)}},
		{"market", fmt.Sprintf("/markets/%d", marketID), 1, []string{market.Market.Question}},
		{"cohort", "/cohorts/1", 1, cohortFigures(cohort)},
		{"methodology", "/methodology", 0, []string{"Markets per round", "Starting cash"}},
		{"oracle", "/oracle", 0, []string{fmt.Sprintf("<strong>%d of %d</strong>", orc.Accuracy.Agreed, orc.Accuracy.N), "Waiting for an arbiter"}},
	}
	shots := os.Getenv("ARENA_SCREENSHOT_DIR")
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			resp, err := http.Get(srv.URL + p.path)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("GET %s: %d", p.path, resp.StatusCode)
			}
			shot := filepath.Join(t.TempDir(), p.name+".png")
			cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
			defer cancel()
			cmd := exec.CommandContext(cctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
				"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
				"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--enable-logging=stderr", "--v=0",
				"--user-data-dir="+t.TempDir(), "--window-size=1200,1400", "--screenshot="+shot, "--dump-dom", srv.URL+p.path)
			var stderr strings.Builder
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("chromium: %v\n%s", err, stderr.String())
			}
			dom := string(out)
			for _, line := range strings.Split(stderr.String(), "\n") {
				if strings.Contains(line, ":CONSOLE") || strings.Contains(line, "Failed to load resource") {
					t.Errorf("console output: %s", line)
				}
			}
			if !strings.Contains(dom, "</footer>") {
				t.Fatalf("page did not render: %.300s", dom)
			}
			for _, m := range resourceRe.FindAllStringSubmatch(dom, -1) {
				if !strings.HasPrefix(m[1], "/") || strings.HasPrefix(m[1], "//") {
					t.Errorf("resource %q is not served by this host", m[1])
				}
			}
			svgs := svgRe.FindAllString(dom, -1)
			if len(svgs) != p.charts {
				t.Errorf("%d charts rendered, want %d", len(svgs), p.charts)
			}
			for i, s := range svgs {
				if !strings.Contains(s, `class="axis x"`) || !strings.Contains(s, `class="axis y"`) || !strings.Contains(s, "<title") ||
					!(strings.Contains(s, "<polyline") || strings.Contains(s, "<rect x=")) {
					t.Errorf("chart %d lacks axes, title or marks: %.200s", i, s)
				}
			}
			for _, f := range p.figures {
				if !strings.Contains(dom, f) {
					t.Errorf("page lacks %q from its JSON", f)
				}
			}
			if st, err := os.Stat(shot); err != nil || st.Size() < 5000 {
				t.Errorf("no screenshot rendered: %v", err)
			} else if shots != "" && !strings.Contains(p.name, "-") { // variants of a page get no screenshot of their own
				b, _ := os.ReadFile(shot)
				if err := os.WriteFile(filepath.Join(shots, p.name+".png"), b, 0o644); err != nil {
					t.Error(err)
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

// overflowHarness is a test-only page that loads ?page= in a same-origin
// frame ?w= pixels wide and writes the frame's scroll and client widths
// into its DOM (the dashboard itself runs no script).
const overflowHarness = `<!doctype html><html><body style="margin:0"><script>
const q = new URLSearchParams(location.search), w = +q.get("w");
const f = document.createElement("iframe");
f.style.cssText = "width:" + w + "px;height:1500px;border:0";
f.onload = () => {
  const d = f.contentDocument.documentElement, r = document.createElement("pre");
  r.id = "result"; r.textContent = "scroll=" + d.scrollWidth + " client=" + d.clientWidth;
  document.body.appendChild(r);
};
f.src = q.get("page");
document.body.appendChild(f);
</script></body></html>`

// The leaderboard (short and with every column) and the home page never
// overflow the page horizontally at a phone's, a laptop's and a wide
// screen's width: wide tables scroll inside their own box. Screenshots of
// each at each width go to ARENA_SCREENSHOT_DIR.
func TestDashboardWidthsInChromium(t *testing.T) {
	browser := chromium(t)
	if testing.Short() {
		t.Skip("browser test: not in -short")
	}
	ctx := context.Background()
	res, err := demo.Run(ctx, demo.Config{Seed: 3, Rounds: 10, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	mux := http.NewServeMux()
	mux.Handle("/", res.Handler)
	mux.HandleFunc("/__overflow", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, overflowHarness)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	run := func(t *testing.T, args ...string) string {
		cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
		defer cancel()
		cmd := exec.CommandContext(cctx, browser, append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
			"--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
			"--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1", "--user-data-dir=" + t.TempDir()}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("chromium: %v", err)
		}
		return string(out)
	}
	resultRe := regexp.MustCompile(`scroll=(\d+) client=(\d+)`)
	shots := os.Getenv("ARENA_SCREENSHOT_DIR")
	for _, p := range []struct{ name, path string }{{"leaderboard", "/leaderboard"}, {"leaderboard-all", "/leaderboard?columns=all"}, {"home", "/"}} {
		for _, w := range []int{390, 1400, 2600} {
			t.Run(fmt.Sprintf("%s-%d", p.name, w), func(t *testing.T) {
				dom := run(t, "--virtual-time-budget=15000", "--window-size=2700,1600", "--dump-dom",
					fmt.Sprintf("%s/__overflow?w=%d&page=%s", srv.URL, w, url.QueryEscape(p.path)))
				m := resultRe.FindStringSubmatch(dom)
				if m == nil {
					t.Fatalf("the harness measured nothing: %.300s", dom)
				}
				var scroll, client int
				fmt.Sscan(m[1], &scroll)
				fmt.Sscan(m[2], &client)
				if client != w || scroll > client {
					t.Errorf("%s at %d px: page %d px wide in a %d px viewport", p.path, w, scroll, client)
				}
				if shots != "" {
					shot := filepath.Join(shots, fmt.Sprintf("%s-%d.png", p.name, w))
					run(t, fmt.Sprintf("--window-size=%d,1400", w), "--screenshot="+shot, srv.URL+p.path)
				}
			})
		}
	}
}
