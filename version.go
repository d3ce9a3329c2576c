package arena

import (
	"context"
	"strconv"
	"strings"
)

// Domain names a part of the stored data that the arena's views read
// together. Every write that changes what a page, a report or an export
// shows moves the version of each domain it changed, in the transaction
// that makes the write, so that a value computed from a domain's data
// (a leaderboard, an analysis) is current exactly while the domain's
// version is the one it was computed at, whichever process or replica
// wrote.
type Domain string

// The domains. The log (its size) and the operational records (job
// claims, settings, rate limits, checkpoints, published exports) have no
// domain: no view is computed from them.
const (
	// DomainMarkets: markets, their prices and resolutions.
	DomainMarkets Domain = "markets"
	// DomainRounds: forecast rounds, their markets and benchmarks.
	DomainRounds Domain = "rounds"
	// DomainSubmissions: the agents' commits, reveals and reasoning, and
	// their nonces.
	DomainSubmissions Domain = "submissions"
	// DomainAgents: the forecast track's agents and their profiles (an
	// agent's first commit registers it).
	DomainAgents Domain = "agents"
	// DomainScores: what a scored round froze, the outcomes, scores and
	// scored forecasts the forecast leaderboard is computed from (a
	// trigger, a re-score).
	DomainScores Domain = "scores"
	// DomainTrading: cohorts, portfolios, positions, trades, decisions,
	// snapshots and settlements.
	DomainTrading Domain = "trading"
	// DomainOracle: oracle resolutions, flags and disputes.
	DomainOracle Domain = "oracle"
	// DomainTraces: what LLM agents were shown and answered.
	DomainTraces Domain = "traces"
	// DomainBacktest: backtest forecasts.
	DomainBacktest Domain = "backtest"
	// DomainHumans: imported human forecasts.
	DomainHumans Domain = "humans"
	// DomainChain: the relayer's transactions.
	DomainChain Domain = "chain"
)

// Domains lists every domain, in the order versions are written.
var Domains = []Domain{DomainAgents, DomainBacktest, DomainChain, DomainHumans, DomainMarkets, DomainOracle, DomainRounds, DomainScores, DomainSubmissions,
	DomainTraces, DomainTrading}

// Versions are the domains' data versions: each starts at 0 and grows by
// one with every committed transaction that changed the domain.
type Versions map[Domain]uint64

// Key is the versions of ds as text, for a cache keyed by the data it
// read: "scores=12" or "markets=3,trading=40".
func (v Versions) Key(ds ...Domain) string {
	var b strings.Builder
	for i, d := range ds {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(string(d))
		b.WriteByte('=')
		b.WriteString(strconv.FormatUint(v[d], 10))
	}
	return b.String()
}

// VersionStore reads the domains' versions.
type VersionStore interface {
	// Versions returns every domain's version as committed now.
	Versions(ctx context.Context) (Versions, error)
}

// StoreSnapshot is the stored data as of one moment: every read through
// it, the log's size and entries and the domains' versions included, sees
// the same commits, whatever is written meanwhile. It does not write.
type StoreSnapshot interface {
	ForecastStore
	LogStore
	TraceStore
	VersionStore
}

// Snapshotter is a store that reads one state of itself.
type Snapshotter interface {
	// Snapshot calls fn with the store as of one moment; the snapshot is
	// valid only while fn runs.
	Snapshot(ctx context.Context, fn func(StoreSnapshot) error) error
}
