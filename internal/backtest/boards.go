package backtest

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/cache"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/stats"
)

// SlowBoard is how long a board's computation may take and still be
// waited for, as the forecast track's analyses: once a large backtest's
// board took longer, readers get the previous board while the new one is
// computed.
const SlowBoard = time.Second

// Boards computes the backtest track's leaderboard and, when the store
// keeps human forecasts, the human board, each once per version of the
// stored data it reads. Whoever builds Boards closes it before the store.
type Boards struct {
	store  arena.BacktestStore
	humans HumanBoardStore // nil when the store keeps no human forecasts
	method scoring.Method
	logger *slog.Logger

	boards      cache.Cache[struct{}, scoring.Board]
	humanBoards cache.Cache[struct{}, HumanBoardView]
}

// NewBoards returns the boards of st's backtest forecasts, scored with m
// (zero: the default method), as the forecast track is scored.
func NewBoards(st arena.BacktestStore, m scoring.Method, logger *slog.Logger) *Boards {
	if m == (scoring.Method{}) {
		m = scoring.DefaultMethod()
	}
	if logger == nil {
		logger = slog.Default()
	}
	b := &Boards{store: st, method: m, logger: logger}
	if h, ok := st.(HumanBoardStore); ok {
		b.humans = h
	}
	b.boards.Slow = SlowBoard
	return b
}

// Close cancels the boards being computed and returns once none is;
// reads that need another computation then fail.
func (b *Boards) Close() {
	b.boards.Close()
	b.humanBoards.Close()
}

// Board is the backtest track's leaderboard, analysed once per set of
// backtest forecasts: while the store's version of the rows is the one it
// was computed from, the rows are not read again.
func (b *Boards) Board(ctx context.Context) (scoring.Board, error) {
	vs, err := b.store.Versions(ctx)
	if err != nil {
		return scoring.Board{}, err
	}
	return b.boards.Get(ctx, struct{}{}, vs.Key(arena.DomainBacktest), func(ctx context.Context) (scoring.Board, error) {
		rows, err := b.store.BacktestForecasts(ctx)
		if err != nil {
			return scoring.Board{}, err
		}
		a, err := scoring.AnalyzeForecasts(ctx, scoredForecasts(rows), b.method, b.logger)
		if err != nil {
			return scoring.Board{}, err
		}
		return a.Board(nil), nil
	})
}

// scoredForecasts converts backtest rows to the frozen-forecast rows the
// scoring reads; rounds are numbered in order of first appearance.
func scoredForecasts(rows []arena.BacktestForecast) []arena.ScoredForecast {
	ids := map[string]uint64{}
	out := make([]arena.ScoredForecast, 0, len(rows))
	for _, r := range rows {
		id, ok := ids[r.Round]
		if !ok {
			id = uint64(len(ids) + 1)
			ids[r.Round] = id
		}
		out = append(out, arena.ScoredForecast{RoundID: id, Agent: r.Agent, MarketID: r.MarketID, Category: r.Category, Event: r.Event,
			Forecast: float64(r.Forecast) / forecast.MaxBps, Benchmark: r.Benchmark, Outcome: r.Outcome})
	}
	return out
}

// Humans reports whether the store keeps human forecasts: without them
// there is no human board.
func (b *Boards) Humans() bool { return b.humans != nil }

// HumanBoardView is the human board (human rows are marked Human) and the
// questions it scores.
type HumanBoardView struct {
	Rows      []stats.BoardRow
	Questions []HumanQuestion
}

// HumanQuestion is one question of the human board with its scored items:
// a market question is one item, a dataset question one per resolution
// date, in date order.
type HumanQuestion struct {
	Kind  string
	Items []HumanItem
}

// HumanItem is one scored item of the human board.
type HumanItem struct {
	Item           string // the imported item's source id
	ResolutionDate string // YYYY-MM-DD of a dataset item, "" for a market question
	Question       string // the whole text, as imported
	Outcome        string
	Median         float64 // the superforecasters' (or else the public's) median
	Humans         int
}

// HumanBoard is built once per version of what it reads (the human
// forecasts, the backtest forecasts and the imported questions' markets):
// a board takes a bootstrap of the whole fit (about half a second on a
// round of 600 items), too much to redo on every request, and any import
// that changes them moves their versions. Without human forecasts in the
// store it is ENOTFOUND.
func (b *Boards) HumanBoard(ctx context.Context) (HumanBoardView, error) {
	if b.humans == nil {
		return HumanBoardView{}, arena.Errorf(arena.ENOTFOUND, "the store keeps no human forecasts")
	}
	vs, err := b.store.Versions(ctx)
	if err != nil {
		return HumanBoardView{}, err
	}
	return b.humanBoards.Get(ctx, struct{}{}, vs.Key(arena.DomainHumans, arena.DomainBacktest, arena.DomainMarkets), b.humanBoard)
}

