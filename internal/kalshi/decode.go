package kalshi

import (
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/venue"
)

// market is one Kalshi market as the trade API v2 serves it (GET
// /markets, /markets/{ticker}, an event's nested markets). Prices come as
// fixed-point dollar strings ("0.3900", up to 6 decimals) next to the
// legacy integer cents (yes_bid: 39); volumes as contract-count strings
// ("10160.15") next to legacy integers. Fields the arena does not use are
// not decoded; docs/operations.md lists what is read and why.
type market struct {
	Ticker         string `json:"ticker"`
	EventTicker    string `json:"event_ticker"`
	MarketType     string `json:"market_type"`
	Title          string `json:"title"`
	YesSubTitle    string `json:"yes_sub_title"`
	RulesPrimary   string `json:"rules_primary"`
	RulesSecondary string `json:"rules_secondary"`
	Category       string `json:"category"`
	Status         string `json:"status"`
	Result         string `json:"result"`

	OpenTime               string `json:"open_time"`
	CloseTime              string `json:"close_time"`
	ExpectedExpirationTime string `json:"expected_expiration_time"`
	SettlementTS           string `json:"settlement_ts"`

	YesBidDollars          venue.Number `json:"yes_bid_dollars"`
	YesBid                 venue.Number `json:"yes_bid"`
	YesAskDollars          venue.Number `json:"yes_ask_dollars"`
	YesAsk                 venue.Number `json:"yes_ask"`
	LastPriceDollars       venue.Number `json:"last_price_dollars"`
	LastPrice              venue.Number `json:"last_price"`
	SettlementValueDollars venue.Number `json:"settlement_value_dollars"`
	SettlementValue        venue.Number `json:"settlement_value"`

	VolumeFP         venue.Number `json:"volume_fp"`
	Volume           venue.Number `json:"volume"`
	LiquidityDollars venue.Number `json:"liquidity_dollars"`
	Liquidity        venue.Number `json:"liquidity"`

	MVECollectionTicker string            `json:"mve_collection_ticker"`
	MVESelectedLegs     []json.RawMessage `json:"mve_selected_legs"`
}

// event is one entry of GET /events?with_nested_markets=true: what the
// arena takes from it for its markets, and the markets.
type event struct {
	EventTicker  string            `json:"event_ticker"`
	SeriesTicker string            `json:"series_ticker"`
	Title        string            `json:"title"`
	Category     string            `json:"category"`
	Markets      []json.RawMessage `json:"markets"`
}

// entry is a decoded, mapped market with the listing fact Sync needs.
type entry struct {
	M        *arena.Market
	Eligible bool // open for trading and traded
}

// Market statuses (GET /markets and /markets/{ticker}). Kalshi's market
// lifecycle: initialized before open_time, active while trading, inactive
// while the exchange pauses it, closed after close_time, determined once
// the result is known, disputed and amended while a result is challenged,
// finalized once positions are paid. The filter names of GET
// /markets?status= (unopened, open, paused, settled) are read as the
// statuses they select, for clients that report those.
var statuses = map[string]arena.MarketStatus{
	"active": arena.StatusOpen, "open": arena.StatusOpen, "inactive": arena.StatusOpen, "paused": arena.StatusOpen,
	"closed": arena.StatusClosed, "determined": arena.StatusClosed, "disputed": arena.StatusClosed, "amended": arena.StatusClosed,
	"finalized": arena.StatusResolved, "settled": arena.StatusResolved,
}

// listedStatuses are the statuses a market trades under.
var listedStatuses = map[string]bool{"active": true, "open": true}

// decode decodes one market object and maps it to an arena.Market; ev is
// the event it was listed in, nil for a bare market. fetched stamps its
// price points. Errors are *venue.SkipError.
func decode(raw []byte, ev *event, fetched time.Time) (*entry, error) {
	var k market
	if err := venue.Decode(Venue, raw, &k, salvage); err != nil {
		return nil, err
	}
	return k.toEntry(ev, fetched)
}

// salvage reads only the ticker of an object whose other fields do not
// decode, for the log.
func salvage(raw []byte) string {
	var t struct {
		Ticker string `json:"ticker"`
	}
	_ = json.Unmarshal(raw, &t)
	id, _ := venue.ID(t.Ticker)
	return id
}

// price reads a price from its dollar string, else its legacy cents;
// ok is false when neither is sent.
func price(dollars, cents venue.Number, what string) (float64, bool, error) {
	if !dollars.Set && cents.Set {
		dollars = venue.Number{V: cents.V / 100, Set: true}
	}
	return dollars.Probability(what)
}

// quoted reports whether a side of the book holds an order: Kalshi shows
// an empty side as a 0 bid or a 1 ask.
func quoted(p float64) bool { return p > 0 && p < 1 }

