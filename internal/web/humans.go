package web

import (
	"net/http"
)

// registerHumans mounts the human board pages (with the boards, when
// their store keeps human forecasts):
//
//	GET /backtest/humans               the board: human medians beside the backtested models
//	GET /backtest/humans/{item}        one item: the humans' median, spread and reasoning beside each model's forecast
func (s *Server) registerHumans() {
	s.page("/backtest/humans", "/api/v1/pages/backtest/humans", "humans.html", s.humansView)
	s.page("/backtest/humans/{item}", "/api/v1/pages/backtest/humans/{item}", "human_item.html", s.humanItemView)
}

func (s *Server) humansView(r *http.Request) (any, error) {
	return viewOf(s.views.HumanBoardPage(r.Context()))
}

func (s *Server) humanItemView(r *http.Request) (any, error) {
	return viewOf(s.views.HumanItemPage(r.Context(), r.PathValue("item")))
}
