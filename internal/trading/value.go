package trading

import (
	"time"

	"github.com/forecast-arena/arena"
)

// Mark values an open position against a market view: at the
// side-correct price when usable; at $1 or $0 a share once the market has
// a winner; at cost basis once void (it will be refunded). Without a usable
// price (no view, or no price for the side) the position keeps its last
// mark, so a closed-but-unresolved market never collapses to zero. fresh
// reports whether a current price was used.
func Mark(p *arena.Position, m *MarketView) (price PPM, value Micros, fresh bool) {
	price = p.Mark
	switch {
	case m == nil:
	case m.Resolution == arena.Void:
		return AvgEntry(p), p.CostBasis, true
	case m.Resolution != "":
		if won, _ := Won(m.Resolution, m.Type, p.Side); won {
			price = arena.OnePPM
		} else {
			price = 0
		}
		fresh = true
	default:
		if q, ok := m.SidePrice(p.Side); ok {
			price, fresh = q, true
		}
	}
	value, _ = ValueOf(p.Shares, price)
	return price, value, fresh
}

// Valuation is a portfolio's marked value.
type Valuation struct {
	Cash           Micros
	PositionsValue Micros
	Total          Micros
	PnL            Micros
	PnLPct         float64
}

// ReturnPct is (total − initial) / initial × 100.
func ReturnPct(total, initial Micros) float64 {
	if initial == 0 {
		return 0
	}
	return float64(total-initial) / float64(initial) * 100
}

// Value marks every open position against markets (by market id) and sums
// the portfolio; marks maps position id to the price used.
func Value(cash Micros, open []*arena.Position, markets map[int64]*MarketView, initial Micros) (Valuation, map[int64]PPM) {
	v := Valuation{Cash: cash}
	marks := make(map[int64]PPM, len(open))
	for _, p := range open {
		price, value, _ := Mark(p, markets[p.MarketID])
		marks[p.ID] = price
		v.PositionsValue += value
	}
	v.Total = v.Cash + v.PositionsValue
	v.PnL = v.Total - initial
	v.PnLPct = ReturnPct(v.Total, initial)
	return v, marks
}

// BetBrier is the Brier score of a bet with implied confidence c
// = min(amount / (0.25 × cash before the bet), 1). For YES, f_YES = c; for NO, f_YES = 1 − c; either way
// (f_YES − o)² = (c − won)², which is also the score of a named outcome.
func BetBrier(c float64, won bool) float64 {
	o := 0.0
	if won {
		o = 1
	}
	return (c - o) * (c - o)
}

// CumulativeBrier is the mean Brier score over the BET trades whose market
// has a winner (void and unresolved markets are excluded), and how many
// bets that is.
func CumulativeBrier(trades []*arena.Trade, markets map[int64]*MarketView) (mean float64, n int) {
	var sum float64
	for _, t := range trades {
		if t.Kind != arena.TradeBet {
			continue
		}
		m := markets[t.MarketID]
		if m == nil {
			continue
		}
		won, decided := Won(m.Resolution, m.Type, t.Side)
		if !decided {
			continue
		}
		sum += BetBrier(t.Confidence, won)
		n++
	}
	if n == 0 {
		return 0, 0
	}
	return sum / float64(n), n
}

// PositionView is an open position as an agent sees it.
type PositionView struct {
	ID         int64            `json:"id"`
	MarketID   int64            `json:"market_id"`
	Question   string           `json:"question"`
	MarketType arena.MarketType `json:"market_type"`
	Side       string           `json:"side"`
	Shares     Shares           `json:"shares"`
	CostBasis  Micros           `json:"cost_basis_micros"`
	AvgEntry   PPM              `json:"avg_entry_ppm"`
	Price      PPM              `json:"price_ppm"` // side-correct current price
	PriceStale bool             `json:"price_stale,omitempty"`
	Value      Micros           `json:"value_micros"`
	Unrealized Micros           `json:"unrealized_micros"`
	// Tradable reports whether the position can be sold this week: its
	// market is in the frame, open, unresolved and priced for the side.
	// It mirrors the checks of the SELL execution, so the validator can
	// refuse what the engine would refuse.
	Tradable bool `json:"tradable"`
}

// Snapshot is what a decider sees: its own cash and open
// positions, and the week's offered markets by volume. Every agent of a
// week sees the same markets at the same prices.
type Snapshot struct {
	CohortID       int64          `json:"cohort_id"`
	AgentID        string         `json:"agent_id"`
	Week           time.Time      `json:"week"`
	TakenAt        time.Time      `json:"taken_at"`
	InitialCash    Micros         `json:"initial_cash_micros"`
	Cash           Micros         `json:"cash_micros"`
	PositionsValue Micros         `json:"positions_value_micros"`
	Total          Micros         `json:"total_micros"`
	MaxBet         Micros         `json:"max_bet_micros"` // 25% of cash
	Positions      []PositionView `json:"positions"`
	Markets        []MarketView   `json:"markets"`
}

// BuildSnapshot assembles an agent's view of a frozen frame.
func BuildSnapshot(l *Ledger, f *Frame, agentID string) Snapshot {
	s := Snapshot{CohortID: f.CohortID, AgentID: agentID, Week: f.Week, TakenAt: f.TakenAt, InitialCash: l.Initial(),
		Cash: l.Cash(), MaxBet: l.Cash() / MaxBetDivisor, Markets: f.Markets, Positions: []PositionView{}}
	for _, p := range l.Open() {
		m := f.Market(p.MarketID)
		price, value, fresh := Mark(p, m)
		v := PositionView{ID: p.ID, MarketID: p.MarketID, Side: p.Side, Shares: p.Shares, CostBasis: p.CostBasis,
			AvgEntry: AvgEntry(p), Price: price, PriceStale: !fresh, Value: value, Unrealized: value - p.CostBasis}
		if m != nil {
			v.Question, v.MarketType = m.Question, m.Type
			_, priced := m.SidePrice(p.Side)
			v.Tradable = m.Status == arena.StatusOpen && m.Resolution == "" && priced
		}
		s.Positions = append(s.Positions, v)
		s.PositionsValue += value
	}
	s.Total = s.Cash + s.PositionsValue
	return s
}
