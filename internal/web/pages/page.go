// Package pages renders the dashboard's HTML: the embedded templates and
// static assets, the charts drawn from a page's view (package view) and
// the HTML error page. It has no routes and writes no error answer: the
// server (package web) gets each view from view.Service, calls Render, and
// answers every error through its one error path.
package pages

import (
	"bytes"
	"cmp"
	"embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/chart"
	"github.com/forecast-arena/arena/internal/web/view"
)

//go:embed templates/*.html
var templateFS embed.FS

// The dashboard's static files: its one stylesheet and the scroll hint
// it draws under a table with columns out of view.
//
//go:embed assets/style.css assets/more.svg
var assetFS embed.FS

var assetTypes = map[string]string{"style.css": "text/css; charset=utf-8", "more.svg": "image/svg+xml"}

// ServeAsset serves the static file named by the path's {name}.
func ServeAsset(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	b, err := assetFS.ReadFile("assets/" + name)
	if err != nil || assetTypes[name] == "" {
		return arena.Errorf(arena.ENOTFOUND, "no asset %q", name)
	}
	w.Header().Set("Content-Type", assetTypes[name])
	w.Header().Set("Cache-Control", "public, max-age=3600")
	_, err = w.Write(b)
	return err
}

// sortCol is a column of the forecast leaderboard; Key is its sort key
// ("" for unsortable); Class "x" puts it among the columns shown on
// request.
type sortCol struct{ Key, Label, Title, Class string }

var sortCols = []sortCol{{"rank", "#", "rank among the agents that meet the entry rule", "key"}, {"name", "Agent", "", "l key"},
	{"score", "Score [95% CI]", "difficulty-adjusted Brier Index: 100 perfect, 50 always 0.5; 95% interval and bar", "key"},
	{"n", "Forecasts", "resolved forecasts and rounds", "key"},
	{"brier", "Brier ±SE", "mean Brier score, lower is better, with its SE over rounds", ""},
	{"alpha", "Alpha ±SE", "market Brier − agent Brier per round, higher is better; SE clustered by round", ""},
	{"brier_index", "Brier Index", "(1 − √Brier) × 100 on the raw Brier score", "x"},
	{"bss", "BSS", "Brier skill score vs always 0.5: 1 − Brier/0.25", "x"},
	{"peer", "Peer", "each forecast's Brier minus the others' mean Brier on that question; below 0 beats them", "x"},
	{"adjusted", "Adjusted Brier [95% CI]", "difficulty-adjusted Brier, lower is better", "x"},
	{"", "Alpha 95% CI", "block bootstrap over events", "x"}, {"p", "p", "two-sided p of Alpha ≠ 0", "x"},
	{"p_rank1", "P(rank 1)", "share of bootstrap replicates in which the agent ranks first", "x"},
	{"", "P(top 5%)", "share of bootstrap replicates in which the agent is among the best 5% (at least one place)", "x"},
	{"", "Tie group", "agents whose score interval overlaps the group leader's", "x"},
	{"", "Δ Brier vs #1 [95% CI]", "mean of (agent − leader) round Brier over the rounds both played; positive: worse than the leader", "x"},
	{"", "p vs #1", "paired t-test of the round differences; in brackets the paired bootstrap p on the adjusted score", "x"},
	{"rounds_to_significance", "Rounds to sig.", "further rounds until the observed edge would be significant at 80% power", "x"},
	{"", "Cost", "model calls' cost over the rounds with a trace; – for agents without one (external, simulated)", "x"}}