func (k *market) toEntry(ev *event, fetched time.Time) (*entry, error) {
	id, ok := venue.ID(k.Ticker)
	if !ok {
		return nil, venue.Skip(Venue, venue.SkipMissingID, "", "ticker %.60q", k.Ticker)
	}
	eventTicker := strings.TrimSpace(k.EventTicker)
	if eventTicker == "" && ev != nil {
		eventTicker = strings.TrimSpace(ev.EventTicker)
	}
	status, st, err := k.checkKind(id, eventTicker)
	if err != nil {
		return nil, err
	}
	question, err := k.question(id)
	if err != nil {
		return nil, err
	}
	var openT, closeT, expectT, settleT time.Time
	if err := venue.Times(Venue, id, venue.Time, venue.TimeField[string]{Name: "open_time", Value: k.OpenTime, Dst: &openT},
		venue.TimeField[string]{Name: "close_time", Value: k.CloseTime, Dst: &closeT},
		venue.TimeField[string]{Name: "expected_expiration_time", Value: k.ExpectedExpirationTime, Dst: &expectT},
		venue.TimeField[string]{Name: "settlement_ts", Value: k.SettlementTS, Dst: &settleT}); err != nil {
		return nil, err
	}
	q, err := k.quotes(id)
	if err != nil {
		return nil, err
	}
	volume, liquidity, err := k.size(id)
	if err != nil {
		return nil, err
	}

	category := k.Category
	series := ""
	if ev != nil {
		category, series = venue.Or(ev.Category, category), strings.TrimSpace(ev.SeriesTicker)
	}
	if series == "" {
		series = seriesOf(venue.Or(eventTicker, id))
	}
	m := &arena.Market{
		Source: arena.SourceKalshi, SourceID: id, Kind: arena.KindMarket,
		Question:  question,
		Criteria:  venue.Text(strings.TrimSpace(k.RulesPrimary)+"\n\n"+strings.TrimSpace(k.RulesSecondary), venue.MaxCriteria),
		Category:  venue.Text(category, venue.MaxLabel),
		EventID:   venue.Text(eventTicker, venue.MaxLabel),
		EventSlug: venue.Text(series, venue.MaxLabel),
		URL:       "https://kalshi.com/markets/" + strings.ToLower(id),
		Type:      arena.Binary, Outcomes: []string{arena.Yes, arena.No},
		Volume: volume, Liquidity: liquidity,
		OpenTime: openT, CloseTime: closeT,
		Status: st,
	}
	q.setPrices(m, fetched)
	if st == arena.StatusResolved {
		settleResult(m, strings.ToLower(strings.TrimSpace(k.Result)), q.settle, q.hasSettle, venue.FirstSet(settleT, expectT, closeT, fetched), fetched)
	}
	if err := m.Validate(); err != nil {
		return nil, venue.Skip(Venue, venue.SkipInvalid, id, "%v", err)
	}
	return &entry{M: m, Eligible: listedStatuses[status] && m.Volume > 0}, nil
}

// checkKind refuses a market that is not a plain yes/no question open or
// past (a parlay, another type, one not yet opened or of an unknown
// status), and returns its status, as Kalshi names it and as the arena's.
func (k *market) checkKind(id, eventTicker string) (string, arena.MarketStatus, error) {
	// A multivariate market is a parlay of other markets' outcomes,
	// minted on demand: its title is the list of legs, its rules empty
	// and its book nearly always empty, so there is no question to
	// forecast that its legs do not already ask.
	if parlay(id) || parlay(eventTicker) || k.MVECollectionTicker != "" || len(k.MVESelectedLegs) > 0 {
		return "", "", venue.Skip(Venue, venue.SkipParlay, id, "multivariate market of collection %q", k.MVECollectionTicker)
	}
	if t := strings.ToLower(strings.TrimSpace(k.MarketType)); t != "" && t != "binary" {
		return "", "", venue.Skip(Venue, venue.SkipNotBinary, id, "market_type %q", k.MarketType)
	}
	status := strings.ToLower(strings.TrimSpace(k.Status))
	st, known := statuses[status]
	switch {
	case status == "initialized" || status == "unopened":
		return "", "", venue.Skip(Venue, venue.SkipUnopened, id, "status %q", k.Status)
	case !known:
		return "", "", venue.Skip(Venue, venue.SkipUnknownStatus, id, "status %.40q", k.Status)
	}
	return status, st, nil
}

// question is the market's question: its title, with the Yes side's name
// unless the title ends with it.
func (k *market) question(id string) (string, error) {
	question := venue.Text(k.Title, venue.MaxQuestion)
	if question == "" {
		return "", venue.Skip(Venue, venue.SkipMissingQuestion, id, "empty title")
	}
	// Markets of one event share its title ("Houston vs San Diego
	// Winner?"); the Yes side's name ("San Diego") says which market
	// this is, even when the title names it too.
	if sub := venue.Text(k.YesSubTitle, venue.MaxLabel); sub != "" && !strings.HasSuffix(strings.ToLower(question), strings.ToLower(sub)) {
		question = venue.Text(question+" — "+sub, venue.MaxQuestion)
	}
	return question, nil
}

