package trading

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

var at = time.Date(2026, 3, 1, 0, 5, 0, 0, time.UTC)

// Realized is the realized P/L so far.
func (l *Ledger) Realized() Micros { return l.realized }

// Trades lists the trades made through this ledger, in order.
func (l *Ledger) Trades() []*arena.Trade { return l.trades }

// Err is the sticky internal error, if an invariant ever broke.
func (l *Ledger) Err() error { return l.err }

func d(x float64) Micros {
	m, err := arena.DollarsToMicros(x)
	if err != nil {
		panic(err)
	}
	return m
}

func p(x float64) PPM {
	q, ok := PriceFromFloat(x)
	if !ok {
		panic(x)
	}
	return q
}

func TestMicrosString(t *testing.T) {
	for _, c := range []struct {
		m    Micros
		want string
	}{
		{0, "$0.00"}, {InitialCash, "$10,000.00"}, {d(1234.5), "$1,234.50"}, {-d(0.125), "-$0.125"},
		{1, "$0.000001"}, {d(1234567.891234), "$1,234,567.891234"}, {d(100), "$100.00"}, {d(-999999.99), "-$999,999.99"},
		{math.MinInt64, "-$9,223,372,036,854.775808"},
	} {
		if got := c.m.String(); got != c.want {
			t.Errorf("%d: got %s want %s", int64(c.m), got, c.want)
		}
	}
}

func TestMicrosCents(t *testing.T) {
	for _, c := range []struct {
		m    Micros
		want string
	}{
		{0, "$0.00"}, {-2, "$0.00"}, {4_999, "$0.00"}, {5_000, "$0.01"}, {-5_000, "-$0.01"},
		{d(152273.550217), "$152,273.55"}, {d(0.125), "$0.13"}, {-d(0.125), "-$0.13"}, {d(999.995), "$1,000.00"},
		{math.MinInt64, "-$9,223,372,036,854.78"},
	} {
		if got := c.m.Cents(); got != c.want {
			t.Errorf("%d: got %s want %s", int64(c.m), got, c.want)
		}
	}
}

func TestConversions(t *testing.T) {
	if _, err := arena.DollarsToMicros(math.NaN()); err == nil {
		t.Error("NaN accepted")
	}
	if _, err := arena.DollarsToMicros(1e13); err == nil {
		t.Error("huge accepted")
	}
	if m, _ := arena.DollarsToMicros(0.1 + 0.2); m != 300_000 {
		t.Errorf("0.1+0.2 -> %d", m)
	}
	for _, c := range []struct {
		in   float64
		want PPM
		ok   bool
	}{{0.53, 530_000, true}, {0.0000004, 0, true}, {0.0000005, 1, true}, {1, 1_000_000, true}, {1.01, 0, false}, {-0.1, 0, false}, {math.NaN(), 0, false}} {
		got, ok := PriceFromFloat(c.in)
		if got != c.want || ok != c.ok {
			t.Errorf("PriceFromFloat(%v) = %d,%v", c.in, got, ok)
		}
	}
	// The seed's example: $500 on YES at 0.40 buys 1,250 shares.
	if s, _ := SharesFor(d(500), p(0.4)); s != 1250*arena.OneShare {
		t.Errorf("shares %d", s)
	}
	// Rounded down to the micro-share: $50 at 0.3 = 166.666666… shares.
	if s, _ := SharesFor(d(50), p(0.3)); s != 166_666_666 {
		t.Errorf("shares %d", s)
	}
	if v, _ := ValueOf(166_666_666, p(0.3)); v != 49_999_999 {
		t.Errorf("value %d", v)
	}
	if _, ok := mulDiv(math.MaxInt64, math.MaxInt64, 1); ok {
		t.Error("overflow not detected")
	}
	if v, ok := mulDiv(math.MaxInt64, 1_000_000, 1_000_000); !ok || v != math.MaxInt64 {
		t.Errorf("128-bit intermediate: %d %v", v, ok)
	}
}

