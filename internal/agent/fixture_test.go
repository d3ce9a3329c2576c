package agent

import (
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
)

// testSnapshot is a week's view with binary and multi-outcome markets, a
// market without prices, and two open positions (one priced and sellable,
// one stale and not sellable).
func testSnapshot() *trading.Snapshot {
	close1 := time.Date(2026, 11, 3, 0, 0, 0, 0, time.UTC)
	return &trading.Snapshot{
		CohortID:       3,
		AgentID:        "gpt-4o",
		Week:           time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC),
		TakenAt:        time.Date(2026, 3, 1, 0, 5, 0, 0, time.UTC),
		InitialCash:    trading.InitialCash,
		Cash:           8_000 * usd,
		PositionsValue: 2_153_240_000,
		Total:          10_153_240_000,
		MaxBet:         2_000 * usd,
		Positions: []trading.PositionView{
			{ID: 41, MarketID: 101, Question: "Will the Fed cut rates in March 2026?", MarketType: arena.Binary, Side: "NO",
				Shares: 1_724_137_931, CostBasis: 1_000 * usd, AvgEntry: 580_000, Price: 650_000, Value: 1_120_689_655, Unrealized: 120_689_655, Tradable: true},
			{ID: 42, MarketID: 999, Question: "Will it snow in\nLondon on Christmas 2025?", MarketType: arena.Binary, Side: "YES",
				Shares: 3_000_000_000, CostBasis: 1_000 * usd, AvgEntry: 333_333, Price: 344_183, PriceStale: true, Value: 1_032_550_345, Unrealized: 32_550_345},
		},
		Markets: []trading.MarketView{
			{ID: 101, Source: arena.SourcePolymarket, SourceID: "0xabc", Question: "Will the Fed cut rates in March 2026?", Category: "Economics",
				Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]trading.PPM{arena.Yes: 350_000, arena.No: 650_000},
				Volume: 12_345_678.9, CloseTime: time.Date(2026, 3, 18, 18, 0, 0, 0, time.UTC), Status: arena.StatusOpen},
			{ID: 102, Source: arena.SourcePolymarket, SourceID: "0xdef", Question: "Presidential election winner 2028", Category: "Politics",
				Type: arena.Multi, Outcomes: []string{"Vance", "Newsom", "Other"},
				Prices: map[string]trading.PPM{"Vance": 280_000, "Newsom": 190_000, "Other": 530_000},
				Volume: 9_876_543, CloseTime: close1, Status: arena.StatusOpen},
			{ID: 103, Source: arena.SourcePolymarket, SourceID: "0x123", Question: "Will BTC close 2026 above $150k?", Category: "",
				Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]trading.PPM{arena.Yes: 125_500},
				Volume: 500_000, CloseTime: time.Date(2026, 12, 31, 23, 59, 0, 0, time.UTC), Status: arena.StatusOpen},
			{ID: 104, Source: arena.SourcePolymarket, SourceID: "0x456", Question: "Unpriced market", Category: "Misc",
				Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Volume: 1000, Status: arena.StatusOpen},
			{ID: 105, Source: arena.SourcePolymarket, SourceID: "0x789", Question: "Already certain", Category: "Misc",
				Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No}, Prices: map[string]trading.PPM{arena.Yes: 1_000_000},
				Volume: 900, Status: arena.StatusOpen},
		},
	}
}
