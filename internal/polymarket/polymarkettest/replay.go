package polymarkettest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/shareddata"
)

// The recorded payloads are real Gamma answers that ../shared/data copied
// from public repositories (its README, section polymarket/). They are
// read at test time through internal/shareddata and never copied here.

// NautilusData is the folder of nautilus_trader's Gamma and CLOB objects.
const NautilusData = "nautilus_trader/crates/adapters/polymarket/test_data/"

// Recorded Gamma files by shape, paths under ../shared/data/polymarket:
// market objects (one object or a list of them), and events (a list of
// /events entries, or a search answer {"events": [...]}).
var (
	RecordedMarketFiles = []string{
		"cascadian/biden-market-raw-response.json",
		"guzus-dr-manhattan/polymarket_markets.json",
		NautilusData + "gamma_market.json",
		NautilusData + "gamma_market_closed_binary_accepting_false.json",
		NautilusData + "gamma_market_closed_binary_accepting_true.json",
		NautilusData + "gamma_market_closed_nonbinary_legacy.json",
		NautilusData + "gamma_market_closed_zero_zero_legacy.json",
		NautilusData + "gamma_market_sports_market_map_handicap.json",
		NautilusData + "gamma_market_sports_market_money_line.json",
	}
	RecordedEventFiles = []string{
		NautilusData + "gamma_event.json",
		NautilusData + "search_response.json",
	}
)

// Recorded is one recorded Gamma market object.
type Recorded struct {
	File    string          // path under ../shared/data/polymarket
	EventID string          // id of the recorded event it sits in; "" for a bare market
	Raw     json.RawMessage // as recorded
}

// RecordedEvent is one recorded /events entry, its markets inside.
type RecordedEvent struct {
	File string
	Raw  json.RawMessage
}

// Recordings returns every recorded Gamma market, the bare ones first and
// then those inside events, in file order, and the recorded events. It
// skips the test when ../shared/data/polymarket is absent (fails under
// ARENA_REQUIRE_SHARED_DATA=1).
func Recordings(t testing.TB) ([]Recorded, []RecordedEvent) {
	t.Helper()
	ms, evs, err := load(shareddata.Path(t, "polymarket"))
	if err != nil {
		t.Fatal(err)
	}
	return ms, evs
}

// RecordedSeeds returns the raw recorded markets and events when
// ../shared/data is present, and nothing otherwise: fuzz seeds that are
// welcome but not required.
func RecordedSeeds() [][]byte {
	dir, ok := shareddata.Find()
	if !ok {
		return nil
	}
	ms, evs, err := load(filepath.Join(dir, "polymarket"))
	if err != nil {
		return nil
	}
	var out [][]byte
	for _, m := range ms {
		out = append(out, m.Raw)
	}
	for _, e := range evs {
		out = append(out, e.Raw)
	}
	return out
}

// load reads the recorded Gamma files under dir.
func load(dir string) ([]Recorded, []RecordedEvent, error) {
	var ms []Recorded
	for _, f := range RecordedMarketFiles {
		items, err := readList(dir, f, "")
		if err != nil {
			return nil, nil, err
		}
		for _, raw := range items {
			ms = append(ms, Recorded{File: f, Raw: raw})
		}
	}
	var evs []RecordedEvent
	for _, f := range RecordedEventFiles {
		items, err := readList(dir, f, "events")
		if err != nil {
			return nil, nil, err
		}
		for _, raw := range items {
			var ev struct {
				ID      json.Number       `json:"id"`
				Markets []json.RawMessage `json:"markets"`
			}
			if err := json.Unmarshal(raw, &ev); err != nil {
				return nil, nil, fmt.Errorf("%s: event: %w", f, err)
			}
			evs = append(evs, RecordedEvent{File: f, Raw: raw})
			for _, m := range ev.Markets {
				ms = append(ms, Recorded{File: f, EventID: ev.ID.String(), Raw: m})
			}
		}
	}
	return ms, evs, nil
}

