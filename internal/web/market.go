package web

import (
	"net/http"
	"strconv"

	"github.com/forecast-arena/arena"
)

// ParseMarketFilter reads source, status and limit parameters.
func ParseMarketFilter(source, status, limit string) (arena.MarketFilter, error) {
	f := arena.MarketFilter{Source: source, Status: arena.MarketStatus(status)}
	if status != "" && !f.Status.Valid() {
		return f, arena.Errorf(arena.EINVALID, "status %q: want open, closed or resolved", status)
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 0 {
			return f, arena.Errorf(arena.EINVALID, "limit %q: want a non-negative integer", limit)
		}
		f.Limit = n
	}
	return f, nil
}

func (s *Server) listMarkets(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, _ := queryInt(r, "limit")
	f, err := ParseMarketFilter(q.Get("source"), q.Get("status"), strconv.FormatInt(limit, 10))
	if err != nil {
		return err
	}
	ms, err := s.Markets.Markets(r.Context(), f)
	if err != nil {
		return err
	}
	out := make([]MarketJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, NewMarketJSON(m))
	}
	return s.writeJSON(w, r, out)
}

func (s *Server) getMarket(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id", "market")
	if err != nil {
		return err
	}
	m, err := s.Markets.Market(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, NewMarketJSON(m))
}
