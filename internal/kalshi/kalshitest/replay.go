package kalshitest

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// Shape is what a Kalshi payload holds, by the endpoint that answers it.
type Shape string

// The shapes of Kalshi's answers.
const (
	ShapeMarkets Shape = "markets"      // GET /markets: {"markets": […], "cursor": …}, or a bare list of market objects
	ShapeMarket  Shape = "market"       // GET /markets/{ticker}: {"market": {…}}
	ShapeEvents  Shape = "events"       // GET /events?with_nested_markets=true: {"events": [{…, "markets": […]}]}
	ShapeCandles Shape = "candlesticks" // GET /series/{s}/markets/{t}/candlesticks: {"ticker": …, "candlesticks": […]}
	ShapeTrades  Shape = "trades"       // GET /markets/trades: {"trades": […]} or a bare list of trades; the arena reads no trades
	ShapeSeries  Shape = "series"       // GET /series/{ticker}: {"series": {…}}; the arena takes categories from events
)

// Classify says which answer a payload is.
func Classify(body json.RawMessage) (Shape, error) {
	if list, ok := venuetest.Objects(body, ""); ok {
		if len(list) > 0 && venuetest.Field(list[0], "trade_id") != nil {
			return ShapeTrades, nil
		}
		return ShapeMarkets, nil
	}
	for _, s := range []Shape{ShapeMarket, ShapeMarkets, ShapeEvents, ShapeCandles, ShapeTrades, ShapeSeries} {
		if venuetest.Field(body, string(s)) != nil {
			return s, nil
		}
	}
	return "", fmt.Errorf("not a Kalshi answer the arena knows: %.80s", body)
}

// Recorded is one market object of a payload.
type Recorded struct {
	File   string
	Event  string          // the event ticker it is nested in; "" for a bare market
	Raw    json.RawMessage // as recorded or written
	Ticker string
	Status string // as recorded, lower case
}

// Open reports whether the market trades as recorded.
func (r Recorded) Open() bool { return r.Status == "active" || r.Status == "open" }

// Markets returns the market objects of the payloads: those of market
// pages, lists and single answers, then those nested in events.
func Markets(ps []venuetest.Payload) ([]Recorded, error) {
	var bare, nested []Recorded
	for _, p := range ps {
		shape, err := Classify(p.Body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.File, err)
		}
		switch shape {
		case ShapeMarkets:
			list, _ := venuetest.Objects(p.Body, "markets")
			for _, m := range list {
				bare = append(bare, recorded(p.File, "", m))
			}
		case ShapeMarket:
			bare = append(bare, recorded(p.File, "", venuetest.Field(p.Body, "market")))
		case ShapeEvents:
			evs, _ := venuetest.Objects(p.Body, "events")
			for _, ev := range evs {
				var e struct {
					Ticker string `json:"event_ticker"`
				}
				_ = json.Unmarshal(ev, &e)
				ms, _ := venuetest.Objects(venuetest.Field(ev, "markets"), "")
				for _, m := range ms {
					nested = append(nested, recorded(p.File, e.Ticker, m))
				}
			}
		}
	}
	return append(bare, nested...), nil
}

