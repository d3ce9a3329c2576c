package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/forecast-arena/arena"
)

// MarketJSON is the public JSON shape of a market, shared by the API and
// `arena markets --format json`.
type MarketJSON struct {
	ID         int64              `json:"id"`
	Source     string             `json:"source"`
	SourceID   string             `json:"source_id"`
	Question   string             `json:"question"`
	Category   string             `json:"category"`
	Type       arena.MarketType   `json:"type"`
	Outcomes   []string           `json:"outcomes"`
	Prices     map[string]float64 `json:"prices"`
	Volume     float64            `json:"volume"`
	CloseTime  *string            `json:"close_time"`
	Status     arena.MarketStatus `json:"status"`
	Resolution *string            `json:"resolution"`
}

// NewMarketJSON converts a market to its public shape.
func NewMarketJSON(m *arena.Market) MarketJSON {
	j := MarketJSON{ID: m.ID, Source: m.Source, SourceID: m.SourceID, Question: m.Question, Category: m.Category,
		Type: m.Type, Outcomes: m.Outcomes, Prices: m.Prices, Volume: m.Volume, Status: m.Status}
	if !m.CloseTime.IsZero() {
		s := m.CloseTime.UTC().Format(time.RFC3339)
		j.CloseTime = &s
	}
	if m.Resolution != "" {
		r := m.Resolution
		j.Resolution = &r
	}
	return j
}

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

func (s *Server) listMarkets(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := q.Get("limit")
	if limit == "" {
		limit = "100"
	}
	f, err := ParseMarketFilter(q.Get("source"), q.Get("status"), limit)
	if err != nil {
		WriteError(w, err)
		return
	}
	ms, err := s.Markets.Markets(r.Context(), f)
	if err != nil {
		s.Logger.Error("list markets", "err", err)
		WriteError(w, err)
		return
	}
	out := make([]MarketJSON, 0, len(ms))
	for _, m := range ms {
		out = append(out, NewMarketJSON(m))
	}
	WriteJSON(w, http.StatusOK, out)
}

func (s *Server) getMarket(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		WriteError(w, arena.Errorf(arena.EINVALID, "market id %q: want an integer", r.PathValue("id")))
		return
	}
	m, err := s.Markets.Market(r.Context(), id)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, NewMarketJSON(m))
}
