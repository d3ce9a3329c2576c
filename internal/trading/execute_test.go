package trading

import (
	"encoding/json"
	"testing"

	"github.com/forecast-arena/arena"
)

func testFrame() *Frame {
	bin := &arena.Market{ID: 1, Source: "sim", SourceID: "b", Question: "Will it?", Type: arena.Binary,
		Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.62}, Status: arena.StatusOpen}
	multi := &arena.Market{ID: 2, Source: "sim", SourceID: "m", Question: "Who?", Type: arena.Multi,
		Outcomes: []string{"Lakers", "Celtics", "Knicks"}, Prices: map[string]float64{"Lakers": 0.5, "Celtics": 0.3}, Status: arena.StatusOpen}
	noPrice := &arena.Market{ID: 3, Source: "sim", SourceID: "n", Question: "Unpriced?", Type: arena.Binary,
		Outcomes: []string{arena.Yes, arena.No}, Status: arena.StatusOpen}
	held := &arena.Market{ID: 4, Source: "sim", SourceID: "h", Question: "Held?", Type: arena.Binary,
		Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.2}, Status: arena.StatusOpen}
	closed := &arena.Market{ID: 5, Source: "sim", SourceID: "c", Question: "Closed?", Type: arena.Binary,
		Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]float64{arena.Yes: 0.9}, Status: arena.StatusClosed}
	return BuildFrame(1, at, at, []*arena.Market{bin, multi, noPrice}, []*arena.Market{held, bin, closed})
}

func TestExecuteAgainstFrame(t *testing.T) {
	f := testFrame()
	l := NewPortfolioLedger(InitialCash)
	heldPos, _ := l.Bet(4, SideNo, d(400), p(0.5), at)
	closedPos, _ := l.Bet(5, SideYes, d(100), p(0.5), at)
	a := Action{Kind: ActionBet, Bets: []Bet{
		{MarketID: 1, Side: "no", Amount: d(380)},        // NO at 1 − 0.62 = 0.38: 1000 shares
		{MarketID: 2, Side: "celtics", Amount: d(300)},   // named outcome at its own price
		{MarketID: 2, Side: "Knicks", Amount: d(100)},    // no price for the outcome
		{MarketID: 2, Side: "Heat", Amount: d(100)},      // not an outcome
		{MarketID: 1, Side: "MAYBE", Amount: d(100)},     // binary needs YES or NO
		{MarketID: 3, Side: "YES", Amount: d(100)},       // market without price
		{MarketID: 4, Side: "YES", Amount: d(100)},       // held, not offered
		{MarketID: 1, Side: "YES", Amount: d(1_000_000)}, // above 25% of cash
		{MarketID: 1, Side: "NO", Amount: d(76)},         // adds to the NO position: 200 shares
	}}
	ex, err := Execute(l, f, a, at)
	if err != nil {
		t.Fatal(err)
	}
	wantCodes := []string{"", "", CodeNoPrice, CodeBadSide, CodeBadSide, CodeNoPrice, CodeNoMarket, CodeAboveMax, ""}
	for i, e := range ex {
		if e.Code != wantCodes[i] || e.OK != (wantCodes[i] == "") {
			t.Errorf("bet %d: %+v, want code %q", i, e, wantCodes[i])
		}
	}
	if ex[0].Price != 380_000 || ex[0].Shares != 1000*arena.OneShare || ex[0].Side != SideNo || ex[1].Side != "Celtics" || ex[1].Price != 300_000 {
		t.Fatalf("executions %+v %+v", ex[0], ex[1])
	}
	if Executed(ex) != 3 || len(l.Open()) != 4 {
		t.Fatalf("%d executed, %d open", Executed(ex), len(l.Open()))
	}
	// Sells price held positions from the frame, side-correct: NO at 1 − 0.2.
	sells := Action{Kind: ActionSell, Sells: []Sell{{PositionID: heldPos.PositionID, Percentage: 100}, {PositionID: 77, Percentage: 50},
		{PositionID: closedPos.PositionID, Percentage: 100}}}
	ex, err = Execute(l, f, sells, at)
	if err != nil || !ex[0].OK || ex[0].Price != 800_000 || ex[0].Proceeds != d(640) || ex[1].Code != CodeNoPosition || ex[2].Code != CodeMarketClosed {
		t.Fatalf("sells %+v %v", ex, err)
	}
	// The agent's view.
	s := BuildSnapshot(l, f, "a")
	if len(s.Markets) != 3 || len(s.Positions) != 3 || s.Positions[1].Price != 380_000 || s.Positions[1].Shares != 1200*arena.OneShare ||
		s.Positions[0].MarketID != 5 || s.Positions[0].Price != 900_000 {
		t.Fatalf("snapshot %+v", s)
	}
	if got := f.Market(2).PriceLine(); got != "Lakers 50%, Celtics 30%, Knicks (no price)" {
		t.Fatalf("price line %q", got)
	}
	if got := f.Market(1).PriceLine(); got != "62% YES / 38% NO" {
		t.Fatalf("price line %q", got)
	}
	// The frame survives its stored form.
	b, _ := EncodeFrame(f)
	g, err := DecodeFrame(b)
	if err != nil || g.Market(2).Prices["Celtics"] != 300_000 || !g.Offered(1) || g.Offered(4) || g.Market(4) == nil {
		t.Fatalf("decoded frame %+v %v", g, err)
	}
}