func TestImpliedConfidenceAndBrier(t *testing.T) {
	// The scoring doc's table.
	for _, c := range []struct {
		cash, amount float64
		want         float64
	}{{10000, 2500, 1}, {10000, 1250, 0.5}, {10000, 500, 0.2}, {10000, 50, 0.02}, {8000, 2000, 1}, {8000, 500, 0.25}, {100, 50, 1}} {
		if got := ImpliedConfidence(d(c.amount), d(c.cash)); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("c(%v of %v) = %v want %v", c.amount, c.cash, got, c.want)
		}
	}
	// YES/NO × outcome examples: (f_YES − o)² with f_YES = c or 1 − c.
	for _, c := range []struct {
		side, res string
		want      float64
	}{{SideYes, arena.Yes, 0.04}, {SideYes, arena.No, 0.64}, {SideNo, arena.Yes, 0.64}, {SideNo, arena.No, 0.04}} {
		won, decided := Won(c.res, arena.Binary, c.side)
		if !decided {
			t.Fatal("undecided")
		}
		if got := BetBrier(0.8, won); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s bet, %s wins: %v want %v", c.side, c.res, got, c.want)
		}
	}
	if _, decided := Won(arena.Void, arena.Binary, SideYes); decided {
		t.Error("void decided")
	}
	if won, _ := Won("Celtics", arena.Multi, "Celtics"); !won {
		t.Error("named outcome")
	}
}

