package agent

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
)

func TestValidateAcceptsAndCanonicalizes(t *testing.T) {
	s := testSnapshot()
	cases := []struct {
		name    string
		in, out trading.Action
	}{
		{"hold", trading.Hold("r"), trading.Hold("r")},
		{"binary sides any case", trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "yes", 50*usd), bet(103, " No ", 100*usd)}},
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "YES", 50*usd), bet(103, "NO", 100*usd)}}},
		{"outcome name case-insensitive", trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(102, "newsom", 2_000*usd)}},
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(102, "Newsom", 2_000*usd)}}},
		{"max bet exactly 25%", trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "YES", 2_000*usd)}},
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "YES", 2_000*usd)}}},
		// 8000 → 2000 (cap 2000) → 6000 left, cap 1500.
		{"sequential caps", trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "YES", 2_000*usd), bet(101, "NO", 1_500*usd)}},
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "YES", 2_000*usd), bet(101, "NO", 1_500*usd)}}},
		{"adding to a held side is allowed", trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "NO", 100*usd)}},
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "NO", 100*usd)}}},
		{"sell all", trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: 41, Percentage: 100}}},
			trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: 41, Percentage: 100}}}},
		{"sell some", trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: 41, Percentage: 1}}},
			trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: 41, Percentage: 1}}}},
	}
	for _, tc := range cases {
		got, err := Validate(tc.in, s)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.out) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.out)
		}
		// What Validate accepts, the trading engine's structural check accepts.
		if err := got.Validate(); err != nil {
			t.Errorf("%s: trading rejects a validated action: %v", tc.name, err)
		}
	}
}

func TestValidateRejects(t *testing.T) {
	s := testSnapshot()
	bets := func(b ...trading.Bet) trading.Action { return trading.Action{Kind: trading.ActionBet, Bets: b} }
	sells := func(x ...trading.Sell) trading.Action { return trading.Action{Kind: trading.ActionSell, Sells: x} }
	cases := []struct {
		name string
		a    trading.Action
		msgs []string
	}{
		{"unknown market", bets(bet(777, "YES", 100*usd)), []string{"bets[0]: market_id 777 is not in the list of markets"}},
		{"binary side", bets(bet(101, "MAYBE", 100*usd)), []string{"bets[0]: market 101 is binary", "YES or NO"}},
		{"multi outcome side", bets(bet(102, "YES", 100*usd)), []string{"market 102 has no outcome \"YES\"", "Vance, Newsom, Other"}},
		{"below minimum", bets(bet(101, "YES", 49_999_999)), []string{"below the minimum bet of $50.00"}},
		{"above 25%", bets(bet(101, "YES", 2_000*usd+1)), []string{"exceeds 25% of your cash (max $2,000.00)"}},
		{"above 25% after earlier bets", bets(bet(101, "YES", 2_000*usd), bet(103, "YES", 1_600*usd)),
			[]string{"bets[1]: amount $1,600.00 exceeds 25% of the cash left after the earlier bets of this action ($6,000.00, so max $1,500.00)"}},
		{"duplicate market and side", bets(bet(101, "YES", 100*usd), bet(101, "yes", 100*usd)), []string{"bets[1]: market 101 side YES is already bet in bets[0]"}},
		{"no price", bets(bet(104, "YES", 100*usd)), []string{"market 104 has no price for YES"}},
		{"untradeable price", bets(bet(105, "NO", 100*usd)), []string{"market 105's NO price 0% cannot be traded"}},
		{"unknown position", sells(trading.Sell{PositionID: 7, Percentage: 50}), []string{"sells[0]: position_id 7 is not one of your open positions"}},
		{"position not tradable", sells(trading.Sell{PositionID: 42, Percentage: 50}),
			[]string{"sells[0]: position 42 cannot be sold this week", "settles at resolution"}},
		{"percentage low", sells(trading.Sell{PositionID: 41, Percentage: 0.5}), []string{"percentage 0.5 must be from 1 to 100"}},
		{"percentage high", sells(trading.Sell{PositionID: 41, Percentage: 150}), []string{"percentage 150 must be from 1 to 100"}},
		{"duplicate sell", sells(trading.Sell{PositionID: 41, Percentage: 50}, trading.Sell{PositionID: 41, Percentage: 50}), []string{"sells[1]: position 41 is already sold in sells[0]"}},
		{"hold with bets", trading.Action{Kind: trading.ActionHold, Bets: []trading.Bet{bet(101, "YES", 100*usd)}}, []string{"a HOLD must not carry bets"}},
		{"bet with sells", trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "YES", 100*usd)}, Sells: []trading.Sell{{PositionID: 41, Percentage: 5}}}, []string{"a BET must not carry sells"}},
		{"empty bet", trading.Action{Kind: trading.ActionBet}, []string{"at least one bet"}},
		{"empty sell", trading.Action{Kind: trading.ActionSell}, []string{"at least one sell"}},
		{"unknown kind", trading.Action{Kind: "BUY"}, []string{`unknown action "BUY"`}},
		{"all problems at once", bets(bet(777, "YES", 100*usd), bet(101, "YES", 10*usd), bet(102, "Nobody", 60*usd)),
			[]string{"bets[0]: market_id 777", "bets[1]: amount $10.00 is below", "bets[2]: market 102 has no outcome"}},
	}
	for _, tc := range cases {
		_, err := Validate(tc.a, s)
		if err == nil {
			t.Errorf("%s: accepted", tc.name)
			continue
		}
		if arena.ErrorKind(err) != arena.EINVALID || arena.ErrorCode(err) != CodeInvalidAction {
			t.Errorf("%s: kind %s code %s", tc.name, arena.ErrorKind(err), arena.ErrorCode(err))
		}
		for _, m := range tc.msgs {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q lacks %q", tc.name, err, m)
			}
		}
	}

	// Closed markets in the list take no bets.
	s.Markets[0].Status = arena.StatusClosed
	if _, err := Validate(bets(bet(101, "YES", 100*usd)), s); err == nil || !strings.Contains(err.Error(), "is closed and takes no bets") {
		t.Errorf("closed market: %v", err)
	}
}

