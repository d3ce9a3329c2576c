// Package view holds the data of every dashboard page (served as HTML
// by package pages and as JSON by package web at /api/v1/pages/…) and the
// API shapes the pages embed, so both packages share them without either
// importing the other's handlers, and the Service that computes each
// page from the arena's services (the boards, their order and scales, the
// pages' parameters checked), so the server's handlers only read requests
// and answer.
package view

import (
	"time"

	"github.com/forecast-arena/arena/internal/rounds"

	"github.com/forecast-arena/arena"

	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/stats"
)

// ForecastSorts are the sortable columns of the forecast leaderboard; the
// value says whether larger is better (the default direction).
var ForecastSorts = map[string]bool{"rank": false, "name": false, "score": true, "rounds": true, "n": true, "brier": false,
	"brier_index": true, "bss": true, "peer": false, "alpha": true, "adjusted": false, "p": false, "p_rank1": true,
	"rounds_to_significance": false}

// RangeNames are the cohort page's curve ranges in order (cohortRanges
// say what each spans).
var RangeNames = []string{"10m", "1h", "1d", "1w", "all"}

// Page views: the data of every dashboard page, served as HTML at the
// page's path and as JSON at /api/v1/pages/… . The templates read only
// these, so the page and its JSON always agree.

// RoundSummaryJSON is a round in a list.
type RoundSummaryJSON struct {
	ID             uint64     `json:"id"`
	Status         string     `json:"status"`
	Phase          string     `json:"phase"` // what happens next, in words; empty once scored or invalidated
	CommitDeadline time.Time  `json:"commit_deadline"`
	RevealStart    time.Time  `json:"reveal_start"`
	RevealDeadline time.Time  `json:"reveal_deadline"`
	TriggeredAt    *time.Time `json:"triggered_at"`
	Markets        int        `json:"markets"`
}

// ForecastRowJSON is one row of the forecast leaderboard (forecast.Row,
// the model every rendering shares) with what its model calls cost.
type ForecastRowJSON struct {
	scoring.Row
	// Cost is what the agent's model calls cost over the rounds with a
	// trace (null for agents without traces: external and simulated).
	Cost       *arena.Dollars `json:"cost_usd"`
	ModelCalls *int64         `json:"model_calls"`
	// BilledCost is what providers reported charging (OpenRouter's
	// usage.cost) over BilledCalls of the ModelCalls, beside the estimate
	// Cost; null when no call reported one.
	BilledCost  *arena.Dollars `json:"billed_cost_usd"`
	BilledCalls *int64         `json:"billed_calls"`
	// Bar places the score's interval on the page's common scale.
	Bar *BarJSON `json:"-"`
}

// BarJSON is an interval drawn on a 0–100 scale: its left end, its width
// and the point estimate, in percent of the scale.
type BarJSON struct{ Left, Width, Point float64 }

// HomeJSON is the home page.
type HomeJSON struct {
	Open         []RoundSummaryJSON `json:"open_rounds"`
	Scored       []RoundSummaryJSON `json:"latest_scored_rounds"`
	ScoredRounds int                `json:"scored_rounds"`
	// LastUpdated is when the latest round was scored; Methodology names
	// the scoring method of Forecast, its top rows.
	LastUpdated *time.Time              `json:"last_updated"`
	Methodology scoring.MethodStamp     `json:"methodology"`
	Forecast    []ForecastRowJSON       `json:"forecast_top"`
	Trading     []trading.LeaderRowJSON `json:"trading_top"`
	HasTrading  bool                    `json:"has_trading"`
	// Cohorts are the latest trading cohorts, newest week first, each
	// with its page at /cohorts/{id}; TotalCohorts counts them all.
	Cohorts      []trading.CohortSummaryJSON `json:"latest_cohorts"`
	TotalCohorts int                         `json:"total_cohorts"`
	// Oracle lists the latest oracle resolutions, newest first (when the
	// oracle is enabled).
	Oracle    []OracleRecentJSON `json:"recent_oracle_resolutions"`
	HasOracle bool               `json:"has_oracle"`
}

