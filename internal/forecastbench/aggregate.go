package forecastbench

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
)

// Board names of the human groups' medians, as ForecastBench's human
// leaderboard names them.
const (
	SuperMedian  = "Superforecaster median forecast"
	PublicMedian = "Public median forecast"
)

// MedianName is the board name of a group's median.
func MedianName(group string) string {
	if group == arena.HumanPublic {
		return PublicMedian
	}
	return SuperMedian
}

// IndividualName is the board name of one human forecaster: the group and
// the pseudonymous user id ForecastBench publishes.
func IndividualName(group, userID string) string {
	if group == arena.HumanPublic {
		return "Public forecaster " + userID
	}
	return "Superforecaster " + userID
}

// HumanAggregate is a group's forecasts of one item (a market question, or
// a dataset question on one resolution date) and their median, the
// group's forecast as ForecastBench's human leaderboard computes it.
type HumanAggregate struct {
	Group    string
	SourceID string // the imported item's SourceID
	Kind     string
	Median   float64
	Min, Max float64
	// Forecasts are the individual forecasts, by user id.
	Forecasts []arena.HumanForecast
}

// SourceIDOf is the SourceID of the imported item a human forecast is of.
func SourceIDOf(f arena.HumanForecast) string {
	if f.ResolutionDate.IsZero() {
		return MarketSourceID(f.Due, f.Source, f.QuestionID)
	}
	return DatasetSourceID(f.Due, f.Source, f.QuestionID, f.ResolutionDate)
}

// Aggregate groups forecasts by group and item and takes each item's
// median; the result is sorted by group, then SourceID.
func Aggregate(fs []arena.HumanForecast) []HumanAggregate {
	type key struct{ group, sid string }
	idx := map[key]int{}
	var out []HumanAggregate
	for _, f := range fs {
		k := key{f.Group, SourceIDOf(f)}
		i, ok := idx[k]
		if !ok {
			kind, _ := KindOf(f.Source)
			i = len(out)
			idx[k] = i
			out = append(out, HumanAggregate{Group: f.Group, SourceID: k.sid, Kind: kind})
		}
		out[i].Forecasts = append(out[i].Forecasts, f)
	}
	for i := range out {
		a := &out[i]
		slices.SortFunc(a.Forecasts, func(x, y arena.HumanForecast) int { return strings.Compare(x.UserID, y.UserID) })
		v := make([]float64, len(a.Forecasts))
		for j, f := range a.Forecasts {
			v[j] = f.Forecast
		}
		a.Median, a.Min, a.Max = stats.Median(v), slices.Min(v), slices.Max(v)
	}
	slices.SortFunc(out, func(x, y HumanAggregate) int {
		if c := strings.Compare(x.Group, y.Group); c != 0 {
			return c
		}
		return strings.Compare(x.SourceID, y.SourceID)
	})
	return out
}

// BoardOutcome is what an imported item is scored against on a human
// board: 1 or 0 once it resolved Yes or No; for a market question not yet
// resolved, the market's value that the resolution set reported (values,
// by SourceID: see MarketValues), as ForecastBench scores unresolved
// market questions. ok is false for an item that cannot be scored: void,
// a dataset question not yet resolved, or a market question the
// resolution set did not report on.
func BoardOutcome(m *arena.Market, values map[string]float64) (outcome float64, resolved, ok bool) {
	switch m.Resolution {
	case arena.Yes:
		return 1, true, true
	case arena.No:
		return 0, true, true
	case "":
		if m.Kind != arena.KindMarket {
			return 0, false, false
		}
		v, has := values[m.SourceID]
		return v, false, has
	}
	return 0, false, false
}

// MarketValues reads, for each unresolved market question of ms, the
// latest value a resolution set reported (its last PriceValue point); a
// question's freeze value or any other price does not count, so a
// question the resolution set left out is not scored.
func MarketValues(ctx context.Context, st arena.MarketStore, ms []*arena.Market) (map[string]float64, error) {
	out := map[string]float64{}
	for _, m := range ms {
		if m.Kind != arena.KindMarket || m.Resolution != "" {
			continue
		}
		pts, err := st.PriceHistory(ctx, m.ID, arena.Yes, time.Time{}, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC))
		if err != nil {
			return nil, fmt.Errorf("forecastbench: values of %s: %w", m.SourceID, err)
		}
		for _, p := range pts {
			if p.Source == PriceValue {
				out[m.SourceID] = p.Price
			}
		}
	}
	return out, nil
}

// HumanBoardItems turns the aggregates into board items against the
// imported items (by SourceID): each group's median as one forecaster and,
// with individuals, every human as one. Items the store does not hold, or
// that cannot be scored yet, are left out.
func HumanBoardItems(aggs []HumanAggregate, items map[string]*arena.Market, values map[string]float64, individuals bool) []stats.BoardItem {
	var out []stats.BoardItem
	for _, a := range aggs {
		m := items[a.SourceID]
		if m == nil {
			continue
		}
		o, resolved, ok := BoardOutcome(m, values)
		if !ok {
			continue
		}
		it := stats.BoardItem{Forecaster: MedianName(a.Group), Human: true, Item: a.SourceID, Kind: a.Kind, Resolved: resolved, Forecast: a.Median, Outcome: o}
		out = append(out, it)
		if individuals {
			for _, f := range a.Forecasts {
				it.Forecaster, it.Forecast = IndividualName(a.Group, f.UserID), f.Forecast
				out = append(out, it)
			}
		}
	}
	return out
}