// TestValidateMatchesExecution: whatever Validate accepts executes in full
// on the trading engine at the snapshot's prices (no execution rejects it).
func TestValidateMatchesExecution(t *testing.T) {
	s := testSnapshot()
	s.Positions = nil
	s.Cash = trading.InitialCash
	f := &trading.Frame{Markets: s.Markets}
	actions := []trading.Action{
		{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "yes", 2_500*usd), bet(101, "no", 1_875*usd), bet(102, "VANCE", 1_406_250_000), bet(103, "No", 50*usd)}},
	}
	for _, a := range actions {
		v, err := Validate(a, s)
		if err != nil {
			t.Fatal(err)
		}
		l := trading.NewPortfolioLedger(trading.InitialCash)
		ex, err := trading.Execute(l, f, v, s.TakenAt)
		if err != nil {
			t.Fatal(err)
		}
		if n := trading.Executed(ex); n != len(v.Bets) {
			t.Errorf("executed %d of %d: %+v", n, len(v.Bets), ex)
		}
	}
	// One micro-dollar over the sequential cap: Validate and execution agree.
	over := trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(101, "YES", 2_500*usd), bet(101, "NO", 1_875*usd+1)}}
	if _, err := Validate(over, s); err == nil {
		t.Error("Validate accepted a bet over the sequential cap")
	}
	l := trading.NewPortfolioLedger(trading.InitialCash)
	ex, _ := trading.Execute(l, f, over, s.TakenAt)
	if trading.Executed(ex) != 1 || ex[1].Code != trading.CodeAboveMax {
		t.Errorf("execution: %+v", ex)
	}
}

// TestValidateMatchesExecutionSells: a SELL is accepted by Validate exactly
// when the engine executes it. Positions sit on an open priced market, a
// closed market, a resolved market, an open market without a price for the
// side, and a market missing from the frame; the snapshot comes from
// trading.BuildSnapshot, as the engine builds it.
func TestValidateMatchesExecutionSells(t *testing.T) {
	at := time.Date(2026, 3, 1, 0, 5, 0, 0, time.UTC)
	binary := func(id int64, status arena.MarketStatus, res string, prices map[string]trading.PPM) trading.MarketView {
		return trading.MarketView{ID: id, Question: fmt.Sprintf("market %d", id), Type: arena.Binary,
			Outcomes: []string{arena.Yes, arena.No}, Prices: prices, Status: status, Resolution: res}
	}
	yes := map[string]trading.PPM{arena.Yes: 600_000}
	markets := map[int64]trading.MarketView{
		1: binary(1, arena.StatusOpen, "", yes),
		2: binary(2, arena.StatusClosed, "", yes),
		3: binary(3, arena.StatusResolved, arena.Yes, yes),
		4: {ID: 4, Question: "multi", Type: arena.Multi, Outcomes: []string{"A", "B"},
			Prices: map[string]trading.PPM{"B": 500_000}, Status: arena.StatusOpen},
	}
	sides := map[int64]string{1: "YES", 2: "NO", 3: "YES", 4: "A", 5: "YES"}
	tradable := map[int64]bool{1: true}

	// Open one position per market, then reload the ledger with ids.
	l := trading.NewPortfolioLedger(trading.InitialCash)
	for id := int64(1); id <= 5; id++ {
		if _, err := l.Bet(id, sides[id], 500*usd, 400_000, at); err != nil {
			t.Fatal(err)
		}
	}
	ch, _ := l.Change()
	p := &arena.Portfolio{ID: 1, Cash: ch.Cash}
	for i, x := range ch.Positions {
		p.Positions = append(p.Positions, &arena.Position{ID: int64(100 + i + 1), MarketID: x.MarketID, Side: x.Side,
			Shares: x.Shares, CostBasis: x.CostBasis, Mark: 400_000, Status: arena.PositionOpen})
	}
	f := &trading.Frame{Week: at, TakenAt: at}
	f.Markets = append(f.Markets, markets[1])
	f.Held = append(f.Held, markets[2], markets[3], markets[4]) // market 5 is not in the frame

	for _, pos := range p.Positions {
		l, err := trading.NewLedger(p, trading.InitialCash)
		if err != nil {
			t.Fatal(err)
		}
		s := trading.BuildSnapshot(l, f, "a")
		for _, v := range s.Positions {
			if v.Tradable != tradable[v.MarketID] {
				t.Errorf("position on market %d: Tradable %v", v.MarketID, v.Tradable)
			}
		}
		for _, pct := range []float64{100, 50} {
			a := trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: pos.ID, Percentage: pct}}}
			v, verr := Validate(a, &s)
			fresh, err := trading.NewLedger(p, trading.InitialCash)
			if err != nil {
				t.Fatal(err)
			}
			ex, err := trading.Execute(fresh, f, a, at)
			if err != nil {
				t.Fatal(err)
			}
			ok := trading.Executed(ex) == 1
			if (verr == nil) != ok {
				t.Errorf("market %d sell %v%%: Validate err=%v, execution %+v", pos.MarketID, pct, verr, ex)
			}
			if verr == nil && v.Sells[0] != a.Sells[0] {
				t.Errorf("market %d: validated %+v", pos.MarketID, v)
			}
			if verr != nil && !strings.Contains(verr.Error(), "settles at resolution") {
				t.Errorf("market %d: message %q", pos.MarketID, verr)
			}
		}
	}
}
