package polymarket

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sort"
	"sync"
	"time"

	"github.com/forecast-arena/arena"
)

// memStore is an in-memory arena.MarketStore for the package tests; the
// CLI test exercises the real SQLite store.
type memStore struct {
	mu       sync.Mutex
	markets  map[int64]*arena.Market
	prices   map[int64][]arena.PricePoint
	next     int64
	saves    int   // SaveMarkets calls
	failSave error // returned by SaveMarkets when set
}

func newMemStore() *memStore {
	return &memStore{markets: map[int64]*arena.Market{}, prices: map[int64][]arena.PricePoint{}}
}

func clone(m *arena.Market) *arena.Market {
	c := *m
	c.Outcomes = append([]string(nil), m.Outcomes...)
	c.TokenIDs = append([]string(nil), m.TokenIDs...)
	if m.Prices != nil {
		c.Prices = make(map[string]float64, len(m.Prices))
		for k, v := range m.Prices {
			c.Prices[k] = v
		}
	}
	c.History = nil
	return &c
}

func (s *memStore) SaveMarkets(ctx context.Context, ms []*arena.Market) (arena.SaveResult, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saves++
	var res arena.SaveResult
	if s.failSave != nil {
		return res, s.failSave
	}
	seen := map[string]bool{}
	for _, m := range ms {
		if err := m.Validate(); err != nil {
			return arena.SaveResult{}, err
		}
		key := m.Source + "/" + m.SourceID
		if seen[key] {
			return arena.SaveResult{}, fmt.Errorf("duplicate market %s in one batch", key)
		}
		seen[key] = true
	}
	for _, m := range ms {
		var prev *arena.Market
		for _, p := range s.markets {
			if p.Source == m.Source && p.SourceID == m.SourceID {
				prev = p
			}
		}
		c := clone(m)
		switch {
		case prev == nil:
			s.next++
			c.ID = s.next
			res.Inserted++
		default:
			c.ID = prev.ID
			cp := clone(prev)
			cp.UpdatedAt, c.UpdatedAt = time.Time{}, time.Time{}
			if reflect.DeepEqual(cp, c) {
				res.Unchanged++
			} else {
				res.Updated++
			}
		}
		m.ID = c.ID
		s.markets[c.ID] = c
		for _, p := range m.History {
			p.MarketID = c.ID
			s.prices[c.ID] = append(s.prices[c.ID], p)
			res.Prices++
		}
	}
	return res, nil
}

func (s *memStore) Market(ctx context.Context, id int64) (*arena.Market, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m, ok := s.markets[id]
	if !ok {
		return nil, arena.Errorf(arena.ENOTFOUND, "market %d not found", id)
	}
	return clone(m), nil
}

func (s *memStore) MarketBySource(ctx context.Context, source, sourceID string) (*arena.Market, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range s.markets {
		if m.Source == source && m.SourceID == sourceID {
			return clone(m), nil
		}
	}
	return nil, arena.Errorf(arena.ENOTFOUND, "market %s/%s not found", source, sourceID)
}

func (s *memStore) Markets(ctx context.Context, f arena.MarketFilter) ([]*arena.Market, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []*arena.Market
	for _, m := range s.markets {
		if (f.Source != "" && m.Source != f.Source) || (f.Status != "" && m.Status != f.Status) ||
			(f.Kind != "" && m.Kind != f.Kind) || (f.Type != "" && m.Type != f.Type) ||
			(!f.ClosesAfter.IsZero() && !m.CloseTime.After(f.ClosesAfter)) {
			continue
		}
		out = append(out, clone(m))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Volume != out[j].Volume {
			return out[i].Volume > out[j].Volume
		}
		return out[i].ID < out[j].ID
	})
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[:f.Limit]
	}
	return out, nil
}

func (s *memStore) PriceHistory(ctx context.Context, id int64, outcome string, from, to time.Time) ([]arena.PricePoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []arena.PricePoint
	for _, p := range s.prices[id] {
		if p.Outcome == outcome && !p.Time.Before(from) && !p.Time.After(to) {
			out = append(out, p)
		}
	}
	return out, nil
}

func (s *memStore) ResolveMarket(ctx context.Context, id int64, resolution string, at time.Time) error {
	return errors.New("memStore: ResolveMarket not used by sync")
}

// snapshot is a deep copy for "store unchanged" assertions.
func (s *memStore) snapshot() (map[int64]arena.Market, map[int64]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ms := map[int64]arena.Market{}
	for id, m := range s.markets {
		ms[id] = *clone(m)
	}
	ps := map[int64]int{}
	for id, p := range s.prices {
		ps[id] = len(p)
	}
	return ms, ps
}
