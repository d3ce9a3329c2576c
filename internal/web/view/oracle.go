package view

import (
	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/oracle"
)

// OraclePageJSON is the oracle page: markets waiting for an arbiter, the
// flagged and disputed markets, and the accuracy against human audits.
type OraclePageJSON struct {
	Queue    []OracleQueueRowJSON  `json:"queue"`
	Flags    []OracleFlagRowJSON   `json:"flags"`
	Disputes []arena.OracleDispute `json:"disputes"`
	Accuracy oracle.Accuracy       `json:"accuracy"`
}

// OracleFlagRowJSON is a market an admin flagged for the oracle, with its
// question and, once decided, its outcome (empty while it waits).
type OracleFlagRowJSON struct {
	arena.OracleFlag
	Question   string `json:"question"`
	Resolution string `json:"resolution"`
}

// OracleQueueRowJSON is one escalated market: the panel's answer, the
// composite score, the votes and why it escalated.
type OracleQueueRowJSON struct {
	MarketID  int64                `json:"market_id"`
	Question  string               `json:"question"`
	Decision  arena.OracleDecision `json:"panel_decision"`
	Composite float64              `json:"composite"`
	Votes     map[string]int       `json:"votes"` // YES, NO, TOO_EARLY, failed
	Reasons   []string             `json:"reasons"`
	Since     string               `json:"since"`
}

// OracleMarketPageJSON is one market's oracle history, oldest first: the
// evidence packet, every vote, the architecture, policy and composite,
// the human decisions and every re-resolution with the rounds it
// re-scored.
type OracleMarketPageJSON struct {
	MarketID    int64                    `json:"market_id"`
	Question    string                   `json:"question"`
	Resolutions []arena.OracleResolution `json:"resolutions"`
}