// OracleRecentJSON is one oracle resolution on the home page: what the
// panel decided, how sure it was, and whether a person decided instead.
type OracleRecentJSON struct {
	MarketID     int64     `json:"market_id"`
	Question     string    `json:"question"`
	Seq          int       `json:"seq"`
	Status       string    `json:"status"` // auto, escalated or decided
	Panel        string    `json:"panel_decision"`
	Final        string    `json:"final,omitempty"` // empty while escalated
	Architecture string    `json:"architecture"`
	Composite    float64   `json:"composite"`
	At           time.Time `json:"at"`
}

// LeaderboardPageJSON is the leaderboard page: both tracks, sorted and
// filtered as asked.
type LeaderboardPageJSON struct {
	Sort string `json:"sort"`
	Desc bool   `json:"desc"`
	// Columns is "all" when every column is shown, "" for the short view.
	Columns    string   `json:"columns"`
	Query      string   `json:"q"`
	HidePrelim bool     `json:"hide_preliminary"`
	Window     string   `json:"window"`
	Category   string   `json:"category"`
	Venue      string   `json:"venue"`
	Windows    []string `json:"windows"`
	Categories []string `json:"categories"`
	Venues     []string `json:"venues"`
	// ByVenue sets each venue's forecast board side by side, with the
	// score combining them equally; null with one venue, or one chosen.
	ByVenue *scoring.VenueBoard `json:"by_venue"`
	// The forecast board's method, coverage and entry rules (Forecast are
	// its rows, sorted and filtered).
	Methodology  scoring.MethodStamp      `json:"methodology"`
	ScoredRounds int                      `json:"scored_rounds"`
	LastUpdated  *time.Time               `json:"last_updated"`
	Hidden       int                      `json:"hidden_by_organisation_limit"`
	MinForecasts int                      `json:"min_forecasts"`
	Bootstrap    int                      `json:"bootstrap"`
	Seed         uint64                   `json:"seed"`
	Forecast     []ForecastRowJSON        `json:"forecast"`
	Trading      *trading.LeaderboardJSON `json:"trading"`
	// Backtest is the backtest track's board; null when not served.
	Backtest *scoring.Board `json:"backtest"`
}

// PhaseJSON is one step of a round's timeline.
type PhaseJSON struct {
	Name string     `json:"name"`
	At   *time.Time `json:"at"`
	Done bool       `json:"done"`
}

// RoundMarketPageJSON is a market of a round with its benchmark's
// provenance and outcome.
type RoundMarketPageJSON struct {
	Index           int        `json:"index"`
	MarketID        int64      `json:"market_id"`
	Question        string     `json:"question"`
	Category        string     `json:"category"`
	Source          string     `json:"source"`
	SourceID        string     `json:"source_id"`
	Benchmark       *float64   `json:"benchmark"`
	BenchmarkSource string     `json:"benchmark_source,omitempty"`
	BenchmarkTime   *time.Time `json:"benchmark_time"`
	Outcome         *string    `json:"outcome"`
}

// RoundEntryJSON is one agent's predictions and score in a triggered round.
// A baseline submits nothing: its predictions are what it is scored on
// (the market's are the benchmarks, null where a market has none; the
// random baseline's are drawn from the round's public seed).
type RoundEntryJSON struct {
	Agent       string     `json:"agent"`
	Name        string     `json:"name"`
	Baseline    bool       `json:"baseline"`
	Revealed    bool       `json:"revealed"`
	Forfeit     bool       `json:"forfeit"`
	Brier       *float64   `json:"brier"`
	Alpha       *float64   `json:"alpha"`
	Predictions []*float64 `json:"predictions"`
	Reasoning   []string   `json:"reasoning"`
}

// RoundPageJSON is the round page. Entries stay empty until the round is
// triggered: no prediction or reasoning is published while it could help
// another agent.
type RoundPageJSON struct {
	ID        uint64                `json:"id"`
	Status    string                `json:"status"`
	Phase     string                `json:"phase"`
	Timeline  []PhaseJSON           `json:"timeline"`
	Markets   []RoundMarketPageJSON `json:"markets"`
	Commits   int                   `json:"commits"`
	Triggered bool                  `json:"triggered"`
	Entries   []RoundEntryJSON      `json:"entries"`
}

// AgentRoundJSON is one round in an agent's history, with the cumulative
// Alpha after it and its 95% t interval over the rounds so far.
type AgentRoundJSON struct {
	Round    string   `json:"round"`
	N        int      `json:"n"`
	Brier    float64  `json:"brier"`
	Alpha    *float64 `json:"alpha"`
	CumAlpha *float64 `json:"cum_alpha"`
	CumLo    *float64 `json:"cum_alpha_lo"`
	CumHi    *float64 `json:"cum_alpha_hi"`
}

