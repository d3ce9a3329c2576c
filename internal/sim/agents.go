package sim

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// Simulated agents with known skill.
const (
	AgentRandom        = "random"        // uniform on [0,1): Brier 1/3 whatever happens
	AgentMarket        = "market"        // echoes the market price: Alpha exactly 0
	AgentOverconfident = "overconfident" // the market price pushed away from 0.5 (logit × OverconfidenceFactor)
	AgentStale         = "stale"         // the market price 24 hours earlier (or at open)
	// InformedPrefix + σ: sees the truth q(t) plus N(0, σ²) noise on the
	// probability scale, clipped to [0.01, 0.99]; any σ in [0, 1] parses,
	// e.g. "informed-0.07".
	InformedPrefix = "informed-"
)

// OverconfidenceFactor multiplies the market's log-odds for the
// overconfident agent.
const OverconfidenceFactor = 2.0

// Agents lists the simulated agents a demo runs. Their skill on markets
// observed 1–7 days before close, where the market's gap to the truth is
// G = E[(price − q)²] ≈ 0.021 and the market's Brier ≈ 0.176 (measured over
// 20 default worlds and 200,000 Draws; see the package tests):
//
//	random         Brier ≈ 1/3 (exactly in expectation)
//	market         Alpha = 0 exactly
//	informed-0.02  Alpha ≈ +0.020 (mean |b−p| ≈ 0.105)
//	informed-0.05  Alpha ≈ +0.018
//	informed-0.10  Alpha ≈ +0.012
//	overconfident  Alpha ≈ −0.011
//	stale          Alpha ≈ −0.003 … −0.006
//
// informed-σ has Alpha ≈ G − σ² (a little more, because forecasts are
// clipped to [0.01, 0.99]).
func Agents() []string {
	return []string{AgentRandom, AgentMarket, "informed-0.02", "informed-0.05", "informed-0.10", AgentOverconfident, AgentStale}
}

// Obs is what a simulated agent may look at when it forecasts one market at
// one instant. The informed agents read Q, which no real participant sees.
type Obs struct {
	Q     float64 // true probability q(t)
	Price float64 // market Yes price at t
	Stale float64 // market Yes price at t − 24h (or at open)
}

// Agent is a parsed simulated agent.
type Agent struct {
	Name  string
	kind  string
	sigma float64
}

// ParseAgent parses a simulated agent name (see Agents and InformedPrefix).
func ParseAgent(name string) (Agent, error) {
	switch name {
	case AgentRandom, AgentMarket, AgentOverconfident, AgentStale:
		return Agent{Name: name, kind: name}, nil
	}
	if s, ok := strings.CutPrefix(name, InformedPrefix); ok {
		sigma, err := strconv.ParseFloat(s, 64)
		if err == nil && sigma >= 0 && sigma <= 1 {
			return Agent{Name: name, kind: "informed", sigma: sigma}, nil
		}
	}
	return Agent{}, arena.Errorf(arena.EINVALID, "sim: unknown agent %q (want random, market, overconfident, stale or informed-<σ in [0,1]>)", name)
}

// Forecast is the agent's probability of Yes given o. Only the random and
// informed agents use r.
func (a Agent) Forecast(o Obs, r *rand.Rand) float64 {
	switch a.kind {
	case AgentRandom:
		return r.Float64()
	case AgentMarket:
		return o.Price
	case AgentOverconfident:
		return clipPrice(expit(OverconfidenceFactor * logit(o.Price)))
	case AgentStale:
		return o.Stale
	case "informed":
		return clipPrice(o.Q + a.sigma*r.NormFloat64())
	}
	panic("sim: Forecast on a zero Agent")
}

