package web

import (
	"net/http"
)

// registerOraclePages serves the oracle's dashboard pages (with their JSON
// twins): the queue with the accuracy against audits and the resolver
// leaderboard, and one market's resolution history.
func (s *Server) registerOraclePages() {
	s.page("/oracle", "/api/v1/pages/oracle", "oracle.html", s.oracleView)
	s.page("/oracle/{id}", "/api/v1/pages/oracle/{id}", "oracle_market.html", s.oracleMarketView)
}

func (s *Server) oracleView(r *http.Request) (any, error) {
	return viewOf(s.views.OraclePage(r.Context()))
}

func (s *Server) oracleMarketView(r *http.Request) (any, error) {
	id, err := pathID(r, "id", "market")
	if err != nil {
		return nil, err
	}
	return viewOf(s.views.OracleMarketPage(r.Context(), id))
}