var funcs = template.FuncMap{
	"num": func(p *float64, format string) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf(format, *p)
	},
	"f4":      func(v float64) string { return fmt.Sprintf("%.4f", v) },
	"sub":     func(a, b float64) float64 { return a - b },
	"mul":     func(a, b float64) float64 { return a * b },
	"dollars": cents,
	// cost shows model-call costs, often fractions of a cent, to 1/100 cent.
	"cost": func(d *arena.Dollars) string {
		if d == nil {
			return "–"
		}
		return fmt.Sprintf("$%.4f", float64(*d)/1e6)
	},
	"pct": func(v float64) string { return fmt.Sprintf("%+.2f%%", v) },
	// rounds is a count of rounds with thousands separators ("28,111").
	"rounds": func(p *float64) string {
		if p == nil {
			return "–"
		}
		return thousands(int64(math.Round(*p)))
	},
	"dur":    humanDuration,
	"plural": arena.Plural,
	"join":   func(s []string) string { return strings.Join(s, ", ") },
	"has":    func(s []string, v string) bool { return slices.Contains(s, v) },
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			return v.UTC().Format("2006-01-02 15:04")
		case *time.Time:
			if v != nil {
				return v.UTC().Format("2006-01-02 15:04")
			}
		}
		return "–"
	},
	"day": func(t time.Time) string { return t.UTC().Format("2006-01-02") },
	"sign": func(p *float64) string {
		switch {
		case p == nil || *p == 0:
			return ""
		case *p > 0:
			return "pos"
		}
		return "neg"
	},
	"signf": func(v float64) string {
		switch {
		case v > 0:
			return "pos"
		case v < 0:
			return "neg"
		}
		return ""
	},
	// latest is the last n rounds of a history, newest first.
	"latest": func(h []view.AgentRoundJSON, n int) []view.AgentRoundJSON {
		out := make([]view.AgentRoundJSON, 0, min(n, len(h)))
		for i := len(h) - 1; i >= 0 && len(out) < n; i-- {
			out = append(out, h[i])
		}
		return out
	},
	"lastOracle": func(rs []arena.OracleResolution) *arena.OracleResolution {
		if len(rs) == 0 {
			return nil
		}
		return &rs[len(rs)-1]
	},
	"kindLabel": func(kind string) string {
		return cmp.Or(kindLabels[kind], kind)
	},
	"ranges":   func() []string { return view.RangeNames },
	"sortCols": func() []sortCol { return sortCols },
	"sortLink": func(v view.LeaderboardPageJSON, key string) string {
		q := url.Values{"sort": {key}}
		if key == v.Sort && v.Desc == view.ForecastSorts[key] { // clicking the active column flips it
			q.Set("dir", map[bool]string{true: "asc", false: "desc"}[v.Desc])
		}
		if v.Trading != nil && v.Trading.Sort != "return" {
			q.Set("trading_sort", v.Trading.Sort)
		}
		return leaderboardLink(v, q)
	},
	// tradingSortLink orders the trading table by key, keeping the rest.
	"tradingSortLink": func(v view.LeaderboardPageJSON, key string) string {
		q := url.Values{"trading_sort": {key}}
		if v.Sort != "rank" {
			q.Set("sort", v.Sort)
		}
		if v.Desc != view.ForecastSorts[v.Sort] {
			q.Set("dir", map[bool]string{true: "desc", false: "asc"}[v.Desc])
		}
		return leaderboardLink(v, q)
	},
	// venueLink is the leaderboard of one venue's markets, keeping the
	// page's other filters.
	"venueLink": func(v view.LeaderboardPageJSON, venue string) string {
		v.Venue = venue
		return leaderboardLink(v, url.Values{})
	},
	"chart": func(string) template.HTML { return "" }, // replaced per render
	// closes shows a market's close time (RFC 3339 in its JSON).
	"closes": func(s *string) string {
		if s == nil {
			return "–"
		}
		t, err := time.Parse(time.RFC3339, *s)
		if err != nil {
			return *s
		}
		return t.UTC().Format("2006-01-02 15:04")
	},
	"marketsLink": marketsLink,
	"compareLink": compareLink,
	"name":        nameHTML,
	"rangeLabel":  func(r string) string { return rangeLabels[r] },
}

