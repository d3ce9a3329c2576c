package participant

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/crypto"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/sim"
)

// NewStrategy returns a built-in strategy by name: random, market, or sim
// (an informed agent of the simulator world, which needs the world).
func NewStrategy(name string, agent common.Address, world *sim.World, markets MarketLookup) (Strategy, error) {
	switch name {
	case "random":
		return randomStrategy{agent}, nil
	case "market":
		return marketStrategy{}, nil
	case "sim":
		return NewSimStrategy(world, "informed-0.05", markets, nil)
	}
	return nil, fmt.Errorf("unknown strategy %q (want random, market or sim)", name)
}

// randomStrategy forecasts uniformly at random (expected Brier 1/3), seeded
// by agent and round so a rerun forecasts the same.
type randomStrategy struct{ agent common.Address }

func (randomStrategy) Name() string { return "random" }

func (s randomStrategy) Forecast(_ context.Context, r *forecast.RoundJSON) ([]uint16, []string, error) {
	var id [8]byte
	binary.BigEndian.PutUint64(id[:], r.ID)
	h := crypto.Keccak256(s.agent[:], id[:])
	rng := rand.New(rand.NewPCG(binary.BigEndian.Uint64(h[:8]), binary.BigEndian.Uint64(h[8:16])))
	out := make([]uint16, len(r.Markets))
	for i := range out {
		out[i] = uint16(rng.IntN(forecast.MaxBps + 1))
	}
	return out, nil, nil
}

// marketStrategy echoes the listed price; a market without one gets 0.5.
type marketStrategy struct{}

func (marketStrategy) Name() string { return "market" }

func (marketStrategy) Forecast(_ context.Context, r *forecast.RoundJSON) ([]uint16, []string, error) {
	out := make([]uint16, len(r.Markets))
	reasons := make([]string, len(r.Markets))
	for i, m := range r.Markets {
		out[i] = forecast.MaxBps / 2
		reasons[i] = "no listed price; forecasting 50%"
		if m.Price != nil {
			out[i] = uint16(math.Round(*m.Price * forecast.MaxBps))
			reasons[i] = fmt.Sprintf("echo of the listed price %.4f", *m.Price)
		}
	}
	return out, reasons, nil
}

// MarketLookup resolves an arena market id to its source id.
type MarketLookup func(ctx context.Context, marketID int64) (source, sourceID string, err error)

// simStrategy forecasts like the simulator's informed agent: it needs the
// same world (seed) as the server's sim source.
type simStrategy struct {
	world   *sim.World
	agent   string
	markets MarketLookup
	now     func() time.Time
}

// NewSimStrategy forecasts as the simulator agent named agent (see
// sim.Agents) at the time now returns (default: one minute before the
// commit deadline).
func NewSimStrategy(world *sim.World, agent string, markets MarketLookup, now func() time.Time) (Strategy, error) {
	if world == nil || markets == nil {
		return nil, fmt.Errorf("strategy sim needs the simulator world (--seed) and the server's market lookup")
	}
	if _, err := sim.ParseAgent(agent); err != nil {
		return nil, err
	}
	return &simStrategy{world: world, agent: agent, markets: markets, now: now}, nil
}

func (s *simStrategy) Name() string { return "sim:" + s.agent }

func (s *simStrategy) Forecast(ctx context.Context, r *forecast.RoundJSON) ([]uint16, []string, error) {
	out := make([]uint16, len(r.Markets))
	t := r.CommitDeadline.Add(-time.Minute)
	if s.now != nil {
		t = s.now()
	}
	for i, m := range r.Markets {
		src, sid, err := s.markets(ctx, m.MarketID)
		if err != nil {
			return nil, nil, err
		}
		if !strings.EqualFold(src, "sim") {
			return nil, nil, fmt.Errorf("strategy sim: market %d comes from %s, not the simulator", m.MarketID, src)
		}
		if out[i], err = s.world.ForecastBPS(s.agent, sid, t); err != nil {
			c := s.world.Config()
			return nil, nil, fmt.Errorf("%w: is the server's world this one (seed %d, %d markets, start %s)? Give the --seed, --sim-markets and --sim-start that 'arena sync --source sim' printed",
				err, c.Seed, c.Markets, c.Start.Format(time.RFC3339))
		}
	}
	return out, nil, nil
}