// QuestionJSON is one scored question of an agent.
type QuestionJSON struct {
	Round     uint64   `json:"round"`
	MarketID  int64    `json:"market_id"`
	Question  string   `json:"question"`
	Forecast  float64  `json:"forecast"`
	Benchmark *float64 `json:"benchmark"`
	Outcome   int8     `json:"outcome"`
	Brier     float64  `json:"brier"`
	// Edge is the benchmark's squared error minus the agent's: positive
	// when the agent beat the market on this question.
	Edge *float64 `json:"edge"`
}

// MurphyJSON is the Murphy decomposition: Brier = UNC + REL − RES + residual.
type MurphyJSON struct {
	UNC      float64 `json:"unc"`
	REL      float64 `json:"rel"`
	RES      float64 `json:"res"`
	Residual float64 `json:"residual"`
}

// AgentPageJSON is the agent page. Name is the agent's display name, or
// its id when it has none; Known is false for an address the arena never
// saw. Commits counts the agent's commits, Waiting those in rounds whose
// outcomes are not triggered yet (which rounds stays private until then),
// WaitingRevealed those of them revealed.
type AgentPageJSON struct {
	Agent           string                 `json:"agent"`
	Name            string                 `json:"name"`
	Kind            string                 `json:"kind"`
	Known           bool                   `json:"known"`
	Profile         forecast.ProfileFields `json:"profile"`
	ProfileVersion  uint64                 `json:"profile_version"`
	Commits         int                    `json:"commits"`
	Waiting         int                    `json:"waiting"`
	WaitingRevealed int                    `json:"waiting_revealed"`
	Row             *ForecastRowJSON       `json:"leaderboard_row"`
	History         []AgentRoundJSON       `json:"history"`
	Murphy          *MurphyJSON            `json:"murphy"`
	CORP            *stats.CORP            `json:"corp"`
	CORPBlocks      []stats.Block          `json:"corp_blocks"`
	ECE             *float64               `json:"ece"`
	Calibration     []stats.Bin            `json:"calibration"`
	Best            []QuestionJSON         `json:"best_questions"`
	Worst           []QuestionJSON         `json:"worst_questions"`
}

// PriceJSON is one stored price with its provenance.
type PriceJSON struct {
	At     time.Time `json:"at"`
	Price  float64   `json:"price"`
	Source string    `json:"source"`
}

// MarketPageJSON is the market page.
type MarketPageJSON struct {
	Market     arena.MarketJSON `json:"market"`
	URL        string           `json:"url,omitempty"`
	Criteria   string           `json:"criteria,omitempty"`
	ResolvedAt *time.Time       `json:"resolved_at"`
	// ResolvedBy is "operator" when an operator resolved the market (the
	// admin API or arena round resolve --from-sim), else empty: its source
	// or, when Oracle is not empty, the oracle.
	ResolvedBy string `json:"resolved_by,omitempty"`
	// ResolvedEarly: resolved before the market's close time.
	ResolvedEarly bool        `json:"resolved_before_close,omitempty"`
	Ambiguous     bool        `json:"ambiguous"`
	Prices        []PriceJSON `json:"prices"`
	Rounds        []uint64    `json:"scored_in_rounds"`
	// Forecasts are the market's scored forecasts, best Brier first: each
	// agent's revealed forecast in a round whose outcomes are triggered
	// (never before), the baselines' and the benchmark's. Forecasters
	// counts the agents among them with a revealed forecast.
	Forecasts   []MarketForecastJSON `json:"forecasts"`
	Forecasters int                  `json:"forecasters"`
	// Oracle is the market's oracle history, oldest first (the last entry
	// is in force): evidence, votes, verdict and any human decision. Empty
	// when the oracle never ran on it or is not served.
	Oracle []arena.OracleResolution `json:"oracle_resolutions"`
}

