package web

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"net/http"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/trading"
)

//go:embed templates/*.html
var templateFS embed.FS

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"num": func(p *float64, format string) string {
		if p == nil {
			return "–"
		}
		return fmt.Sprintf(format, *p)
	},
	"money": func(m arena.Micros) string { return m.String() },
	"pct":   func(v float64) string { return fmt.Sprintf("%+.2f%%", v) },
	"sign": func(p *float64) string {
		switch {
		case p == nil || *p == 0:
			return ""
		case *p > 0:
			return "pos"
		}
		return "neg"
	},
}).ParseFS(templateFS, "templates/*.html"))

func (s *Server) leaderboardPage(w http.ResponseWriter, r *http.Request) {
	if s.Forecast == nil {
		http.NotFound(w, r)
		return
	}
	rows, err := s.Forecast.Leaderboard(r.Context())
	if err != nil {
		s.internal(w, err)
		return
	}
	scored, err := s.Forecast.Store.Rounds(r.Context(), arena.RoundFilter{Status: arena.RoundScored, Now: s.Forecast.Clock()})
	if err != nil {
		s.internal(w, err)
		return
	}
	var trades []trading.LeaderRow
	if s.Trading != nil {
		if trades, err = s.Trading.Leaderboard(r.Context()); err != nil {
			s.internal(w, err)
			return
		}
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "leaderboard.html", struct {
		Rows       []forecast.LeaderboardJSON
		Rounds     int
		Trading    []trading.LeaderRow
		HasTrading bool
	}{rows, len(scored), trades, s.Trading != nil}); err != nil {
		s.internal(w, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	buf.WriteTo(w)
}

// leaderboard serves GET /api/v1/leaderboard?track=forecast|trading.
func (s *Server) leaderboard(w http.ResponseWriter, r *http.Request) {
	switch track := r.URL.Query().Get("track"); track {
	case "", "forecast":
		if s.Forecast == nil {
			WriteError(w, arena.Errorf(arena.ENOTFOUND, "the forecast track is not enabled"))
			return
		}
		rows, err := s.Forecast.Leaderboard(r.Context())
		if err != nil {
			s.internal(w, err)
			return
		}
		WriteJSON(w, http.StatusOK, rows)
	case "trading":
		if s.TradingLeaderboard == nil {
			WriteError(w, arena.Errorf(arena.ENOTFOUND, "the trading track is not enabled"))
			return
		}
		s.TradingLeaderboard(w, r)
	default:
		WriteError(w, arena.Errorf(arena.EINVALID, "track %q: want forecast or trading", track))
	}
}
