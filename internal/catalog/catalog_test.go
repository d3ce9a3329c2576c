package catalog_test

import (
	"context"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/catalog"
)

// asked records the price history asked of it.
type asked struct {
	arena.MarketStore
	outcome  string
	from, to time.Time
}

func (a *asked) PriceHistory(_ context.Context, _ int64, outcome string, from, to time.Time) ([]arena.PricePoint, error) {
	a.outcome, a.from, a.to = outcome, from, to
	return nil, nil
}

// A market's page draws the whole history of its first outcome, Yes for
// a market that names none.
func TestPricesFirstOutcome(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		outcomes []string
		want     string
	}{
		{nil, arena.Yes},
		{[]string{"Yes", "No"}, "Yes"},
		{[]string{"Lakers", "Celtics"}, "Lakers"},
	} {
		st := &asked{}
		if _, err := (&catalog.Service{Store: st}).Prices(context.Background(), &arena.Market{ID: 3, Outcomes: c.outcomes}); err != nil {
			t.Fatal(err)
		}
		if st.outcome != c.want || !st.from.IsZero() || st.to.Year() != 9999 {
			t.Errorf("outcomes %v: asked %q from %v to %v, want %q over all time", c.outcomes, st.outcome, st.from, st.to, c.want)
		}
	}
}
