package arena

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Market sources.
const (
	SourcePolymarket    = "polymarket"
	SourceKalshi        = "kalshi"
	SourceManifold      = "manifold"
	SourceMetaculus     = "metaculus"
	SourceSim           = "sim"
	SourceForecastBench = "forecastbench"
)

// Venues are the live sources the arena syncs, each a market's Source.
var Venues = []string{SourcePolymarket, SourceKalshi, SourceManifold, SourceMetaculus}

// IsVenue reports whether name is one of Venues.
func IsVenue(name string) bool {
	for _, v := range Venues {
		if v == name {
			return true
		}
	}
	return false
}

// UntradedVenues are the venues whose price is no market's: Metaculus
// publishes a community prediction, ForecastBench a frozen value. The
// trading track trades only the others.
var UntradedVenues = []string{SourceMetaculus, SourceForecastBench}

// Source kinds separate questions priced by a market from questions about
// a dataset's future value (ForecastBench's split).
const (
	KindMarket  = "market"
	KindDataset = "dataset"
)

// MarketType is "binary" for exactly Yes/No outcomes, "multi" otherwise.
type MarketType string

const (
	Binary MarketType = "binary"
	Multi  MarketType = "multi"
)

// MarketStatus is the lifecycle state of a market.
type MarketStatus string

const (
	StatusOpen     MarketStatus = "open"
	StatusClosed   MarketStatus = "closed"
	StatusResolved MarketStatus = "resolved"
)

// Valid reports whether s is a known status.
func (s MarketStatus) Valid() bool {
	return s == StatusOpen || s == StatusClosed || s == StatusResolved
}

// Binary outcome names as Polymarket spells them; every binary market uses them.
const (
	Yes = "Yes"
	No  = "No"
)

// Void is the resolution of a market that resolved 50-50 or was cancelled.
// Void markets are excluded from scoring and refunded in the trading track.
const Void = "VOID"

// ResolvedByOperator marks a resolution an operator made (the admin API,
// or arena round resolve --from-sim) rather than the market's source.
const ResolvedByOperator = "operator"

// Market is a question from a source with named outcomes, prices and an
// optional resolution.
type Market struct {
	ID       int64  // internal id, assigned by the store
	Source   string // one of Venues, SourceSim or SourceForecastBench
	SourceID string // unique within Source
	Kind     string // KindMarket or KindDataset
	// Origin is the upstream platform or dataset (e.g. "manifold", "fred")
	// of an imported set's question, or the venue the simulator named for
	// a simulated market.
	Origin string

	Question   string
	Criteria   string // resolution criteria
	Background string
	URL        string
	Category   string
	EventID    string // groups markets on the same event (one per event in a round)

	Type     MarketType
	Outcomes []string
	// Prices maps outcome name to the latest known price; nil when unknown.
	Prices map[string]float64

	Volume    float64
	Liquidity float64
	OpenTime  time.Time
	CloseTime time.Time

	Status     MarketStatus
	Resolution string // "" (unresolved), an outcome name, or Void
	ResolvedAt time.Time
	// Ambiguous is set when the source says the market resolved but the
	// winner cannot be determined.
	Ambiguous bool
	// ResolvedBy is "" when the source resolved the market (or the
	// oracle, whose resolutions are stored with their votes), and
	// ResolvedByOperator when an operator did. The store sets it.
	ResolvedBy string

	// Polymarket identifiers.
	ConditionID string
	TokenIDs    []string // CLOB token ids, aligned with Outcomes
	Slug        string
	EventSlug   string
	NegRisk     bool
	UMAStatus   string

	// Imported question sets: the market value at the freeze time, and the
	// date a dataset question resolves on.
	FreezeTime     time.Time
	FreezeValue    *float64
	ResolutionDate time.Time

	UpdatedAt time.Time

	// History is written to the price store together with the market by
	// Store.SaveMarkets; it is not loaded back with the market.
	History []PricePoint
}

// Venue is the venue whose prices the market carries: its Source, or
// for a simulated market the venue the simulator named it after (its
// Origin), when it named one. A ForecastBench question's venue is
// SourceForecastBench: its price is the set's frozen value, not a live one.
func (m *Market) Venue() string { return VenueOf(m.Source, m.Origin) }

// VenueOf is the Venue of a market of source and origin.
func VenueOf(source, origin string) string {
	if source == SourceSim && origin != "" {
		return origin
	}
	return source
}

// IsBinary reports whether the market has exactly the outcomes Yes and No.
func (m *Market) IsBinary() bool { return m.Type == Binary }

// OutcomeIndex returns the index of the named outcome, or -1.
func (m *Market) OutcomeIndex(name string) int {
	for i, o := range m.Outcomes {
		if o == name {
			return i
		}
	}
	return -1
}

