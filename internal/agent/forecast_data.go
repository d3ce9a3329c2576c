package agent

import (
	"context"
	"fmt"
	"time"

	arena "github.com/forecast-arena/arena"
)

// StoreData answers the round tools from the arena's store, as of AsOf
// (each market through the AsOf guard): no price point dated after AsOf
// is returned, and a market's status and resolution are never shown. The
// current price is the latest stored YES price point at or before AsOf;
// with Live set and no such point in the history window, the market's
// listed price (stamped with its update time, when that is not after
// AsOf) stands in. A backtest leaves Live unset, so only prices dated up
// to the question's freeze time are shown.
type StoreData struct {
	Store   arena.MarketStore
	Markets []*arena.Market // by round index
	AsOf    time.Time
	// Times, when set, holds each market's own as-of time (a backtest: the
	// question's freeze time), overriding AsOf.
	Times []time.Time
	Live  bool
}

// guard is market i's as-of guard.
func (d *StoreData) guard(i int) AsOf {
	t := d.AsOf
	if i < len(d.Times) && !d.Times[i].IsZero() {
		t = d.Times[i]
	}
	return AsOf{Time: t, Live: d.Live}
}

// Details implements MarketData.
func (d *StoreData) Details(ctx context.Context, i int) (MarketDetails, error) {
	m, err := d.market(i)
	if err != nil {
		return MarketDetails{}, err
	}
	out := MarketDetails{Index: i, Question: m.Question, Criteria: m.Criteria, Background: m.Background,
		Category: m.Category, CloseTime: m.CloseTime.UTC(), Outcomes: m.Outcomes}
	g := d.guard(i)
	pts, err := d.points(ctx, m, g)
	if err != nil {
		return out, err
	}
	if n := len(pts); n > 0 {
		p := pts[n-1].Price
		out.Price, out.PriceTime = &p, pts[n-1].Time.UTC()
	} else if p, ok := m.YesPrice(); ok && g.Listed(m.UpdatedAt) {
		out.Price, out.PriceTime = &p, m.UpdatedAt.UTC()
	}
	return out, nil
}

// History implements MarketData: the YES prices of the last HistoryDays
// days up to AsOf, sampled to at most HistoryPoints.
func (d *StoreData) History(ctx context.Context, i int) ([]HistoryPoint, error) {
	m, err := d.market(i)
	if err != nil {
		return nil, err
	}
	pts, err := d.points(ctx, m, d.guard(i))
	if err != nil {
		return nil, err
	}
	out := make([]HistoryPoint, 0, len(pts))
	for _, p := range SamplePoints(pts, HistoryPoints) {
		out = append(out, HistoryPoint{T: p.Time.UTC(), P: p.Price})
	}
	return out, nil
}

func (d *StoreData) market(i int) (*arena.Market, error) {
	if i < 0 || i >= len(d.Markets) || d.Markets[i] == nil {
		return nil, fmt.Errorf("no market at index %d", i)
	}
	return d.Markets[i], nil
}

// points is the market's YES history of the last HistoryDays days that
// g lets the agent see.
func (d *StoreData) points(ctx context.Context, m *arena.Market, g AsOf) ([]arena.PricePoint, error) {
	if !m.IsBinary() {
		return nil, nil
	}
	pts, err := d.Store.PriceHistory(ctx, m.ID, arena.Yes, g.Time.Add(-HistoryDays*24*time.Hour), g.Time)
	if err != nil {
		return nil, err
	}
	// The store's bounds are inclusive; the guard is the rule all the same.
	return g.Points(pts), nil
}

// SamplePoints keeps at most n points, evenly spaced by position, always
// including the first and the last (the latest price).
func SamplePoints(pts []arena.PricePoint, n int) []arena.PricePoint {
	if len(pts) <= n || n <= 0 {
		return pts
	}
	if n == 1 {
		return pts[len(pts)-1:]
	}
	out := make([]arena.PricePoint, 0, n)
	for j := 0; j < n; j++ {
		out = append(out, pts[j*(len(pts)-1)/(n-1)])
	}
	return out
}
