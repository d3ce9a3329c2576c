package web

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/agent"
)

// ForecasterStore is what the LLM forecasters' routes read: their traces.
type ForecasterStore interface {
	arena.TraceStore
}

// registerForecasters mounts the routes of the LLM forecasters:
//
//	GET /api/v1/rounds/{id}/markets/{index}  a market of a round as the round tools show it now
//	GET /api/v1/rounds/{id}/traces/{agent}   what an agent was shown and answered (after the trigger)
func (s *Server) registerForecasters() {
	s.handle("GET /api/v1/rounds/{id}/markets/{index}", s.roundMarket)
	s.handle("GET /api/v1/rounds/{id}/traces/{agent}", s.trace)
}

// RoundMarketContextJSON is GET /api/v1/rounds/{id}/markets/{index}: the
// answers of getMarketDetails and getPriceHistory as of the request.
type RoundMarketContextJSON struct {
	Details agent.MarketDetails  `json:"details"`
	History []agent.HistoryPoint `json:"history"`
}

func (s *Server) roundMarket(w http.ResponseWriter, r *http.Request) error {
	if s.forecast == nil {
		return arena.Errorf(arena.ENOTFOUND, "the forecast track is not enabled")
	}
	id, err := roundID(r)
	if err != nil {
		return err
	}
	rd, err := s.forecast.Round(r.Context(), id)
	if err != nil {
		return err
	}
	i, err := strconv.Atoi(r.PathValue("index"))
	if err != nil || i < 0 || i >= len(rd.Markets) {
		return arena.Errorf(arena.ENOTFOUND, "round %d has no market index %q", id, r.PathValue("index"))
	}
	d, h, err := s.markets.Tools(r.Context(), rd.Markets[i].MarketID, s.forecast.Clock())
	if err != nil {
		return err
	}
	d.Index = i
	return s.writeJSON(w, r, RoundMarketContextJSON{Details: d, History: h})
}

// TraceJSON is GET /api/v1/rounds/{id}/traces/{agent}.
type TraceJSON struct {
	RoundID      uint64  `json:"round_id"`
	Agent        string  `json:"agent"`
	AgentID      string  `json:"agent_id"`
	Submitted    bool    `json:"submitted"`
	Failure      string  `json:"failure,omitempty"`
	Calls        int64   `json:"calls"`
	CachedCalls  int64   `json:"cached_calls"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	// BilledUSD is what the provider reported charging over BilledCalls
	// of the calls, beside the estimate CostUSD.
	BilledUSD   float64         `json:"billed_usd"`
	BilledCalls int64           `json:"billed_calls"`
	LatencyMS   int64           `json:"latency_ms"`
	CreatedAt   time.Time       `json:"created_at"`
	Trace       json.RawMessage `json:"trace"`
}

// trace serves a trace as rounds.Traces publishes it: only once the
// round's outcomes are triggered.
func (s *Server) trace(w http.ResponseWriter, r *http.Request) error {
	if s.traces == nil {
		return arena.Errorf(arena.ENOTFOUND, "the forecast track is not enabled")
	}
	id, err := roundID(r)
	if err != nil {
		return err
	}
	a, err := forecast.ParseAddress(r.PathValue("agent"))
	if err != nil {
		return err
	}
	t, err := s.traces.Trace(r.Context(), id, a.Hex())
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, TraceJSON{RoundID: t.RoundID, Agent: t.Agent, AgentID: t.AgentID, Submitted: t.Submitted, Failure: t.Failure,
		Calls: t.Calls, CachedCalls: t.CachedCalls, InputTokens: t.InputTokens, OutputTokens: t.OutputTokens,
		CostUSD: float64(t.Cost) / 1e6, BilledUSD: float64(t.Billed) / 1e6, BilledCalls: t.BilledCalls, LatencyMS: t.LatencyMS, CreatedAt: t.CreatedAt, Trace: t.Trace})
}

// backtestLeaderboard serves GET /api/v1/leaderboard?track=backtest.
func (s *Server) backtestLeaderboard(w http.ResponseWriter, r *http.Request) error {
	if s.boards == nil {
		return arena.Errorf(arena.ENOTFOUND, "the backtest track is not enabled")
	}
	b, err := s.boards.Board(r.Context())
	if err != nil {
		return err
	}
	b.Rows = pageRows(w, r, b.Rows)
	return s.writeJSON(w, r, BoardJSON{Track: "backtest", Board: b})
}
