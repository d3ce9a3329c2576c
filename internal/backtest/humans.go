package backtest

import (
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/forecastbench"
	"github.com/forecast-arena/arena/score"
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
// medians on the given resolved items (by SourceID) that the humans
// forecast: the models and the humans face exactly the same items, each
// model only those the contamination guard let it forecast. With
// individuals, every human forecaster is a row too. The humans' rows are
// marked Human. It returns nil when no item has a human forecast.
func HumanBoard(inPlan map[string]*arena.Market, rows []score.Row, humans []forecastbench.HumanAggregate, individuals bool, opt score.BoardOptions) ([]score.BoardRow, error) {
	// Every item resolved Yes or No (a backtest asks nothing else), so no
	// market values are needed.
	items := forecastbench.HumanBoardItems(humans, inPlan, nil, individuals)
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
		items = append(items, score.BoardItem{Forecaster: r.Agent, Item: r.Market, Kind: m.Kind, Resolved: true, Forecast: r.Forecast, Outcome: r.Outcome})
	}
	return score.Board(items, opt)
}
