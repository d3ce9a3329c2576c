package view

// The API's shapes the cohort page embeds: a cohort's detail (also GET
// /api/v1/cohorts/{id}) and its agents' value curves (also GET
// /api/v1/cohorts/{id}/snapshots).

import (
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
)

// LineupJSON is one frozen lineup entry, without the raw spec.
type LineupJSON struct {
	Agent            string        `json:"agent"`
	Name             string        `json:"name"`
	Kind             string        `json:"kind"`
	Provider         string        `json:"provider,omitempty"`
	Model            string        `json:"model,omitempty"`
	InputUSDPerMtok  arena.Dollars `json:"input_usd_per_mtok"`
	OutputUSDPerMtok arena.Dollars `json:"output_usd_per_mtok"`
}

// DecisionSummaryJSON lists a decision in a cohort page.
type DecisionSummaryJSON struct {
	ID            int64         `json:"id"`
	Agent         string        `json:"agent"`
	Name          string        `json:"name"` // the agent's display name, from the lineup
	Week          time.Time     `json:"week"`
	Status        string        `json:"status"`
	Action        string        `json:"action,omitempty"`
	Retries       int           `json:"retries"`
	SystemDefault bool          `json:"system_default"`
	Cost          arena.Dollars `json:"cost"`
}

// CohortDetailJSON is GET /api/v1/cohorts/{id}.
type CohortDetailJSON struct {
	trading.CohortJSON
	Lineup    []LineupJSON          `json:"lineup"`
	Decisions []DecisionSummaryJSON `json:"decisions"`
}

// SnapshotJSON is one point of a portfolio curve.
type SnapshotJSON struct {
	At             time.Time     `json:"at"`
	Cash           arena.Dollars `json:"cash"`
	PositionsValue arena.Dollars `json:"positions_value"`
	TotalValue     arena.Dollars `json:"total_value"`
	PnL            arena.Dollars `json:"pnl"`
	PnLPct         float64       `json:"pnl_pct"`
	Brier          *float64      `json:"brier"`
	ResolvedBets   int           `json:"resolved_bets"`
}

// CurveJSON is one agent's portfolio curve in a cohort.
type CurveJSON struct {
	Agent  string         `json:"agent"`
	Points []SnapshotJSON `json:"points"`
}
