package arena

import (
	"context"
	"encoding/json"
	"time"
)

// ForecastTrace is what one LLM agent was shown and answered in one
// round: the prompt, every tool call and its result, the raw answers,
// whether a market price was shown, tokens, cost and latency (Trace holds
// the full record as JSON). It is published only after the round's
// outcomes are triggered.
type ForecastTrace struct {
	RoundID      uint64
	Agent        string // checksummed address the forecast was signed with
	AgentID      string // registry id
	Submitted    bool
	Failure      string // why nothing was submitted ("" when submitted)
	Calls        int64  // model calls that reached the provider
	CachedCalls  int64  // answers read from the cache (no cost)
	InputTokens  int64
	OutputTokens int64
	Cost         Micros // estimate from the registry's prices
	// Billed is what the provider reported charging (OpenRouter's
	// usage.cost) over BilledCalls of the calls; 0 over 0 when it reports
	// nothing.
	Billed      Micros
	BilledCalls int64
	LatencyMS   int64
	Trace       json.RawMessage
	CreatedAt   time.Time
}

// TraceStore keeps forecast traces, one per (round, agent).
type TraceStore interface {
	// SaveTrace stores or replaces the trace of (RoundID, Agent).
	SaveTrace(ctx context.Context, t *ForecastTrace) error
	// Trace returns a stored trace; ENOTFOUND when there is none.
	Trace(ctx context.Context, roundID uint64, agent string) (*ForecastTrace, error)
	// RoundTraces returns a round's traces, by agent.
	RoundTraces(ctx context.Context, roundID uint64) ([]ForecastTrace, error)
	// TraceCosts sums the stored traces by agent (address), by agent.
	TraceCosts(ctx context.Context) ([]AgentCost, error)
}

// AgentCost is what an LLM agent's model calls cost over the rounds it
// has a trace of.
type AgentCost struct {
	Agent       string
	Rounds      int
	Calls       int64
	CachedCalls int64
	Cost        Micros
	Billed      Micros // reported by providers, over BilledCalls of the calls
	BilledCalls int64
}

// BacktestForecast is one agent's forecast of one historical question in
// a backtest: the separate "backtest" track, never mixed with live rounds.
type BacktestForecast struct {
	Agent     string // registry id
	Round     string // backtest round, e.g. "2025-10-26#3"
	MarketID  int64
	SourceID  string
	Category  string
	Event     string
	Forecast  uint16 // basis points
	Benchmark *float64
	Outcome   int8 // 0 or 1
	CreatedAt time.Time
}

// BacktestStore keeps backtest forecasts, one per (agent, market).
type BacktestStore interface {
	// SaveBacktest stores or replaces rows by (Agent, MarketID).
	SaveBacktest(ctx context.Context, rows []BacktestForecast) error
	// BacktestForecasts lists every row by agent, round, market.
	BacktestForecasts(ctx context.Context) ([]BacktestForecast, error)
	// Every save moves DomainBacktest.
	VersionStore
}