// ResolutionName returns the market's own spelling of a resolution given in
// any letter case ("yes" → "Yes", "void" → Void), or false when it names
// neither an outcome nor Void.
func (m *Market) ResolutionName(name string) (string, bool) {
	if strings.EqualFold(name, Void) {
		return Void, true
	}
	for _, o := range m.Outcomes {
		if strings.EqualFold(o, name) {
			return o, true
		}
	}
	return "", false
}

// YesPrice returns the price of Yes for a binary market.
func (m *Market) YesPrice() (float64, bool) {
	if !m.IsBinary() || m.Prices == nil {
		return 0, false
	}
	p, ok := m.Prices[Yes]
	return p, ok
}

// TypeOf classifies outcome names: binary only when exactly Yes/No.
func TypeOf(outcomes []string) MarketType {
	if len(outcomes) == 2 && outcomes[0] == Yes && outcomes[1] == No {
		return Binary
	}
	return Multi
}

// Validate checks the invariants every stored market satisfies.
func (m *Market) Validate() error {
	switch {
	case m.Source == "":
		return Errorf(EINVALID, "market: missing source")
	case m.SourceID == "":
		return Errorf(EINVALID, "market %s: missing source id", m.Source)
	case m.Question == "":
		return Errorf(EINVALID, "market %s/%s: missing question", m.Source, m.SourceID)
	case len(m.Outcomes) < 2:
		return Errorf(EINVALID, "market %s/%s: needs at least two outcomes", m.Source, m.SourceID)
	case m.Type != TypeOf(m.Outcomes):
		return Errorf(EINVALID, "market %s/%s: type %q does not match outcomes %v", m.Source, m.SourceID, m.Type, m.Outcomes)
	case !m.Status.Valid():
		return Errorf(EINVALID, "market %s/%s: invalid status %q", m.Source, m.SourceID, m.Status)
	case m.Kind != KindMarket && m.Kind != KindDataset:
		return Errorf(EINVALID, "market %s/%s: invalid kind %q", m.Source, m.SourceID, m.Kind)
	}
	seen := make(map[string]bool, len(m.Outcomes))
	for _, o := range m.Outcomes {
		if o == "" || o == Void || seen[o] {
			return Errorf(EINVALID, "market %s/%s: bad or duplicate outcome %q", m.Source, m.SourceID, o)
		}
		seen[o] = true
	}
	for o, p := range m.Prices {
		if !seen[o] {
			return Errorf(EINVALID, "market %s/%s: price for unknown outcome %q", m.Source, m.SourceID, o)
		}
		if math.IsNaN(p) || p < 0 || p > 1 {
			return Errorf(EINVALID, "market %s/%s: price %v for %q outside [0,1]", m.Source, m.SourceID, p, o)
		}
	}
	if m.Resolution != "" && m.Resolution != Void && !seen[m.Resolution] {
		return Errorf(EINVALID, "market %s/%s: resolution %q is not an outcome", m.Source, m.SourceID, m.Resolution)
	}
	if (m.Resolution != "") != (m.Status == StatusResolved) && !m.Ambiguous {
		return Errorf(EINVALID, "market %s/%s: status %q with resolution %q", m.Source, m.SourceID, m.Status, m.Resolution)
	}
	if len(m.TokenIDs) != 0 && len(m.TokenIDs) != len(m.Outcomes) {
		return Errorf(EINVALID, "market %s/%s: %d token ids for %d outcomes", m.Source, m.SourceID, len(m.TokenIDs), len(m.Outcomes))
	}
	return nil
}

// String identifies the market in logs and errors.
func (m *Market) String() string { return fmt.Sprintf("%s/%s", m.Source, m.SourceID) }

// PriceSource says what a stored price is (every price has provenance).
type PriceSource string

const (
	PriceCLOBMid     PriceSource = "clob_mid"     // CLOB midpoint, fetched live
	PriceCLOBHistory PriceSource = "clob_history" // CLOB prices-history point
	PriceLastTrade   PriceSource = "last_trade"
	PriceGamma       PriceSource = "gamma" // Gamma outcomePrices
	PriceFreeze      PriceSource = "freeze"
	PriceSim         PriceSource = "sim"

	// PriceBookMid is the midpoint of a venue's best Yes bid and ask
	// (Kalshi's yes_bid and yes_ask), fetched live.
	PriceBookMid PriceSource = "book_mid"
	// PriceCandleMid is the midpoint of the best Yes bid and ask at the
	// end of one of a venue's candles (Kalshi's candlesticks).
	PriceCandleMid PriceSource = "candle_mid"
	// PriceAMM is the probability of a venue's automated market maker
	// (Manifold's cpmm-1 "probability"): the price the last trade left,
	// fetched live; PriceAMMHistory is the same after one past trade
	// (a bet's probAfter).
	PriceAMM        PriceSource = "amm"
	PriceAMMHistory PriceSource = "amm_history"
	// PriceCommunity is a forecasting platform's aggregate of its
	// forecasters' probabilities (Metaculus's community prediction), not a
	// traded price.
	PriceCommunity PriceSource = "community"
	// PriceSettlement is the value a venue settled a market at: 1 or 0 for
	// a Yes or No result, a fraction for a market settled at a
	// probability (Manifold's MKT, Kalshi's scalar settlement of a binary
	// market), which the arena resolves VOID.
	PriceSettlement PriceSource = "settlement"
)