// readList reads a file holding one object, a list of objects, or an
// object whose field key holds the list.
func readList(dir, file, key string) ([]json.RawMessage, error) {
	b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(file)))
	if err != nil {
		return nil, err
	}
	var list []json.RawMessage
	if json.Unmarshal(b, &list) == nil {
		return list, nil
	}
	var one map[string]json.RawMessage
	if err := json.Unmarshal(b, &one); err != nil {
		return nil, fmt.Errorf("%s: neither an object nor a list: %w", file, err)
	}
	if inner, ok := one[key]; ok && key != "" {
		if err := json.Unmarshal(inner, &list); err != nil {
			return nil, fmt.Errorf("%s: %s: %w", file, key, err)
		}
		return list, nil
	}
	return []json.RawMessage{b}, nil
}

// quote is what a recording says of a market's trading: whether it is
// closed, its CLOB token ids, and Gamma's quote of the first outcome
// (last trade, best bid and best ask; NaN when absent).
type quote struct {
	ID                     string
	Closed                 bool
	Outcomes, Tokens       []string
	VolumeNum              float64
	Last, BestBid, BestAsk float64
}

// quoteOf reads the trading facts of a recorded market object.
func quoteOf(raw json.RawMessage) (quote, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return quote{}, err
	}
	q := quote{
		ID:        strings.Trim(string(m["id"]), `"`),
		Closed:    string(m["closed"]) == "true",
		Outcomes:  stringList(m["outcomes"]),
		Tokens:    stringList(m["clobTokenIds"]),
		VolumeNum: number(m["volumeNum"]),
		Last:      number(m["lastTradePrice"]),
		BestBid:   number(m["bestBid"]),
		BestAsk:   number(m["bestAsk"]),
	}
	if math.IsNaN(q.VolumeNum) {
		q.VolumeNum = 0
	}
	return q, nil
}

// stringList reads a list field as Gamma writes it: a JSON array inside a
// string, or a plain array.
func stringList(raw json.RawMessage) []string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var out []string
	_ = json.Unmarshal(raw, &out)
	return out
}

// number reads a JSON number or numeric string; NaN when absent or not one.
func number(raw json.RawMessage) float64 {
	v, err := strconv.ParseFloat(strings.Trim(string(raw), `"`), 64)
	if err != nil {
		return math.NaN()
	}
	return v
}

// price formats a price the way Gamma and the CLOB do, after rounding away
// the float noise of 1 − p and (bid + ask) / 2.
func price(p float64) string {
	return strconv.FormatFloat(math.Round(p*1e12)/1e12, 'f', -1, 64)
}

// mid is the midpoint of the first outcome's best bid and ask; ok is false
// when either is absent or they cross.
func (q quote) mid() (float64, bool) {
	if math.IsNaN(q.BestBid) || math.IsNaN(q.BestAsk) || q.BestBid > q.BestAsk {
		return 0, false
	}
	return (q.BestBid + q.BestAsk) / 2, true
}

// preClosePrice is the first outcome's price when the recorded market last
// traded: its last trade price, or, when that is 0, 1 or absent, its mid.
// ok is false when neither is known.
func (q quote) preClosePrice() (float64, bool) {
	if q.Last > 0 && q.Last < 1 {
		return q.Last, true
	}
	return q.mid()
}

// OpenTwin returns a recorded closed market as it was listed while open:
// closed false, active and accepting orders, without closedTime,
// umaEndDate and UMA statuses, and with outcomePrices [p, 1 − p] for p its
// preClosePrice (a market with other than two outcomes, or without a
// pre-close price, keeps its recorded prices). Every other field is kept
// as recorded. A market recorded open is returned unchanged.
func OpenTwin(raw json.RawMessage) (json.RawMessage, error) {
	q, err := quoteOf(raw)
	if err != nil || !q.Closed {
		return raw, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, err
	}
	m["closed"], m["active"], m["acceptingOrders"] = json.RawMessage("false"), json.RawMessage("true"), json.RawMessage("true")
	m["umaResolutionStatuses"] = json.RawMessage(`"[]"`)
	for _, k := range []string{"closedTime", "umaEndDate", "umaResolutionStatus"} {
		delete(m, k)
	}
	if p, ok := q.preClosePrice(); ok && len(q.Outcomes) == 2 {
		enc, _ := json.Marshal(fmt.Sprintf(`["%s", "%s"]`, price(p), price(1-p)))
		m["outcomePrices"] = enc
	}
	return json.Marshal(m)
}

