package web

import (
	"net/http"

	"github.com/forecast-arena/arena/internal/web/view"
)

// The question browser (/markets) and the agent comparison (/compare).

const marketsAPI = "/api/v1/pages/markets"

// marketsView checks the page's query against its JSON twin's declaration
// (the HTML page has none of its own), so both refuse the same values.
func (s *Server) marketsView(r *http.Request) (any, error) {
	ints, err := apiOpOf("GET " + marketsAPI).Values(r)
	if err != nil {
		return nil, err
	}
	q := r.URL.Query()
	return viewOf(s.views.MarketsPage(r.Context(), view.MarketsParams{Status: q.Get("status"), Category: q.Get("category"), Source: q.Get("source"),
		Venue: q.Get("venue"), Limit: int(ints["limit"]), Cursor: ints["cursor"]}))
}

func (s *Server) compareView(r *http.Request) (any, error) {
	return viewOf(s.views.ComparePage(r.Context(), r.URL.Query().Get("agents")))
}