// BenchmarkSources are the prices a round's benchmark may be: a venue's
// own price of the moment (a mid-price, a last trade, a market maker's
// probability, a community prediction) or the simulator's. Not Gamma's
// quote, which lags the book; not a frozen dataset value; not a
// settlement, which is the outcome itself.
var BenchmarkSources = []PriceSource{PriceSim, PriceCLOBMid, PriceCLOBHistory, PriceLastTrade,
	PriceBookMid, PriceCandleMid, PriceAMM, PriceAMMHistory, PriceCommunity}

// IsBenchmark reports whether s is one of BenchmarkSources.
func (s PriceSource) IsBenchmark() bool { return slices.Contains(BenchmarkSources, s) }

// PricePoint is one observed price of one outcome.
type PricePoint struct {
	MarketID  int64
	Outcome   string
	Time      time.Time // when the price held, UTC
	Price     float64
	Source    PriceSource
	FetchedAt time.Time
	// Flagged marks a Gamma vs CLOB disagreement above 0.05.
	Flagged bool
}

// MarketFilter selects markets for listing.
type MarketFilter struct {
	Source string
	Status MarketStatus
	Kind   string
	Type   MarketType
	// ClosesAfter keeps markets closing strictly after this time (zero: any).
	ClosesAfter time.Time
	// Traded keeps markets of venues with a tradable price (not of
	// UntradedVenues, simulated or not).
	Traded bool
	Limit  int // 0 = all
}

// ParseMarketFilter reads source, status and limit parameters.
func ParseMarketFilter(source, status, limit string) (MarketFilter, error) {
	f := MarketFilter{Source: source, Status: MarketStatus(status)}
	if status != "" && !f.Status.Valid() {
		return f, Errorf(EINVALID, "status %q: want open, closed or resolved", status)
	}
	if limit != "" {
		n, err := strconv.Atoi(limit)
		if err != nil || n < 0 {
			return f, Errorf(EINVALID, "limit %q: want a non-negative integer", limit)
		}
		f.Limit = n
	}
	return f, nil
}

// MarketJSON is the public JSON shape of a market, shared by the API and
// `arena markets --format json`.
type MarketJSON struct {
	ID         int64              `json:"id"`
	Source     string             `json:"source"`
	SourceID   string             `json:"source_id"`
	Venue      string             `json:"venue"` // Market.Venue: a simulated market's may name a real venue
	Question   string             `json:"question"`
	Category   string             `json:"category"`
	Type       MarketType         `json:"type"`
	Outcomes   []string           `json:"outcomes"`
	Prices     map[string]float64 `json:"prices"`
	Volume     float64            `json:"volume"`
	CloseTime  *string            `json:"close_time"`
	Status     MarketStatus       `json:"status"`
	Resolution *string            `json:"resolution"`
}

// NewMarketJSON converts a market to its public shape.
func NewMarketJSON(m *Market) MarketJSON {
	j := MarketJSON{ID: m.ID, Source: m.Source, SourceID: m.SourceID, Venue: m.Venue(), Question: m.Question, Category: m.Category,
		Type: m.Type, Outcomes: m.Outcomes, Prices: m.Prices, Volume: m.Volume, Status: m.Status}
	if !m.CloseTime.IsZero() {
		s := m.CloseTime.UTC().Format(time.RFC3339)
		j.CloseTime = &s
	}
	if m.Resolution != "" {
		r := m.Resolution
		j.Resolution = &r
	}
	return j
}

// MarketListFilter selects a page of the question browser: the markets
// of a source, category and status ("" for any), newest (highest id)
// first, below the cursor Before (0: from the newest), at most Limit.
type MarketListFilter struct {
	Source   string
	Venue    string // Market.Venue
	Category string
	Status   MarketStatus
	Before   int64
	Limit    int
}

// MarketListing is a market in the question browser with how many agents'
// forecasts of it are public: revealed in a round whose outcomes are
// triggered (before the trigger, forecasts are secret).
type MarketListing struct {
	Market      *Market
	Forecasters int
}

// MarketFacets are the values the question browser filters by: the
// sources and the categories of the stored markets, sorted.
type MarketFacets struct {
	Sources    []string
	Categories []string
	Venues     []string
}

// SaveResult counts what a batch write changed.
type SaveResult struct {
	Inserted  int
	Updated   int
	Unchanged int
	Prices    int // new price points
}
