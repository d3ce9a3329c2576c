// Package trading is the trading track's engine: an exact ledger
// of paper portfolios (pure, no I/O), the execution of agents' actions
// against a frozen market snapshot, implied-confidence Brier scores,
// valuation, settlement, and the weekly cohort engine that drives them
// through an arena.CohortStore.
//
// Exactness: money is integer micro-dollars, prices are integer parts per
// million (frozen from the source's float price by rounding to the nearest
// PPM), and quantities are integer micro-shares. Shares bought are
// amount/price rounded down to the micro-share; values and sale proceeds
// are shares×price rounded down to the micro-dollar; a partial sale
// releases cost basis in proportion to the shares sold, rounded down, and a
// 100% sale releases all of it. A winning micro-share settles to exactly one
// micro-dollar. Because every operation moves the same integer between cash,
// cost basis and realized P/L, the ledger identity
//
//	cash + Σ cost basis of open positions = initial cash + realized P/L
//
// holds exactly; the Ledger checks it after every operation.
package trading

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/forecast-arena/arena"
)

// ErrInvariant marks a broken ledger identity: a bug, never a user error.
var ErrInvariant = errors.New("trading: ledger invariant violated")

// Rejection codes for operations the rules forbid (arena.EINVALID kind).
const (
	CodeBelowMin      = "bet_below_minimum"
	CodeAboveMax      = "bet_above_maximum"
	CodeBadPrice      = "price_not_executable"
	CodeNoPrice       = "no_price"
	CodeNoPosition    = "position_not_found"
	CodeBadPercentage = "bad_percentage"
	CodeSellTooSmall  = "sell_too_small"
	CodeNoMarket      = "market_not_offered"
	CodeMarketClosed  = "market_closed"
	CodeBadSide       = "bad_side"
	CodeTooLarge      = "position_too_large"
)

// MaxPositionShares caps one position at a billion shares, which keeps
// every sum of payouts far from int64 overflow even at a price of 1 PPM.
const MaxPositionShares Shares = 1_000_000_000 * arena.OneShare

type posKey struct {
	market int64
	side   string
}

// Ledger applies the betting and settlement rules to one portfolio in memory and records
// what changed so the store can write it atomically.
type Ledger struct {
	initial  Micros
	cash     Micros
	realized Micros
	id       int64
	version  int64

	byID    map[int64]*arena.Position // every position loaded or created
	open    map[posKey]*arena.Position
	touched []*arena.Position
	dirty   map[int64]bool
	trades  []*arena.Trade
	nextTmp int64
	err     error // sticky: set when an invariant breaks
}

// NewLedger starts a ledger from a stored portfolio (its open positions) and
// the cohort's initial cash. The portfolio is copied, not modified.
func NewLedger(p *arena.Portfolio, initial Micros) (*Ledger, error) {
	l := &Ledger{
		initial: initial, cash: p.Cash, realized: p.Realized, id: p.ID, version: p.Version,
		byID: map[int64]*arena.Position{}, open: map[posKey]*arena.Position{}, dirty: map[int64]bool{},
	}
	for _, pos := range p.Positions {
		if pos.Status != arena.PositionOpen {
			continue
		}
		c := *pos
		k := posKey{c.MarketID, c.Side}
		if l.open[k] != nil {
			return nil, fmt.Errorf("%w: portfolio %d has two open positions in market %d side %s", ErrInvariant, p.ID, c.MarketID, c.Side)
		}
		l.byID[c.ID], l.open[k] = &c, &c
	}
	if err := l.Check(); err != nil {
		return nil, fmt.Errorf("portfolio %d: %w", p.ID, err)
	}
	return l, nil
}

// NewPortfolioLedger is a fresh ledger holding initial cash and nothing else.
func NewPortfolioLedger(initial Micros) *Ledger {
	l, _ := NewLedger(&arena.Portfolio{Cash: initial}, initial)
	return l
}

// Cash is the current cash balance.
func (l *Ledger) Cash() Micros { return l.cash }