// Observe is what agents see of market sourceID at t, which must lie in
// [open, close).
func (w *World) Observe(sourceID string, t time.Time) (Obs, error) {
	m, err := w.lookup(sourceID)
	if err != nil {
		return Obs{}, err
	}
	if t.Before(m.spec.Open) || !t.Before(m.spec.Close) {
		return Obs{}, arena.Errorf(arena.EINVALID, "sim: market %s is not open at %s (open %s, close %s)",
			sourceID, t.UTC().Format(time.RFC3339), m.spec.Open.Format(time.RFC3339), m.spec.Close.Format(time.RFC3339))
	}
	stale := t.Add(-staleAge)
	if stale.Before(m.spec.Open) {
		stale = m.spec.Open
	}
	return Obs{
		Q:     w.TrueProb(sourceID, t),
		Price: bpsProb(m.price[w.index(m, t)]),
		Stale: bpsProb(m.price[w.index(m, stale)]),
	}, nil
}

// Forecast is the agent's probability of Yes for market sourceID at t. It is
// a pure function of (seed, agent, market, t): each call seeds its own
// random stream from a hash of those, so results do not depend on call
// order. The market agent returns exactly PriceAt(sourceID, t).
func (w *World) Forecast(agent, sourceID string, t time.Time) (float64, error) {
	a, err := ParseAgent(agent)
	if err != nil {
		return 0, err
	}
	o, err := w.Observe(sourceID, t)
	if err != nil {
		return 0, err
	}
	return a.Forecast(o, w.agentRNG(agent, sourceID, t)), nil
}

// ForecastBPS is Forecast in basis points (0..10000).
func (w *World) ForecastBPS(agent, sourceID string, t time.Time) (uint16, error) {
	p, err := w.Forecast(agent, sourceID, t)
	if err != nil {
		return 0, err
	}
	return BPS(p), nil
}

// BPS rounds a probability to basis points, clamping to [0, 10000]. A NaN
// is a programming error and panics rather than becoming a silent 0.5.
func BPS(p float64) uint16 {
	if math.IsNaN(p) {
		panic("sim: BPS of NaN")
	}
	return uint16(math.Round(math.Max(0, math.Min(1, p)) * 10000))
}

func (w *World) agentRNG(agent, sourceID string, t time.Time) *rand.Rand {
	h := fnv.New64a()
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], uint64(w.cfg.Seed))
	h.Write(b[:])
	h.Write([]byte(agent))
	h.Write([]byte{0})
	h.Write([]byte(sourceID))
	h.Write([]byte{0})
	binary.BigEndian.PutUint64(b[:], uint64(t.UnixNano()))
	h.Write(b[:])
	s := h.Sum64()
	return rand.New(rand.NewPCG(mix64(s), mix64(s^0xa5a5a5a5a5a5a5a5)))
}

// Intent is what a simulated trader would do in one market: buy the side
// its forecast favours, sized by the Kelly fraction of its bankroll. The
// trading track turns it into a bet.
type Intent struct {
	Prob  float64 // agent's probability of Yes
	Price float64 // market Yes price
	Side  string  // arena.Yes, arena.No, or "" when Prob == Price
	// Edge is the expected profit per dollar staked on Side: for Yes
	// Prob/Price − 1, for No (1−Prob)/(1−Price) − 1.
	Edge float64
	// Kelly is the bankroll fraction a Kelly bettor stakes on Side:
	// (Prob − Price)/(1 − Price) for Yes, (Price − Prob)/Price for No.
	Kelly float64
}

// TradeIntent is agent's trading intent for market sourceID at t.
func (w *World) TradeIntent(agent, sourceID string, t time.Time) (Intent, error) {
	p, err := w.Forecast(agent, sourceID, t)
	if err != nil {
		return Intent{}, err
	}
	price, _ := w.PriceAt(sourceID, t)
	return MakeIntent(p, price), nil
}

// MakeIntent sizes a bet from a forecast p and a Yes price in (0,1).
func MakeIntent(p, price float64) Intent {
	in := Intent{Prob: p, Price: price}
	switch {
	case p > price:
		in.Side, in.Edge, in.Kelly = arena.Yes, p/price-1, (p-price)/(1-price)
	case p < price:
		in.Side, in.Edge, in.Kelly = arena.No, (1-p)/(1-price)-1, (price-p)/price
	}
	return in
}
