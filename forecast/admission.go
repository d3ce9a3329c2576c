package forecast

import (
	"context"
	"time"

	"github.com/forecast-arena/arena"
)

// Admission bounds what a flood of fresh signing keys can cost: every
// commit is free to make, and every agent of a round is scored at its
// trigger and stays on the leaderboard (an unrevealed commit as a
// forfeit). With a cap on the agents of a round and on the agents seen
// for the first time in an hour, scoring and the leaderboard stay
// bounded. A zero cap is off.
//
// The caps are checked before the commit's transaction, so commits
// arriving at the same moment can pass a cap by at most the number in
// flight; they bound a flood, they are not an exact quota.
type Admission struct {
	Store             arena.AdmissionStore // nil: no caps
	MaxAgentsPerRound int
	MaxNewAgentsHour  int
}

func (a Admission) admit(ctx context.Context, roundID uint64, agent string, now time.Time) error {
	if a.Store == nil || (a.MaxAgentsPerRound <= 0 && a.MaxNewAgentsHour <= 0) {
		return nil
	}
	if a.MaxAgentsPerRound > 0 {
		n, err := a.Store.RoundAgents(ctx, roundID)
		if err != nil {
			return err
		}
		if n >= a.MaxAgentsPerRound {
			return reject(CodeRoundFull, "round %d already has %d agents, the most a round admits", roundID, n)
		}
	}
	if a.MaxNewAgentsHour > 0 {
		known, err := a.Store.AgentKnown(ctx, agent)
		if err != nil || known {
			return err
		}
		n, err := a.Store.NewAgentsSince(ctx, now.Add(-time.Hour))
		if err != nil {
			return err
		}
		if n >= a.MaxNewAgentsHour {
			return reject(CodeTooManyNewAgents, "%d new agents joined in the last hour, the most an hour admits; try again later", n)
		}
	}
	return nil
}