func (b *Boards) humanBoard(ctx context.Context) (HumanBoardView, error) {
	rows, err := StoredHumanBoard(ctx, b.humans, time.Time{}, time.Time{}, false, false, stats.BoardOptions{Seed: 1})
	if err != nil {
		return HumanBoardView{}, err
	}
	v := HumanBoardView{Rows: rows}
	if v.Rows == nil {
		v.Rows = []stats.BoardRow{}
	}
	aggs, items, err := b.humanRound(ctx)
	if err != nil {
		return HumanBoardView{}, err
	}
	v.Questions = humanQuestions(preferSuper(aggs), items)
	return v, nil
}

// humanRound loads the stored human forecasts, aggregated by group and
// item, and the imported ForecastBench items by SourceID.
func (b *Boards) humanRound(ctx context.Context) ([]forecastbench.HumanAggregate, map[string]*arena.Market, error) {
	fs, err := HumanForecasts(ctx, b.humans, time.Time{}, time.Time{})
	if err != nil || len(fs) == 0 {
		return nil, nil, err
	}
	ms, err := b.humans.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		return nil, nil, err
	}
	bySID := map[string]*arena.Market{}
	for _, m := range ms {
		bySID[m.SourceID] = m
	}
	return forecastbench.Aggregate(fs), bySID, nil
}

// humanQuestions groups the resolved items of the aggregates (the first
// group's aggregate of each item counts) by question, in the order the
// aggregates come, each question's items by date.
func humanQuestions(aggs []forecastbench.HumanAggregate, items map[string]*arena.Market) []HumanQuestion {
	out := []HumanQuestion{}
	at := map[string]int{} // question key → index in out
	seen := map[string]bool{}
	for _, a := range aggs {
		m := items[a.SourceID]
		if m == nil || seen[a.SourceID] || (m.Resolution != arena.Yes && m.Resolution != arena.No) || len(a.Forecasts) == 0 {
			continue
		}
		seen[a.SourceID] = true
		f := a.Forecasts[0]
		it := HumanItem{Item: a.SourceID, Question: m.Question, Outcome: m.Resolution, Median: a.Median, Humans: len(a.Forecasts)}
		if !f.ResolutionDate.IsZero() {
			it.ResolutionDate = f.ResolutionDate.Format(time.DateOnly)
		}
		key := questionOf(f)
		i, ok := at[key]
		if !ok {
			i = len(out)
			at[key] = i
			out = append(out, HumanQuestion{Kind: a.Kind})
		}
		out[i].Items = append(out[i].Items, it)
	}
	for i := range out {
		slices.SortStableFunc(out[i].Items, func(a, b HumanItem) int { return strings.Compare(a.ResolutionDate, b.ResolutionDate) })
	}
	return out
}

// questionOf names the question a human forecast is of, whatever its
// resolution date: the SourceID its market question would have.
func questionOf(f arena.HumanForecast) string {
	return forecastbench.MarketSourceID(f.Due, f.Source, f.QuestionID)
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

// HumanItemView is one item of the human board: its imported market, its
// resolution date (YYYY-MM-DD of a dataset item, "" for a market
// question), the question's items on its other resolution dates in date
// order, each human group's aggregate of it (the superforecasters'
// first) and the models' backtest forecasts of it.
type HumanItemView struct {
	Market         *arena.Market
	ResolutionDate string
	OtherDates     []HumanDate
	Groups         []forecastbench.HumanAggregate
	Models         []arena.BacktestForecast
}

// HumanDate is one resolution date of a dataset question and its item.
type HumanDate struct {
	Item           string
	ResolutionDate string
}

// HumanItem reads the item sid (a SourceID) of the human board: ENOTFOUND
// when no human forecast it or it was not imported.
func (b *Boards) HumanItem(ctx context.Context, sid string) (HumanItemView, error) {
	if b.humans == nil {
		return HumanItemView{}, arena.Errorf(arena.ENOTFOUND, "the store keeps no human forecasts")
	}
	aggs, items, err := b.humanRound(ctx)
	if err != nil {
		return HumanItemView{}, err
	}
	v := HumanItemView{Market: items[sid], OtherDates: []HumanDate{}}
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
			v.OtherDates = append(v.OtherDates, HumanDate{Item: a.SourceID, ResolutionDate: f.ResolutionDate.Format(time.DateOnly)})
		}
	}
	slices.SortFunc(v.OtherDates, func(a, b HumanDate) int { return strings.Compare(a.ResolutionDate, b.ResolutionDate) })
	for _, a := range preferSuper(aggs) {
		if a.SourceID == sid {
			v.Groups = append(v.Groups, a)
		}
	}
	if v.Market == nil || len(v.Groups) == 0 {
		return HumanItemView{}, arena.Errorf(arena.ENOTFOUND, "no human forecasts of item %q", sid)
	}
	rows, err := b.humans.BacktestForecasts(ctx)
	if err != nil {
		return HumanItemView{}, err
	}
	for _, f := range rows {
		if f.SourceID == sid {
			v.Models = append(v.Models, f)
		}
	}
	return v, nil
}