// nameHTML is an agent's name, escaped, set so that a line breaks only
// between its words: a browser also breaks after a hyphen, which cuts
// "Sim informed-0.10" into "Sim informed-" and "0.10". A word too long
// to keep whole may still break.
func nameHTML(name string) template.HTML {
	var b strings.Builder
	for i, w := range strings.Split(name, " ") {
		if i > 0 {
			b.WriteByte(' ')
		}
		if strings.Contains(w, "-") && utf8.RuneCountInString(w) <= 24 {
			b.WriteString(`<span class="nw">` + template.HTMLEscapeString(w) + `</span>`)
		} else {
			b.WriteString(template.HTMLEscapeString(w))
		}
	}
	return template.HTML(b.String())
}

// thousands writes n with a comma every three digits.
func thousands(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// humanDuration says a configured duration in words: "7 days",
// "5 minutes", "1 day 12 hours".
func humanDuration(d arena.Duration) string {
	t := time.Duration(d)
	if t <= 0 {
		return "0 seconds"
	}
	var parts []string
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "day"}, {time.Hour, "hour"}, {time.Minute, "minute"}, {time.Second, "second"}} {
		if n := int(t / u.d); n > 0 {
			parts = append(parts, arena.Plural(n, u.name))
			t -= time.Duration(n) * u.d
		}
	}
	if len(parts) == 0 {
		return t.String()
	}
	return strings.Join(parts, " ")
}

// leaderboardLink is the leaderboard page with q and the page's filters.
func leaderboardLink(v view.LeaderboardPageJSON, q url.Values) string {
	if v.Query != "" {
		q.Set("q", v.Query)
	}
	if v.HidePrelim {
		q.Set("preliminary", "hide")
	}
	if v.Columns != "" {
		q.Set("columns", v.Columns)
	}
	if v.Window != "" && v.Window != "all" {
		q.Set("window", v.Window)
	}
	if v.Category != "" {
		q.Set("category", v.Category)
	}
	if v.Venue != "" {
		q.Set("venue", v.Venue)
	}
	return "/leaderboard?" + q.Encode()
}

// pages holds one template set per page: the layout, the partials and
// the page's own "content". They are parsed at the first page served, not
// when the program starts: every command of the arena program links this
// package, and parsing them took most of its start (some 8 ms of the
// 17 ms `arena score` spent before reading its file).
var pages = sync.OnceValue(func() map[string]*template.Template {
	out := map[string]*template.Template{}
	names, err := templateFS.ReadDir("templates")
	if err != nil {
		panic(err)
	}
	for _, n := range names {
		switch n.Name() {
		case "layout.html", "partials.html":
			continue
		}
		out[n.Name()] = template.Must(template.New(n.Name()).Funcs(funcs).ParseFS(templateFS,
			"templates/layout.html", "templates/partials.html", "templates/"+n.Name()))
	}
	return out
})

// titles are the pages' titles in the layout; a page of one thing (a round,
// an agent, a market…) is titled by its view instead (see Render).
var titles = map[string]string{"home.html": "Home", "leaderboard.html": "Leaderboard", "round.html": "Round", "agent.html": "Agent",
	"market.html": "Market", "cohort.html": "Cohort", "methodology.html": "Methodology", "humans.html": "Humans and models", "human_item.html": "Question",
	"markets.html": "Questions", "compare.html": "Compare agents", "oracle.html": "Oracle", "oracle_market.html": "Oracle resolution"}

