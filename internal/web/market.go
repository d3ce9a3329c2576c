package web

import (
	"net/http"
	"strconv"

	"github.com/forecast-arena/arena"
)

func (s *Server) listMarkets(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, _ := queryInt(r, "limit")
	f, err := arena.ParseMarketFilter(q.Get("source"), q.Get("status"), strconv.FormatInt(limit, 10))
	if err != nil {
		return err
	}
	ms, err := s.markets.Markets(r.Context(), f)
	if err != nil {
		return err
	}
	out := make([]arena.MarketJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, arena.NewMarketJSON(m))
	}
	return s.writeJSON(w, r, out)
}

func (s *Server) getMarket(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id", "market")
	if err != nil {
		return err
	}
	m, err := s.markets.Market(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, arena.NewMarketJSON(m))
}