// Initial is the portfolio's starting cash.
func (l *Ledger) Initial() Micros { return l.initial }

// Open lists open positions by id (stored ids ascending, then provisional
// ones in creation order).
func (l *Ledger) Open() []*arena.Position {
	out := make([]*arena.Position, 0, len(l.open))
	for _, p := range l.open {
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i].ID, out[j].ID
		if (a < 0) != (b < 0) {
			return a > 0
		}
		if a < 0 {
			return a > b
		}
		return a < b
	})
	return out
}

// Position returns the open position with id, or nil.
func (l *Ledger) Position(id int64) *arena.Position {
	p := l.byID[id]
	if p == nil || p.Status != arena.PositionOpen {
		return nil
	}
	return p
}

// OpenIn lists the open positions in a market, by id.
func (l *Ledger) OpenIn(marketID int64) []*arena.Position {
	var out []*arena.Position
	for _, p := range l.Open() {
		if p.MarketID == marketID {
			out = append(out, p)
		}
	}
	return out
}

// CostBasis is the summed cost basis of open positions.
func (l *Ledger) CostBasis() Micros {
	var s Micros
	for _, p := range l.open {
		s += p.CostBasis
	}
	return s
}

// Bankrupt reports that the portfolio is out of the game: no open position
// and too little cash for any bet (CanBet: 25% of cash must reach the $50
// minimum, so below $200). This departs from the usual literal wording
// ("cash and open positions are both zero"): a bet is at most 25% of cash,
// so cash never reaches zero and the literal condition could never hold.
// What bankrupt means — an agent that can no longer trade and holds nothing that
// could pay out — is this condition.
func (l *Ledger) Bankrupt() bool { return len(l.open) == 0 && !l.CanBet() }

// CanBet reports whether any bet is still legal: the 25% cap must allow
// the minimum bet.
func (l *Ledger) CanBet() bool { return l.cash >= MaxBetDivisor*MinBet }

// Check verifies the ledger identity and sign constraints.
func (l *Ledger) Check() error {
	if l.cash < 0 {
		return fmt.Errorf("%w: cash %s is negative", ErrInvariant, l.cash)
	}
	for _, p := range l.open {
		if p.Shares <= 0 || p.CostBasis < 0 {
			return fmt.Errorf("%w: open position %d has %d micro-shares and cost basis %s", ErrInvariant, p.ID, p.Shares, p.CostBasis)
		}
	}
	if lhs, rhs := l.cash+l.CostBasis(), l.initial+l.realized; lhs != rhs {
		return fmt.Errorf("%w: cash %s + cost basis %s = %s, but initial %s + realized %s = %s",
			ErrInvariant, l.cash, l.CostBasis(), lhs, l.initial, l.realized, rhs)
	}
	return nil
}

// after runs the invariant check after a state change and poisons the
// ledger when it fails.
func (l *Ledger) after() error {
	if err := l.Check(); err != nil {
		l.err = err
		return err
	}
	return nil
}

func (l *Ledger) touch(p *arena.Position) {
	if !l.dirty[p.ID] {
		l.dirty[p.ID] = true
		l.touched = append(l.touched, p)
	}
}

func reject(code, format string, args ...any) error {
	return arena.Rejectf(arena.EINVALID, code, format, args...)
}

// ImpliedConfidence is c = min(amount / (0.25 × cashBefore), 1).
func ImpliedConfidence(amount, cashBefore Micros) float64 {
	if cashBefore <= 0 {
		return 1
	}
	return math.Min(float64(MaxBetDivisor)*float64(amount)/float64(cashBefore), 1)
}

