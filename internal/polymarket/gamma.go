package polymarket

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// Gamma's JSON is loosely typed: ids are strings, volumes are numbers next
// to string twins, and list fields (outcomes, outcomePrices, clobTokenIds)
// are JSON arrays encoded inside a string. The flexible types below accept
// both the documented and the plausible alternative shapes so one odd field
// skips one market instead of failing a whole page.

// flexString accepts a JSON string or number.
type flexString string

func (s *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*s = ""
	case len(b) > 0 && b[0] == '"':
		var v string
		if err := json.Unmarshal(b, &v); err != nil {
			return err
		}
		*s = flexString(v)
	default:
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			return fmt.Errorf("want string or number, got %.40s", b)
		}
		*s = flexString(n.String())
	}
	return nil
}

// flexFloat accepts a JSON number, a numeric string, or null (unset).
type flexFloat struct {
	V   float64
	Set bool
}

func (f *flexFloat) UnmarshalJSON(b []byte) error {
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	if s == "" {
		*f = flexFloat{}
		return nil
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(s)), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return fmt.Errorf("not a finite number: %q", s)
	}
	*f = flexFloat{V: v, Set: true}
	return nil
}

// flexBool accepts a JSON bool, "true"/"false", or null (false).
type flexBool bool

func (x *flexBool) UnmarshalJSON(b []byte) error {
	var s flexString
	if bytes.Equal(bytes.TrimSpace(b), []byte("true")) {
		*x = true
		return nil
	}
	if bytes.Equal(bytes.TrimSpace(b), []byte("false")) {
		*x = false
		return nil
	}
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	switch strings.ToLower(string(s)) {
	case "true":
		*x = true
	case "false", "":
		*x = false
	default:
		return fmt.Errorf("not a bool: %q", s)
	}
	return nil
}

// flexList is a list of strings that arrives as a JSON-encoded string
// ("[\"Yes\", \"No\"]"), or as a real array; elements may be numbers. A
// value that is neither is kept as Err rather than failing the whole
// market, so the skip reason can name the field.
type flexList struct {
	V   []string
	Err string
}

func (l *flexList) UnmarshalJSON(b []byte) error {
	*l = flexList{}
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		return nil
	}
	if len(b) > 0 && b[0] == '"' {
		var inner string
		if err := json.Unmarshal(b, &inner); err != nil {
			return err
		}
		inner = strings.TrimSpace(inner)
		if inner == "" {
			return nil
		}
		b = []byte(inner)
	}
	var raw []flexString
	if err := json.Unmarshal(b, &raw); err != nil {
		l.Err = fmt.Sprintf("not a JSON array of strings: %.60q", b)
		return nil
	}
	l.V = make([]string, len(raw))
	for i, r := range raw {
		l.V[i] = string(r)
	}
	return nil
}

// gammaTag is a tag object ({"label":"Politics","slug":"politics"}) or a
// bare string.
type gammaTag struct{ Label string }

