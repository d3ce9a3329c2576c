package kalshi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/kalshi/kalshitest"
	"github.com/forecast-arena/arena/internal/venue"
	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// seeds are the recorded and documented payloads, whole and each market
// object of them: the fuzzers start from what Kalshi sends.
func seeds() [][]byte {
	bodies := append(venuetest.RecordedSeeds(Venue), kalshitest.DocumentedSeeds()...)
	var ps []venuetest.Payload
	for _, b := range bodies {
		ps = append(ps, venuetest.Payload{Body: b})
	}
	ms, _ := kalshitest.Markets(ps)
	for _, m := range ms {
		bodies = append(bodies, m.Raw)
	}
	return append(bodies, []byte(`{"ticker":"KXA-1","status":"finalized","result":"scalar","settlement_value":55,"title":"t","volume":1}`),
		[]byte(`{"ticker":"KXA-1","status":"active","title":"t","yes_bid_dollars":"1e400"}`))
}

// checkMarket fails unless m is a market the store takes: valid, binary,
// of Kalshi, priced in [0,1] with Yes points only.
func checkMarket(t *testing.T, m *arena.Market) {
	t.Helper()
	if err := m.Validate(); err != nil || m.Source != Venue || m.Type != arena.Binary {
		t.Fatalf("invalid market %+v: %v", m, err)
	}
	if _, ok := venue.ID(m.SourceID); !ok {
		t.Fatalf("id %q", m.SourceID)
	}
	for _, p := range m.History {
		if p.Outcome != arena.Yes || !(p.Price >= 0 && p.Price <= 1) || p.Source == "" {
			t.Fatalf("price point %+v", p)
		}
	}
}

// Any bytes as a market object: a valid market or a typed skip, never a
// panic.
func FuzzDecode(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := decode(raw, &event{EventTicker: "KXE-1", SeriesTicker: "KXE"}, time.Unix(1.8e9, 0))
		if err != nil {
			if _, ok := err.(*venue.SkipError); !ok {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		checkMarket(t, e.M)
	})
}

// Any bytes as an events page entry: its markets decode or skip.
func FuzzEvent(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		ev, err := decodeEvent(raw)
		if err != nil {
			return
		}
		for _, m := range ev.Markets {
			if e, err := decode(m, ev, time.Unix(1.8e9, 0)); err == nil {
				checkMarket(t, e.M)
			}
		}
	})
}

// Any bytes as a candlesticks answer: points in range, in order, never a
// panic.
func FuzzCandles(f *testing.F) {
	for _, s := range seeds() {
		f.Add(s)
	}
	start, end := time.Unix(1781300000, 0), time.Unix(1781310000, 0)
	f.Fuzz(func(t *testing.T, raw []byte) {
		var body struct {
			Candlesticks []json.RawMessage `json:"candlesticks"`
		}
		if json.Unmarshal(raw, &body) != nil {
			return
		}
		pts := candlePoints(body.Candlesticks, start, end, end)
		for i, p := range pts {
			if p.Time.Before(start) || p.Time.After(end) || !(p.Price > 0 && p.Price < 1) || i > 0 && p.Time.Before(pts[i-1].Time) {
				t.Fatalf("point %+v", p)
			}
		}
	})
}
