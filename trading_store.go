package arena

import (
	"context"
	"encoding/json"
	"time"
)

// Trading track domain records and the storage interface the
// cohort engine (package trading) uses. Money and quantities are exact
// integers: the ledger reconciles to the micro-dollar.

// CohortStatus is the lifecycle state of a cohort.
type CohortStatus string

const (
	CohortActive    CohortStatus = "active"
	CohortCompleted CohortStatus = "completed"
)

// LineupEntry is one agent of a cohort, frozen when the cohort starts:
// the stable AgentID is used for joins, Name only for display.
type LineupEntry struct {
	AgentID  string `json:"agent_id"`
	Name     string `json:"name"`
	Kind     string `json:"kind"` // "llm", "sim", "baseline", "external"
	Provider string `json:"provider,omitempty"`
	Model    string `json:"model,omitempty"`
	// Prices in micro-dollars per million tokens.
	InputMicrosPerMtok  int64 `json:"input_micros_per_mtok,omitempty"`
	OutputMicrosPerMtok int64 `json:"output_micros_per_mtok,omitempty"`
	// Spec is the full agent configuration as it ran (e.g. an llm.ModelSpec).
	Spec json.RawMessage `json:"spec,omitempty"`
}

// Cohort is one week's trading competition.
type Cohort struct {
	ID          int64
	WeekStart   time.Time // Sunday 00:00 UTC
	Status      CohortStatus
	Lineup      []LineupEntry
	InitialCash Micros
	CreatedAt   time.Time
	CompletedAt time.Time
}

// WeekStart is the start of t's trading week: the Sunday 00:00 UTC on or
// before t. Cohorts, the weekly jobs and the dashboard's weeks all use it.
func WeekStart(t time.Time) time.Time {
	u := t.UTC()
	day := time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC)
	return day.AddDate(0, 0, -int(day.Weekday()))
}

// Validate checks a new cohort: it starts on a week start, with positive
// cash and a lineup of distinct, named agents.
func (c *Cohort) Validate() error {
	switch {
	case !c.WeekStart.Equal(WeekStart(c.WeekStart)):
		return Errorf(EINVALID, "cohort: week start %s is not a Sunday 00:00 UTC", c.WeekStart.UTC().Format(time.RFC3339))
	case c.InitialCash <= 0:
		return Errorf(EINVALID, "cohort: initial cash %s must be positive", c.InitialCash)
	case len(c.Lineup) == 0:
		return Errorf(EINVALID, "cohort: empty lineup")
	}
	seen := map[string]bool{}
	for _, e := range c.Lineup {
		if e.AgentID == "" || seen[e.AgentID] {
			return Errorf(EINVALID, "cohort: missing or duplicate agent id %q in lineup", e.AgentID)
		}
		seen[e.AgentID] = true
	}
	return nil
}

// PositionStatus is the state of a position.
type PositionStatus string

const (
	PositionOpen      PositionStatus = "open"
	PositionClosed    PositionStatus = "closed"    // sold to zero
	PositionSettled   PositionStatus = "settled"   // paid out at resolution (win or loss)
	PositionCancelled PositionStatus = "cancelled" // refunded at cost basis (void or ambiguous)
)

// Position is a holding of one side of one market in one portfolio. Side is
// "YES" or "NO" for binary markets and an outcome name otherwise.
type Position struct {
	ID          int64 // negative: provisional, not yet stored
	PortfolioID int64
	MarketID    int64
	Side        string
	Shares      Shares
	CostBasis   Micros
	// Mark is the last side-correct price the position was valued at; a
	// market without a usable price keeps it.
	Mark     PPM
	Status   PositionStatus
	OpenedAt time.Time
	ClosedAt time.Time
}

// Portfolio is one agent's account in one cohort. Positions holds the open
// positions when loaded by the store. Version increases with every ledger
// write, so concurrent writers cannot both apply changes to the same state.
type Portfolio struct {
	ID        int64
	CohortID  int64
	AgentID   string
	Cash      Micros
	Realized  Micros // realized P/L
	Bankrupt  bool
	Version   int64
	Positions []*Position
}