func TestBetRules(t *testing.T) {
	cases := []struct {
		name   string
		amount Micros
		price  PPM
		code   string
	}{
		{"minimum", MinBet, p(0.5), ""},
		{"below minimum", MinBet - 1, p(0.5), CodeBelowMin},
		{"exactly 25%", d(2500), p(0.5), ""},
		{"above 25%", d(2500) + 1, p(0.5), CodeAboveMax},
		{"price zero", d(100), 0, CodeBadPrice},
		{"price one", d(100), arena.OnePPM, CodeBadPrice},
		{"tiny price", d(100), 1, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			l := NewPortfolioLedger(InitialCash)
			tr, err := l.Bet(7, SideYes, c.amount, c.price, at)
			if c.code != "" {
				if arena.ErrorCode(err) != c.code || l.Cash() != InitialCash || len(l.Open()) != 0 {
					t.Fatalf("want %s and no change, got %v cash %s", c.code, err, l.Cash())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if l.Cash() != InitialCash-c.amount || tr.CashBefore != InitialCash || tr.CostBasis != c.amount {
				t.Fatalf("cash %s trade %+v", l.Cash(), tr)
			}
		})
	}
}

func TestLedgerWalkthrough(t *testing.T) {
	l := NewPortfolioLedger(InitialCash)
	// $500 YES at 0.40: 1,250 shares, confidence 0.2.
	yes, err := l.Bet(1, SideYes, d(500), p(0.4), at)
	if err != nil || yes.Shares != 1250*arena.OneShare || yes.Confidence != 0.2 {
		t.Fatalf("bet: %+v %v", yes, err)
	}
	// A second YES bet on the same market adds to the same position.
	if _, err := l.Bet(1, SideYes, d(950), p(0.5), at); err != nil {
		t.Fatal(err)
	}
	if len(l.Open()) != 1 {
		t.Fatalf("one position per market per side: %d", len(l.Open()))
	}
	pos := l.Open()[0]
	if pos.Shares != 3150*arena.OneShare || pos.CostBasis != d(1450) || AvgEntry(pos) != 460_317 {
		t.Fatalf("merged position %+v avg %d", pos, AvgEntry(pos))
	}
	// The other side is a second position.
	no, err := l.Bet(1, SideNo, d(600), p(0.6), at)
	if err != nil || len(l.Open()) != 2 {
		t.Fatal(err)
	}
	// Sell 50% of YES at 0.70: 1575 shares → $1102.50; releases $725 cost basis.
	s, err := l.Sell(pos.ID, 50, p(0.7), at)
	if err != nil || s.Shares != 1575*arena.OneShare || s.Amount != d(1102.5) || s.CostBasis != d(725) {
		t.Fatalf("sell: %+v %v", s, err)
	}
	if l.Realized() != d(377.5) || l.Cash() != InitialCash-d(2050)+d(1102.5) {
		t.Fatalf("realized %s cash %s", l.Realized(), l.Cash())
	}
	for _, c := range []struct {
		id   int64
		pct  float64
		code string
	}{{pos.ID, 0.5, CodeBadPercentage}, {pos.ID, 100.01, CodeBadPercentage}, {pos.ID, math.NaN(), CodeBadPercentage}, {999, 50, CodeNoPosition}} {
		if _, err := l.Sell(c.id, c.pct, p(0.5), at); arena.ErrorCode(err) != c.code {
			t.Errorf("sell %d %v%%: %v want %s", c.id, c.pct, err, c.code)
		}
	}
	// Market resolves YES: remaining 1575 YES shares pay $1575; NO loses $600.
	if _, err := l.Settle(pos.ID, true, at); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Settle(no.PositionID, false, at); err != nil {
		t.Fatal(err)
	}
	want := InitialCash - d(2050) + d(1102.5) + d(1575)
	if l.Cash() != want || l.Realized() != want-InitialCash || len(l.Open()) != 0 {
		t.Fatalf("after settlement: cash %s realized %s", l.Cash(), l.Realized())
	}
	if _, err := l.Settle(pos.ID, true, at); arena.ErrorCode(err) != CodeNoPosition {
		t.Fatalf("double settlement: %v", err)
	}
	ch, err := l.Change()
	if err != nil || len(ch.Trades) != 6 || len(ch.Positions) != 2 || ch.Cash != want {
		t.Fatalf("change: %+v %v", ch, err)
	}
	for _, cp := range ch.Positions {
		if cp.Status != arena.PositionSettled || cp.Shares != 0 {
			t.Fatalf("position %+v", cp)
		}
	}
}

func TestSellRounding(t *testing.T) {
	l := NewPortfolioLedger(InitialCash)
	tr, _ := l.Bet(1, SideYes, d(50), p(0.3), at) // 166.666666 shares, $50 cost
	// 1/3 of the position: floor(166666666 × 333333/10^6) shares sold.
	s, err := l.Sell(tr.PositionID, 33.3333, p(0.3), at)
	if err != nil {
		t.Fatal(err)
	}
	if s.Shares != 55_555_499 || s.CostBasis != 16_666_649 || s.Amount != 16_666_649 {
		t.Fatalf("partial sell: %+v", s)
	}
	// Selling the rest releases exactly the remaining basis.
	s, err = l.Sell(tr.PositionID, 100, p(0.3), at)
	if err != nil || l.CostBasis() != 0 || s.CostBasis != d(50)-16_666_649 {
		t.Fatalf("full sell: %+v %v", s, err)
	}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	// A tiny sell that sells no shares is refused.
	l2 := NewPortfolioLedger(InitialCash)
	tr2, _ := l2.Bet(1, SideYes, d(50), 999_999, at) // 50.00005 shares
	if _, err := l2.Sell(tr2.PositionID, 1, 999_999, at); err != nil {
		t.Fatal(err)
	}
}

func TestCancelRefundsCostBasis(t *testing.T) {
	l := NewPortfolioLedger(InitialCash)
	a, _ := l.Bet(1, SideYes, d(1000), p(0.37), at)
	l.Sell(a.PositionID, 25, p(0.9), at) // realize a gain first
	r, basis := l.Realized(), l.Position(a.PositionID).CostBasis
	c, err := l.Cancel(a.PositionID, at)
	if err != nil || c.Amount != basis || basis < d(750) || basis > d(750)+1 || l.Realized() != r || l.Cash() != InitialCash+r {
		t.Fatalf("cancel %+v %v cash %s realized %s", c, err, l.Cash(), r)
	}
}

func TestInvariantEnforced(t *testing.T) {
	// A stored portfolio whose cash and cost basis do not reconcile is refused.
	bad := &arena.Portfolio{ID: 3, Cash: d(9000), Positions: []*arena.Position{{ID: 1, MarketID: 1, Side: SideYes, Shares: 1, CostBasis: d(999), Status: arena.PositionOpen}}}
	if _, err := NewLedger(bad, InitialCash); !errors.Is(err, ErrInvariant) {
		t.Fatalf("want invariant error, got %v", err)
	}
	dup := &arena.Portfolio{Cash: d(8000), Positions: []*arena.Position{
		{ID: 1, MarketID: 1, Side: SideYes, Shares: 1, CostBasis: d(1000), Status: arena.PositionOpen},
		{ID: 2, MarketID: 1, Side: SideYes, Shares: 1, CostBasis: d(1000), Status: arena.PositionOpen}}}
	if _, err := NewLedger(dup, InitialCash); !errors.Is(err, ErrInvariant) {
		t.Fatalf("duplicate open position accepted: %v", err)
	}
	// Corrupting state in memory poisons the ledger at the next operation.
	l := NewPortfolioLedger(InitialCash)
	tr, _ := l.Bet(1, SideYes, d(100), p(0.5), at)
	l.Position(tr.PositionID).CostBasis++
	if _, err := l.Bet(2, SideYes, d(100), p(0.5), at); !errors.Is(err, ErrInvariant) {
		t.Fatalf("corruption not detected: %v", err)
	}
	if _, err := l.Change(); !errors.Is(err, ErrInvariant) {
		t.Fatal("poisoned ledger produced a change")
	}
	if arena.ErrorKind(l.Err()) != arena.EINTERNAL {
		t.Fatal("invariant violation must be internal, not a user error")
	}
}

// TestLedgerProperty runs thousands of random bet/sell/settle/void
// sequences and re-derives cash, cost basis and realized P/L from the trade
// log alone after every step: the ledger identity must hold exactly, cash
// never goes negative, and rejected operations change nothing.
func TestLedgerProperty(t *testing.T) {
	const sequences, steps = 4000, 80
	r := rand.New(rand.NewPCG(20260301, 7))
	outcomes := []string{"A", "B", "C"}
	var ops, rejected, settled, voided int
	for seq := 0; seq < sequences; seq++ {
		l := NewPortfolioLedger(InitialCash)
		for step := 0; step < steps; step++ {
			before := snapshotOf(l)
			var err error
			market := int64(1 + r.IntN(6))
			switch k := r.IntN(20); {
			case k < 9: // bet
				side := []string{SideYes, SideNo}[r.IntN(2)]
				if market >= 5 {
					side = outcomes[r.IntN(3)]
				}
				var amount Micros
				switch r.IntN(4) {
				case 0:
					amount = Micros(r.Int64N(int64(l.Cash()/3 + 1))) // sometimes above the cap
				case 1:
					amount = MinBet + Micros(r.IntN(10))
				default:
					amount = MinBet + Micros(r.Int64N(int64(max(l.Cash()/4-MinBet, 0)+1)))
				}
				_, err = l.Bet(market, side, amount, randPrice(r), at)
			case k < 15: // sell
				id := int64(-1 - r.IntN(30))
				if open := l.Open(); len(open) > 0 && r.IntN(5) > 0 {
					id = open[r.IntN(len(open))].ID
				}
				pct := float64(1 + r.IntN(100))
				if r.IntN(3) == 0 {
					pct = r.Float64()*101 + 0.2
				}
				_, err = l.Sell(id, pct, PPM(r.Int64N(int64(arena.OnePPM)+1)), at)
			case k < 18: // settle a market with a winner
				winner := []string{SideYes, SideNo}[r.IntN(2)]
				if market >= 5 {
					winner = outcomes[r.IntN(3)]
				}
				for _, pos := range l.OpenIn(market) {
					if _, err = l.Settle(pos.ID, pos.Side == winner, at); err != nil {
						break
					}
					settled++
				}
			default: // void
				for _, pos := range l.OpenIn(market) {
					if _, err = l.Cancel(pos.ID, at); err != nil {
						break
					}
					voided++
				}
			}
			ops++
			if err != nil {
				if errors.Is(err, ErrInvariant) || arena.ErrorKind(err) != arena.EINVALID {
					t.Fatalf("seq %d step %d: %v", seq, step, err)
				}
				rejected++
				if after := snapshotOf(l); after != before {
					t.Fatalf("seq %d step %d: rejected operation changed state %+v -> %+v", seq, step, before, after)
				}
			}
			verifyFromTrades(t, l)
		}
	}
	t.Logf("%d sequences, %d operations (%d rejected, %d positions settled, %d voided): identity exact throughout",
		sequences, ops, rejected, settled, voided)
	if rejected == 0 || settled == 0 || voided == 0 || rejected > ops/2 {
		t.Fatalf("sequence mix is degenerate: %d ops, %d rejected, %d settled, %d voided", ops, rejected, settled, voided)
	}
}

// TestResettleProperty runs thousands of random sequences of bets, sales,
// settlements and voids interleaved with re-resolutions of settled
// markets (to YES, NO, another outcome or VOID, again and again), each
// applied with SettledPositions and Resettle as the trading hook applies
// them, and re-derives the books from the trade log after every step: the
// ledger identity holds to the micro-dollar, cash never goes negative, a
// refused correction changes nothing, and after a re-resolution every
// settled position has been paid exactly what the new resolution pays.
func TestResettleProperty(t *testing.T) {
	const sequences, steps = 2000, 60
	r := rand.New(rand.NewPCG(20260518, 11))
	outcomes := []string{"A", "B", "C"}
	typeOf := func(market int64) arena.MarketType {
		if market >= 5 {
			return arena.Multi
		}
		return arena.Binary
	}
	var resettled, corrections, refused int
	for seq := 0; seq < sequences; seq++ {
		l := NewPortfolioLedger(InitialCash)
		paidBy := map[int64]string{} // market → resolution every settled position is paid by, when known
		for step := 0; step < steps; step++ {
			market := int64(1 + r.IntN(6))
			winner := []string{arena.Yes, arena.No}[r.IntN(2)]
			side := []string{SideYes, SideNo}[r.IntN(2)]
			if typeOf(market) == arena.Multi {
				winner, side = outcomes[r.IntN(3)], outcomes[r.IntN(3)]
			}
			switch k := r.IntN(10); {
			case k < 4:
				amount := MinBet + Micros(r.Int64N(int64(max(l.Cash()/4-MinBet, 0)+1)))
				l.Bet(market, side, amount, randPrice(r), at) // a refusal is TestLedgerProperty's business
			case k < 5:
				if open := l.Open(); len(open) > 0 {
					l.Sell(open[r.IntN(len(open))].ID, float64(1+r.IntN(100)), randPrice(r), at)
				}
			case k < 7: // settle, or void, whatever the market's earlier settlements said
				void := r.IntN(4) == 0
				for _, pos := range l.OpenIn(market) {
					var err error
					if void {
						_, err = l.Cancel(pos.ID, at)
					} else {
						won, _ := Won(winner, typeOf(market), pos.Side)
						_, err = l.Settle(pos.ID, won, at)
					}
					if err != nil {
						t.Fatalf("seq %d step %d: settle: %v", seq, step, err)
					}
				}
				delete(paidBy, market)
			default: // re-resolve the market
				res := winner
				if r.IntN(4) == 0 {
					res = arena.Void
				}
				var trades []*arena.Trade
				for _, tr := range l.Trades() {
					if tr.MarketID == market {
						trades = append(trades, tr)
					}
				}
				settled, err := SettledPositions(trades, l.byID)
				if err != nil {
					t.Fatalf("seq %d step %d: %v", seq, step, err)
				}
				ok := true
				for _, sp := range settled {
					before := snapshotOf(l)
					tr, err := l.Resettle(sp, res, typeOf(market), at)
					switch {
					case arena.ErrorKind(err) == arena.ECONFLICT:
						refused++
						ok = false
						if after := snapshotOf(l); after != before {
							t.Fatalf("seq %d step %d: refused correction changed state %+v -> %+v", seq, step, before, after)
						}
					case err != nil:
						t.Fatalf("seq %d step %d: resettle: %v", seq, step, err)
					case tr != nil:
						corrections++
					}
				}
				if len(settled) > 0 {
					resettled++
				}
				delete(paidBy, market)
				if ok {
					paidBy[market] = res
				}
			}
			verifyFromTrades(t, l)
			for market, res := range paidBy {
				var trades []*arena.Trade
				for _, tr := range l.Trades() {
					if tr.MarketID == market {
						trades = append(trades, tr)
					}
				}
				settled, _ := SettledPositions(trades, l.byID)
				for _, sp := range settled {
					pay, status := Micros(0), arena.PositionSettled
					if res == arena.Void {
						pay, status = sp.CostBasis, arena.PositionCancelled
					} else if won, _ := Won(res, typeOf(market), sp.Position.Side); won {
						pay = Micros(sp.Shares)
					}
					if sp.Paid != pay || l.byID[sp.Position.ID].Status != status {
						t.Fatalf("seq %d step %d: market %d re-resolved %s: position %d paid %s, want %s (status %s)",
							seq, step, market, res, sp.Position.ID, sp.Paid, pay, l.byID[sp.Position.ID].Status)
					}
				}
			}
		}
	}
	t.Logf("%d sequences: %d re-resolutions of settled markets, %d corrections, %d refused (cash spent)", sequences, resettled, corrections, refused)
	if resettled == 0 || corrections == 0 || refused == 0 {
		t.Fatalf("degenerate mix: %d re-resolutions, %d corrections, %d refused", resettled, corrections, refused)
	}
}

type ledgerState struct {
	cash, realized, basis Micros
	open, trades          int
}

func snapshotOf(l *Ledger) ledgerState {
	return ledgerState{l.Cash(), l.Realized(), l.CostBasis(), len(l.Open()), len(l.Trades())}
}

func randPrice(r *rand.Rand) PPM {
	switch r.IntN(10) {
	case 0:
		return 0
	case 1:
		return arena.OnePPM
	case 2:
		return PPM(1 + r.IntN(20)) // extreme prices: huge share counts
	}
	return PPM(1 + r.Int64N(int64(arena.OnePPM)-1))
}

// verifyFromTrades recomputes the books from the trade log.
func verifyFromTrades(t *testing.T, l *Ledger) {
	t.Helper()
	cash, realized := InitialCash, Micros(0)
	basis := map[int64]Micros{}
	shares := map[int64]Shares{}
	for _, tr := range l.Trades() {
		switch tr.Kind {
		case arena.TradeBet:
			cash -= tr.Amount
			basis[tr.PositionID] += tr.CostBasis
			shares[tr.PositionID] += tr.Shares
			if tr.Confidence <= 0 || tr.Confidence > 1 {
				t.Fatalf("confidence %v", tr.Confidence)
			}
		case arena.TradeResettle: // a change of payout: nothing is released
			cash += tr.Amount
			realized += tr.Amount
		default:
			cash += tr.Amount
			realized += tr.Amount - tr.CostBasis
			basis[tr.PositionID] -= tr.CostBasis
			shares[tr.PositionID] -= tr.Shares
		}
	}
	var openBasis Micros
	for _, pos := range l.Open() {
		if basis[pos.ID] != pos.CostBasis || shares[pos.ID] != pos.Shares {
			t.Fatalf("position %d: log says %s/%d, ledger %s/%d", pos.ID, basis[pos.ID], shares[pos.ID], pos.CostBasis, pos.Shares)
		}
		openBasis += pos.CostBasis
	}
	for id, b := range basis {
		if l.Position(id) == nil && (b != 0 || shares[id] != 0) {
			t.Fatalf("closed position %d keeps basis %s shares %d", id, b, shares[id])
		}
	}
	switch {
	case cash != l.Cash() || realized != l.Realized():
		t.Fatalf("log cash %s realized %s, ledger %s %s", cash, realized, l.Cash(), l.Realized())
	case cash < 0:
		t.Fatalf("negative cash %s", cash)
	case cash+openBasis != InitialCash+realized:
		t.Fatalf("identity: %s + %s != %s + %s", cash, openBasis, InitialCash, realized)
	}
}

// BenchmarkLedgerBetSell measures ledger throughput (a bet, then a partial
// and a full sell), each followed by the invariant check.
func BenchmarkLedgerBetSell(b *testing.B) {
	l := NewPortfolioLedger(InitialCash)
	for i := 0; i < b.N; i++ {
		tr, err := l.Bet(int64(i%50), SideYes, MinBet, p(0.37), at)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.Sell(tr.PositionID, 40, p(0.41), at); err != nil {
			b.Fatal(err)
		}
		if _, err := l.Sell(tr.PositionID, 100, p(0.39), at); err != nil {
			b.Fatal(err)
		}
		if len(l.trades) > 3000 { // keep memory flat
			l.trades = l.trades[:0]
		}
	}
	b.ReportMetric(float64(3*b.N)/b.Elapsed().Seconds(), "ops/s")
}

// TestBankrupt: bankrupt means no open position and cash too low for the
// minimum bet under the 25% cap (below $200), since cash never reaches 0.
func TestBankrupt(t *testing.T) {
	cases := []struct {
		name     string
		initial  float64
		bet      float64
		won      bool
		bankrupt bool
	}{
		{"lost down to $180", 240, 60, false, true},
		{"lost down to exactly $200", 250, 50, false, false},
		{"won back above the threshold", 240, 60, true, false},
	}
	for _, tc := range cases {
		l := NewPortfolioLedger(d(tc.initial))
		if l.Bankrupt() {
			t.Fatalf("%s: bankrupt at the start", tc.name)
		}
		tr, err := l.Bet(7, SideYes, d(tc.bet), p(0.5), at)
		if err != nil {
			t.Fatal(err)
		}
		if l.Bankrupt() {
			t.Errorf("%s: bankrupt while holding a position", tc.name)
		}
		if _, err := l.Settle(tr.PositionID, tc.won, at); err != nil {
			t.Fatal(err)
		}
		ch, err := l.Change()
		if err != nil {
			t.Fatal(err)
		}
		if l.Bankrupt() != tc.bankrupt || ch.Bankrupt != tc.bankrupt {
			t.Errorf("%s: cash %s, Bankrupt %v, change %v, want %v", tc.name, l.Cash(), l.Bankrupt(), ch.Bankrupt, tc.bankrupt)
		}
	}
	// A stored portfolio with $199.99 and nothing open is bankrupt.
	l, err := NewLedger(&arena.Portfolio{Cash: d(199.99), Realized: d(199.99) - InitialCash}, InitialCash)
	if err != nil {
		t.Fatal(err)
	}
	if !l.Bankrupt() {
		t.Error("$199.99 and no positions is not bankrupt")
	}
}
