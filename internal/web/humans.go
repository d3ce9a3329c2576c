package web

import (
	"net/http"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/internal/web/view"
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

// humansView is the human board page (the boards compute it once per
// version of what it reads).
func (s *Server) humansView(r *http.Request) (any, error) {
	b, err := s.boards.HumanBoard(r.Context())
	if err != nil {
		return nil, err
	}
	v := view.HumanBoardPageJSON{Rows: b.Rows, Questions: make([]view.HumanQuestionJSON, 0, len(b.Questions))}
	for _, q := range b.Questions {
		v.Questions = append(v.Questions, humanQuestionJSON(q))
	}
	return v, nil
}

// humanQuestionJSON is q as the board lists it, headed by its first
// sentence, with "the resolution date" where each of its several dated
// items names its own.
func humanQuestionJSON(q backtest.HumanQuestion) view.HumanQuestionJSON {
	out := view.HumanQuestionJSON{Kind: q.Kind, Items: make([]view.HumanItemJSON, 0, len(q.Items))}
	for _, it := range q.Items {
		out.Items = append(out.Items, view.HumanItemJSON{Item: it.Item, ResolutionDate: it.ResolutionDate, Question: it.Question,
			Outcome: it.Outcome, Median: it.Median, Humans: it.Humans})
	}
	first := q.Items[0]
	out.Question = briefQuestion(first.Question)
	if len(q.Items) > 1 && first.ResolutionDate != "" {
		out.Question = strings.ReplaceAll(out.Question, first.ResolutionDate, "the resolution date")
	}
	return out
}

// briefRunes bounds a question's first sentence as the board shows it;
// headingRunes the heading of its own page, which has the whole text below.
const (
	briefRunes   = 300
	headingRunes = 120
)

// briefQuestion is a question's first sentence: ForecastBench's dataset
// questions go on with a worked example ("e.g. If the forecast due date
// is …") and notes, which the question's own page shows in full. Without
// a question mark early enough it is the start of the text.
func briefQuestion(q string) string {
	q = strings.Join(strings.Fields(q), " ")
	if i := strings.IndexByte(q, '?'); i >= 0 && utf8.RuneCountInString(q[:i+1]) <= briefRunes {
		return q[:i+1]
	}
	return excerpt(q, briefRunes*2/3)
}

// Excerpts per group and their length: enough to see how the humans
// reasoned without turning the page into the file.
const (
	humanExcerpts    = 3
	humanExcerptRune = 400
)

func (s *Server) humanItemView(r *http.Request) (any, error) {
	sid := r.PathValue("item")
	it, err := s.boards.HumanItem(r.Context(), sid)
	if err != nil {
		return nil, err
	}
	m := it.Market
	v := view.HumanItemPageJSON{Item: sid, Question: m.Question, Brief: excerpt(briefQuestion(m.Question), headingRunes), Kind: m.Kind,
		ResolutionDate: it.ResolutionDate, Outcome: m.Resolution, OtherDates: make([]view.HumanDateJSON, 0, len(it.OtherDates)), Groups: []view.HumanGroupJSON{}, Models: []view.ModelItemJSON{}}
	for _, d := range it.OtherDates {
		v.OtherDates = append(v.OtherDates, view.HumanDateJSON{Item: d.Item, ResolutionDate: d.ResolutionDate})
	}
	for _, a := range it.Groups {
		v.Groups = append(v.Groups, humanGroupJSON(a))
	}
	for _, f := range it.Models {
		v.Models = append(v.Models, view.ModelItemJSON{Agent: f.Agent, Round: f.Round, Forecast: float64(f.Forecast) / forecast.MaxBps})
	}
	return v, nil
}

// humanGroupJSON is a group's aggregate of an item with the starts of its
// longest reasonings: the longest say the most; ties by user id, so the
// page is the same on every load.
func humanGroupJSON(a forecastbench.HumanAggregate) view.HumanGroupJSON {
	g := view.HumanGroupJSON{Name: forecastbench.MedianName(a.Group), Median: a.Median, Min: a.Min, Max: a.Max, N: len(a.Forecasts), Excerpts: []view.HumanExcerptJSON{}}
	fs := slices.Clone(a.Forecasts)
	slices.SortStableFunc(fs, func(x, y arena.HumanForecast) int { return len(y.Reasoning) - len(x.Reasoning) })
	for _, f := range fs {
		if len(g.Excerpts) == humanExcerpts || strings.TrimSpace(f.Reasoning) == "" {
			break
		}
		g.Excerpts = append(g.Excerpts, view.HumanExcerptJSON{UserID: f.UserID, Forecast: f.Forecast, Reasoning: excerpt(f.Reasoning, humanExcerptRune)})
	}
	return g
}

// excerpt cuts s to at most n runes, on a word boundary when one is near.
func excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)[:n]
	if i := strings.LastIndexByte(string(r), ' '); i > len(string(r))*3/4 {
		return string(r)[:i] + " …"
	}
	return string(r) + "…"
}
