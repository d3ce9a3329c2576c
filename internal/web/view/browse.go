package view

import (
	"time"

	"github.com/forecast-arena/arena"
)

// MarketsPageJSON is the question browser: a page of markets, newest
// first, as the filters select them, and the values each filter takes.
type MarketsPageJSON struct {
	Status     string   `json:"status"`
	Category   string   `json:"category"`
	Source     string   `json:"source"`
	Venue      string   `json:"venue"`
	Limit      int      `json:"limit"`
	Statuses   []string `json:"statuses"`
	Categories []string `json:"categories"`
	Sources    []string `json:"sources"`
	Venues     []string `json:"venues"`
	// Total counts the markets the filters select, over every page.
	Total int `json:"total"`
	// Cursor is the page's cursor (0: the first page).
	Cursor  int64           `json:"cursor"`
	Markets []MarketRowJSON `json:"markets"`
	// NextCursor is the cursor of the next page, as the Link header's
	// next URL gives it; null on the last page.
	NextCursor *int64 `json:"next_cursor"`
	// DefaultLimit is the limit the question browser's JSON route takes
	// when none is given: its links leave that limit out.
	DefaultLimit int `json:"-"`
}

// MarketRowJSON is one market in the question browser.
type MarketRowJSON struct {
	arena.MarketJSON
	// Price is the current price of Yes (binary markets) or of the
	// leading outcome, PriceOutcome (other markets); null when unknown.
	Price        *float64 `json:"price"`
	PriceOutcome string   `json:"price_outcome"`
	// Forecasters counts the agents whose revealed forecast of the market
	// was scored: forecasts are public only once their round is triggered.
	Forecasters int `json:"forecasters"`
}

// Next is the cursor of the page after this one.
func (v MarketsPageJSON) Next() (int64, bool) {
	if v.NextCursor == nil {
		return 0, false
	}
	return *v.NextCursor, true
}

// Paged is a page with a following one: the server sets its Link header.
type Paged interface{ Next() (int64, bool) }

// The comparison takes this many agents at least and at most.
const (
	CompareMin = 2
	CompareMax = 4
)

// ComparePageJSON compares two to four agents: each one's cumulative
// Alpha over the rounds it played, and each later agent's per-round Brier
// difference from the first over the rounds both played. Asked for no
// agents, it lists those to choose from.
type ComparePageJSON struct {
	Agents  []CompareAgentJSON `json:"agents"`
	Diffs   []BrierDiffJSON    `json:"brier_differences"`
	Choices []AgentChoiceJSON  `json:"choices"`
}

// CompareAgentJSON is one compared agent: its leaderboard row and its
// rounds with the cumulative Alpha after each.
type CompareAgentJSON struct {
	Agent   string             `json:"agent"`
	Name    string             `json:"name"`
	Row     *ForecastRowJSON   `json:"leaderboard_row"`
	History []CompareRoundJSON `json:"history"`
}

// CompareRoundJSON is a round in a compared agent's history, at its
// commit deadline.
type CompareRoundJSON struct {
	AgentRoundJSON
	At time.Time `json:"at"`
}

// BrierDiffJSON is an agent's Brier minus the first agent's, round by
// round over the rounds both played: below zero the agent did better.
type BrierDiffJSON struct {
	Agent  string          `json:"agent"`
	Name   string          `json:"name"`
	Versus string          `json:"versus"`
	Rounds []RoundDiffJSON `json:"rounds"`
	Mean   *float64        `json:"mean"` // null without a shared round
	Better int             `json:"rounds_better"`
	Worse  int             `json:"rounds_worse"`
}

// RoundDiffJSON is one round's Brier difference.
type RoundDiffJSON struct {
	Round string    `json:"round"`
	At    time.Time `json:"at"`
	Diff  float64   `json:"diff"`
}

// AgentChoiceJSON is an agent that can be compared, in leaderboard order.
type AgentChoiceJSON struct {
	Agent    string `json:"agent"`
	Name     string `json:"name"`
	Rank     int    `json:"rank"`
	Baseline bool   `json:"baseline"`
}
