package manifold

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/manifold/manifoldtest"
	"github.com/forecast-arena/arena/internal/venue"
	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// obj is an open binary LiteMarket with the fields set replaced (a nil
// value removes a field).
func obj(t testing.TB, set map[string]any) []byte {
	t.Helper()
	return venuetest.Object(t, map[string]any{
		"id": "AbCdEf1234", "question": "Will it?", "slug": "will-it", "url": "https://manifold.markets/u/will-it",
		"outcomeType": "BINARY", "mechanism": "cpmm-1", "probability": 0.3, "createdTime": 1777000000000,
		"closeTime": 1778000000000, "isResolved": false, "volume": 12, "totalLiquidity": 100,
	}, set)
}

// The decoder's rules, one case each.
func TestDecodeRules(t *testing.T) {
	now := time.UnixMilli(1777500000000).UTC()
	for _, c := range []struct {
		name     string
		set      map[string]any
		raw      string
		skip     venue.SkipReason
		status   arena.MarketStatus
		res      string
		amb      bool
		yes      float64
		eligible bool
		check    func(t *testing.T, m *arena.Market)
	}{
		{name: "open and traded", status: arena.StatusOpen, yes: 0.3, eligible: true},
		{name: "never traded", set: map[string]any{"volume": 0}, status: arena.StatusOpen, yes: 0.3},
		{name: "past its close: closed", set: map[string]any{"closeTime": 1777400000000}, status: arena.StatusClosed, yes: 0.3},
		{name: "no close time: open", set: map[string]any{"closeTime": nil}, status: arena.StatusOpen, yes: 0.3, eligible: true},
		{name: "YES", set: map[string]any{"isResolved": true, "resolution": "YES", "resolutionTime": 1777400000000}, status: arena.StatusResolved, res: arena.Yes, yes: 1,
			check: func(t *testing.T, m *arena.Market) {
				if !m.ResolvedAt.Equal(time.UnixMilli(1777400000000)) || m.History[0].Source != arena.PriceSettlement {
					t.Errorf("resolved at %v history %+v", m.ResolvedAt, m.History)
				}
			}},
		{name: "NO, stamped at the close without a resolution time", set: map[string]any{"isResolved": true, "resolution": "NO"}, status: arena.StatusResolved, res: arena.No, yes: 0,
			check: func(t *testing.T, m *arena.Market) {
				if !m.ResolvedAt.Equal(time.UnixMilli(1778000000000)) {
					t.Errorf("resolved at %v", m.ResolvedAt)
				}
			}},
		{name: "MKT at a probability: void, priced at it", set: map[string]any{"isResolved": true, "resolution": "MKT", "resolutionProbability": 0.42},
			status: arena.StatusResolved, res: arena.Void, yes: 0.42},
		{name: "MKT at 1: yes", set: map[string]any{"isResolved": true, "resolution": "MKT", "resolutionProbability": 1}, status: arena.StatusResolved, res: arena.Yes, yes: 1},
		{name: "MKT without its probability: ambiguous", set: map[string]any{"isResolved": true, "resolution": "MKT"}, status: arena.StatusClosed, amb: true, yes: 0.3},
		{name: "CANCEL: void", set: map[string]any{"isResolved": true, "resolution": "CANCEL"}, status: arena.StatusResolved, res: arena.Void, yes: math.NaN()},
		{name: "an unknown resolution: ambiguous", set: map[string]any{"isResolved": true, "resolution": "HALF"}, status: arena.StatusClosed, amb: true, yes: 0.3},
		{name: "no probability: no price", set: map[string]any{"probability": nil}, status: arena.StatusOpen, yes: math.NaN(), eligible: true},
		{name: "a multiple-choice market", set: map[string]any{"outcomeType": "MULTIPLE_CHOICE"}, skip: venue.SkipNotBinary},
		{name: "a pseudo-numeric market", set: map[string]any{"outcomeType": "PSEUDO_NUMERIC"}, skip: venue.SkipNotBinary},
		{name: "lower-case binary is not Manifold's", set: map[string]any{"outcomeType": "binary"}, skip: venue.SkipNotBinary},
		{name: "no id", set: map[string]any{"id": nil}, skip: venue.SkipMissingID},
		{name: "no question", set: map[string]any{"question": ""}, skip: venue.SkipMissingQuestion},
		{name: "a probability above 1", set: map[string]any{"probability": 1.2}, skip: venue.SkipBadPrice},
		{name: "a resolution probability below 0", set: map[string]any{"resolutionProbability": -0.1}, skip: venue.SkipBadPrice},
		{name: "a time in seconds before 1970", set: map[string]any{"closeTime": -5}, skip: venue.SkipBadDate},
		{name: "a time past the year 9999", set: map[string]any{"closeTime": 1e18}, skip: venue.SkipBadDate},
		{name: "a probability that is a word", set: map[string]any{"probability": "likely"}, skip: venue.SkipBadField},
		{name: "isResolved as a string", set: map[string]any{"isResolved": "yes"}, skip: venue.SkipBadField},
		{name: "negative volume", set: map[string]any{"volume": -1}, skip: venue.SkipBadField},
		{name: "not an object", raw: `"AbCdEf1234"`, skip: venue.SkipInvalidJSON},
		{name: "a url elsewhere is dropped", set: map[string]any{"url": "javascript:alert(1)"}, status: arena.StatusOpen, yes: 0.3, eligible: true,
			check: func(t *testing.T, m *arena.Market) {
				if m.URL != "" {
					t.Errorf("url %q", m.URL)
				}
			}},
		{name: "a sibling makes one event of a mana and a cash market", set: map[string]any{"siblingContractId": "AAAA000000", "groupSlugs": []string{" ", "sports"}},
			status: arena.StatusOpen, yes: 0.3, eligible: true, check: func(t *testing.T, m *arena.Market) {
				if m.EventID != "AAAA000000" || m.Category != "sports" {
					t.Errorf("event %q category %q", m.EventID, m.Category)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte(c.raw)
			if c.raw == "" {
				raw = obj(t, c.set)
			}
			e, err := decode(raw, now)
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

// Any bytes as a market object: a valid market or a typed skip, never a
// panic.
func FuzzDecode(f *testing.F) {
	bodies := append(venuetest.RecordedSeeds(Venue), manifoldtest.DocumentedSeeds()...)
	var ps []venuetest.Payload
	for _, b := range bodies {
		ps = append(ps, venuetest.Payload{Body: b})
	}
	ms, _ := manifoldtest.Markets(ps)
	for i, m := range ms {
		if i%50 == 0 || m.Resolved { // 1,389 recorded markets: a sample of each shape
			f.Add([]byte(m.Raw))
		}
	}
	f.Add(obj(f, map[string]any{"isResolved": true, "resolution": "MKT", "resolutionProbability": "0.5"}))
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := decode(raw, time.UnixMilli(1777500000000))
		if err != nil {
			if _, ok := err.(*venue.SkipError); !ok {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		m := e.M
		if err := m.Validate(); err != nil || m.Source != Venue || m.Type != arena.Binary {
			t.Fatalf("invalid market %+v: %v", m, err)
		}
		for _, p := range m.History {
			if !(p.Price >= 0 && p.Price <= 1) {
				t.Fatalf("price point %+v", p)
			}
		}
	})
}

// Any bytes as bets: a probability or none, never a panic.
func FuzzBets(f *testing.F) {
	for _, b := range manifoldtest.DocumentedSeeds() {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		var raws []json.RawMessage
		if json.Unmarshal(raw, &raws) != nil {
			return
		}
		if p, ok := lastPrice(raws, time.UnixMilli(1777700000000)); ok && !(p >= 0 && p <= 1) {
			t.Fatalf("price %v", p)
		}
	})
}
