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

func (s *Server) leaderboardPage(w http.ResponseWriter, r *http.Request) error {
	if s.Forecast == nil {
		return arena.Errorf(arena.ENOTFOUND, "the forecast track is not enabled")
	}
	rows, err := s.Forecast.Leaderboard(r.Context())
	if err != nil {
		return err
	}
	scored, err := s.Forecast.ScoredRounds(r.Context())
	if err != nil {
		return err
	}
	var trades []trading.LeaderRow
	if s.Trading != nil {
		if trades, err = s.Trading.Leaderboard(r.Context()); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "leaderboard.html", struct {
		Rows       []forecast.LeaderboardJSON
		Rounds     int
		Trading    []trading.LeaderRow
		HasTrading bool
	}{rows, scored, trades, s.Trading != nil}); err != nil {
		return fmt.Errorf("web: render leaderboard: %w", err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	buf.WriteTo(w)
	return nil
}

// leaderboard serves GET /api/v1/leaderboard?track=forecast|trading.
func (s *Server) leaderboard(w http.ResponseWriter, r *http.Request) error {
	switch track := r.URL.Query().Get("track"); track {
	case "", "forecast":
		if s.Forecast == nil {
			return arena.Errorf(arena.ENOTFOUND, "the forecast track is not enabled")
		}
		rows, err := s.Forecast.Leaderboard(r.Context())
		if err != nil {
			return err
		}
		WriteJSON(w, http.StatusOK, rows)
		return nil
	case "trading":
		if s.Trading == nil {
			return arena.Errorf(arena.ENOTFOUND, "the trading track is not enabled")
		}
		return s.tradingLeaderboard(w, r)
	case "backtest":
		return s.backtestLeaderboard(w, r)
	default:
		return arena.Errorf(arena.EINVALID, "track %q: want forecast, trading or backtest", track)
	}
}