// Bet buys amount of side in market at the side-correct executable price.
// A bet on a side already held adds to that position (one open position
// per market per side; its average entry price moves).
func (l *Ledger) Bet(marketID int64, side string, amount Micros, price PPM, at time.Time) (*arena.Trade, error) {
	if l.err != nil {
		return nil, l.err
	}
	switch {
	case amount < MinBet:
		return nil, reject(CodeBelowMin, "bet %s is below the minimum %s", amount, MinBet)
	case amount > l.cash || amount*MaxBetDivisor > l.cash:
		return nil, reject(CodeAboveMax, "bet %s exceeds 25%% of cash %s (max %s)", amount, l.cash, l.cash/MaxBetDivisor)
	case price <= 0 || price >= arena.OnePPM:
		return nil, reject(CodeBadPrice, "price %s is not executable (want strictly between 0 and 1)", fmtPrice(price))
	}
	shares, ok := SharesFor(amount, price)
	if !ok || shares <= 0 {
		return nil, reject(CodeBadPrice, "bet %s at %s buys no shares", amount, fmtPrice(price))
	}
	k := posKey{marketID, side}
	p := l.open[k]
	var held Shares
	if p != nil {
		held = p.Shares
	}
	if shares > MaxPositionShares-held {
		return nil, reject(CodeTooLarge, "bet %s at %s would hold more than %d shares", amount, fmtPrice(price), MaxPositionShares/arena.OneShare)
	}
	if p == nil {
		l.nextTmp--
		p = &arena.Position{ID: l.nextTmp, PortfolioID: l.id, MarketID: marketID, Side: side, Mark: price,
			Status: arena.PositionOpen, OpenedAt: at}
		l.open[k], l.byID[p.ID] = p, p
	}
	t := &arena.Trade{PortfolioID: l.id, PositionID: p.ID, MarketID: marketID, Side: side, Kind: arena.TradeBet,
		Amount: amount, Shares: shares, Price: price, CostBasis: amount, CashBefore: l.cash,
		Confidence: ImpliedConfidence(amount, l.cash), CreatedAt: at}
	l.cash -= amount
	p.Shares += shares
	p.CostBasis += amount
	l.touch(p)
	l.trades = append(l.trades, t)
	return t, l.after()
}

// Sell sells pct percent (1–100) of an open position at the side-correct
// price: proceeds = shares sold × price, and cost basis is released in
// proportion to the shares sold.
func (l *Ledger) Sell(positionID int64, pct float64, price PPM, at time.Time) (*arena.Trade, error) {
	if l.err != nil {
		return nil, l.err
	}
	p := l.Position(positionID)
	switch {
	case p == nil:
		return nil, reject(CodeNoPosition, "no open position %d", positionID)
	case math.IsNaN(pct) || pct < 1 || pct > 100:
		return nil, reject(CodeBadPercentage, "percentage %v outside 1–100", pct)
	case price < 0 || price > arena.OnePPM:
		return nil, reject(CodeBadPrice, "price %s is outside [0,1]", fmtPrice(price))
	}
	frac := int64(math.Round(pct * 10_000)) // parts per million of the position
	sold, released := p.Shares, p.CostBasis
	if frac < int64(arena.OnePPM) {
		s, ok1 := mulDiv(int64(p.Shares), frac, int64(arena.OnePPM))
		r, ok2 := mulDiv(int64(p.CostBasis), s, int64(p.Shares))
		if !ok1 || !ok2 {
			return nil, l.fail(fmt.Errorf("%w: overflow selling position %d", ErrInvariant, p.ID))
		}
		sold, released = Shares(s), Micros(r)
		if sold == 0 {
			return nil, reject(CodeSellTooSmall, "selling %v%% of position %d sells no shares", pct, positionID)
		}
	}
	proceeds, ok := ValueOf(sold, price)
	if !ok {
		return nil, l.fail(fmt.Errorf("%w: overflow valuing position %d", ErrInvariant, p.ID))
	}
	if proceeds > math.MaxInt64-l.cash {
		return nil, l.fail(fmt.Errorf("%w: cash overflow selling position %d", ErrInvariant, p.ID))
	}
	t := &arena.Trade{PortfolioID: l.id, PositionID: p.ID, MarketID: p.MarketID, Side: p.Side, Kind: arena.TradeSell,
		Amount: proceeds, Shares: sold, Price: price, CostBasis: released, CashBefore: l.cash, CreatedAt: at}
	l.cash += proceeds
	l.realized += proceeds - released
	p.Shares -= sold
	p.CostBasis -= released
	if p.Shares == 0 {
		l.close(p, arena.PositionClosed, at)
	}
	l.touch(p)
	l.trades = append(l.trades, t)
	return t, l.after()
}