// kalshiQuotes are a market's Yes prices: the book's mid (when both sides
// are quoted and do not cross), the last trade's and the settlement value,
// each with whether it is there.
type kalshiQuotes struct {
	mid, last, settle          float64
	hasMid, hasLast, hasSettle bool
}

// quotes reads the market's Yes prices, in dollars or legacy cents.
func (k *market) quotes(id string) (kalshiQuotes, error) {
	bid, hasBid, err1 := price(k.YesBidDollars, k.YesBid, "yes bid")
	ask, hasAsk, err2 := price(k.YesAskDollars, k.YesAsk, "yes ask")
	last, hasLast, err3 := price(k.LastPriceDollars, k.LastPrice, "last price")
	settle, hasSettle, err4 := price(k.SettlementValueDollars, k.SettlementValue, "settlement value")
	if err := errors.Join(err1, err2, err3, err4); err != nil {
		return kalshiQuotes{}, venue.Skip(Venue, venue.SkipBadPrice, id, "%v", err)
	}
	return kalshiQuotes{
		mid: venue.Round((bid + ask) / 2), hasMid: hasBid && hasAsk && quoted(bid) && quoted(ask) && bid <= ask,
		last: last, hasLast: hasLast && quoted(last),
		settle: settle, hasSettle: hasSettle,
	}, nil
}

// setPrices sets m's prices from the book's mid, else the last trade, and
// records both as price points at fetched.
func (q kalshiQuotes) setPrices(m *arena.Market, fetched time.Time) {
	switch {
	case q.hasMid:
		m.Prices = venue.BinaryPrices(q.mid)
	case q.hasLast:
		m.Prices = venue.BinaryPrices(q.last)
	}
	if q.hasMid {
		m.History = append(m.History, venue.YesPoint(fetched, q.mid, arena.PriceBookMid, fetched))
	}
	if q.hasLast {
		m.History = append(m.History, venue.YesPoint(fetched, q.last, arena.PriceLastTrade, fetched))
	}
}

// size is the market's traded volume and its liquidity in dollars (from
// legacy cents if need be), neither negative.
func (k *market) size(id string) (volume, liquidity float64, err error) {
	v := k.VolumeFP
	if !v.Set {
		v = k.Volume
	}
	liquidity = k.LiquidityDollars.V
	if !k.LiquidityDollars.Set {
		liquidity = k.Liquidity.V / 100 // legacy cents
	}
	if v.V < 0 || liquidity < 0 {
		return 0, 0, venue.Skip(Venue, venue.SkipBadField, id, "negative volume %v or liquidity %v", v.V, liquidity)
	}
	return v.V, liquidity, nil
}

// settleResult applies a finalized market's result. yes and no resolve
// the market; void resolves it VOID; a scalar settlement of a binary
// market pays each Yes contract the settlement value, so a value of 1 or
// 0 resolves it Yes or No and a fraction resolves it VOID, with the value
// kept as its settlement price (never rounded to an outcome). A
// finalized market without a result the arena can read (the one
// recorded finalized market had its result removed by its recorder) is
// closed and ambiguous, for the oracle.
func settleResult(m *arena.Market, result string, value float64, hasValue bool, at, fetched time.Time) {
	switch {
	case result == "yes" || result == "scalar" && hasValue && value == 1:
		venue.Settle(m, arena.Yes, 1, true, at, fetched)
	case result == "no" || result == "scalar" && hasValue && value == 0:
		venue.Settle(m, arena.No, 0, true, at, fetched)
	case result == "void":
		venue.Settle(m, arena.Void, 0, false, at, fetched)
	case result == "scalar" && hasValue:
		venue.Settle(m, arena.Void, value, true, at, fetched)
	default:
		m.Status, m.Ambiguous = arena.StatusClosed, true
	}
}

// parlay reports a multivariate ticker: Kalshi names its multivariate
// event collections KXMVE….
func parlay(ticker string) bool { return strings.HasPrefix(strings.ToUpper(ticker), "KXMVE") }

// seriesOf is the series of an event or market ticker: the part before
// its first '-' (KXMLBGAME-26AUG092020HOUSD-SD is of series KXMLBGAME).
func seriesOf(ticker string) string {
	s, _, _ := strings.Cut(ticker, "-")
	return s
}

// decodeEvent decodes one /events entry.
func decodeEvent(raw []byte) (*event, error) {
	var ev event
	if err := venue.Decode(Venue, raw, &ev, func([]byte) string { return "" }); err != nil {
		return nil, err
	}
	if _, ok := venue.ID(ev.EventTicker); !ok {
		return nil, venue.Skip(Venue, venue.SkipMissingID, "", "event ticker %.60q", ev.EventTicker)
	}
	return &ev, nil
}