// TradeKind is what a trade did.
type TradeKind string

const (
	TradeBet    TradeKind = "BET"
	TradeSell   TradeKind = "SELL"
	TradeSettle TradeKind = "SETTLE"
	TradeCancel TradeKind = "CANCEL"
)

// Trade is one ledger movement. Amount is the cash that moved: spent by a
// BET, received by SELL, SETTLE and CANCEL. CostBasis is the cost basis a
// BET added or the others released, so that realized P/L of a trade is
// Amount − CostBasis for every kind but BET.
type Trade struct {
	ID          int64
	PortfolioID int64
	PositionID  int64 // negative while the position is provisional
	DecisionID  int64 // 0 for settlements
	MarketID    int64
	Side        string
	Kind        TradeKind
	Amount      Micros
	Shares      Shares
	Price       PPM
	CostBasis   Micros
	CashBefore  Micros
	// Confidence is the implied confidence of a BET, 0 otherwise.
	Confidence float64
	CreatedAt  time.Time
}

// PortfolioChange is the result of ledger operations on one portfolio,
// written atomically. The write fails with ECONFLICT unless the stored
// version is still ExpectVersion.
type PortfolioChange struct {
	PortfolioID   int64
	ExpectVersion int64
	Cash          Micros
	Realized      Micros
	Bankrupt      bool
	// Positions lists new (ID < 0) and changed positions.
	Positions []*Position
	Trades    []*Trade
}

// DecisionStatus is the state of a weekly decision claim.
type DecisionStatus string

const (
	DecisionClaimed   DecisionStatus = "claimed"
	DecisionDone      DecisionStatus = "done"
	DecisionRetryable DecisionStatus = "failed_retryable"
)

// Decision is the unique (cohort, agent, week) decision row: the claim and,
// once finished, the full audit record of what the agent saw and did.
type Decision struct {
	ID        int64
	CohortID  int64
	AgentID   string
	Week      time.Time
	Status    DecisionStatus
	Owner     string
	ClaimedAt time.Time
	Attempts  int // claims so far, including the current one

	SystemPrompt  string
	UserPrompt    string
	RawResponses  []string        // every attempt, in order
	Action        json.RawMessage // parsed action
	Executions    json.RawMessage // per-bet/per-sell results
	Retries       int
	SystemDefault bool
	TokensIn      int64
	TokensOut     int64
	Cost          Micros
	LatencyMS     int64
	Error         string
	FinishedAt    time.Time
}

// DecisionCost is what one agent's decisions in one cohort cost.
type DecisionCost struct {
	AgentID   string
	Decisions int
	Cost      Micros
}

// ClaimRequest asks for the decision row of (CohortID, AgentID, Week).
type ClaimRequest struct {
	CohortID    int64
	AgentID     string
	Week        time.Time
	Owner       string
	Now         time.Time
	StaleBefore time.Time
	MaxAttempts int // 0: unlimited
}

// ValuationSnapshot is a portfolio's marked value at a 10-minute boundary.
// Brier is meaningful only when ResolvedBets > 0.
type ValuationSnapshot struct {
	PortfolioID    int64
	At             time.Time
	Cash           Micros
	PositionsValue Micros
	Total          Micros
	PnL            Micros
	PnLPct         float64
	Brier          float64
	ResolvedBets   int
}

// Settlement records that every position in a market has been settled.
// Resolution is the winning outcome or Void; Policy says how an
// ambiguous market was handled ("" for a clean resolution).
type Settlement struct {
	MarketID   int64
	Resolution string
	Policy     string
	Positions  int
	SettledAt  time.Time
}