// Settle pays a resolved position: $1 per share if it won, nothing if it
// lost; its whole cost basis is released.
func (l *Ledger) Settle(positionID int64, won bool, at time.Time) (*arena.Trade, error) {
	if l.err != nil {
		return nil, l.err
	}
	p := l.Position(positionID)
	if p == nil {
		return nil, reject(CodeNoPosition, "no open position %d", positionID)
	}
	payout, price := Micros(0), PPM(0)
	if won {
		payout, price = Micros(p.Shares), arena.OnePPM // 1 micro-share pays 1 micro-dollar
	}
	if payout > math.MaxInt64-l.cash {
		return nil, l.fail(fmt.Errorf("%w: cash overflow settling position %d", ErrInvariant, p.ID))
	}
	t := &arena.Trade{PortfolioID: l.id, PositionID: p.ID, MarketID: p.MarketID, Side: p.Side, Kind: arena.TradeSettle,
		Amount: payout, Shares: p.Shares, Price: price, CostBasis: p.CostBasis, CashBefore: l.cash, CreatedAt: at}
	l.cash += payout
	l.realized += payout - p.CostBasis
	p.Shares, p.CostBasis, p.Mark = 0, 0, price
	l.close(p, arena.PositionSettled, at)
	l.touch(p)
	l.trades = append(l.trades, t)
	return t, l.after()
}

// Cancel refunds a position's cost basis (void or ambiguous resolution).
func (l *Ledger) Cancel(positionID int64, at time.Time) (*arena.Trade, error) {
	if l.err != nil {
		return nil, l.err
	}
	p := l.Position(positionID)
	if p == nil {
		return nil, reject(CodeNoPosition, "no open position %d", positionID)
	}
	t := &arena.Trade{PortfolioID: l.id, PositionID: p.ID, MarketID: p.MarketID, Side: p.Side, Kind: arena.TradeCancel,
		Amount: p.CostBasis, Shares: p.Shares, CostBasis: p.CostBasis, CashBefore: l.cash, CreatedAt: at}
	if p.Shares > 0 {
		t.Price, _ = avgPrice(p.CostBasis, p.Shares)
	}
	l.cash += p.CostBasis
	p.Shares, p.CostBasis = 0, 0
	l.close(p, arena.PositionCancelled, at)
	l.touch(p)
	l.trades = append(l.trades, t)
	return t, l.after()
}

func (l *Ledger) close(p *arena.Position, st arena.PositionStatus, at time.Time) {
	p.Status, p.ClosedAt = st, at
	delete(l.open, posKey{p.MarketID, p.Side})
}

func (l *Ledger) fail(err error) error {
	l.err = err
	return err
}

// Change returns everything written since the ledger was created, for the
// store to apply atomically.
func (l *Ledger) Change() (*arena.PortfolioChange, error) {
	if l.err != nil {
		return nil, l.err
	}
	ch := &arena.PortfolioChange{PortfolioID: l.id, ExpectVersion: l.version, Cash: l.cash, Realized: l.realized,
		Bankrupt: l.Bankrupt(), Trades: l.trades}
	for _, p := range l.touched {
		c := *p
		ch.Positions = append(ch.Positions, &c)
	}
	return ch, nil
}

// Changed reports whether any operation succeeded.
func (l *Ledger) Changed() bool { return len(l.trades) > 0 }

// avgPrice is cost/shares as a price, rounded down.
func avgPrice(cost Micros, shares Shares) (PPM, bool) {
	if shares <= 0 {
		return 0, false
	}
	v, ok := mulDiv(int64(cost), int64(arena.OnePPM), int64(shares))
	return PPM(v), ok
}

// AvgEntry is the average entry price of a position: cost basis / shares.
func AvgEntry(p *arena.Position) PPM {
	v, _ := avgPrice(p.CostBasis, p.Shares)
	return v
}