// Render writes the page tmpl for view v; api is the route pattern of its
// JSON twin. Its error goes back to the server's one error path.
func Render(w http.ResponseWriter, r *http.Request, tmpl string, v any, api string) error {
	t, ok := pages()[tmpl]
	if !ok {
		return fmt.Errorf("pages: no template %s", tmpl)
	}
	charts, err := pageCharts(v)
	if err != nil {
		return err
	}
	t, err = t.Clone()
	if err != nil {
		return fmt.Errorf("pages: clone template %s: %w", tmpl, err)
	}
	t.Funcs(template.FuncMap{"chart": func(name string) template.HTML { return charts[name] }})
	apiPath := apiLink(api, r)
	if r.URL.RawQuery != "" {
		apiPath += "?" + r.URL.RawQuery
	}
	title := titles[tmpl]
	switch x := v.(type) {
	case view.RoundPageJSON:
		title = fmt.Sprintf("Round #%d", x.ID)
	case view.AgentPageJSON:
		title = x.Name
	case view.MarketPageJSON:
		title = x.Market.Question
	case view.ComparePageJSON:
		title = compareTitle(x)
	case view.CohortPageJSON:
		title = fmt.Sprintf("Cohort %d", x.ID)
	case view.HumanItemPageJSON:
		title = x.Brief
	}
	b, err := executePage(t, page{Title: title, API: apiPath, Width: widePages[tmpl]}, v)
	if err != nil {
		return fmt.Errorf("pages: render %s: %w", tmpl, err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	_, err = w.Write(b)
	return err
}

// apiLink is the path of a page's JSON: its route pattern with every
// {name} filled in from the page's own path.
func apiLink(pattern string, r *http.Request) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(pattern, '{')
		j := strings.IndexByte(pattern[max(i, 0):], '}')
		if i < 0 || j < 0 {
			b.WriteString(pattern)
			return b.String()
		}
		b.WriteString(pattern[:i])
		b.WriteString(url.PathEscape(r.PathValue(pattern[i+1 : i+j])))
		pattern = pattern[i+j+1:]
	}
}

// page is what the layout shows around a page's content: its title, the
// path of its JSON ("" for none), and the width class of its body.
type page struct {
	Title, API string
	Width      string
}

// widePages are wider than the others on a large screen, for their wide
// tables: the leaderboard takes the whole width (all its columns need
// about 2,400 px), the human board up to 96rem, past which its question
// texts and figures would drift apart.
var widePages = map[string]string{"leaderboard.html": "wide", "humans.html": "wide capped"}