func (t *gammaTag) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '{' {
		var o struct {
			Label string `json:"label"`
			Slug  string `json:"slug"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		t.Label = or(o.Label, o.Slug)
		return nil
	}
	var s flexString
	if err := s.UnmarshalJSON(b); err != nil {
		return err
	}
	t.Label = string(s)
	return nil
}

// gammaToken is a CLOB token as some Gamma and CLOB answers embed it; only
// the winner flag matters here.
type gammaToken struct {
	TokenID flexString `json:"token_id"`
	Outcome string     `json:"outcome"`
	Winner  flexBool   `json:"winner"`
}

// gammaEventRef is the event summary embedded in a market.
type gammaEventRef struct {
	ID       flexString `json:"id"`
	Slug     string     `json:"slug"`
	Title    string     `json:"title"`
	Category string     `json:"category"`
	Tags     []gammaTag `json:"tags"`
}

// gammaMarket is one market as Gamma serves it. Fields the arena does not
// use are not decoded; docs/operations.md lists what is used, what is
// ignored, and why.
type gammaMarket struct {
	ID                  flexString      `json:"id"`
	Question            string          `json:"question"`
	ConditionID         string          `json:"conditionId"`
	Slug                string          `json:"slug"`
	Description         string          `json:"description"`
	Category            string          `json:"category"`
	MarketType          string          `json:"marketType"`
	StartDate           string          `json:"startDate"`
	EndDate             string          `json:"endDate"`
	ClosedTime          string          `json:"closedTime"`
	Active              flexBool        `json:"active"`
	Closed              flexBool        `json:"closed"`
	Archived            flexBool        `json:"archived"`
	Outcomes            flexList        `json:"outcomes"`
	OutcomePrices       flexList        `json:"outcomePrices"`
	ClobTokenIDs        flexList        `json:"clobTokenIds"`
	VolumeNum           flexFloat       `json:"volumeNum"`
	Volume              flexString      `json:"volume"`
	LiquidityNum        flexFloat       `json:"liquidityNum"`
	Liquidity           flexString      `json:"liquidity"`
	NegRisk             flexBool        `json:"negRisk"`
	NegRiskOther        flexBool        `json:"negRiskOther"`
	UMAResolutionStatus string          `json:"umaResolutionStatus"`
	Events              []gammaEventRef `json:"events"`
	Tags                []gammaTag      `json:"tags"`
	Tokens              []gammaToken    `json:"tokens"`
}

// gammaEvent is one entry of GET /events; its markets lack the embedded
// event summary, which the event itself supplies.
type gammaEvent struct {
	gammaEventRef
	Volume  flexFloat         `json:"volume"`
	Markets []json.RawMessage `json:"markets"`
}

// SkipReason names why a Gamma entry did not become a market: a stable
// identifier the sync report counts and the log prints.
type SkipReason string

// Skip reasons.
const (
	SkipInvalidJSON     SkipReason = "invalid_json"     // not a JSON object
	SkipBadField        SkipReason = "bad_field"        // a JSON object with a field of the wrong type or an unreadable value
	SkipMissingID       SkipReason = "missing_id"       // no id
	SkipMissingQuestion SkipReason = "missing_question" // empty question
	SkipBadOutcomes     SkipReason = "bad_outcomes"     // fewer than two, empty, duplicate or reserved outcome names
	SkipBadPrices       SkipReason = "bad_prices"       // an outcome price that is not a number in [0,1]
	SkipBadTokenIDs     SkipReason = "bad_token_ids"    // a CLOB token id that is not a decimal integer
	SkipCountMismatch   SkipReason = "count_mismatch"   // prices or token ids not one per outcome
	SkipBadDate         SkipReason = "bad_date"         // an unreadable endDate or startDate
	SkipScalar          SkipReason = "scalar"           // a scalar market: it pays a fraction of a range, not one outcome
	SkipNegRiskOther    SkipReason = "neg_risk_other"   // the "Other" market of an augmented negRisk event
	SkipBadEvent        SkipReason = "bad_event"        // an /events entry that cannot be read
	SkipInvalid         SkipReason = "invalid_market"   // the mapped market breaks a domain invariant
)

// SkipReasons lists every SkipReason.
var SkipReasons = []SkipReason{
	SkipInvalidJSON, SkipBadField, SkipMissingID, SkipMissingQuestion, SkipBadOutcomes, SkipBadPrices,
	SkipBadTokenIDs, SkipCountMismatch, SkipBadDate, SkipScalar, SkipNegRiskOther, SkipBadEvent, SkipInvalid,
}

// SkipError says why a Gamma entry cannot become a market.
type SkipError struct {
	Reason SkipReason
	ID     string // Gamma id when known
	Detail string
}

func (e *SkipError) Error() string {
	id := e.ID
	if id == "" {
		id = "?"
	}
	return fmt.Sprintf("polymarket: skip market %s: %s: %s", id, e.Reason, e.Detail)
}

func skip(reason SkipReason, id, format string, args ...any) *SkipError {
	return &SkipError{Reason: reason, ID: id, Detail: fmt.Sprintf(format, args...)}
}

// perOutcome parses a list Gamma gives per outcome (prices, token ids):
// nil when absent; a count that is not the outcomes' skips the market, as
// does a value parse refuses.
func perOutcome[T any](vals, outcomes []string, id, what string, parse func(i int, v string) (T, error)) ([]T, error) {
	if len(vals) == 0 {
		return nil, nil
	}
	if len(vals) != len(outcomes) {
		return nil, skip(SkipCountMismatch, id, "%d %s for %d outcomes", len(vals), what, len(outcomes))
	}
	out := make([]T, len(vals))
	for i, v := range vals {
		var err error
		if out[i], err = parse(i, v); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// gammaEntry is a decoded, mapped market with the listing facts Sync needs.
type gammaEntry struct {
	M        *arena.Market
	Eligible bool      // active, not closed or archived, volumeNum > 0
	Gamma    []float64 // Gamma outcome prices aligned with M.Outcomes; nil when absent
}

// decodeMarket decodes one Gamma market object (as served by GET /markets
// and GET /markets/{id}) and maps it, with the listing event the market
// came from, which wins over the market's embedded event summary (nil: the
// summary alone). now stamps ResolvedAt when Gamma gives no closing time.
// Errors are *SkipError.
func decodeMarket(raw []byte, ev *gammaEventRef, now time.Time) (*gammaEntry, error) {
	var g gammaMarket
	if err := json.Unmarshal(raw, &g); err != nil {
		reason := SkipInvalidJSON
		if isObject(raw) {
			reason = SkipBadField
		}
		return nil, skip(reason, salvageID(raw), "%v", err)
	}
	return g.toEntry(ev, now)
}

// isObject reports whether raw is well-formed JSON holding an object, so a
// decoding error is about one field's value rather than the whole entry.
func isObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// salvageID reads only the id of an entry whose other fields do not decode,
// for the log line.
func salvageID(raw []byte) string {
	var idOnly struct {
		ID flexString `json:"id"`
	}
	_ = json.Unmarshal(raw, &idOnly)
	return string(idOnly.ID)
}

func (g *gammaMarket) toEntry(ev *gammaEventRef, now time.Time) (*gammaEntry, error) {
	id := strings.TrimSpace(string(g.ID))
	if id == "" {
		return nil, skip(SkipMissingID, "", "no id (conditionId %q)", g.ConditionID)
	}
	question := strings.TrimSpace(g.Question)
	if question == "" {
		return nil, skip(SkipMissingQuestion, id, "empty question")
	}
	if err := g.checkKind(id); err != nil {
		return nil, err
	}
	outcomes, prices, tokens, err := g.outcomeLists(id)
	if err != nil {
		return nil, err
	}
	closeTime, err := parseTime(g.EndDate)
	if err != nil {
		return nil, skip(SkipBadDate, id, "endDate: %v", err)
	}
	openTime, err := parseTime(g.StartDate)
	if err != nil {
		return nil, skip(SkipBadDate, id, "startDate: %v", err)
	}
	// closedTime only stamps a resolution; an odd value is not worth a skip.
	closedAt, _ := parseTime(g.ClosedTime)

	if ev == nil && len(g.Events) > 0 {
		ev = &g.Events[0]
	}
	m := &arena.Market{
		Source:      arena.SourcePolymarket,
		SourceID:    id,
		Kind:        arena.KindMarket,
		Question:    question,
		Criteria:    strings.TrimSpace(g.Description),
		Category:    category(g, ev),
		Type:        arena.TypeOf(outcomes),
		Outcomes:    outcomes,
		Volume:      orNumber(g.VolumeNum, g.Volume),
		Liquidity:   orNumber(g.LiquidityNum, g.Liquidity),
		OpenTime:    openTime,
		CloseTime:   closeTime,
		ConditionID: strings.TrimSpace(g.ConditionID),
		TokenIDs:    tokens,
		Slug:        strings.TrimSpace(g.Slug),
		NegRisk:     bool(g.NegRisk),
		UMAStatus:   strings.TrimSpace(g.UMAResolutionStatus),
	}
	if ev != nil {
		m.EventSlug = strings.TrimSpace(ev.Slug)
		m.EventID = or(strings.TrimSpace(string(ev.ID)), m.EventSlug)
	}
	m.URL = marketURL(m.EventSlug, m.Slug)
	if prices != nil {
		m.Prices = make(map[string]float64, len(outcomes))
		for i, o := range outcomes {
			m.Prices[o] = prices[i]
		}
	}
	g.resolve(m, prices, closedAt, now)
	if err := m.Validate(); err != nil {
		return nil, skip(SkipInvalid, id, "%v", err)
	}
	return &gammaEntry{
		M:        m,
		Eligible: bool(g.Active) && !bool(g.Closed) && !bool(g.Archived) && m.Volume > 0,
		Gamma:    prices,
	}, nil
}

// checkKind refuses the markets the arena cannot score or whose question
// may change, and those whose per-outcome lists did not decode.
func (g *gammaMarket) checkKind(id string) error {
	// A scalar market pays each outcome a share of a numeric range (the
	// recorded legacy market 43 settled at 0.584/0.416); the arena resolves
	// a market to one outcome or Void, so it cannot score one.
	if strings.EqualFold(strings.TrimSpace(g.MarketType), "scalar") {
		return skip(SkipScalar, id, "scalar market")
	}
	// The "Other" market of an augmented negRisk event changes meaning
	// whenever a named outcome is added to the event, so a forecast made
	// today may answer a different question from the one that resolves.
	if g.NegRiskOther {
		return skip(SkipNegRiskOther, id, "the Other outcome of an augmented negRisk event")
	}
	switch {
	case g.Outcomes.Err != "":
		return skip(SkipBadOutcomes, id, "outcomes: %s", g.Outcomes.Err)
	case g.OutcomePrices.Err != "":
		return skip(SkipBadPrices, id, "outcomePrices: %s", g.OutcomePrices.Err)
	case g.ClobTokenIDs.Err != "":
		return skip(SkipBadTokenIDs, id, "clobTokenIds: %s", g.ClobTokenIDs.Err)
	}
	return nil
}

// outcomeLists reads the market's outcomes, trimmed, at least two, none
// empty, reserved or repeated, and beside them each one's price (nil if
// the market lists none) and CLOB token id.
func (g *gammaMarket) outcomeLists(id string) ([]string, []float64, []string, error) {
	outcomes := g.Outcomes.V
	if len(outcomes) < 2 {
		return nil, nil, nil, skip(SkipBadOutcomes, id, "need at least two outcomes, got %q", outcomes)
	}
	seen := map[string]bool{}
	for i, o := range outcomes {
		o = strings.TrimSpace(o)
		if o == "" || o == arena.Void || seen[o] {
			return nil, nil, nil, skip(SkipBadOutcomes, id, "empty, reserved or duplicate outcome %q", o)
		}
		seen[o] = true
		outcomes[i] = o
	}
	prices, err := perOutcome(g.OutcomePrices.V, outcomes, id, "prices", func(i int, s string) (float64, error) {
		p, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(p) || p < 0 || p > 1 {
			return 0, skip(SkipBadPrices, id, "outcome price %q is not in [0,1]", s)
		}
		return p, nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	tokens, err := perOutcome(g.ClobTokenIDs.V, outcomes, id, "token ids", func(i int, t string) (string, error) {
		if t = strings.TrimSpace(t); !tokenID(t) {
			return "", skip(SkipBadTokenIDs, id, "token id %.90q for %q is not a decimal integer", t, outcomes[i])
		}
		return t, nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return outcomes, prices, tokens, nil
}

// resolve sets m's status and resolution from the market's state, prices
// and winning tokens, resolved at closedAt (else now).
func (g *gammaMarket) resolve(m *arena.Market, prices []float64, closedAt, now time.Time) {
	var winners []string
	for _, t := range g.Tokens {
		if t.Winner {
			winners = append(winners, strings.TrimSpace(t.Outcome))
		}
	}
	r := Resolve(bool(g.Closed), m.UMAStatus, m.Outcomes, prices, winners)
	m.Status, m.Resolution, m.Ambiguous = r.Status, r.Resolution, r.Ambiguous
	if m.Status == arena.StatusResolved {
		m.ResolvedAt = closedAt
		if m.ResolvedAt.IsZero() {
			m.ResolvedAt = now.UTC()
		}
	}
}

// tokenID reports whether t can be a CLOB token id: an ERC-1155 position
// id, which Polymarket writes as a decimal uint256 (at most 78 digits). A
// number Gamma rendered as a float (1.04e+77) has lost digits and is refused.
func tokenID(t string) bool {
	if t == "" || len(t) > 78 {
		return false
	}
	for _, c := range []byte(t) {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// orNumber is the numeric field when Gamma sent it, else its string twin
// (volumeNum and volume, liquidityNum and liquidity) when that reads as a
// finite, non-negative number, else 0.
func orNumber(num flexFloat, str flexString) float64 {
	if num.Set {
		return num.V
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(str)), 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
		return 0
	}
	return v
}

// category prefers the market's own category, then the event's, then the
// first tag of the market or event.
func category(g *gammaMarket, ev *gammaEventRef) string {
	if c := strings.TrimSpace(g.Category); c != "" {
		return c
	}
	if ev != nil {
		if c := strings.TrimSpace(ev.Category); c != "" {
			return c
		}
	}
	tags := g.Tags
	if len(tags) == 0 && ev != nil {
		tags = ev.Tags
	}
	for _, t := range tags {
		if l := strings.TrimSpace(t.Label); l != "" {
			return l
		}
	}
	return ""
}

func marketURL(eventSlug, slug string) string {
	switch {
	case eventSlug != "" && slug != "" && eventSlug != slug:
		return "https://polymarket.com/event/" + eventSlug + "/" + slug
	case eventSlug != "":
		return "https://polymarket.com/event/" + eventSlug
	case slug != "":
		return "https://polymarket.com/market/" + slug
	}
	return ""
}

// timeLayouts are the shapes Gamma uses: RFC 3339 for endDate and startDate
// (and an event's closedTime), a Postgres timestamp with an hour offset for
// a market's closedTime ("2026-03-19 23:20:15+00", also with fractional
// seconds), and bare dates on old markets; the others are the same
// timestamps with the date and time separator or the offset written the
// other way. A timestamp without an offset is UTC.
var timeLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02 15:04:05.999999999-07",
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999-07",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02",
}

// parseTime parses a Gamma timestamp as UTC; empty means unknown (zero).
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, l := range timeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised time %q", s)
}

// decodeEvent decodes one /events entry.
func decodeEvent(raw []byte) (*gammaEvent, error) {
	var ev gammaEvent
	if err := json.Unmarshal(raw, &ev); err != nil {
		return nil, skip(SkipBadEvent, salvageID(raw), "%v", err)
	}
	if strings.TrimSpace(string(ev.ID)) == "" && strings.TrimSpace(ev.Slug) == "" {
		return nil, skip(SkipBadEvent, "", "event without id or slug")
	}
	return &ev, nil
}

// skipReason extracts the reason of a *SkipError, or SkipInvalid.
func skipReason(err error) SkipReason {
	var se *SkipError
	if errors.As(err, &se) {
		return se.Reason
	}
	return SkipInvalid
}