func fmtPrice(p PPM) string { return fmt.Sprintf("%.6f", p.Float()) }

// SettledPosition is a position its market's settlement closed, as the
// market's trades tell: the shares and cost basis it held when it settled,
// and everything paid for it since (the settlement, then any corrections).
type SettledPosition struct {
	Position  *arena.Position
	Shares    Shares
	CostBasis Micros
	Paid      Micros
}

// SettledPositions reads a market's trades, in id order, for the positions
// its settlement closed (a SETTLE or CANCEL trade, then any RESETTLE),
// each with its position from positions, in the order they settled.
func SettledPositions(trades []*arena.Trade, positions map[int64]*arena.Position) ([]SettledPosition, error) {
	var out []SettledPosition
	at := map[int64]int{} // position id → index in out
	for _, t := range trades {
		switch t.Kind {
		case arena.TradeSettle, arena.TradeCancel:
			if _, dup := at[t.PositionID]; dup {
				return nil, fmt.Errorf("%w: position %d settled twice", ErrInvariant, t.PositionID)
			}
			p := positions[t.PositionID]
			if p == nil {
				return nil, fmt.Errorf("trading: settled position %d not found", t.PositionID)
			}
			at[t.PositionID] = len(out)
			out = append(out, SettledPosition{Position: p, Shares: t.Shares, CostBasis: t.CostBasis, Paid: t.Amount})
		case arena.TradeResettle:
			i, ok := at[t.PositionID]
			if !ok {
				return nil, fmt.Errorf("%w: position %d corrected before it settled", ErrInvariant, t.PositionID)
			}
			out[i].Paid += t.Amount
		}
	}
	return out, nil
}

// Resettle corrects the settlement of a position after its market's
// resolution changed to resolution: the position now pays what that
// resolution pays (its shares on the winning side, nothing on the losing
// one, its cost basis back for VOID), and the difference from what it was
// paid moves cash and realized P/L alike, as a RESETTLE trade (none when
// nothing changes). The position is closed and its cost basis released
// already, so the ledger identity holds. A correction that would leave
// cash negative is refused: the money was spent since.
func (l *Ledger) Resettle(s SettledPosition, resolution string, typ arena.MarketType, at time.Time) (*arena.Trade, error) {
	if l.err != nil {
		return nil, l.err
	}
	p := s.Position
	if p == nil || p.PortfolioID != l.id || (p.Status != arena.PositionSettled && p.Status != arena.PositionCancelled) {
		return nil, l.fail(fmt.Errorf("%w: resettling a position of portfolio %d that its market's settlement did not close", ErrInvariant, l.id))
	}
	pay, price, status := Micros(0), PPM(0), arena.PositionSettled
	if resolution == arena.Void {
		pay, status = s.CostBasis, arena.PositionCancelled
	} else if won, _ := Won(resolution, typ, p.Side); won {
		pay, price = Micros(s.Shares), arena.OnePPM
	}
	delta := pay - s.Paid
	switch {
	case delta == 0:
		return nil, nil
	case l.cash+delta < 0:
		return nil, arena.Errorf(arena.ECONFLICT, "market %d: re-resolving would take %s from portfolio %d, which holds %s", p.MarketID, -delta, l.id, l.cash)
	case delta > math.MaxInt64-l.cash:
		return nil, l.fail(fmt.Errorf("%w: cash overflow resettling position %d", ErrInvariant, p.ID))
	}
	t := &arena.Trade{PortfolioID: l.id, PositionID: p.ID, MarketID: p.MarketID, Side: p.Side, Kind: arena.TradeResettle,
		Amount: delta, Shares: s.Shares, Price: price, CostBasis: s.CostBasis, CashBefore: l.cash, CreatedAt: at}
	l.cash += delta
	l.realized += delta
	c := *p
	c.Status, c.Mark = status, price
	l.byID[c.ID] = &c
	l.touch(&c)
	l.trades = append(l.trades, t)
	return t, l.after()
}
