package web

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/score"
)

// humanStore is what the human board pages read; the forecasters' store
// offers it when it keeps human forecasts.
type humanStore interface {
	backtest.HumanBoardStore
}

// registerHumans mounts the human board pages (after RegisterForecasters):
//
//	GET /backtest/humans               the board: human medians beside the backtested models
//	GET /backtest/humans/{item}        one item: the humans' median, spread and reasoning beside each model's forecast
func (s *Server) registerHumans(st humanStore) {
	s.humans = st
	s.page("/backtest/humans", "/api/v1/pages/backtest/humans", "humans.html", s.humansView)
	s.page("/backtest/humans/{item}", "/api/v1/pages/backtest/humans/{item}", "human_item.html", s.humanItemView)
}

// HumanBoardPageJSON is the human board page: the board (human rows have
// "human": true) and the questions it scores.
type HumanBoardPageJSON struct {
	Rows      []score.BoardRow    `json:"rows"`
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

// humanRound loads the stored human forecasts, aggregated by group and
// item, and the imported ForecastBench items by SourceID.
func (s *Server) humanRound(ctx context.Context) ([]forecastbench.HumanAggregate, map[string]*arena.Market, error) {
	fs, err := backtest.HumanForecasts(ctx, s.humans, time.Time{}, time.Time{})
	if err != nil || len(fs) == 0 {
		return nil, nil, err
	}
	ms, err := s.humans.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		return nil, nil, err
	}
	bySID := map[string]*arena.Market{}
	for _, m := range ms {
		bySID[m.SourceID] = m
	}
	return forecastbench.Aggregate(fs), bySID, nil
}

// humansView builds the board once per version of what it reads (the
// human forecasts, the backtest forecasts and the imported questions'
// markets): a board takes a bootstrap of the whole fit (about half a
// second on a round of 600 items), too much to redo on every request,
// and any import that changes them moves their versions.
func (s *Server) humansView(r *http.Request) (any, error) {
	ctx := r.Context()
	vs, err := s.forecasters.Versions(ctx)
	if err != nil {
		return nil, err
	}
	return s.humanBoards.Get(ctx, struct{}{}, vs.Key(arena.DomainHumans, arena.DomainBacktest, arena.DomainMarkets), s.humanBoardPage)
}

func (s *Server) humanBoardPage(ctx context.Context) (HumanBoardPageJSON, error) {
	rows, err := backtest.StoredHumanBoard(ctx, s.humans, time.Time{}, time.Time{}, false, false, score.BoardOptions{Seed: 1})
	if err != nil {
		return HumanBoardPageJSON{}, err
	}
	v := HumanBoardPageJSON{Rows: rows}
	if v.Rows == nil {
		v.Rows = []score.BoardRow{}
	}
	aggs, items, err := s.humanRound(ctx)
	if err != nil {
		return HumanBoardPageJSON{}, err
	}
	v.Questions = humanQuestions(preferSuper(aggs), items)
	return v, nil
}

// humanQuestions groups the resolved items of the aggregates (the first
// group's aggregate of each item counts) by question, in the order the
// aggregates come, each question's items by date.
func humanQuestions(aggs []forecastbench.HumanAggregate, items map[string]*arena.Market) []HumanQuestionJSON {
	out := []HumanQuestionJSON{}
	at := map[string]int{} // question key → index in out
	seen := map[string]bool{}
	for _, a := range aggs {
		m := items[a.SourceID]
		if m == nil || seen[a.SourceID] || (m.Resolution != arena.Yes && m.Resolution != arena.No) || len(a.Forecasts) == 0 {
			continue
		}
		seen[a.SourceID] = true
		f := a.Forecasts[0]
		it := HumanItemJSON{Item: a.SourceID, Question: m.Question, Outcome: m.Resolution, Median: a.Median, Humans: len(a.Forecasts)}
		if !f.ResolutionDate.IsZero() {
			it.ResolutionDate = f.ResolutionDate.Format(time.DateOnly)
		}
		key := questionOf(f)
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, HumanQuestionJSON{Kind: a.Kind})
		}
		out[i].Items = append(out[i].Items, it)
	}
	for i := range out {
		q := &out[i]
		slices.SortStableFunc(q.Items, func(a, b HumanItemJSON) int { return strings.Compare(a.ResolutionDate, b.ResolutionDate) })
		first := q.Items[0]
		q.Question = briefQuestion(first.Question)
		if len(q.Items) > 1 && first.ResolutionDate != "" {
			q.Question = strings.ReplaceAll(q.Question, first.ResolutionDate, "the resolution date")
		}
	}
	return out
}

