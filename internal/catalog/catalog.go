// Package catalog reads the markets the arena knows for those that only
// show them, the API and the dashboard: the read half of
// arena.MarketStore, so that a reader holding it cannot save or resolve a
// market.
package catalog

import (
	"context"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/agent"
)

// Service reads the markets of Store.
type Service struct {
	Store arena.MarketStore
}

// Market is the market of an arena id; ENOTFOUND for an unknown one.
func (s *Service) Market(ctx context.Context, id int64) (*arena.Market, error) {
	return s.Store.Market(ctx, id)
}

// MarketsByID are the markets of ids that exist, by id.
func (s *Service) MarketsByID(ctx context.Context, ids []int64) (map[int64]*arena.Market, error) {
	return s.Store.MarketsByID(ctx, ids)
}

// Markets are the markets f selects, highest volume first.
func (s *Service) Markets(ctx context.Context, f arena.MarketFilter) ([]*arena.Market, error) {
	return s.Store.Markets(ctx, f)
}

// List is a page of the market list f selects, and how many it selects
// in all.
func (s *Service) List(ctx context.Context, f arena.MarketListFilter) ([]arena.MarketListing, int, error) {
	return s.Store.MarketList(ctx, f)
}

// Facets are the categories, sources and venues the markets have.
func (s *Service) Facets(ctx context.Context) (arena.MarketFacets, error) {
	return s.Store.MarketFacets(ctx)
}

// endOfTime bounds a whole price history.
var endOfTime = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

// Prices is m's whole price history of its first outcome (Yes for a
// market without outcomes), oldest first: the line a market's page draws.
func (s *Service) Prices(ctx context.Context, m *arena.Market) ([]arena.PricePoint, error) {
	yes := arena.Yes
	if len(m.Outcomes) > 0 {
		yes = m.Outcomes[0]
	}
	return s.Store.PriceHistory(ctx, m.ID, yes, time.Time{}, endOfTime)
}

// Tools is market id as the round tools (getMarketDetails,
// getPriceHistory) show it at asOf: what an LLM forecaster of a round is
// shown of it.
func (s *Service) Tools(ctx context.Context, id int64, asOf time.Time) (agent.MarketDetails, []agent.HistoryPoint, error) {
	m, err := s.Store.Market(ctx, id)
	if err != nil {
		return agent.MarketDetails{}, nil, err
	}
	data := &agent.StoreData{Store: s.Store, Markets: []*arena.Market{m}, AsOf: asOf, Live: true}
	d, err := data.Details(ctx, 0)
	if err != nil {
		return agent.MarketDetails{}, nil, err
	}
	h, err := data.History(ctx, 0)
	if err != nil {
		return agent.MarketDetails{}, nil, err
	}
	return d, h, nil
}