// Replay is a Server that plays the recordings back as a live Gamma would
// show them to two successive syncs:
//
//   - the listing phase (NewReplay): /markets lists every recorded market,
//     the closed ones as their OpenTwin, the event markets too, by
//     volumeNum as Gamma orders it; /events lists the recorded events.
//   - the refresh phase (RefreshPhase): the listings hold only the markets
//     recorded open, so the others drop out and a sync re-reads them with
//     GET /markets/{id}.
//
// In both phases GET /markets/{id} answers the recording as it is (for an
// id recorded twice, the first recording), and the CLOB serves a midpoint
// for each token of a market recorded open: for the first outcome the
// midpoint of the best bid and ask Gamma recorded, for the second its
// complement (Polymarket's two books of a market mirror each other).
type Replay struct {
	*Server
	Recorded []Recorded
	Events   []RecordedEvent
}

// NewReplay starts a Replay in its listing phase; it skips the test when
// the recordings are absent.
func NewReplay(t testing.TB) *Replay {
	t.Helper()
	ms, evs := Recordings(t)
	r := &Replay{Server: New(t), Recorded: ms, Events: evs}
	single := map[string]json.RawMessage{}
	mids := map[string]string{}
	for _, m := range ms {
		q, err := quoteOf(m.Raw)
		if err != nil {
			t.Fatalf("%s: %v", m.File, err)
		}
		if _, dup := single[q.ID]; !dup {
			single[q.ID] = m.Raw
		}
		if p, ok := q.mid(); ok && !q.Closed && len(q.Tokens) == 2 {
			mids[q.Tokens[0]], mids[q.Tokens[1]] = price(p), price(1-p)
		}
	}
	markets, err := r.listing(true)
	if err != nil {
		t.Fatal(err)
	}
	r.Update(func(s *Server) {
		s.Markets, s.Events, s.Single, s.Mids = markets, r.eventList(), single, mids
	})
	return r
}

// RefreshPhase switches the listings to the markets recorded open.
func (r *Replay) RefreshPhase(t testing.TB) {
	t.Helper()
	markets, err := r.listing(false)
	if err != nil {
		t.Fatal(err)
	}
	r.Update(func(s *Server) { s.Markets = markets })
}

// listing returns the /markets universe by volumeNum, highest first: with
// twins, every recording (closed ones as their OpenTwin); without, only
// the markets recorded open.
func (r *Replay) listing(twins bool) ([]json.RawMessage, error) {
	type entry struct {
		raw json.RawMessage
		vol float64
	}
	var es []entry
	for _, m := range r.Recorded {
		q, err := quoteOf(m.Raw)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.File, err)
		}
		raw := m.Raw
		switch {
		case q.Closed && !twins:
			continue
		case q.Closed:
			if raw, err = OpenTwin(m.Raw); err != nil {
				return nil, fmt.Errorf("%s: open twin: %w", m.File, err)
			}
		}
		es = append(es, entry{raw, q.VolumeNum})
	}
	sort.SliceStable(es, func(i, j int) bool { return es[i].vol > es[j].vol })
	out := make([]json.RawMessage, len(es))
	for i, e := range es {
		out[i] = e.raw
	}
	return out, nil
}

// eventList returns the recorded events by volume, highest first, as
// /events orders them.
func (r *Replay) eventList() []json.RawMessage {
	evs := make([]RecordedEvent, len(r.Events))
	copy(evs, r.Events)
	vol := func(e RecordedEvent) float64 {
		var v struct {
			Volume json.RawMessage `json:"volume"`
		}
		_ = json.Unmarshal(e.Raw, &v)
		if n := number(v.Volume); !math.IsNaN(n) {
			return n
		}
		return 0
	}
	sort.SliceStable(evs, func(i, j int) bool { return vol(evs[i]) > vol(evs[j]) })
	out := make([]json.RawMessage, len(evs))
	for i, e := range evs {
		out[i] = e.Raw
	}
	return out
}