// MarketForecastJSON is one scored forecast of a market: an agent's, a
// baseline's or the benchmark's (agent "market", the price at the commit
// deadline), with its Brier on the frozen outcome.
type MarketForecastJSON struct {
	Round uint64 `json:"round"`
	// At is the round's commit deadline: the forecasts were committed by
	// then, and the benchmark is the price then.
	At       time.Time `json:"at"`
	Agent    string    `json:"agent"`
	Name     string    `json:"name"`
	Baseline bool      `json:"baseline"`
	// Forfeit: committed but not revealed, scored as the worst forecast;
	// Forecast is then null.
	Forfeit  bool     `json:"forfeit"`
	Forecast *float64 `json:"forecast"`
	Outcome  int8     `json:"outcome"`
	Brier    float64  `json:"brier"`
}

// PositionJSON is one position in a cohort.
type PositionJSON struct {
	ID        int64         `json:"id"`
	MarketID  int64         `json:"market_id"`
	Side      string        `json:"side"`
	Shares    float64       `json:"shares"`
	CostBasis arena.Dollars `json:"cost_basis"`
	Mark      float64       `json:"mark"`
	Status    string        `json:"status"`
	OpenedAt  time.Time     `json:"opened_at"`
	ClosedAt  *time.Time    `json:"closed_at"`
}

// TradeJSON is one trade in a cohort.
type TradeJSON struct {
	ID         int64         `json:"id"`
	DecisionID int64         `json:"decision_id"`
	MarketID   int64         `json:"market_id"`
	Side       string        `json:"side"`
	Kind       string        `json:"kind"`
	Amount     arena.Dollars `json:"amount"`
	Price      float64       `json:"price"`
	At         time.Time     `json:"at"`
}

// HoldingsJSON is one agent's positions and trades in a cohort.
type HoldingsJSON struct {
	Agent     string         `json:"agent"`
	Name      string         `json:"name"`
	Positions []PositionJSON `json:"positions"`
	Trades    []TradeJSON    `json:"trades"`
}

// CohortPageJSON is the cohort page: standings, curves over the chosen
// range (10m, 1h, 1d, 1w or all), holdings and decisions.
type CohortPageJSON struct {
	CohortDetailJSON
	Range    string         `json:"range"`
	Curves   []CurveJSON    `json:"curves"`
	Holdings []HoldingsJSON `json:"holdings"`
}

// MethodologyJSON is the running configuration the figures come from.
type MethodologyJSON struct {
	Forecast *ForecastMethodJSON `json:"forecast"`
	Trading  *TradingMethodJSON  `json:"trading"`
	// Verify says how anyone checks this arena: null without a published
	// log.
	Verify *VerifyJSON `json:"verify"`
}

// VerifyJSON is how to check an arena from outside: the note verifier key
// of its log's checkpoints, and where its checkpoint, tiles and latest
// published export are.
type VerifyJSON struct {
	VKey       string `json:"log_vkey"`
	Checkpoint string `json:"checkpoint_url"`
	Export     string `json:"export_url"`
	Command    string `json:"command"`
}

// ForecastMethodJSON describes the forecast track as configured.
type ForecastMethodJSON struct {
	MarketsPerRound    int            `json:"markets_per_round"`
	Rules              rounds.Rules   `json:"selection_rules"`
	Grace              arena.Duration `json:"grace"`
	BenchmarkTolerance arena.Duration `json:"benchmark_tolerance"`
	ProvisionalBelow   int            `json:"provisional_below_predictions"`
	Bootstrap          int            `json:"bootstrap_replicates"`
	Seed               uint64         `json:"bootstrap_seed"`
	// Method is the scoring method in full, with its version and digest.
	Method                scoring.Method      `json:"scoring_method"`
	Methodology           scoring.MethodStamp `json:"methodology"`
	ChainID               uint64              `json:"chain_id"`
	VerifyingContract     string              `json:"verifying_contract"`
	DomainName            string              `json:"domain_name"`
	DomainVersion         string              `json:"domain_version"`
	SignificanceKappa     float64             `json:"significance_kappa"`
	SignificancePower     float64             `json:"significance_power"`
	AssumedBoldness       float64             `json:"assumed_boldness"`
	AssumedMarketsInPower int                 `json:"assumed_markets_per_round_in_power"`
}

// TradingMethodJSON describes the trading track as configured.
type TradingMethodJSON struct {
	InitialCash  arena.Dollars `json:"initial_cash"`
	TopMarkets   int           `json:"top_markets"`
	MaxBetShare  float64       `json:"max_bet_share"`
	MaxAttempts  int           `json:"max_attempts"`
	LineupAgents int           `json:"lineup_agents"`
}
