package trading

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// Forecaster gives a simulated agent's probability of Yes for a market at a
// time; *sim.World implements it.
type Forecaster interface {
	Forecast(agent, sourceID string, t time.Time) (float64, error)
}

// SimTrader is a simulated trading agent for the offline demo and tests. It
// trades binary markets where its own forecast differs from the price and
// sizes each bet from its own belief: it stakes c × 25% of its cash, where
// c is its probability that the side it buys wins. Its implied confidence
// is then exactly its belief, so its trading Brier score is its forecast
// Brier score on the markets it bets, and agents of different skill show
// different calibration.
type SimTrader struct {
	Agent string // simulated agent name, e.g. "informed-0.05"
	World Forecaster
	// MinEdge is the smallest |forecast − price| worth trading (default 0.05).
	MinEdge float64
	// MaxBets caps new bets per week (default 5).
	MaxBets int
}

// Decide implements Decider. With positions whose side its forecast now
// prices at least MinEdge below the market, it sells them; otherwise it
// bets on the markets with the largest edges; otherwise it holds.
func (s *SimTrader) Decide(ctx context.Context, snap Snapshot) (Decision, error) {
	start := time.Now()
	minEdge, maxBets := s.MinEdge, s.MaxBets
	if minEdge <= 0 {
		minEdge = 0.05
	}
	if maxBets <= 0 {
		maxBets = 5
	}
	byID := map[int64]*MarketView{}
	for i := range snap.Markets {
		byID[snap.Markets[i].ID] = &snap.Markets[i]
	}
	forecast := func(m *MarketView) (float64, bool) {
		if m == nil || m.Type != arena.Binary {
			return 0, false
		}
		p, err := s.World.Forecast(s.Agent, m.SourceID, snap.TakenAt)
		if err != nil || math.IsNaN(p) {
			return 0, false
		}
		return p, true
	}
	var sells []Sell
	var notes []string
	held := map[int64]bool{}
	for _, pos := range snap.Positions {
		held[pos.MarketID] = true
		p, ok := forecast(byID[pos.MarketID])
		if !ok {
			continue
		}
		belief := p
		if pos.Side == SideNo {
			belief = 1 - p
		}
		if pos.Price.Float()-belief >= minEdge {
			sells = append(sells, Sell{PositionID: pos.ID, Percentage: 100})
			notes = append(notes, fmt.Sprintf("sell %d: %s priced %.2f, I say %.2f", pos.ID, pos.Side, pos.Price.Float(), belief))
		}
	}
	if len(sells) > 0 {
		return Decision{Action: Action{Kind: ActionSell, Sells: sells, Reasoning: strings.Join(notes, "; ")}, Latency: time.Since(start)}, nil
	}
	type cand struct {
		m      *MarketView
		side   string
		belief float64
		edge   float64
	}
	var cands []cand
	for i := range snap.Markets {
		m := &snap.Markets[i]
		if held[m.ID] {
			continue
		}
		p, ok := forecast(m)
		if !ok {
			continue
		}
		yes, ok := m.SidePrice(SideYes)
		if !ok {
			continue
		}
		edge := p - yes.Float()
		switch {
		case edge >= minEdge:
			cands = append(cands, cand{m, SideYes, p, edge})
		case -edge >= minEdge:
			cands = append(cands, cand{m, SideNo, 1 - p, -edge})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].edge > cands[j].edge })
	cash := snap.Cash
	var bets []Bet
	for _, c := range cands {
		if len(bets) == maxBets {
			break
		}
		amount := Micros(math.Floor(c.belief * float64(cash/MaxBetDivisor)))
		if amount < MinBet {
			continue
		}
		bets = append(bets, Bet{MarketID: c.m.ID, Side: c.side, Amount: amount})
		notes = append(notes, fmt.Sprintf("%s on %d at %.2f: I say %.2f", c.side, c.m.ID, c.belief-c.edge, c.belief))
		cash -= amount
	}
	if len(bets) == 0 {
		return Decision{Action: Hold("no market where my forecast beats the price"), Latency: time.Since(start)}, ctx.Err()
	}
	return Decision{Action: Action{Kind: ActionBet, Bets: bets, Reasoning: strings.Join(notes, "; ")}, Latency: time.Since(start)}, ctx.Err()
}
