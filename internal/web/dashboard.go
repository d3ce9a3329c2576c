package web

import (
	"net/http"
	"strings"

	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/web/pages"
	"github.com/forecast-arena/arena/internal/web/view"
)

// registerDashboard mounts every page and its JSON twin. A page whose
// track is disabled answers 404.
func (s *Server) registerDashboard() {
	s.page("/{$}", "/api/v1/pages/home", "home.html", s.homeView)
	s.page("/leaderboard", "/api/v1/pages/leaderboard", "leaderboard.html", s.leaderboardView)
	s.page("/rounds/{id}", "/api/v1/pages/rounds/{id}", "round.html", s.roundView)
	s.page("/agents/{agent}", "/api/v1/pages/agents/{agent}", "agent.html", s.agentView)
	s.page("/markets", marketsAPI, "markets.html", s.marketsView)
	s.page("/markets/{id}", "/api/v1/pages/markets/{id}", "market.html", s.marketView)
	s.page("/compare", "/api/v1/pages/compare", "compare.html", s.compareView)
	s.page("/cohorts/{id}", "/api/v1/pages/cohorts/{id}", "cohort.html", s.cohortView)
	s.page("/methodology", "/api/v1/pages/methodology", "methodology.html", s.methodologyView)
	// The static files are no API route (the OpenAPI document leaves them out).
	s.mux.HandleFunc("GET /assets/{name}", func(w http.ResponseWriter, r *http.Request) {
		if err := pages.ServeAsset(w, r); err != nil {
			s.Error(w, r, err)
		}
	})
}

// page registers an HTML page and its JSON twin, both built by build; a
// view with a next page (view.Paged) gets its Link header on both.
func (s *Server) page(path, api, tmpl string, build func(r *http.Request) (any, error)) {
	s.handle("GET "+path, func(w http.ResponseWriter, r *http.Request) error {
		v, err := build(r)
		if err != nil {
			return err
		}
		linkNext(w, r, v)
		return pages.Render(w, r, tmpl, v, strings.Replace(api, "{$}", "", 1))
	})
	s.handle("GET "+api, func(w http.ResponseWriter, r *http.Request) error {
		v, err := build(r)
		if err != nil {
			return err
		}
		linkNext(w, r, v)
		return s.writeJSON(w, r, v)
	})
}

func linkNext(w http.ResponseWriter, r *http.Request, v any) {
	if p, ok := v.(view.Paged); ok {
		if cursor, ok := p.Next(); ok {
			setNextLink(w, r, cursor)
		}
	}
}

// viewOf is a page's view as page builds it.
func viewOf[V any](v V, err error) (any, error) { return v, err }

// The pages' handlers read their request into the page's parameters; the
// views service computes the page.

func (s *Server) homeView(r *http.Request) (any, error) { return viewOf(s.views.HomePage(r.Context())) }

func (s *Server) leaderboardView(r *http.Request) (any, error) {
	q := r.URL.Query()
	return viewOf(s.views.LeaderboardPage(r.Context(), view.LeaderboardParams{Sort: q.Get("sort"), Dir: q.Get("dir"), Query: q.Get("q"),
		Columns: q.Get("columns"), HidePrelim: q.Get("preliminary") == "hide", Window: q.Get("window"), Category: q.Get("category"),
		Venue: q.Get("venue"), TradingSort: q.Get("trading_sort")}))
}

// leaderboardFilter reads the window, category and venue query parameters.
func leaderboardFilter(r *http.Request) (rounds.Filter, error) {
	q := r.URL.Query()
	_, f, err := view.BoardFilter(q.Get("window"), q.Get("category"), q.Get("venue"))
	return f, err
}

// roundView answers 404 for a disabled track before it reads the round's
// id, as the track's API does.
func (s *Server) roundView(r *http.Request) (any, error) {
	if err := s.views.NeedForecast(); err != nil {
		return nil, err
	}
	id, err := roundID(r)
	if err != nil {
		return nil, err
	}
	return viewOf(s.views.RoundPage(r.Context(), id))
}

func (s *Server) agentView(r *http.Request) (any, error) {
	return viewOf(s.views.AgentPage(r.Context(), r.PathValue("agent")))
}

func (s *Server) marketView(r *http.Request) (any, error) {
	id, err := pathID(r, "id", "market")
	if err != nil {
		return nil, err
	}
	return viewOf(s.views.MarketPage(r.Context(), id))
}

// cohortView answers 404 for a disabled track before it reads the
// cohort's id, as the track's API does.
func (s *Server) cohortView(r *http.Request) (any, error) {
	if err := s.views.NeedTrading(); err != nil {
		return nil, err
	}
	id, err := pathID(r, "id", "cohort")
	if err != nil {
		return nil, err
	}
	return viewOf(s.views.CohortPage(r.Context(), id, r.URL.Query().Get("range")))
}

func (s *Server) methodologyView(r *http.Request) (any, error) {
	return viewOf(s.views.MethodologyPage(r.Context(), r.Host))
}
