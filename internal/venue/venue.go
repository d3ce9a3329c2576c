// Package venue is what the arena's market venues beside Polymarket
// (Kalshi, Manifold, Metaculus) share: the Source a venue package
// implements, the one sync that lists a venue's open binary markets,
// re-reads the ones the store knows and writes them in one batch
// (Sync), the typed reasons an upstream object is skipped for, the
// HTTP client with the arena's retry convention and a venue's rate
// limit, and the readers of the loosely typed values venues send.
package venue

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// Source is a venue the arena syncs. Its markets carry Source Name() and
// the venue's own id as SourceID; each comes with its prices and the
// price points of this fetch (their provenance, e.g. arena.PriceBookMid).
type Source interface {
	// Name is the Source of the venue's markets (arena.SourceKalshi, …).
	Name() string
	// List returns the open binary markets the venue lists, counting in
	// rep every entry it received (Fetched) and every one that did not
	// become a listed market: skipped for a reason, or listed but not
	// open or without trading (Ineligible).
	List(ctx context.Context, rep *Report) ([]*arena.Market, error)
	// Market re-reads one market by its SourceID. A market the venue no
	// longer serves is an arena.ENOTFOUND error; one that no longer
	// decodes, a *SkipError.
	Market(ctx context.Context, id string) (*arena.Market, error)
}

// Partial is a Source whose listing lacks what its single-market answer
// holds (Manifold's listing has no description and no topics): Sync
// reads each market it keeps through Market once, when the store does
// not hold it yet.
type Partial interface {
	Source
	ListsPartial() bool
}

// Benchmarker is a Source that can say a market's Yes price at a past
// instant from the venue's own history, with its provenance: the
// benchmark of a round's market. ok is false when the venue has no price
// near t (a hidden community prediction, no candle, no trade yet).
type Benchmarker interface {
	BenchmarkAt(ctx context.Context, m *arena.Market, t time.Time) (p arena.PricePoint, ok bool, err error)
}

// BenchmarkTolerance is how far from the asked instant a venue's history
// point may lie and still be its price then (as for Polymarket's CLOB
// history).
const BenchmarkTolerance = 300 * time.Second

// SkipReason names why an upstream object did not become a market: a
// stable identifier the sync report counts and the log prints.
type SkipReason string

// Skip reasons, shared by the venues; docs/operations.md lists which
// venue uses which.
const (
	SkipInvalidJSON     SkipReason = "invalid_json"     // not a JSON object
	SkipBadField        SkipReason = "bad_field"        // a field of the wrong type or an unreadable value
	SkipMissingID       SkipReason = "missing_id"       // no id
	SkipMissingQuestion SkipReason = "missing_question" // no question text
	SkipBadPrice        SkipReason = "bad_price"        // a price or probability that is not a number in [0,1]
	SkipBadDate         SkipReason = "bad_date"         // an unreadable time
	SkipNotBinary       SkipReason = "not_binary"       // not a yes/no question (multiple choice, numeric, scalar, …)
	SkipParlay          SkipReason = "parlay"           // a Kalshi multivariate (combo) market: its legs are other markets
	SkipGroupPost       SkipReason = "group_post"       // a Metaculus post without a single question (a group, a conditional, a notebook)
	SkipIDMismatch      SkipReason = "id_mismatch"      // the object names another id than the one asked for or its own
	SkipUnknownStatus   SkipReason = "unknown_status"   // a status the arena does not know
	SkipUnopened        SkipReason = "unopened"         // not open for forecasting yet
	SkipInvalid         SkipReason = "invalid_market"   // maps to a market that breaks a rule every stored market keeps
)

// SkipReasons lists every SkipReason.
var SkipReasons = []SkipReason{SkipInvalidJSON, SkipBadField, SkipMissingID, SkipMissingQuestion, SkipBadPrice, SkipBadDate,
	SkipNotBinary, SkipParlay, SkipGroupPost, SkipIDMismatch, SkipUnknownStatus, SkipUnopened, SkipInvalid}

