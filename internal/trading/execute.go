package trading

import (
	"errors"
	"time"

	"github.com/forecast-arena/arena"
)

// Execution is the outcome of one bet or sell of an action.
type Execution struct {
	Index      int             `json:"index"` // position in Bets or Sells
	Kind       arena.TradeKind `json:"kind"`  // BET or SELL
	MarketID   int64           `json:"market_id,omitempty"`
	Side       string          `json:"side,omitempty"`
	Amount     Micros          `json:"amount_micros,omitempty"` // requested bet
	PositionID int64           `json:"position_id,omitempty"`
	Percentage float64         `json:"percentage,omitempty"`
	OK         bool            `json:"ok"`
	Code       string          `json:"code,omitempty"` // rejection code when not OK
	Reason     string          `json:"reason,omitempty"`
	Price      PPM             `json:"price_ppm,omitempty"`
	Shares     Shares          `json:"shares,omitempty"`
	Proceeds   Micros          `json:"proceeds_micros,omitempty"` // SELL
	Confidence float64         `json:"confidence,omitempty"`      // BET
}

// Executed counts the successful executions.
func Executed(ex []Execution) int {
	n := 0
	for _, e := range ex {
		if e.OK {
			n++
		}
	}
	return n
}

// Execute applies an action's bets or sells to the ledger at the frame's
// prices, in the order given. Each item either executes or fails with a
// reason; failures leave the ledger unchanged. The only error returned is
// an internal one (a broken ledger invariant). Execution reads nothing but
// the ledger and the frame, so its result does not depend on when or in
// which order agents are processed.
func Execute(l *Ledger, f *Frame, a Action, at time.Time) ([]Execution, error) {
	var out []Execution
	for i, b := range a.Bets {
		e := Execution{Index: i, Kind: arena.TradeBet, MarketID: b.MarketID, Side: b.Side, Amount: b.Amount}
		t, err := executeBet(l, f, b, at)
		if err := record(&e, t, err); err != nil {
			return out, err
		}
		out = append(out, e)
	}
	for i, s := range a.Sells {
		e := Execution{Index: i, Kind: arena.TradeSell, PositionID: s.PositionID, Percentage: s.Percentage}
		t, err := executeSell(l, f, s, at)
		if err := record(&e, t, err); err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func record(e *Execution, t *arena.Trade, err error) error {
	var ae *arena.Error
	switch {
	case err == nil:
		e.OK, e.Price, e.Shares = true, t.Price, t.Shares
		e.MarketID, e.Side = t.MarketID, t.Side
		if t.Kind == arena.TradeSell {
			e.Proceeds = t.Amount
		} else {
			e.Confidence = t.Confidence
		}
		return nil
	case errors.As(err, &ae):
		e.Code, e.Reason = ae.Code, ae.Message
		return nil
	default:
		return err
	}
}

func executeBet(l *Ledger, f *Frame, b Bet, at time.Time) (*arena.Trade, error) {
	m := f.Market(b.MarketID)
	if m == nil || !f.Offered(b.MarketID) {
		return nil, reject(CodeNoMarket, "market %d is not offered this week", b.MarketID)
	}
	side, err := m.Side(b.Side)
	if err != nil {
		return nil, err
	}
	price, ok := m.SidePrice(side)
	if !ok {
		return nil, reject(CodeNoPrice, "market %d has no price for %s", b.MarketID, side)
	}
	return l.Bet(m.ID, side, b.Amount, price, at)
}

func executeSell(l *Ledger, f *Frame, s Sell, at time.Time) (*arena.Trade, error) {
	p := l.Position(s.PositionID)
	if p == nil {
		return nil, reject(CodeNoPosition, "no open position %d", s.PositionID)
	}
	m := f.Market(p.MarketID)
	if m == nil {
		return nil, reject(CodeNoPrice, "no price for market %d of position %d", p.MarketID, p.ID)
	}
	if m.Status != arena.StatusOpen || m.Resolution != "" {
		return nil, reject(CodeMarketClosed, "market %d is %s and cannot be traded; position %d settles at resolution", m.ID, m.Status, p.ID)
	}
	price, ok := m.SidePrice(p.Side)
	if !ok {
		return nil, reject(CodeNoPrice, "market %d has no price for %s", m.ID, p.Side)
	}
	return l.Sell(p.ID, s.Percentage, price, at)
}
