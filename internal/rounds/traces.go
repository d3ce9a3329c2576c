package rounds

import (
	"context"

	"github.com/forecast-arena/arena"
)

// Traces publishes what the LLM forecasters were shown and answered: a
// trace only once its round's outcomes are triggered (before, it would
// leak the agent's forecast, as its reasoning would), and the costs of
// every agent's traces.
type Traces struct {
	Rounds *Service
	Store  arena.TraceStore
}

// Trace is agent's trace of round id: ECONFLICT trace_unpublished until
// the round is scored, ENOTFOUND when the agent left none.
func (t *Traces) Trace(ctx context.Context, roundID uint64, agent string) (*arena.ForecastTrace, error) {
	rd, err := t.Rounds.Round(ctx, roundID)
	if err != nil {
		return nil, err
	}
	if rd.Status != arena.RoundScored {
		return nil, arena.Rejectf(arena.ECONFLICT, "trace_unpublished", "round %d: traces are published after outcomes are triggered", roundID)
	}
	return t.Store.Trace(ctx, roundID, agent)
}

// Costs sums the stored traces by agent.
func (t *Traces) Costs(ctx context.Context) ([]arena.AgentCost, error) {
	return t.Store.TraceCosts(ctx)
}