// SkipError says why an upstream object cannot become a market.
type SkipError struct {
	Venue  string
	Reason SkipReason
	ID     string // the venue's id when known
	Detail string
}

func (e *SkipError) Error() string {
	id := e.ID
	if id == "" {
		id = "?"
	}
	return fmt.Sprintf("%s: skip %s: %s: %s", e.Venue, id, e.Reason, e.Detail)
}

// Skip returns a *SkipError.
func Skip(venue string, reason SkipReason, id, format string, args ...any) *SkipError {
	return &SkipError{Venue: venue, Reason: reason, ID: id, Detail: fmt.Sprintf(format, args...)}
}

// RefreshCounts are what re-reading a source's known markets found.
type RefreshCounts struct {
	Refreshed      int // known markets outside the kept ones, re-read one by one
	RefreshMissing int // known markets the source no longer serves
	Closed         int // re-read markets that closed since the last sync
	Resolved       int // re-read markets that now carry a resolution (an outcome or VOID)
	Ambiguous      int // re-read markets settled without a resolution the arena can read
}

// Count counts m, a known market re-read, against was, its stored form.
func (c *RefreshCounts) Count(m, was *arena.Market) {
	c.Refreshed++
	switch {
	case m.Status == arena.StatusResolved:
		c.Resolved++
	case m.Ambiguous && !was.Ambiguous:
		c.Ambiguous++
	case m.Status == arena.StatusClosed && was.Status == arena.StatusOpen:
		c.Closed++
	}
}

// Report counts what a sync saw and changed.
type Report struct {
	Venue       string
	Fetched     int                // objects received from the listings, duplicates included
	Ineligible  int                // listed but not open, or never traded
	Duplicates  int                // objects already seen under the same id
	Skipped     int                // objects that cannot become markets; see SkipReasons
	SkipReasons map[SkipReason]int // skipped objects, by reason
	Kept        int                // listed markets kept, the most traded first

	RefreshCounts

	Priced   int // open markets with a price
	Unpriced int // open markets without one (an empty book, a hidden community prediction)

	Inserted    int // from the store
	Updated     int
	Unchanged   int
	PricePoints int
}

// Skip counts one skipped object.
func (r *Report) Skip(reason SkipReason) { CountSkip(&r.Skipped, &r.SkipReasons, reason) }

// String is the one-line summary `arena sync` prints.
func (r Report) String() string {
	return fmt.Sprintf("%s: kept %d of %d listed (%d duplicates, %d ineligible, %s skipped); "+
		"refreshed %d (%d closed, %d resolved, %d ambiguous, %d gone); %d open with a price, %d without; "+
		"saved %d new, %d updated, %d unchanged, %d price points",
		r.Venue, r.Kept, r.Fetched, r.Duplicates, r.Ineligible, Skipped(r.Skipped, r.SkipReasons),
		r.Refreshed, r.Closed, r.Resolved, r.Ambiguous, r.RefreshMissing, r.Priced, r.Unpriced,
		r.Inserted, r.Updated, r.Unchanged, r.PricePoints)
}

// CountSkip counts one skipped object of a sync report, by reason (the
// venues' report and Polymarket's).
func CountSkip[K comparable](n *int, reasons *map[K]int, reason K) {
	*n++
	if *reasons == nil {
		*reasons = map[K]int{}
	}
	(*reasons)[reason]++
}

// Skipped says a report's skipped count with its reasons, as the summary
// lines print it: "3 (bad_date=1,parlay=2)".
func Skipped[K ~string](n int, reasons map[K]int) string {
	var rs []string
	for k, v := range reasons {
		rs = append(rs, fmt.Sprintf("%s=%d", k, v))
	}
	sort.Strings(rs)
	s := strconv.Itoa(n)
	if len(rs) > 0 {
		s += " (" + strings.Join(rs, ",") + ")"
	}
	return s
}