// executePage renders a page's template set in the layout around its view.
func executePage(t *template.Template, p page, v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, "layout", struct {
		page
		V any
	}{p, v}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// pageCharts draws the SVG charts of a page from its view.
func pageCharts(v any) (map[string]template.HTML, error) {
	out := map[string]template.HTML{}
	// Each chart is drawn twice, wide and for a phone (the stylesheet shows
	// one by the screen's width), so its text is never scaled below its
	// drawn size of 11 px.
	put := func(name string, wide, narrow interface{ WriteSVG(io.Writer) error }) error {
		var b bytes.Buffer
		if err := wide.WriteSVG(&b); err != nil {
			return fmt.Errorf("pages: chart %s: %w", name, err)
		}
		if err := narrow.WriteSVG(&b); err != nil {
			return fmt.Errorf("pages: chart %s (narrow): %w", name, err)
		}
		out[name] = template.HTML(b.String()) // the chart package escapes every text it writes
		return nil
	}
	switch x := v.(type) {
	case view.AgentPageJSON:
		if len(x.History) == 0 {
			return out, nil
		}
		alpha := &chart.Line{ID: "alpha", Title: "Cumulative alpha with 95% band", X: chart.Axis{Label: "round (in order played)", Integer: true},
			Y:    chart.Axis{Label: "cumulative alpha"},
			Desc: "Mean alpha over the rounds so far, with the 95% t interval over those rounds; above zero beats the market."}
		s := chart.Series{Name: x.Name}
		k := 0
		for _, h := range x.History {
			if h.CumAlpha == nil {
				continue
			}
			k++
			s.X, s.Y = append(s.X, float64(k)), append(s.Y, *h.CumAlpha)
			lo, hi := *h.CumAlpha, *h.CumAlpha
			if h.CumLo != nil {
				lo, hi = *h.CumLo, *h.CumHi
			}
			s.Lo, s.Hi = append(s.Lo, lo), append(s.Hi, hi)
		}
		alpha.Series = []chart.Series{s}
		alpha.Refs = []chart.Ref{{X0: 1, X1: float64(max(k, 1)), Label: "alpha = 0: as good as the market"}}
		if err := put("alpha", alpha, alpha.Narrow()); err != nil {
			return nil, err
		}
		if m := x.Murphy; m != nil {
			bars := &chart.Bars{ID: "murphy", Title: "Murphy decomposition", YLabel: "Brier components", Width: 360, Groups: []string{x.Name},
				Desc:   "REL (miscalibration, lower is better) and RES (resolution, higher is better); UNC as a dashed level. Brier = UNC + REL − RES.",
				Series: []chart.BarSeries{{Name: "REL (miscalibration)", Values: []float64{m.REL}}, {Name: "RES (resolution)", Values: []float64{m.RES}}},
				Ref:    &chart.BarSeries{Name: "UNC (uncertainty)", Values: []float64{m.UNC}}}
			if err := put("murphy", bars, bars.Narrow()); err != nil {
				return nil, err
			}
		}
		rel := &chart.Line{ID: "reliability", Title: "Reliability diagram (CORP)", Width: 420, Height: 400,
			Desc: "PAV-recalibrated event frequency against the forecast; the dashed diagonal is perfect calibration.",
			X:    chart.Axis{Label: "forecast probability", Fixed: true, Min: 0, Max: 1}, Y: chart.Axis{Label: "observed frequency", Fixed: true, Min: 0, Max: 1},
			Refs: []chart.Ref{{X0: 0, Y0: 0, X1: 1, Y1: 1, Label: "perfect calibration"}}}
		rs := chart.Series{Name: "CORP (PAV)"}
		for _, b := range x.CORPBlocks {
			rs.X, rs.Y = append(rs.X, b.PLo, b.PHi), append(rs.Y, b.Recal, b.Recal)
		}
		rel.Series = []chart.Series{rs}
		if err := put("reliability", rel, rel.Narrow()); err != nil {
			return nil, err
		}
	case view.MarketPageJSON:
		c := marketChart(x)
		if err := put("price", c, c.Narrow()); err != nil {
			return nil, err
		}
	case view.ComparePageJSON:
		if len(x.Agents) == 0 {
			return out, nil
		}
		for _, c := range compareCharts(x) {
			if err := put(c.ID, c, c.Narrow()); err != nil {
				return nil, err
			}
		}
	case view.CohortPageJSON:
		names := map[string]string{}
		for _, a := range x.Agents {
			names[a.Agent] = a.Name
		}
		c := &chart.Line{ID: "portfolio", Title: "Portfolio value (" + rangeLabels[x.Range] + ")", X: chart.Axis{Label: "time (UTC)", Time: true},
			Y: chart.Axis{Label: "total value ($)"}, Desc: "Each agent's portfolio value at current prices, from the stored snapshots."}
		for _, cv := range x.Curves {
			s := chart.Series{Name: cmp.Or(names[cv.Agent], cv.Agent)}
			for _, p := range cv.Points {
				s.X, s.Y = append(s.X, float64(p.At.Unix())), append(s.Y, float64(p.TotalValue)/1e6)
			}
			c.Series = append(c.Series, s)
		}
		if err := put("portfolio", c, c.Narrow()); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// cents formats money to the cent with thousands separators ("$1,234.57",
// "-$0.40"); the exact micro-dollar figure stays in the JSON.
func cents(d arena.Dollars) string {
	c := (int64(d) + 5000*sign64(int64(d))) / 10_000
	neg := c < 0
	if neg {
		c = -c
	}
	whole := strconv.FormatInt(c/100, 10)
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	s := fmt.Sprintf("$%s.%02d", whole, c%100)
	if neg {
		s = "-" + s
	}
	return s
}

func sign64(v int64) int64 {
	if v < 0 {
		return -1
	}
	return 1
}

// rangeLabels say the cohort page's ranges in words on the page ("10M"
// would read as ten months).
var rangeLabels = map[string]string{"10m": "10 minutes", "1h": "1 hour", "1d": "1 day", "1w": "1 week", "all": "all"}

// kindLabels say in words what kind of agent a page shows.
var kindLabels = map[string]string{"external": "external agent", "builtin": "baseline", "sim": "simulated agent",
	"llm": "LLM agent run by this arena", "ensemble": "ensemble run by this arena"}
