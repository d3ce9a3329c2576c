package trading

import (
	"context"

	"github.com/forecast-arena/arena"
)

// Read side of the engine: what the API and dashboard show. Handlers call
// these rather than the store.

// Cohorts lists cohorts by week, newest first; status "" lists all.
func (e *Engine) Cohorts(ctx context.Context, status arena.CohortStatus) ([]*arena.Cohort, error) {
	switch status {
	case "", arena.CohortActive, arena.CohortCompleted:
	default:
		return nil, arena.Errorf(arena.EINVALID, "status %q: want active or completed", status)
	}
	return e.Store.Cohorts(ctx, status)
}

// Cohort loads one cohort (ENOTFOUND when absent).
func (e *Engine) Cohort(ctx context.Context, id int64) (*arena.Cohort, error) {
	return e.Store.Cohort(ctx, id)
}

// Decisions lists a cohort's decisions by week, then agent.
func (e *Engine) Decisions(ctx context.Context, cohortID int64) ([]*arena.Decision, error) {
	return e.Store.Decisions(ctx, cohortID)
}

// Decision loads one decision (ENOTFOUND when absent).
func (e *Engine) Decision(ctx context.Context, id int64) (*arena.Decision, error) {
	return e.Store.Decision(ctx, id)
}

// Curve is one agent's stored valuations in a cohort, oldest first.
type Curve struct {
	AgentID   string
	Snapshots []arena.ValuationSnapshot
}

// Curves returns the portfolio curves of a cohort's agents, by agent id;
// agent "" means every agent. An unknown cohort, or an agent not in it,
// is ENOTFOUND.
func (e *Engine) Curves(ctx context.Context, cohortID int64, agent string) ([]Curve, error) {
	if _, err := e.Store.Cohort(ctx, cohortID); err != nil {
		return nil, err
	}
	ports, err := e.Store.Portfolios(ctx, cohortID)
	if err != nil {
		return nil, err
	}
	var out []Curve
	for _, p := range ports {
		if agent != "" && p.AgentID != agent {
			continue
		}
		snaps, err := e.Store.Snapshots(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, Curve{AgentID: p.AgentID, Snapshots: snaps})
	}
	if agent != "" && len(out) == 0 {
		return nil, arena.Errorf(arena.ENOTFOUND, "agent %q is not in cohort %d", agent, cohortID)
	}
	return out, nil
}

// Holdings are one agent's positions and trades in a cohort.
type Holdings struct {
	AgentID   string
	Positions []*arena.Position
	Trades    []*arena.Trade
}

// Holdings lists every agent's positions (any status) and trades in a
// cohort, by agent id.
func (e *Engine) Holdings(ctx context.Context, cohortID int64) ([]Holdings, error) {
	ports, err := e.Store.Portfolios(ctx, cohortID)
	if err != nil {
		return nil, err
	}
	trades, err := cohortTrades(ctx, e.Store, cohortID)
	if err != nil {
		return nil, err
	}
	out := make([]Holdings, 0, len(ports))
	for _, p := range ports {
		pos, err := e.Store.PositionsOf(ctx, p.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, Holdings{AgentID: p.AgentID, Positions: pos, Trades: trades[p.ID]})
	}
	return out, nil
}

// Settings are the engine's effective settings, defaults applied.
type Settings struct {
	InitialCash  arena.Micros
	TopMarkets   int
	MaxAttempts  int
	MaxBetShare  float64 // largest bet as a share of cash
	LineupAgents int
}

// Settings reports the engine's effective settings.
func (e *Engine) Settings() Settings {
	return Settings{InitialCash: e.initialCash(), TopMarkets: e.topMarkets(), MaxAttempts: e.maxAttempts(),
		MaxBetShare: 1 / float64(MaxBetDivisor), LineupAgents: len(e.Lineup)}
}
