package view

import (
	"context"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/stats"
)

// HumanBoardPageJSON is the human board page: the board (human rows have
// "human": true) and the questions it scores.
type HumanBoardPageJSON struct {
	Rows      []stats.BoardRow    `json:"rows"`
	Questions []HumanQuestionJSON `json:"questions"`
}

// HumanQuestionJSON is one question of the board with its scored items: a
// market question is one item, a dataset question one per resolution
// date, in date order.
type HumanQuestionJSON struct {
	// Question is the question's first sentence (its items' pages have
	// the whole text); for a dataset question of several dates it says
	// "the resolution date" where each item names its own.
	Question string          `json:"question"`
	Kind     string          `json:"kind"`
	Items    []HumanItemJSON `json:"items"`
}

// HumanItemJSON is one scored item of the board.
type HumanItemJSON struct {
	Item           string  `json:"item"`            // the imported item's source id
	ResolutionDate string  `json:"resolution_date"` // YYYY-MM-DD of a dataset item, "" for a market question
	Question       string  `json:"question"`        // the whole text, as imported
	Outcome        string  `json:"outcome"`
	Median         float64 `json:"median"` // the superforecasters' (or else the public's) median
	Humans         int     `json:"humans"`
}

// HumanItemPageJSON is one item of the board: the question and outcome,
// each human group's median and spread with a few reasoning excerpts, and
// each backtested model's forecast.
type HumanItemPageJSON struct {
	Item string `json:"item"`
	// Brief is the page's heading: the question's first sentence, cut
	// to 120 characters; Question is the whole text.
	Brief          string `json:"brief"`
	Question       string `json:"question"`
	Kind           string `json:"kind"`
	ResolutionDate string `json:"resolution_date"` // YYYY-MM-DD of a dataset item, "" for a market question
	Outcome        string `json:"outcome"`         // Yes, No, or "" while unresolved
	// OtherDates are the question's items on its other resolution dates,
	// in date order.
	OtherDates []HumanDateJSON  `json:"other_dates"`
	Groups     []HumanGroupJSON `json:"groups"`
	Models     []ModelItemJSON  `json:"models"`
}

// HumanDateJSON is one resolution date of a dataset question and its item.
type HumanDateJSON struct {
	Item           string `json:"item"`
	ResolutionDate string `json:"resolution_date"`
}

// HumanGroupJSON is one human group's forecasts of the item.
type HumanGroupJSON struct {
	Name     string             `json:"name"`
	Median   float64            `json:"median"`
	Min      float64            `json:"min"`
	Max      float64            `json:"max"`
	N        int                `json:"n"`
	Excerpts []HumanExcerptJSON `json:"excerpts"`
}

// HumanExcerptJSON is the start of one human's reasoning.
type HumanExcerptJSON struct {
	UserID    string  `json:"user_id"`
	Forecast  float64 `json:"forecast"`
	Reasoning string  `json:"reasoning"`
}

// ModelItemJSON is one model's backtest forecast of the item.
type ModelItemJSON struct {
	Agent    string  `json:"agent"`
	Round    string  `json:"round"`
	Forecast float64 `json:"forecast"`
}

// needHumans refuses the human board's pages without boards that keep
// human forecasts.
func (s *Service) needHumans() error {
	if s.Boards == nil || !s.Boards.Humans() {
		return arena.Errorf(arena.ENOTFOUND, "the human board is not enabled")
	}
	return nil
}

// HumanBoardPage is the human board page (the boards compute it once per
// version of what it reads).
func (s *Service) HumanBoardPage(ctx context.Context) (HumanBoardPageJSON, error) {
	if err := s.needHumans(); err != nil {
		return HumanBoardPageJSON{}, err
	}
	b, err := s.Boards.HumanBoard(ctx)
	if err != nil {
		return HumanBoardPageJSON{}, err
	}
	v := HumanBoardPageJSON{Rows: b.Rows, Questions: make([]HumanQuestionJSON, 0, len(b.Questions))}
	for _, q := range b.Questions {
		v.Questions = append(v.Questions, humanQuestionJSON(q))
	}
	return v, nil
}

// humanQuestionJSON is q as the board lists it, headed by its first
// sentence, with "the resolution date" where each of its several dated
// items names its own.
func humanQuestionJSON(q backtest.HumanQuestion) HumanQuestionJSON {
	out := HumanQuestionJSON{Kind: q.Kind, Items: make([]HumanItemJSON, 0, len(q.Items))}
	for _, it := range q.Items {
		out.Items = append(out.Items, HumanItemJSON{Item: it.Item, ResolutionDate: it.ResolutionDate, Question: it.Question,
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

// HumanItemPage is the page of a human board's item, by its source id:
// the humans' median, spread and reasoning beside each model's forecast.
func (s *Service) HumanItemPage(ctx context.Context, sid string) (HumanItemPageJSON, error) {
	if err := s.needHumans(); err != nil {
		return HumanItemPageJSON{}, err
	}
	it, err := s.Boards.HumanItem(ctx, sid)
	if err != nil {
		return HumanItemPageJSON{}, err
	}
	m := it.Market
	v := HumanItemPageJSON{Item: sid, Question: m.Question, Brief: excerpt(briefQuestion(m.Question), headingRunes), Kind: m.Kind,
		ResolutionDate: it.ResolutionDate, Outcome: m.Resolution, OtherDates: make([]HumanDateJSON, 0, len(it.OtherDates)), Groups: []HumanGroupJSON{}, Models: []ModelItemJSON{}}
	for _, d := range it.OtherDates {
		v.OtherDates = append(v.OtherDates, HumanDateJSON{Item: d.Item, ResolutionDate: d.ResolutionDate})
	}
	for _, a := range it.Groups {
		v.Groups = append(v.Groups, humanGroupJSON(a))
	}
	for _, f := range it.Models {
		v.Models = append(v.Models, ModelItemJSON{Agent: f.Agent, Round: f.Round, Forecast: float64(f.Forecast) / forecast.MaxBps})
	}
	return v, nil
}

// humanGroupJSON is a group's aggregate of an item with the starts of its
// longest reasonings: the longest say the most; ties by user id, so the
// page is the same on every load.
func humanGroupJSON(a forecastbench.HumanAggregate) HumanGroupJSON {
	g := HumanGroupJSON{Name: forecastbench.MedianName(a.Group), Median: a.Median, Min: a.Min, Max: a.Max, N: len(a.Forecasts), Excerpts: []HumanExcerptJSON{}}
	fs := slices.Clone(a.Forecasts)
	slices.SortStableFunc(fs, func(x, y arena.HumanForecast) int { return len(y.Reasoning) - len(x.Reasoning) })
	for _, f := range fs {
		if len(g.Excerpts) == humanExcerpts || strings.TrimSpace(f.Reasoning) == "" {
			break
		}
		g.Excerpts = append(g.Excerpts, HumanExcerptJSON{UserID: f.UserID, Forecast: f.Forecast, Reasoning: excerpt(f.Reasoning, humanExcerptRune)})
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
