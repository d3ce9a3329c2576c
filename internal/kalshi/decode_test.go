package kalshi

import (
	"math"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/venue"
	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// obj is a trading market object with the fields set replaced (a nil
// value removes a field).
func obj(t *testing.T, set map[string]any) []byte {
	t.Helper()
	return venuetest.Object(t, map[string]any{
		"ticker": "KXTEST-26JAN01-A", "event_ticker": "KXTEST-26JAN01", "market_type": "binary",
		"title": "Will it?", "yes_sub_title": "", "rules_primary": "If it does, Yes.", "status": "active", "result": "",
		"open_time": "2026-01-01T00:00:00Z", "close_time": "2026-02-01T00:00:00Z",
		"yes_bid_dollars": "0.4000", "yes_ask_dollars": "0.4400", "last_price_dollars": "0.4200", "volume_fp": "100.00",
	}, set)
}

// The decoder's rules, one case each.
func TestDecodeRules(t *testing.T) {
	for _, c := range []struct {
		name     string
		set      map[string]any
		raw      string // instead of set
		skip     venue.SkipReason
		status   arena.MarketStatus
		res      string
		amb      bool
		yes      float64 // NaN: no price
		eligible bool
		check    func(t *testing.T, m *arena.Market)
	}{
		{name: "a trading market is priced at its book's midpoint", status: arena.StatusOpen, yes: 0.42, eligible: true},
		{name: "legacy cents", set: map[string]any{"yes_bid_dollars": nil, "yes_ask_dollars": nil, "last_price_dollars": nil, "volume_fp": nil,
			"yes_bid": 30, "yes_ask": 34, "last_price": 33, "volume": 7, "liquidity": 12345}, status: arena.StatusOpen, yes: 0.32, eligible: true,
			check: func(t *testing.T, m *arena.Market) {
				if m.Volume != 7 || m.Liquidity != 123.45 {
					t.Errorf("volume %v liquidity %v", m.Volume, m.Liquidity)
				}
			}},
		{name: "dollar strings win over cents", set: map[string]any{"yes_bid": 10, "yes_ask": 12}, status: arena.StatusOpen, yes: 0.42, eligible: true},
		{name: "an empty book falls back to the last trade", set: map[string]any{"yes_bid_dollars": "0.0000", "yes_ask_dollars": "1.0000"},
			status: arena.StatusOpen, yes: 0.42, eligible: true},
		{name: "a one-sided book and no trade: no price", set: map[string]any{"yes_bid_dollars": "0.0000", "yes_ask_dollars": "0.0100", "last_price_dollars": "0.0000"},
			status: arena.StatusOpen, yes: math.NaN(), eligible: true},
		{name: "a crossed book is no midpoint", set: map[string]any{"yes_bid_dollars": "0.6000", "yes_ask_dollars": "0.5000"},
			status: arena.StatusOpen, yes: 0.42, eligible: true},
		{name: "never traded: not listed", set: map[string]any{"volume_fp": "0.00"}, status: arena.StatusOpen, yes: 0.42},
		{name: "paused: open, not listed", set: map[string]any{"status": "inactive"}, status: arena.StatusOpen, yes: 0.42},
		{name: "closed", set: map[string]any{"status": "closed"}, status: arena.StatusClosed, yes: 0.42},
		{name: "disputed: not final", set: map[string]any{"status": "disputed", "result": "yes"}, status: arena.StatusClosed, yes: 0.42},
		{name: "finalized yes", set: map[string]any{"status": "finalized", "result": "yes", "settlement_ts": "2026-02-02T00:00:00Z"},
			status: arena.StatusResolved, res: arena.Yes, yes: 1, check: func(t *testing.T, m *arena.Market) {
				if m.ResolvedAt != rfc3339(t, "2026-02-02T00:00:00Z") || len(m.History) != 1 || m.History[0].Source != arena.PriceSettlement {
					t.Errorf("resolved at %v, history %+v", m.ResolvedAt, m.History)
				}
			}},
		{name: "finalized no, stamped at the expected expiration without a settlement time",
			set:    map[string]any{"status": "finalized", "result": "NO", "expected_expiration_time": "2026-02-03T00:00:00Z"},
			status: arena.StatusResolved, res: arena.No, yes: 0, check: func(t *testing.T, m *arena.Market) {
				if m.ResolvedAt != rfc3339(t, "2026-02-03T00:00:00Z") {
					t.Errorf("resolved at %v", m.ResolvedAt)
				}
			}},
		{name: "finalized void", set: map[string]any{"status": "finalized", "result": "void"}, status: arena.StatusResolved, res: arena.Void, yes: math.NaN()},
		{name: "scalar at a fraction: void, priced at its value", set: map[string]any{"status": "finalized", "result": "scalar", "settlement_value_dollars": "0.3100"},
			status: arena.StatusResolved, res: arena.Void, yes: 0.31},
		{name: "scalar at 1: yes", set: map[string]any{"status": "finalized", "result": "scalar", "settlement_value": 100}, status: arena.StatusResolved, res: arena.Yes, yes: 1},
		{name: "scalar without a value: ambiguous", set: map[string]any{"status": "finalized", "result": "scalar"}, status: arena.StatusClosed, amb: true, yes: 0.42},
		{name: "finalized without a result: ambiguous", set: map[string]any{"status": "finalized"}, status: arena.StatusClosed, amb: true, yes: 0.42},
		{name: "unopened", set: map[string]any{"status": "initialized"}, skip: venue.SkipUnopened},
		{name: "unknown status", set: map[string]any{"status": "frozen"}, skip: venue.SkipUnknownStatus},
		{name: "no status", set: map[string]any{"status": nil}, skip: venue.SkipUnknownStatus},
		{name: "parlay by ticker", set: map[string]any{"ticker": "KXMVECROSSCATEGORY-S1-A"}, skip: venue.SkipParlay},
		{name: "parlay by event", set: map[string]any{"event_ticker": "KXMVESPORTS-S1"}, skip: venue.SkipParlay},
		{name: "parlay by collection", set: map[string]any{"mve_collection_ticker": "KXCOMBO-R"}, skip: venue.SkipParlay},
		{name: "parlay by legs", set: map[string]any{"mve_selected_legs": []any{map[string]any{"market_ticker": "A"}}}, skip: venue.SkipParlay},
		{name: "scalar market type", set: map[string]any{"market_type": "scalar"}, skip: venue.SkipNotBinary},
		{name: "no ticker", set: map[string]any{"ticker": ""}, skip: venue.SkipMissingID},
		{name: "a ticker with a slash", set: map[string]any{"ticker": "KX/../A"}, skip: venue.SkipMissingID},
		{name: "no title", set: map[string]any{"title": "  "}, skip: venue.SkipMissingQuestion},
		{name: "a title of control characters only", set: map[string]any{"title": "\u0000\u202e"}, skip: venue.SkipMissingQuestion},
		{name: "a price above 1", set: map[string]any{"yes_ask_dollars": "1.5000"}, skip: venue.SkipBadPrice},
		{name: "a negative price", set: map[string]any{"last_price": -3, "last_price_dollars": nil}, skip: venue.SkipBadPrice},
		{name: "a price that is not a number", set: map[string]any{"yes_bid_dollars": "cheap"}, skip: venue.SkipBadField},
		{name: "NaN", set: map[string]any{"yes_bid_dollars": "NaN"}, skip: venue.SkipBadField},
		{name: "an unreadable close time", set: map[string]any{"close_time": "soon"}, skip: venue.SkipBadDate},
		{name: "negative volume", set: map[string]any{"volume_fp": "-1"}, skip: venue.SkipBadField},
		{name: "a title of the wrong type", set: map[string]any{"title": 7}, skip: venue.SkipBadField},
		{name: "not an object", raw: `["KXTEST"]`, skip: venue.SkipInvalidJSON},
		{name: "the Yes side's name completes a shared title", set: map[string]any{"title": "Who wins?", "yes_sub_title": "Lyon"},
			status: arena.StatusOpen, yes: 0.42, eligible: true, check: func(t *testing.T, m *arena.Market) {
				if m.Question != "Who wins? — Lyon" {
					t.Errorf("question %q", m.Question)
				}
			}},
		{name: "stray control characters are dropped, not fatal", set: map[string]any{"title": "Will\u0000 it\r\n rain?\u202e", "rules_primary": "A\u0007B"},
			status: arena.StatusOpen, yes: 0.42, eligible: true, check: func(t *testing.T, m *arena.Market) {
				if m.Question != "Will it\n rain?" || !strings.HasPrefix(m.Criteria, "AB") {
					t.Errorf("question %q criteria %q", m.Question, m.Criteria)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte(c.raw)
			if c.raw == "" {
				raw = obj(t, c.set)
			}
			e, err := decode(raw, nil, decodeNow)
			var m *arena.Market
			if err == nil {
				m = e.M
			}
			if m = (venuetest.Want{Skip: c.skip, Status: c.status, Resolution: c.res, Ambiguous: c.amb, Yes: c.yes}).Check(t, m, err); m == nil {
				return
			}
			if e.Eligible != c.eligible {
				t.Errorf("eligible %v", e.Eligible)
			}
			if c.check != nil {
				c.check(t, m)
			}
		})
	}
}

// A market nested in an event takes the event's ticker, category and
// series.
func TestDecodeNested(t *testing.T) {
	e, err := decode(obj(t, map[string]any{"event_ticker": nil, "category": "old"}), &event{EventTicker: "KXTEST-26JAN01", SeriesTicker: "KXSERIES", Category: "Climate"}, decodeNow)
	if err != nil {
		t.Fatal(err)
	}
	if m := e.M; m.EventID != "KXTEST-26JAN01" || m.EventSlug != "KXSERIES" || m.Category != "Climate" {
		t.Errorf("event %q series %q category %q", m.EventID, m.EventSlug, m.Category)
	}
}