// CohortStore persists cohorts, portfolios, positions, trades, decisions
// and snapshots. Implemented by store.DB on SQLite and PostgreSQL.
type CohortStore interface {
	// CreateCohort inserts the cohort for c.WeekStart with one portfolio of
	// c.InitialCash per lineup entry, in one transaction. When the week
	// already has a cohort it loads that one into c and reports false.
	CreateCohort(ctx context.Context, c *Cohort) (created bool, err error)
	Cohort(ctx context.Context, id int64) (*Cohort, error)
	CohortByWeek(ctx context.Context, weekStart time.Time) (*Cohort, error)
	// Cohorts lists cohorts by week, newest first; status "" lists all.
	Cohorts(ctx context.Context, status CohortStatus) ([]*Cohort, error)
	// CompleteCohorts marks completed every active cohort that started
	// before weekStartBefore and has no open position.
	CompleteCohorts(ctx context.Context, weekStartBefore, at time.Time) (int, error)

	// Portfolios lists a cohort's portfolios by agent id, with open positions.
	Portfolios(ctx context.Context, cohortID int64) ([]*Portfolio, error)
	Portfolio(ctx context.Context, id int64) (*Portfolio, error)
	// PositionsOf lists every position of a portfolio, any status, by id.
	PositionsOf(ctx context.Context, portfolioID int64) ([]*Position, error)
	// Trades lists a portfolio's trades by id.
	Trades(ctx context.Context, portfolioID int64) ([]*Trade, error)
	// CohortTrades lists the trades of every portfolio of a cohort, by
	// portfolio and then id: one query where Trades would take one per
	// portfolio.
	CohortTrades(ctx context.Context, cohortID int64) ([]*Trade, error)
	// ApplyChange writes ledger changes not tied to a decision.
	ApplyChange(ctx context.Context, ch *PortfolioChange) error

	// SaveFrame stores the frozen decision snapshot of a cohort's week unless
	// one exists, and returns the stored one: every run of the week uses it.
	SaveFrame(ctx context.Context, cohortID int64, week time.Time, frame []byte) ([]byte, error)

	// ClaimDecision claims the (cohort, agent, week) row for r.Owner. It
	// wins when the row is new, failed retryably (fewer than r.MaxAttempts
	// times, when that is set), or claimed before r.StaleBefore (a stuck
	// run). Finished rows and live claims are not taken; the current row is
	// returned either way.
	ClaimDecision(ctx context.Context, r ClaimRequest) (*Decision, bool, error)
	// FinishDecision records d as done and applies ch (nil for no ledger
	// change) in one transaction, provided d.Owner still holds the claim.
	FinishDecision(ctx context.Context, d *Decision, ch *PortfolioChange) error
	// FailDecision records a retryable failure, provided d.Owner holds the claim.
	FailDecision(ctx context.Context, d *Decision) error
	// Decisions lists a cohort's decisions by week, then agent.
	Decisions(ctx context.Context, cohortID int64) ([]*Decision, error)
	// DecisionCosts sums a cohort's decisions by agent, by agent id: what
	// their model calls cost, without loading prompts and responses.
	DecisionCosts(ctx context.Context, cohortID int64) ([]DecisionCost, error)
	// Decision loads one decision row by id (ENOTFOUND when absent).
	Decision(ctx context.Context, id int64) (*Decision, error)

	// OpenPositionMarkets lists markets with at least one open position.
	OpenPositionMarkets(ctx context.Context) ([]int64, error)
	// OpenPositionsIn lists the open positions in a market, any cohort, by id.
	OpenPositionsIn(ctx context.Context, marketID int64) ([]*Position, error)
	// SettleMarket applies the settlement changes of every portfolio holding
	// the market and records s, in one transaction.
	SettleMarket(ctx context.Context, s Settlement, changes []*PortfolioChange) error
	Settlements(ctx context.Context) ([]Settlement, error)

	// SaveSnapshots inserts snapshots (at most one per portfolio and
	// 10-minute timestamp; later duplicates are ignored) and updates
	// position marks, in one transaction; it returns how many were new.
	SaveSnapshots(ctx context.Context, snaps []ValuationSnapshot, marks map[int64]PPM) (int, error)
	Snapshots(ctx context.Context, portfolioID int64) ([]ValuationSnapshot, error)

	// The trading track's data moves DomainTrading, the markets' prices
	// and resolutions DomainMarkets: what its results are computed from.
	VersionStore
}
