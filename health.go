package arena

import (
	"context"
	"time"
)

// SchemaHealth compares a database's applied migrations with the ones this
// binary knows.
type SchemaHealth struct {
	Applied int      `json:"applied"`
	Pending []string `json:"pending"` // known here, not applied
	Unknown []string `json:"unknown"` // applied, not known here (a newer binary migrated)
}

// JobHealth is what the shared job_runs table says of one scheduled job,
// across every replica.
type JobHealth struct {
	Job         string    `json:"job"`
	LastSuccess time.Time `json:"last_success,omitzero"`
	LastFailure time.Time `json:"last_failure,omitzero"`
	Running     bool      `json:"running"`
}

// HealthStore answers the readiness probe: the database is reachable, its
// schema is current and the scheduled jobs ran.
type HealthStore interface {
	Ping(ctx context.Context) error
	Schema(ctx context.Context) (SchemaHealth, error)
	JobHealth(ctx context.Context) ([]JobHealth, error)
}

// RateLimit is a token bucket: Burst requests at once, refilled at
// PerSecond.
type RateLimit struct {
	Burst     float64
	PerSecond float64
}

// RateDecision is the outcome of taking a token from a bucket.
type RateDecision struct {
	Allowed bool
	// Remaining is the bucket's content after the request.
	Remaining float64
}

// RateSettlement is one bucket's settlement: Spent tokens a process
// granted on its own since it last settled, and whether to take one more.
type RateSettlement struct {
	Key   string
	Limit RateLimit
	Spent int
	Take  bool
	At    time.Time
}

// RateStore keeps token buckets where every replica sees them: settling
// is atomic, so concurrent requests on any replica share one bucket.
type RateStore interface {
	// SettleTokens settles each bucket, all in one transaction: it
	// refills the bucket for the time since its last settlement (up to
	// the burst), subtracts Spent (the bucket may go into debt, down to
	// minus its burst), then, if Take, takes one token if a whole one is
	// left. Remaining is the bucket's content afterwards.
	SettleTokens(ctx context.Context, ss []RateSettlement) ([]RateDecision, error)
}

// AdmissionStore counts what the forecast track's admission caps bound.
type AdmissionStore interface {
	// RoundAgents is the number of agents with a commit in the round.
	RoundAgents(ctx context.Context, roundID uint64) (int, error)
	// AgentKnown reports whether the agent has ever submitted.
	AgentKnown(ctx context.Context, agent string) (bool, error)
	// NewAgentsSince counts the agents first seen at or after t.
	NewAgentsSince(ctx context.Context, t time.Time) (int, error)
}
