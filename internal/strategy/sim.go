package strategy

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/sim"
	"github.com/forecast-arena/arena/participant"
)

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

// NewSim forecasts as the simulator agent named agent (see
// sim.Agents) at the time now returns (default: one minute before the
// commit deadline).
func NewSim(world *sim.World, agent string, markets MarketLookup, now func() time.Time) (participant.Strategy, error) {
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