func recorded(file, event string, raw json.RawMessage) Recorded {
	var m struct {
		Ticker string `json:"ticker"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(raw, &m)
	return Recorded{File: file, Event: event, Raw: raw, Ticker: m.Ticker, Status: strings.ToLower(strings.TrimSpace(m.Status))}
}

// OpenTwin returns a recorded market as Kalshi listed it while it
// traded: status active, without its result, settlement value and
// settlement time; every other field as recorded. A market recorded
// trading, or not yet open, is returned unchanged.
func OpenTwin(r Recorded) (json.RawMessage, error) {
	if r.Open() || r.Status == "initialized" || r.Status == "unopened" || r.Status == "" {
		return r.Raw, nil
	}
	return venuetest.Edit(r.Raw, map[string]any{"status": "active", "result": "", "settlement_ts": nil,
		"settlement_value": nil, "settlement_value_dollars": nil, "expiration_value": ""})
}

// Replay is a Server that plays payloads back as a live Kalshi would show
// them to two successive syncs:
//
//   - the listing phase (NewReplay): GET /markets lists every bare market
//     object, those recorded closed or settled as their OpenTwin, in
//     payload order; GET /events lists the recorded events, their
//     markets likewise;
//   - the refresh phase (RefreshPhase): the listings hold only the
//     markets recorded trading, so the others drop out and a sync
//     re-reads them with GET /markets/{ticker}.
//
// In both phases GET /markets/{ticker} answers each market as recorded
// (a ticker recorded twice, its first recording), and the candlesticks
// endpoint answers the recorded candles of their ticker.
type Replay struct {
	*Server
	Payloads []venuetest.Payload
	Markets  []Recorded
}

// NewReplay starts a Replay of ps in its listing phase.
func NewReplay(t testing.TB, ps []venuetest.Payload) *Replay {
	t.Helper()
	ms, err := Markets(ps)
	if err != nil {
		t.Fatal(err)
	}
	r := &Replay{Server: New(t), Payloads: ps, Markets: ms}
	single, candles := map[string]json.RawMessage{}, map[string]json.RawMessage{}
	for _, m := range ms {
		if _, dup := single[m.Ticker]; !dup && m.Ticker != "" {
			single[m.Ticker] = m.Raw
		}
	}
	for _, p := range ps {
		if shape, _ := Classify(p.Body); shape == ShapeCandles {
			var c struct {
				Ticker string `json:"ticker"`
			}
			_ = json.Unmarshal(p.Body, &c)
			series, _, _ := strings.Cut(c.Ticker, "-")
			candles[series+"/"+c.Ticker] = p.Body
		}
	}
	markets, events, err := r.listings(true)
	if err != nil {
		t.Fatal(err)
	}
	r.Update(func() { r.Server.Markets, r.Server.Events, r.Single, r.Candles = markets, events, single, candles })
	return r
}

// RefreshPhase switches the listings to the markets recorded trading.
func (r *Replay) RefreshPhase(t testing.TB) {
	t.Helper()
	markets, events, err := r.listings(false)
	if err != nil {
		t.Fatal(err)
	}
	r.Update(func() { r.Server.Markets, r.Server.Events = markets, events })
}

// listings returns the /markets and /events universes: with twins, every
// market (the closed and settled ones as their open twins); without,
// only those recorded trading.
func (r *Replay) listings(twins bool) (markets, events []json.RawMessage, err error) {
	listed := func(m Recorded) (json.RawMessage, bool, error) {
		if !twins && !m.Open() {
			return nil, false, nil
		}
		raw, err := OpenTwin(m)
		return raw, err == nil, err
	}
	for _, m := range r.Markets {
		if m.Event != "" {
			continue
		}
		raw, ok, err := listed(m)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %s: %w", m.File, m.Ticker, err)
		}
		if ok {
			markets = append(markets, raw)
		}
	}
	for _, p := range r.Payloads {
		if shape, _ := Classify(p.Body); shape != ShapeEvents {
			continue
		}
		evs, _ := venuetest.Objects(p.Body, "events")
		for _, ev := range evs {
			var nested []json.RawMessage
			ms, _ := venuetest.Objects(venuetest.Field(ev, "markets"), "")
			for _, raw := range ms {
				rm, ok, err := listed(recorded(p.File, "?", raw))
				if err != nil {
					return nil, nil, fmt.Errorf("%s: %w", p.File, err)
				}
				if ok {
					nested = append(nested, rm)
				}
			}
			if nested == nil {
				nested = []json.RawMessage{}
			}
			e, err := venuetest.Edit(ev, map[string]any{"markets": nested})
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %w", p.File, err)
			}
			events = append(events, e)
		}
	}
	return markets, events, nil
}
