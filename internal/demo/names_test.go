package demo_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/agent"
	"github.com/forecast-arena/arena/internal/demo"
	"github.com/forecast-arena/arena/internal/web/view"
)

// textRe matches the text between two tags: what a reader sees.
var textRe = regexp.MustCompile(`>([^<]+)<`)

// The demo names each simulated agent one way, "Sim informed-0.10", in
// both tracks' leaderboards, their JSON and every page a reader sees;
// never by its simulator name or its trading id alone.
func TestDemoNamesEachAgentOnce(t *testing.T) {
	t.Parallel()
	res, _ := played(t)
	want := map[string]bool{}
	for _, a := range demo.DefaultAgents {
		want[agent.SimName(a)] = true
	}
	var forecastNames, tradingNames []string
	for _, r := range res.Leaderboard.Rows {
		if r.Name != "Random (uniform)" && r.Name != "Market (benchmark)" {
			forecastNames = append(forecastNames, r.Name)
		}
	}
	for _, r := range res.Trading {
		tradingNames = append(tradingNames, r.Name)
	}
	for track, names := range map[string][]string{"forecast": forecastNames, "trading": tradingNames} {
		slices.Sort(names)
		var ok []string
		for n := range want {
			ok = append(ok, n)
		}
		slices.Sort(ok)
		if !slices.Equal(names, ok) {
			t.Errorf("%s leaderboard names %q, want %q", track, names, ok)
		}
	}
	srv := httptest.NewServer(res.Handler)
	defer srv.Close()
	var cohort view.CohortPageJSON
	getJSON(t, srv.URL+"/api/v1/pages/cohorts/1", &cohort)
	if len(res.Leaderboard.Rows) == 0 || len(cohort.Decisions) == 0 || len(cohort.Holdings) == 0 {
		t.Fatalf("nothing to check: %d forecast rows, %d decisions, %d holdings", len(res.Leaderboard.Rows), len(cohort.Decisions), len(cohort.Holdings))
	}
	for _, s := range cohort.Agents {
		if s.Name != agent.SimName(strings.TrimPrefix(s.Agent, agent.SimAgentPrefix)) {
			t.Errorf("cohort standing %s named %q", s.Agent, s.Name)
		}
	}
	for _, h := range cohort.Holdings {
		if !want[h.Name] {
			t.Errorf("cohort holdings of %s named %q", h.Agent, h.Name)
		}
	}
	for _, d := range cohort.Decisions {
		if !want[d.Name] {
			t.Errorf("cohort decision of %s named %q", d.Agent, d.Name)
		}
	}
	pages := []string{"/", "/leaderboard", "/cohorts/1", "/rounds/1"}
	for _, r := range res.Leaderboard.Rows {
		pages = append(pages, "/agents/"+r.Agent)
	}
	for _, p := range pages {
		resp, err := http.Get(srv.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Fatalf("%s: %d", p, resp.StatusCode)
		}
		// A name's hyphenated word sits in a span that keeps it whole: the
		// reader sees the name in one piece.
		for _, m := range textRe.FindAllStringSubmatch(nwRe.ReplaceAllString(string(b), "$1"), -1) {
			for _, a := range demo.DefaultAgents {
				if strings.Contains(strings.ReplaceAll(m[1], agent.SimName(a), ""), a) {
					t.Errorf("%s shows %q: the agent %s named otherwise than %q", p, m[1], a, agent.SimName(a))
				}
			}
		}
	}
}