// questionOf names the question a human forecast is of, whatever its
// resolution date: the SourceID its market question would have.
func questionOf(f arena.HumanForecast) string {
	return forecastbench.MarketSourceID(f.Due, f.Source, f.QuestionID)
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

// preferSuper puts the superforecasters' aggregates first.
func preferSuper(aggs []forecastbench.HumanAggregate) []forecastbench.HumanAggregate {
	out := slices.Clone(aggs)
	slices.SortStableFunc(out, func(a, b forecastbench.HumanAggregate) int {
		switch {
		case a.Group == b.Group:
			return 0
		case a.Group == arena.HumanSuper:
			return -1
		case b.Group == arena.HumanSuper:
			return 1
		}
		return 0
	})
	return out
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

// Excerpts per group and their length: enough to see how the humans
// reasoned without turning the page into the file.
const (
	humanExcerpts    = 3
	humanExcerptRune = 400
)

func (s *Server) humanItemView(r *http.Request) (any, error) {
	ctx := r.Context()
	sid := r.PathValue("item")
	aggs, items, err := s.humanRound(ctx)
	if err != nil {
		return nil, err
	}
	m := items[sid]
	v := HumanItemPageJSON{Item: sid, OtherDates: []HumanDateJSON{}, Groups: []HumanGroupJSON{}, Models: []ModelItemJSON{}}
	// The question this item asks, to find its other dates.
	key := ""
	for _, a := range aggs {
		if a.SourceID == sid && len(a.Forecasts) > 0 {
			f := a.Forecasts[0]
			key = questionOf(f)
			if !f.ResolutionDate.IsZero() {
				v.ResolutionDate = f.ResolutionDate.Format(time.DateOnly)
			}
			break
		}
	}
	dates := map[string]bool{}
	for _, a := range aggs {
		if len(a.Forecasts) == 0 || a.SourceID == sid || dates[a.SourceID] || items[a.SourceID] == nil {
			continue
		}
		if f := a.Forecasts[0]; !f.ResolutionDate.IsZero() && questionOf(f) == key {
			dates[a.SourceID] = true
			v.OtherDates = append(v.OtherDates, HumanDateJSON{Item: a.SourceID, ResolutionDate: f.ResolutionDate.Format(time.DateOnly)})
		}
	}
	slices.SortFunc(v.OtherDates, func(a, b HumanDateJSON) int { return strings.Compare(a.ResolutionDate, b.ResolutionDate) })
	for _, a := range preferSuper(aggs) {
		if a.SourceID != sid {
			continue
		}
		g := HumanGroupJSON{Name: forecastbench.MedianName(a.Group), Median: a.Median, Min: a.Min, Max: a.Max, N: len(a.Forecasts), Excerpts: []HumanExcerptJSON{}}
		// The longest reasonings say the most; ties by user id, so the
		// page is the same on every load.
		fs := slices.Clone(a.Forecasts)
		slices.SortStableFunc(fs, func(x, y arena.HumanForecast) int { return len(y.Reasoning) - len(x.Reasoning) })
		for _, f := range fs {
			if len(g.Excerpts) == humanExcerpts || strings.TrimSpace(f.Reasoning) == "" {
				break
			}
			g.Excerpts = append(g.Excerpts, HumanExcerptJSON{UserID: f.UserID, Forecast: f.Forecast, Reasoning: excerpt(f.Reasoning, humanExcerptRune)})
		}
		v.Groups = append(v.Groups, g)
	}
	if m == nil || len(v.Groups) == 0 {
		return nil, arena.Errorf(arena.ENOTFOUND, "no human forecasts of item %q", sid)
	}
	v.Question, v.Brief, v.Kind, v.Outcome = m.Question, excerpt(briefQuestion(m.Question), headingRunes), m.Kind, m.Resolution
	rows, err := s.humans.BacktestForecasts(ctx)
	if err != nil {
		return nil, err
	}
	for _, f := range rows {
		if f.SourceID == sid {
			v.Models = append(v.Models, ModelItemJSON{Agent: f.Agent, Round: f.Round, Forecast: float64(f.Forecast) / forecast.MaxBps})
		}
	}
	return v, nil
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
