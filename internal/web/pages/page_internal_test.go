package pages

import (
	"html/template"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestNameHTML(t *testing.T) {
	for _, c := range []struct {
		in   string
		want template.HTML
	}{
		{"Sim informed-0.10", `Sim <span class="nw">informed-0.10</span>`},
		{"GPT-4o mini", `<span class="nw">GPT-4o</span> mini`},
		{"plain name", "plain name"},
		// Escaped, inside the span and out.
		{`<b>x-"y"</b> & z`, `<span class="nw">&lt;b&gt;x-&#34;y&#34;&lt;/b&gt;</span> &amp; z`},
		// A word too long to keep whole may break.
		{"a-very-long-hyphenated-agent-name", "a-very-long-hyphenated-agent-name"},
	} {
		if got := nameHTML(c.in); got != c.want {
			t.Errorf("nameHTML(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// A page's JSON link fills every parameter of its route from the page's
// path, escaped as a path segment.
func TestAPILink(t *testing.T) {
	for _, c := range []struct{ route, api, path, want string }{
		{"GET /rounds/{id}", "/api/v1/pages/rounds/{id}", "/rounds/7", "/api/v1/pages/rounds/7"},
		{"GET /backtest/humans/{item}", "/api/v1/pages/backtest/humans/{item}", "/backtest/humans/2024-07-21:acled:x:2024-08-20",
			"/api/v1/pages/backtest/humans/2024-07-21:acled:x:2024-08-20"},
		{"GET /agents/{agent}", "/api/v1/pages/agents/{agent}", "/agents/a%20b%3Fc", "/api/v1/pages/agents/a%20b%3Fc"},
		{"GET /leaderboard", "/api/v1/pages/leaderboard", "/leaderboard", "/api/v1/pages/leaderboard"},
	} {
		var got string
		mux := http.NewServeMux()
		mux.HandleFunc(c.route, func(_ http.ResponseWriter, r *http.Request) { got = apiLink(c.api, r) })
		mux.ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", c.path, nil))
		if got != c.want {
			t.Errorf("apiLink(%q) on %s = %q, want %q", c.api, c.path, got, c.want)
		}
	}
}