// Listing gathers the markets a venue lists, once each, counting every
// entry it received in the report as Source.List promises: skipped (with
// its reason, logged), ineligible, a repeat, or listed.
type Listing struct {
	Rep     *Report
	Log     *slog.Logger
	Markets []*arena.Market
	seen    map[string]*arena.Market
}

// Add counts one entry: the market an object decoded to and whether the
// venue lists it as trading, or err, the *SkipError it decoded to. It
// returns the first sighting of a repeated market, nil otherwise.
func (l *Listing) Add(m *arena.Market, eligible bool, err error) (first *arena.Market) {
	l.Rep.Fetched++
	switch {
	case err != nil:
		l.Rep.Skip(Reason(err))
		arena.Logger(l.Log).Warn(l.Rep.Venue+": skipping", "reason", Reason(err), "err", err)
	case !eligible:
		l.Rep.Ineligible++
	case l.seen[m.SourceID] != nil: // a venue's pages shift while it trades
		l.Rep.Duplicates++
		return l.seen[m.SourceID]
	default:
		if l.seen == nil {
			l.seen = map[string]*arena.Market{}
		}
		l.seen[m.SourceID] = m
		l.Markets = append(l.Markets, m)
	}
	return nil
}

// Client is what each venue's client holds: its HTTP client, its
// listing's page cap, its clock and its logger.
type Client struct {
	HTTP HTTP
	// MaxPages bounds a listing's pages, a guard against endless
	// pagination (0: the venue's default).
	MaxPages int
	// Now is the clock a market's state is read at and its prices are
	// stamped with (default time.Now).
	Now    func() time.Time
	Logger *slog.Logger
}

// NewClient is the client of a venue's API at base (def when base is
// ""), asking at most rate times a second.
func NewClient(venue, base, def string, rate float64) Client {
	if base == "" {
		base = def
	}
	return Client{HTTP: HTTP{Venue: venue, Base: base, Rate: rate, Burst: int(max(rate, 1))}}
}

// ReadOne GETs one object at path into v: a 404 answer is an
// arena.ENOTFOUND error (the venue no longer serves it), any other
// failure an error naming what was read.
func (c *Client) ReadOne(ctx context.Context, path, what, id string, v any) error {
	err := c.HTTP.Get(ctx, path, nil, v)
	if StatusCode(err) == http.StatusNotFound {
		return arena.Errorf(arena.ENOTFOUND, "%s: %s %s not found upstream", c.HTTP.Venue, what, id)
	}
	if err != nil {
		return fmt.Errorf("%s: get %s %s: %w", c.HTTP.Venue, what, id, err)
	}
	return nil
}

// SameID is an id_mismatch skip unless the object read for id is id's.
func SameID(venue, id, got string) error {
	if got != id {
		return Skip(venue, SkipIDMismatch, id, "asked for %s, got %s", id, got)
	}
	return nil
}

// Settle records a venue's settlement of m: resolved to resolution (an
// outcome or VOID) at at, priced at the value it settled at (1 or 0, or
// the probability a market resolved to) with that value as a settlement
// point when hasValue; a VOID without a value has no price.
func Settle(m *arena.Market, resolution string, value float64, hasValue bool, at, fetched time.Time) {
	m.Status, m.Resolution, m.ResolvedAt = arena.StatusResolved, resolution, at
	m.Prices, m.History = nil, nil
	if hasValue {
		m.Prices = BinaryPrices(value)
		m.History = []arena.PricePoint{YesPoint(at, value, arena.PriceSettlement, fetched)}
	}
}

// Clock is the client's time, in UTC.
func (c *Client) Clock() time.Time { return arena.Clock(c.Now)().UTC() }

// Log is the client's logger.
func (c *Client) Log() *slog.Logger { return arena.Logger(c.Logger) }

// Pages is MaxPages, or def when it is not set.
func (c *Client) Pages(def int) int {
	if c.MaxPages <= 0 {
		return def
	}
	return c.MaxPages
}
