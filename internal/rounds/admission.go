package rounds

import (
	"context"
	"time"

	"github.com/forecast-arena/arena/forecast"

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
	Store             arena.AdmissionStore // nil: no caps on agents
	MaxAgentsPerRound int
	MaxNewAgentsHour  int
	// ProfileUpdatesPerDay caps each agent's signed profile updates, so
	// that the log grows with forecasts, not with renames: that many at
	// once, then one more every 24 h / that many (zero: no cap). Exact:
	// it is applied in the transaction that stores the update.
	ProfileUpdatesPerDay int
}

// spendProfileUpdate applies the cap on profile updates to one at now,
// given how far ahead the agent's allowance is spent: each update spends
// a day's share (24 h / ProfileUpdatesPerDay) from the later of now and
// spent, and one that would spend it more than a day ahead is refused.
// It returns how far ahead the allowance is spent with this update.
func (a Admission) spendProfileUpdate(agent string, spent, now time.Time) (time.Time, error) {
	if a.ProfileUpdatesPerDay <= 0 {
		return spent, nil
	}
	const day = 24 * time.Hour
	share := day / time.Duration(a.ProfileUpdatesPerDay)
	next := now.Add(share)
	if spent.After(now) {
		next = spent.Add(share)
	}
	if over := next.Sub(now) - day; over > 0 {
		wait := max(time.Second, over.Truncate(time.Second))
		if wait < over {
			wait += time.Second // whole seconds, as Retry-After counts them, never early
		}
		return spent, &forecast.RetryLater{Err: forecast.Reject(forecast.CodeTooManyProfileUpdates, "agent %s has made the profile updates a day allows (%d at once, then one every %s); try again in %s",
			agent, a.ProfileUpdatesPerDay, share, wait), After: wait}
	}
	return next, nil
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
			// Final for this round: agents never leave it.
			return forecast.Reject(forecast.CodeRoundFull, "round %d already has %d agents, the most a round admits; commit to a later round", roundID, n)
		}
	}
	return a.admitNew(ctx, agent, now)
}

// admitNew applies the cap on new agents an hour to an agent's first
// commit or first profile: either makes it known to the arena.
func (a Admission) admitNew(ctx context.Context, agent string, now time.Time) error {
	if a.Store == nil || a.MaxNewAgentsHour <= 0 {
		return nil
	}
	known, err := a.Store.AgentKnown(ctx, agent)
	if err != nil || known {
		return err
	}
	n, err := a.Store.NewAgentsSince(ctx, now.Add(-time.Hour))
	if err != nil {
		return err
	}
	if n >= a.MaxNewAgentsHour {
		wait, err := a.newAgentWait(ctx, now)
		if err != nil {
			return err
		}
		return &forecast.RetryLater{Err: forecast.Reject(forecast.CodeTooManyNewAgents, "%d new agents joined in the last hour, the most an hour admits; try again in %s", n, wait), After: wait}
	}
	return nil
}

// newAgentWait is how long until fewer than MaxNewAgentsHour agents are
// new in the hour before, counting those seen until now, to the second:
// an hour after the earliest moment from which on fewer were first seen.
// That moment is found by bisecting the last hour (a dozen counts, made
// only for a refused commit).
func (a Admission) newAgentWait(ctx context.Context, now time.Time) (time.Duration, error) {
	lo, hi := now.Add(-time.Hour), now.Add(time.Second) // from lo on too many; from hi on none
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2)
		n, err := a.Store.NewAgentsSince(ctx, mid)
		if err != nil {
			return 0, err
		}
		if n < a.MaxNewAgentsHour {
			hi = mid
		} else {
			lo = mid
		}
	}
	d := hi.Add(time.Hour).Sub(now)
	wait := d.Truncate(time.Second)
	if wait < d {
		wait += time.Second // whole seconds, as Retry-After counts them, never early
	}
	return max(time.Second, wait), nil
}
