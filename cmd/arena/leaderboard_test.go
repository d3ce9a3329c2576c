package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web"
	"github.com/forecast-arena/arena/stats"
)

// The CLI, the JSON API and the HTML page render one leaderboard: on the
// demo database, served as the demo's next steps say, they list the same
// agents in the same order, with the same ranks and tie groups.
func TestLeaderboardRenderingsAgree(t *testing.T) {
	t.Parallel()
	_, dir, out := seed1Demo(t)
	var run demoJSON
	if err := json.Unmarshal([]byte(out), &run); err != nil {
		t.Fatal(err)
	}
	dbURL := "sqlite:" + filepath.Join(dir, "arena.db")
	srv := startServe(t, "--db", dbURL, "--no-rounds")
	get := func(path string) string {
		resp, err := http.Get("http://" + srv.addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", path, resp.StatusCode, b)
		}
		return string(b)
	}
	line := func(rank int, agent string, tie int) string {
		return fmt.Sprintf("%d %s %d", rank, strings.ToLower(agent), tie)
	}

	var api web.BoardJSON
	if err := json.Unmarshal([]byte(get("/api/v1/leaderboard")), &api); err != nil {
		t.Fatal(err)
	}
	var fromAPI []string
	for _, r := range api.Rows {
		fromAPI = append(fromAPI, line(r.Rank, r.Agent, r.TieGroup))
	}

	out, _, err := cli(t, nil, "report", "leaderboard", "--db", dbURL, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var board scoring.Board
	if err := json.Unmarshal([]byte(out), &board); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var fromCLI []string
	for _, r := range board.Rows {
		fromCLI = append(fromCLI, line(r.Rank, r.Agent, r.TieGroup))
	}

	// The difficulty-adjusted figures: `report leaderboard --adjusted`
	// gives every agent the Adjusted Brier and interval the board shows.
	out, _, err = cli(t, nil, "report", "leaderboard", "--adjusted", "--db", dbURL, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var adj stats.FEResult
	if err := json.Unmarshal([]byte(out), &adj); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	fe := map[string]stats.FEAgent{}
	for _, a := range adj.Agents {
		fe[a.Agent] = a
	}
	for _, r := range api.Rows {
		a, ok := fe[r.Agent]
		if !ok || r.Adjusted == nil || r.AdjustedCILo == nil || *r.Adjusted != a.Adjusted || *r.AdjustedCILo != a.CILo.V || *r.AdjustedCIHi != a.CIHi.V {
			t.Errorf("%s: board adjusted %v [%v, %v], report --adjusted %+v", r.Agent, r.Adjusted, r.AdjustedCILo, r.AdjustedCIHi, a)
		}
	}

	rowRe := regexp.MustCompile(`(?s)<tr[^>]*>\s*<td>(\d+|–)</td>\s*<td class="l agent"><a href="/agents/([^"]+)".*?<td class="x tie">(\d+|–)</td>`)
	var fromHTML []string
	for _, m := range rowRe.FindAllStringSubmatch(get("/leaderboard"), -1) {
		var rank, tie int
		fmt.Sscan(m[1], &rank)
		fmt.Sscan(m[3], &tie)
		fromHTML = append(fromHTML, line(rank, m[2], tie))
	}

	ranked, ties := 0, map[int]int{}
	for _, r := range api.Rows {
		if r.Rank > 0 {
			ranked++
			ties[r.TieGroup]++
		}
	}
	if len(api.Rows) != 7 || ranked < 5 || len(ties) < 2 {
		t.Fatalf("the demo board is too plain to compare: %d rows, %d ranked, tie groups %v", len(api.Rows), ranked, ties)
	}
	if api.Methodology != board.Methodology || api.Methodology.Version != scoring.MethodVersion {
		t.Errorf("methodology: API %+v, CLI %+v", api.Methodology, board.Methodology)
	}
	want := strings.Join(fromAPI, "\n")
	if got := strings.Join(fromCLI, "\n"); got != want {
		t.Errorf("CLI leaderboard\n%s\nJSON API\n%s", got, want)
	}
	if got := strings.Join(fromHTML, "\n"); got != want {
		t.Errorf("HTML leaderboard\n%s\nJSON API\n%s", got, want)
	}

	// The trading leaderboard: the demo's printed table, the JSON API and
	// the dashboard's tables (the leaderboard page's in either order, the
	// home page's top rows) list the same agents in the same order.
	tradingLine := func(rank, agent, name, cohort string) string {
		return fmt.Sprintf("%s %s %q %s", rank, agent, name, cohort)
	}
	tradingAPI := func(sort string) (lines, names []string) {
		var lb trading.LeaderboardJSON
		if err := json.Unmarshal([]byte(get("/api/v1/leaderboard?track=trading&sort="+sort)), &lb); err != nil {
			t.Fatal(err)
		}
		for i, r := range lb.Rows {
			if r.Rank != i+1 || r.LatestCohort == 0 {
				t.Errorf("trading row %d by %s: rank %d, latest cohort %d", i, sort, r.Rank, r.LatestCohort)
			}
			lines = append(lines, tradingLine(fmt.Sprint(r.Rank), r.Agent, r.Name, fmt.Sprint("/cohorts/", r.LatestCohort)))
			names = append(names, r.Name)
		}
		return lines, names
	}
	tradingRe := regexp.MustCompile(`<tr><td>(\d+)</td><td class="l agent" title="([^"]+)"><a href="(/cohorts/\d+)">(.+?)</a>`)
	nw := regexp.MustCompile(`<span class="nw">([^<]*)</span>`) // a hyphenated word of a name, kept on one line
	tradingHTML := func(path string) []string {
		_, table, _ := strings.Cut(get(path), `<table id="trading">`)
		table, _, _ = strings.Cut(table, "</table>")
		var lines []string
		for _, m := range tradingRe.FindAllStringSubmatch(table, -1) {
			lines = append(lines, tradingLine(m[1], m[2], html.UnescapeString(nw.ReplaceAllString(m[4], "$1")), m[3]))
		}
		return lines
	}
	byReturn, names := tradingAPI("return")
	byBrier, _ := tradingAPI("brier")
	if len(byReturn) < 4 || slices.Equal(byReturn, byBrier) {
		t.Fatalf("the demo's trading board is too plain to compare: by return\n%s\nby Brier\n%s",
			strings.Join(byReturn, "\n"), strings.Join(byBrier, "\n"))
	}
	for _, c := range []struct {
		what      string
		got, want []string
	}{
		{"leaderboard page", tradingHTML("/leaderboard"), byReturn},
		{"leaderboard page by Brier", tradingHTML("/leaderboard?trading_sort=brier"), byBrier},
		{"home page", tradingHTML("/"), byReturn[:min(len(byReturn), 5)]},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("trading table of the %s\n%s\nJSON API\n%s", c.what, strings.Join(c.got, "\n"), strings.Join(c.want, "\n"))
		}
	}
	var printed bytes.Buffer
	printTrading(&printed, run.Trading) // as arena demo prints it
	var fromCLITrading []string
	for _, m := range regexp.MustCompile(`(?m)^\s*(\S.*?)\s+\d+\s+[+-]\d+\.\d+%`).FindAllStringSubmatch(printed.String(), -1) {
		fromCLITrading = append(fromCLITrading, m[1])
	}
	if !slices.Equal(fromCLITrading, names) {
		t.Errorf("arena demo's trading table\n%s\nJSON API\n%s", printed.String(), strings.Join(byReturn, "\n"))
	}
}
