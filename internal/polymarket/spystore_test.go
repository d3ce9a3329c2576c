package polymarket

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
)

// spyStore is the real SQLite store, counting SaveMarkets calls and able
// to make them fail, for "one write" and "store unchanged" assertions.
type spyStore struct {
	*store.DB
	saves    int   // SaveMarkets calls
	failSave error // returned by SaveMarkets when set
}

func newSpyStore(t testing.TB) *spyStore {
	t.Helper()
	db, err := store.Open(context.Background(), "sqlite:"+filepath.Join(t.TempDir(), "arena.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &spyStore{DB: db}
}

func (s *spyStore) SaveMarkets(ctx context.Context, ms []*arena.Market) (arena.SaveResult, error) {
	s.saves++
	if s.failSave != nil {
		return arena.SaveResult{}, s.failSave
	}
	return s.DB.SaveMarkets(ctx, ms)
}

// priceCount is how many price points the store holds for a market.
func (s *spyStore) priceCount(t testing.TB, id int64) int {
	t.Helper()
	m, err := s.Market(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, o := range m.Outcomes {
		pts, err := s.PriceHistory(context.Background(), id, o, time.Unix(0, 0), time.Now().AddDate(10, 0, 0))
		if err != nil {
			t.Fatal(err)
		}
		n += len(pts)
	}
	return n
}

// snapshot is every market and its price count, for "store unchanged".
func (s *spyStore) snapshot(t testing.TB) (map[int64]arena.Market, map[int64]int) {
	t.Helper()
	ms, err := s.Markets(context.Background(), arena.MarketFilter{})
	if err != nil {
		t.Fatal(err)
	}
	out, ps := map[int64]arena.Market{}, map[int64]int{}
	for _, m := range ms {
		out[m.ID] = *m
		ps[m.ID] = s.priceCount(t, m.ID)
	}
	return out, ps
}