func TestActionValidate(t *testing.T) {
	for _, c := range []struct {
		a  Action
		ok bool
	}{
		{Hold("fine"), true},
		{Action{Kind: ActionBet, Bets: []Bet{{MarketID: 1, Side: "YES", Amount: MinBet}}}, true},
		{Action{Kind: ActionBet, Bets: []Bet{{MarketID: 1, Side: "YES", Amount: MinBet - 1}}}, false},
		{Action{Kind: ActionBet}, false},
		{Action{Kind: ActionBet, Bets: []Bet{{MarketID: 0, Side: "YES", Amount: MinBet}}}, false},
		{Action{Kind: ActionBet, Bets: []Bet{{MarketID: 1, Side: " ", Amount: MinBet}}}, false},
		{Action{Kind: ActionSell, Sells: []Sell{{PositionID: 3, Percentage: 1}}}, true},
		{Action{Kind: ActionSell, Sells: []Sell{{PositionID: 3, Percentage: 100.5}}}, false},
		{Action{Kind: ActionSell, Sells: []Sell{{PositionID: 3, Percentage: 50}, {PositionID: 3, Percentage: 50}}}, false},
		{Action{Kind: ActionHold, Sells: []Sell{{PositionID: 3, Percentage: 50}}}, false},
		{Action{Kind: "YOLO"}, false},
	} {
		if err := c.a.Validate(); (err == nil) != c.ok || (err != nil && arena.ErrorKind(err) != arena.EINVALID) {
			t.Errorf("%v: %v", c.a, err)
		}
	}
}

// FuzzExecute feeds arbitrary actions (as JSON) through validation and
// execution: nothing an agent writes may break the ledger.
func FuzzExecute(f *testing.F) {
	for _, s := range []string{
		`{"action":"BET","bets":[{"market_id":1,"side":"YES","amount_micros":500000000}],"reasoning":"x"}`,
		`{"action":"BET","bets":[{"market_id":2,"side":"Celtics","amount_micros":2500000000},{"market_id":1,"side":"no","amount_micros":50000000}]}`,
		`{"action":"SELL","sells":[{"position_id":-1,"percentage":33.3}]}`,
		`{"action":"SELL","sells":[{"position_id":-1,"percentage":100},{"position_id":-2,"percentage":1}]}`,
		`{"action":"HOLD","reasoning":"wait"}`,
		`{"action":"BET","bets":[{"market_id":3,"side":"YES","amount_micros":-5}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var a Action
		if json.Unmarshal(data, &a) != nil {
			return
		}
		fr := testFrame()
		l := NewPortfolioLedger(InitialCash)
		l.Bet(1, SideYes, d(1000), p(0.62), at)
		l.Bet(4, SideNo, d(500), p(0.8), at)
		valid := a.Validate() == nil
		ex, err := Execute(l, fr, a, at)
		if err != nil {
			t.Fatalf("internal error on %s: %v", data, err)
		}
		if err := l.Check(); err != nil {
			t.Fatal(err)
		}
		if len(ex) != len(a.Bets)+len(a.Sells) || len(l.Trades()) != 2+Executed(ex) {
			t.Fatalf("%d executions for %d items, %d trades", len(ex), len(a.Bets)+len(a.Sells), len(l.Trades()))
		}
		if valid && a.Kind == ActionHold && Executed(ex) != 0 {
			t.Fatal("HOLD traded")
		}
	})
}
