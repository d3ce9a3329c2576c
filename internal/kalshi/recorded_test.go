package kalshi

import (
	"encoding/json"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/kalshi/kalshitest"
	"github.com/forecast-arena/arena/internal/venue"
	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// The contract suite: real Kalshi payloads recorded by other projects
// (../shared/data/venues/kalshi, read in place, never copied), the
// bodies written from Kalshi's documentation for shapes no recording
// holds (kalshitest/testdata/documented, each labelled with its page),
// and what the arena makes of each.

// decodeNow is when the decoder fetched the objects of these tests.
var decodeNow = time.Date(2026, 8, 7, 1, 0, 0, 0, time.UTC)

// payloads returns the recordings and then the documented bodies.
func payloads(t *testing.T) []venuetest.Payload {
	t.Helper()
	return append(venuetest.Recorded(t, "kalshi"), kalshitest.Documented(t)...)
}

// recordedWant is what the arena makes of one market object: a market
// with these facts, or a skip for a named reason.
type recordedWant struct {
	file, ticker string // file: its name's first characters
	skip         venue.SkipReason

	status     arena.MarketStatus
	resolution string
	ambiguous  bool
	yes        float64 // the Yes price; NaN for none
	close      string  // RFC 3339
	resolved   string  // RFC 3339; "" unless resolved
	eventID    string
	series     string
	volume     float64
	eligible   bool // listed by a sync: trading, with volume
	question   string
}

var none = math.NaN()

var recordedMarkets = []recordedWant{
	// GET /markets/{ticker}: an MLB game's San Diego market, trading:
	// priced at the midpoint of its 0.53 bid and 0.54 ask.
	{file: "bobaoxu2001-prediction-market-value-lab__apps", ticker: "KXMLBGAME-26AUG092020HOUSD-SD",
		status: arena.StatusOpen, yes: 0.535, close: "2026-08-13T00:20:00Z", eventID: "KXMLBGAME-26AUG092020HOUSD", series: "KXMLBGAME",
		volume: 10160.15, eligible: true, question: "Houston vs San Diego Winner? — San Diego"},
	// A /markets page of a BTC price ladder: never traded, no bid (ask
	// 0.01 only), so no price, and not listed.
	{file: "bobaoxu2001-prediction-market-value-lab__tests", ticker: "KXBTCD-26JUL2502-T74299.99",
		status: arena.StatusOpen, yes: none, close: "2026-07-25T06:00:00Z", eventID: "KXBTCD-26JUL2502", series: "KXBTCD",
		question: "Bitcoin price on Jul 25, 2026? — $74,300 or above"},
	{file: "bobaoxu2001-prediction-market-value-lab__tests", ticker: "KXBTCD-26JUL2502-T74199.99",
		status: arena.StatusOpen, yes: none, close: "2026-07-25T06:00:00Z", eventID: "KXBTCD-26JUL2502", series: "KXBTCD",
		question: "Bitcoin price on Jul 25, 2026? — $74,200 or above"},
	{file: "bobaoxu2001-prediction-market-value-lab__tests", ticker: "KXBTCD-26JUL2502-T74099.99",
		status: arena.StatusOpen, yes: none, close: "2026-07-25T06:00:00Z", eventID: "KXBTCD-26JUL2502", series: "KXBTCD",
		question: "Bitcoin price on Jul 25, 2026? — $74,100 or above"},
	// Five parlays (KXMVE…, with mve_selected_legs), every price "0.0000".
	{file: "guzus", ticker: "KXMVESPORTSMULTIGAMEEXTENDED-S202695384F34707-B07014EEB10", skip: venue.SkipParlay},
	{file: "guzus", ticker: "KXMVESPORTSMULTIGAMEEXTENDED-S20266BA1E1DE06B-AC8E1C8074F", skip: venue.SkipParlay},
	{file: "guzus", ticker: "KXMVESPORTSMULTIGAMEEXTENDED-S2026580AE0009CF-1C1B8E35250", skip: venue.SkipParlay},
	{file: "guzus", ticker: "KXMVESPORTSMULTIGAMEEXTENDED-S20263A470AB390F-40CD17D13B0", skip: venue.SkipParlay},
	{file: "guzus", ticker: "KXMVESPORTSMULTIGAMEEXTENDED-S202668B6522D873-0DF0229E9FB", skip: venue.SkipParlay},
	// An events page (its recorder removed most fields): a finalized
	// market whose result was removed, so settled without a result the
	// arena can read: closed and ambiguous, for the oracle.
	{file: "No-Stream", ticker: "KXTAIWANLVL4-26JUL01",
		status: arena.StatusClosed, ambiguous: true, yes: 0.001, close: "2026-07-01T03:59:00Z", eventID: "KXTAIWANLVL4", series: "KXTAIWANLVL4",
		volume: 202100, question: "Will the U.S. State Department issue a Level 4 warning for Taiwan before Jul 1, 2026?"},
	{file: "No-Stream", ticker: "POWER-28-DH-DS-DP",
		status: arena.StatusOpen, yes: 0.495, close: "2029-11-07T15:00:00Z", eventID: "POWER-28", series: "POWER", volume: 105980.72, eligible: true,
		question: "Will the Democratic party win the House, the Democratic party win the Senate, and the Democratic party win the Presidency?"},
	{file: "No-Stream", ticker: "KXGREENLANDPRICE-29JAN21-NOACQ",
		status: arena.StatusOpen, yes: 0.825, close: "2029-01-22T04:59:00Z", eventID: "KXGREENLANDPRICE-29JAN21", series: "KXGREENLANDPRICE",
		volume: 735353.56, eligible: true, question: "Will there be no U.S. acquisition of Greenland during Trump's term?"},

	// Written from the documentation (see each file's made_from).
	{file: "testdata/documented/determined", ticker: "KXDOCCPI-26JUN-T0.3", // result known, not final
		status: arena.StatusClosed, yes: 0.97, close: "2026-07-14T12:25:00Z", eventID: "KXDOCCPI-26JUN", series: "KXDOCCPI", volume: 25000,
		question: "CPI in June 2026? — Above 0.3%"},
	{file: "testdata/documented/legacy_cents", ticker: "KXDOCFEDDECISION-26JUN-H0", // integer cents: 39 bid, 41 ask
		status: arena.StatusOpen, yes: 0.40, close: "2026-06-17T17:55:00Z", eventID: "KXDOCFEDDECISION-26JUN", series: "KXDOCFEDDECISION",
		volume: 152340, eligible: true, question: "Fed decision in June 2026? — Hold rate"},
	{file: "testdata/documented/settled_no", ticker: "KXDOCBTCD-26JUL2502-T74299.99",
		status: arena.StatusResolved, resolution: arena.No, yes: 0, close: "2026-07-25T06:00:00Z", resolved: "2026-07-25T06:06:40Z",
		eventID: "KXDOCBTCD-26JUL2502", series: "KXDOCBTCD", volume: 1530, question: "Documentation index level on Jul 25, 2026? — 74,300 or above"},
	{file: "testdata/documented/settled_scalar", ticker: "KXDOCMLBGAME-26AUG102020HOUSD-SD", // a fair price: VOID, its value kept
		status: arena.StatusResolved, resolution: arena.Void, yes: 0.54, close: "2026-08-14T00:20:00Z", resolved: "2026-08-14T01:00:00Z",
		eventID: "KXDOCMLBGAME-26AUG102020HOUSD", series: "KXDOCMLBGAME", volume: 8400, question: "Home vs Away Winner? — Away"},
	{file: "testdata/documented/settled_void", ticker: "KXDOCMLBGAME-26AUG092020HOUSD-SD",
		status: arena.StatusResolved, resolution: arena.Void, yes: none, close: "2026-08-13T00:20:00Z", resolved: "2026-08-13T01:00:00Z",
		eventID: "KXDOCMLBGAME-26AUG092020HOUSD", series: "KXDOCMLBGAME", volume: 10160.15, question: "Home vs Away Winner? — Away"},
	{file: "testdata/documented/settled_yes", ticker: "KXDOCSTARSHIP-26MAY19",
		status: arena.StatusResolved, resolution: arena.Yes, yes: 1, close: "2026-05-18T16:10:00Z", resolved: "2026-05-18T18:02:11Z",
		eventID: "KXDOCSTARSHIP-26", series: "KXDOCSTARSHIP", volume: 48210, question: "Will the documentation example launch happen by May 19, 2026? — Before May 20"},
}

// recordedOther says what the arena does with every payload that holds
// no market: each is checked by the test named, or is an answer of an
// endpoint the arena never calls.
var recordedOther = map[kalshitest.Shape]string{
	kalshitest.ShapeCandles: "TestRecordedCandles",
	kalshitest.ShapeTrades:  "not read: the arena reads no trades (prices come from the book, the last trade price and candles)",
	kalshitest.ShapeSeries:  "not read: a market's category comes from its event, its series from the event or its ticker",
}

func rfc3339(t *testing.T, s string) time.Time { return venuetest.Time(t, s) }

func wantFor(r kalshitest.Recorded) int {
	return slices.IndexFunc(recordedMarkets, func(w recordedWant) bool {
		return strings.HasPrefix(r.File, w.file) && w.ticker == r.Ticker
	})
}

// decodeRecorded decodes a market object as a sync meets it: inside its
// event when it is nested in one.
func decodeRecorded(r kalshitest.Recorded) (*entry, error) {
	var ev *event
	if r.Event != "" {
		ev = &event{EventTicker: r.Event}
	}
	return decode(r.Raw, ev, decodeNow)
}

// Every recorded and documented market object decodes to the stated
// market or is skipped for the stated reason.
func TestRecordedMarkets(t *testing.T) {
	recs, err := kalshitest.Markets(payloads(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != len(recordedMarkets) {
		t.Errorf("%d market objects, %d stated outcomes", len(recs), len(recordedMarkets))
	}
	for _, r := range recs {
		i := wantFor(r)
		if i < 0 {
			t.Errorf("%s: market %s has no stated outcome", r.File, r.Ticker)
			continue
		}
		w := recordedMarkets[i]
		t.Run(r.Ticker, func(t *testing.T) {
			e, err := decodeRecorded(r)
			if w.skip != "" {
				if err == nil || venue.Reason(err) != w.skip {
					t.Fatalf("got %v, want skip %s", err, w.skip)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := e.M
			yes, hasYes := m.Prices[arena.Yes]
			if math.IsNaN(w.yes) != !hasYes || hasYes && math.Abs(yes-w.yes) > 1e-9 || hasYes && math.Abs(m.Prices[arena.No]-(1-w.yes)) > 1e-9 {
				t.Errorf("prices %v, want Yes %v", m.Prices, w.yes)
			}
			got := []any{m.Source, m.SourceID, m.Status, m.Resolution, m.Ambiguous, m.Type, m.CloseTime, m.ResolvedAt, m.EventID, m.EventSlug, m.Volume, e.Eligible, m.Question}
			want := []any{arena.SourceKalshi, w.ticker, w.status, w.resolution, w.ambiguous, arena.Binary, rfc3339(t, w.close), rfc3339(t, w.resolved), w.eventID, w.series, w.volume, w.eligible, w.question}
			names := []string{"source", "id", "status", "resolution", "ambiguous", "type", "close", "resolved", "event", "series", "volume", "eligible", "question"}
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("%s: got %v, want %v", names[i], got[i], want[i])
				}
			}
			if m.Criteria == "" && r.Event == "" && !strings.HasPrefix(r.Ticker, "KXBTCD") {
				t.Errorf("no criteria from rules_primary %q", m.Criteria)
			}
		})
	}
}

// Every payload is of a shape the arena knows: markets (stated above),
// or one of recordedOther. A payload of a new shape fails here until
// someone states what the arena does with it.
func TestRecordedPayloadsAccounted(t *testing.T) {
	for _, p := range payloads(t) {
		shape, err := kalshitest.Classify(p.Body)
		if err != nil {
			t.Errorf("%s: %v", p.File, err)
			continue
		}
		switch shape {
		case kalshitest.ShapeMarkets, kalshitest.ShapeMarket, kalshitest.ShapeEvents:
			recs, err := kalshitest.Markets([]venuetest.Payload{p})
			if err != nil || len(recs) == 0 {
				t.Errorf("%s: %s without markets (%v)", p.File, shape, err)
			}
		default:
			if recordedOther[shape] == "" {
				t.Errorf("%s: %s: nothing says what the arena does with it", p.File, shape)
			}
		}
		if p.Documented != "" && !strings.HasPrefix(p.Documented, "https://docs.kalshi.com/") {
			t.Errorf("%s: written from %s, not Kalshi's documentation", p.File, p.Documented)
		}
	}
}

// The recorded hourly candles of an NBA market: the price at a candle's
// end is the midpoint of its closing Yes bid and ask.
func TestRecordedCandles(t *testing.T) {
	var body struct {
		Ticker       string            `json:"ticker"`
		Candlesticks []json.RawMessage `json:"candlesticks"`
	}
	found := false
	for _, p := range venuetest.Recorded(t, "kalshi") {
		if shape, _ := kalshitest.Classify(p.Body); shape == kalshitest.ShapeCandles {
			if err := json.Unmarshal(p.Body, &body); err != nil {
				t.Fatal(err)
			}
			found = true
		}
	}
	if !found {
		t.Fatal("no recorded candles")
	}
	pts := candlePoints(body.Candlesticks, time.Unix(0, 0), time.Unix(1<<40, 0), decodeNow)
	var got []string
	for _, p := range pts {
		got = append(got, p.Time.Format(time.RFC3339)+" "+string(p.Source)+" "+strconv.FormatFloat(p.Price, 'f', -1, 64))
	}
	want := []string{"2026-06-12T22:00:00Z candle_mid 0.645", "2026-06-12T23:00:00Z candle_mid 0.645", "2026-06-13T00:00:00Z candle_mid 0.645"}
	if !reflect.DeepEqual(got, want) || body.Ticker != "KXNBAGAME-26JUN13NYKSAS-SAS" {
		t.Errorf("%s candles %q, want %q", body.Ticker, got, want)
	}
}
