package web

import (
	"cmp"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/forecast-arena/arena"
)

// leaderboard serves GET /api/v1/leaderboard?track=forecast|trading|backtest,
// a page of rows (see pageRows). A parameter that does not apply to the
// track answers 400, never silently nothing.
func (s *Server) leaderboard(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	track := cmp.Or(q.Get("track"), leaderboardTracks[0])
	for _, p := range []struct {
		name, tracks, why string
	}{
		{"sort", "trading", "the forecast and backtest tracks are ranked by the scoring method (see /methodology)"},
		{"window", "forecast trading", "the backtest's questions are past ones, scored at once"},
		{"category", "forecast", "only the forecast track's rounds are split by market category: filter the forecast track"},
		{"venue", "forecast", "only the forecast track's rounds are split by venue: filter the forecast track"},
	} {
		if q.Get(p.name) != "" && !slices.Contains(strings.Fields(p.tracks), track) {
			return arena.Rejectf(arena.EINVALID, "invalid_parameter", "%s does not apply to the %s track: %s", p.name, track, p.why)
		}
	}
	switch track {
	case "forecast":
		if err := s.views.NeedForecast(); err != nil {
			return err
		}
		f, err := leaderboardFilter(r)
		if err != nil {
			return err
		}
		b, _, err := s.forecast.Leaderboard(r.Context(), f)
		if err != nil {
			return err
		}
		b.Rows = pageRows(w, r, b.Rows)
		return s.writeJSON(w, r, BoardJSON{Track: "forecast", Board: b})
	case "trading":
		if err := s.views.NeedTrading(); err != nil {
			return err
		}
		return s.tradingLeaderboard(w, r)
	default: // backtest; checkQuery refused any other
		return s.backtestLeaderboard(w, r)
	}
}

// pageRows is the page of a ranked list the limit and cursor parameters
// select, the cursor being how many rows earlier pages held; it sets
// X-Total-Count and, when rows follow, a Link header with rel="next".
func pageRows[T any](w http.ResponseWriter, r *http.Request, rows []T) []T {
	limit, _ := queryInt(r, "limit")
	cursor, _ := queryInt(r, "cursor")
	w.Header().Set("X-Total-Count", strconv.Itoa(len(rows)))
	rows = rows[min(int(cursor), len(rows)):]
	if len(rows) > int(limit) {
		rows = rows[:limit]
		setNextLink(w, r, cursor+limit)
	}
	return rows
}
