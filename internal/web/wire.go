package web

// The JSON shapes of the API that only the API writes. The shapes the
// command prints too live with their concern: the forecast protocol's
// request and response types in package forecast (wire.go), shared with
// the participant client; markets and money (arena.MarketJSON,
// arena.Dollars) in the root package; cohorts and the trading leaderboard
// in package trading (wire.go).

import (
	"encoding/json"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast/scoring"
)

// ErrorJSON is the body of every error response.
type ErrorJSON struct {
	Error ErrorDetailJSON `json:"error"`
}

// ErrorDetailJSON is a stable machine-readable code and a human message.
type ErrorDetailJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// DecisionJSON is GET /api/v1/decisions/{id}: everything the agent was
// shown and answered, the parsed action and what executed.
type DecisionJSON struct {
	ID            int64           `json:"id"`
	CohortID      int64           `json:"cohort_id"`
	Agent         string          `json:"agent"`
	Week          time.Time       `json:"week"`
	Status        string          `json:"status"`
	Attempts      int             `json:"attempts"`
	SystemPrompt  string          `json:"system_prompt"`
	UserPrompt    string          `json:"user_prompt"`
	RawResponses  []string        `json:"raw_responses"`
	Action        json.RawMessage `json:"action"`
	Executions    json.RawMessage `json:"executions"`
	Retries       int             `json:"retries"`
	SystemDefault bool            `json:"system_default"`
	TokensIn      int64           `json:"tokens_in"`
	TokensOut     int64           `json:"tokens_out"`
	Cost          arena.Dollars   `json:"cost"`
	LatencyMS     int64           `json:"latency_ms"`
	Error         string          `json:"error"`
	ClaimedAt     time.Time       `json:"claimed_at"`
	FinishedAt    *time.Time      `json:"finished_at"`
}

// NewDecisionJSON converts a stored decision.
func NewDecisionJSON(d *arena.Decision) DecisionJSON {
	j := DecisionJSON{ID: d.ID, CohortID: d.CohortID, Agent: d.AgentID, Week: d.Week.UTC(), Status: string(d.Status),
		Attempts: d.Attempts, SystemPrompt: d.SystemPrompt, UserPrompt: d.UserPrompt, RawResponses: d.RawResponses,
		Action: d.Action, Executions: d.Executions, Retries: d.Retries, SystemDefault: d.SystemDefault,
		TokensIn: d.TokensIn, TokensOut: d.TokensOut, Cost: arena.Dollars(d.Cost), LatencyMS: d.LatencyMS, Error: d.Error,
		ClaimedAt: d.ClaimedAt.UTC()}
	if j.RawResponses == nil {
		j.RawResponses = []string{}
	}
	if len(j.Action) == 0 {
		j.Action = json.RawMessage("null")
	}
	if len(j.Executions) == 0 {
		j.Executions = json.RawMessage("null")
	}
	if !d.FinishedAt.IsZero() {
		t := d.FinishedAt.UTC()
		j.FinishedAt = &t
	}
	return j
}

// BoardJSON is GET /api/v1/leaderboard for the forecast and backtest
// tracks: the track's board, its rows paged.
type BoardJSON struct {
	Track string `json:"track"`
	scoring.Board
}
