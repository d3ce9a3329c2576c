package backtest

import (
	"context"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/stats"
)

// HumanItems lists, by forecast due date, the items (SourceIDs) a round's
// humans forecast: the question set a backtest of that round asks the
// models. Rounds without human forecasts are absent.
func HumanItems(fs []arena.HumanForecast) map[time.Time]map[string]bool {
	out := map[time.Time]map[string]bool{}
	for _, f := range fs {
		if out[f.Due] == nil {
			out[f.Due] = map[string]bool{}
		}
		out[f.Due][forecastbench.SourceIDOf(f)] = true
	}
	return out
}

// PlanItems are the plan's questions by SourceID.
func PlanItems(plan *Plan) map[string]*arena.Market {
	out := map[string]*arena.Market{}
	for _, rd := range plan.Rounds {
		for _, q := range rd.Questions {
			out[q.Market.SourceID] = q.Market
		}
	}
	return out
}

// HumanBoard scores the models' forecasts (rows) and the human groups'
// medians on the given items (by SourceID) that the humans forecast: the
// models and the humans face the same items, each model only those the
// contamination guard let it forecast. values are the reported values of
// unresolved market items (nil when all resolved, as in a backtest). With
// individuals, every human forecaster is a row too. The humans' rows are
// marked Human. It returns nil when no item has a human forecast. It stops
// with ctx.
func HumanBoard(ctx context.Context, inPlan map[string]*arena.Market, rows []stats.Row, humans []forecastbench.HumanAggregate, values map[string]float64, individuals bool, opt stats.BoardOptions) ([]stats.BoardRow, error) {
	items := forecastbench.HumanBoardItems(humans, inPlan, values, individuals)
	if len(items) == 0 {
		return nil, nil
	}
	onBoard := map[string]bool{}
	for _, it := range items {
		onBoard[it.Item] = true
	}
	for _, r := range rows {
		m := inPlan[r.Market]
		if m == nil || !onBoard[r.Market] {
			continue
		}
		items = append(items, stats.BoardItem{Forecaster: r.Agent, Item: r.Market, Kind: m.Kind, Resolved: true, Forecast: r.Forecast, Outcome: r.Outcome})
	}
	return stats.Board(ctx, items, opt)
}

// HumanBoardStore is what StoredHumanBoard reads.
type HumanBoardStore interface {
	arena.MarketStore
	arena.HumanStore
	arena.BacktestStore
}

// HumanForecasts loads the stored human forecasts of the rounds due within
// [from, to] (zero bounds are open).
func HumanForecasts(ctx context.Context, st arena.HumanStore, from, to time.Time) ([]arena.HumanForecast, error) {
	sets, err := st.HumanSets(ctx)
	if err != nil {
		return nil, err
	}
	var out []arena.HumanForecast
	seen := map[time.Time]bool{}
	for _, s := range sets {
		if seen[s.Due] || (!from.IsZero() && s.Due.Before(from)) || (!to.IsZero() && s.Due.After(to)) {
			continue
		}
		seen[s.Due] = true
		fs, err := st.HumanForecasts(ctx, s.Due)
		if err != nil {
			return nil, err
		}
		out = append(out, fs...)
	}
	return out, nil
}

// StoredHumanBoard builds the board of the stored backtest forecasts and
// human forecasts of the rounds due within [from, to]: nil when no round
// there has human forecasts. Items are the resolved ones the humans
// forecast, and once models were backtested on them, those the models
// were asked. With unresolved, the market questions the humans forecast
// that had not resolved are added, scored against the latest value the
// resolution set reported, as ForecastBench scores them; no model is asked
// those, so they count for the humans alone.
func StoredHumanBoard(ctx context.Context, db HumanBoardStore, from, to time.Time, individuals, unresolved bool, opt stats.BoardOptions) ([]stats.BoardRow, error) {
	fs, err := HumanForecasts(ctx, db, from, to)
	if err != nil || len(fs) == 0 {
		return nil, err
	}
	human := HumanItems(fs)
	ms, err := db.Markets(ctx, arena.MarketFilter{Source: arena.SourceForecastBench})
	if err != nil {
		return nil, err
	}
	items := map[string]*arena.Market{}
	var open []*arena.Market
	for _, m := range ms {
		due, err := DueDate(m.SourceID)
		switch {
		case err != nil || !human[due][m.SourceID]:
		case m.Resolution == arena.Yes || m.Resolution == arena.No:
			items[m.SourceID] = m
		case m.Resolution == "" && m.Kind == arena.KindMarket:
			open = append(open, m)
		}
	}
	stored, err := db.BacktestForecasts(ctx)
	if err != nil {
		return nil, err
	}
	rows := ScoreRows(stored, func(f arena.BacktestForecast) bool { return items[f.SourceID] != nil })
	// Once models were backtested on the round, the board holds the items
	// they were asked (a round's last questions that fill no backtest
	// round are left out of both sides), as the backtest's own board does.
	if len(rows) > 0 {
		asked := map[string]*arena.Market{}
		for _, r := range rows {
			asked[r.Market] = items[r.Market]
		}
		items = asked
	}
	var values map[string]float64
	if unresolved {
		if values, err = forecastbench.MarketValues(ctx, db, open); err != nil {
			return nil, err
		}
		for _, m := range open {
			items[m.SourceID] = m
		}
	}
	return HumanBoard(ctx, items, rows, forecastbench.Aggregate(fs), values, individuals, opt)
}
