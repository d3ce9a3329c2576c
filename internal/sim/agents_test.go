package sim

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

func newTestRNG(s uint64) *rand.Rand { return rand.New(rand.NewPCG(s, s)) }

func TestForecastDeterministicAndOrderFree(t *testing.T) {
	w := NewWorld(Config{Seed: 21, Markets: 30})
	specs := w.Markets()
	type key struct {
		a, id string
		t     time.Time
	}
	first := map[key]float64{}
	for _, s := range specs {
		at := s.Open.Add(26 * time.Hour)
		for _, a := range Agents() {
			f, err := w.Forecast(a, s.SourceID, at)
			if err != nil {
				t.Fatal(err)
			}
			first[key{a, s.SourceID, at}] = f
		}
	}
	// Reverse order, fresh world: same numbers.
	w2 := NewWorld(Config{Seed: 21, Markets: 30})
	for i := len(specs) - 1; i >= 0; i-- {
		s := specs[i]
		at := s.Open.Add(26 * time.Hour)
		for _, a := range Agents() {
			f, _ := w2.Forecast(a, s.SourceID, at)
			if f != first[key{a, s.SourceID, at}] {
				t.Fatalf("%s on %s: %v then %v", a, s.SourceID, first[key{a, s.SourceID, at}], f)
			}
		}
	}
	s := specs[0]
	f1, _ := w.Forecast(AgentRandom, s.SourceID, s.Open.Add(time.Hour))
	f2, _ := w.Forecast(AgentRandom, s.SourceID, s.Open.Add(2*time.Hour))
	if f1 == f2 {
		t.Fatal("random agent repeats itself at different times")
	}
}

func TestAgentDefinitions(t *testing.T) {
	w := NewWorld(Config{Seed: 2, Markets: 40})
	for _, s := range w.Markets() {
		at := s.Open.Add(50 * time.Hour)
		price, _ := w.PriceAt(s.SourceID, at)
		stale, _ := w.PriceAt(s.SourceID, at.Add(-24*time.Hour))
		for _, tc := range []struct {
			agent string
			check func(f float64) bool
		}{
			{AgentMarket, func(f float64) bool { return f == price }},
			{AgentStale, func(f float64) bool { return f == stale }},
			{AgentOverconfident, func(f float64) bool {
				// Pushed away from 0.5 on the same side, or already at the clip.
				return (price-0.5)*(f-price) >= 0 && f >= 0.01 && f <= 0.99
			}},
			{"informed-0", func(f float64) bool { return f == clipPrice(w.TrueProb(s.SourceID, at)) }},
			{AgentRandom, func(f float64) bool { return f >= 0 && f < 1 }},
		} {
			f, err := w.Forecast(tc.agent, s.SourceID, at)
			if err != nil || !tc.check(f) {
				t.Fatalf("%s on %s: %v %v (price %v, stale %v)", tc.agent, s.SourceID, f, err, price, stale)
			}
		}
		// Stale clamps to the open price during the first day.
		open, _ := w.PriceAt(s.SourceID, s.Open)
		if f, _ := w.Forecast(AgentStale, s.SourceID, s.Open.Add(3*time.Hour)); f != open {
			t.Fatalf("stale on day one %v, want open price %v", f, open)
		}
	}
}

func TestForecastErrors(t *testing.T) {
	w := NewWorld(Config{Seed: 2, Markets: 5})
	s := w.Markets()[0]
	for _, tc := range []struct {
		agent, id string
		at        time.Time
		kind      string
	}{
		{"oracle", s.SourceID, s.Open, arena.EINVALID},
		{"informed-x", s.SourceID, s.Open, arena.EINVALID},
		{"informed-2", s.SourceID, s.Open, arena.EINVALID},
		{"informed--0.1", s.SourceID, s.Open, arena.EINVALID},
		{AgentMarket, "s2-m999", s.Open, arena.ENOTFOUND},
		{AgentMarket, s.SourceID, s.Open.Add(-time.Second), arena.EINVALID},
		{AgentMarket, s.SourceID, s.Close, arena.EINVALID},
	} {
		_, err := w.Forecast(tc.agent, tc.id, tc.at)
		if err == nil || arena.ErrorKind(err) != tc.kind {
			t.Errorf("Forecast(%q, %q, %s) = %v, want kind %s", tc.agent, tc.id, tc.at, err, tc.kind)
		}
		if _, err := w.TradeIntent(tc.agent, tc.id, tc.at); err == nil {
			t.Errorf("TradeIntent(%q, %q) succeeded", tc.agent, tc.id)
		}
	}
	if _, err := ParseAgent("informed-0.33"); err != nil {
		t.Errorf("arbitrary σ rejected: %v", err)
	}
}

func TestBPS(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		want uint16
	}{{0, 0}, {1, 10000}, {0.5, 5000}, {0.12345, 1235}, {0.99994, 9999}, {0.99995, 10000}, {-0.2, 0}, {1.7, 10000}} {
		if got := BPS(tc.p); got != tc.want {
			t.Errorf("BPS(%v) = %d, want %d", tc.p, got, tc.want)
		}
	}
	defer func() {
		if recover() == nil {
			t.Error("BPS(NaN) did not panic")
		}
	}()
	BPS(nan())
}

func nan() float64 { var z float64; return z / z }

func TestForecastBPSMatchesForecast(t *testing.T) {
	w := NewWorld(Config{Seed: 8, Markets: 10})
	for _, s := range w.Markets() {
		at := s.Open.Add(7 * time.Hour)
		f, _ := w.Forecast("informed-0.05", s.SourceID, at)
		b, err := w.ForecastBPS("informed-0.05", s.SourceID, at)
		if err != nil || b != BPS(f) {
			t.Fatalf("ForecastBPS %d %v, BPS(Forecast) %d", b, err, BPS(f))
		}
	}
}

func TestMakeIntent(t *testing.T) {
	for _, tc := range []struct {
		p, price    float64
		side        string
		edge, kelly float64
	}{
		{0.6, 0.5, arena.Yes, 0.2, 0.2},
		{0.2, 0.4, arena.No, 1.0 / 3, 0.5},
		{0.5, 0.5, "", 0, 0},
		{0.9, 0.8, arena.Yes, 0.125, 0.5},
	} {
		in := MakeIntent(tc.p, tc.price)
		if in.Side != tc.side || !near(in.Edge, tc.edge) || !near(in.Kelly, tc.kelly) {
			t.Errorf("MakeIntent(%v, %v) = %+v, want side %q edge %v kelly %v", tc.p, tc.price, in, tc.side, tc.edge, tc.kelly)
		}
	}
	w := NewWorld(Config{Seed: 8, Markets: 10})
	s := w.Markets()[3]
	at := s.Open.Add(30 * time.Hour)
	in, err := w.TradeIntent("informed-0.02", s.SourceID, at)
	f, _ := w.Forecast("informed-0.02", s.SourceID, at)
	p, _ := w.PriceAt(s.SourceID, at)
	if err != nil || in.Prob != f || in.Price != p {
		t.Fatalf("TradeIntent %+v %v, forecast %v price %v", in, err, f, p)
	}
}

func near(a, b float64) bool { return a-b < 1e-12 && b-a < 1e-12 }

// FuzzParseAgent: agent names come from flags and config files. Any name
// either fails cleanly or gives an agent whose forecasts are probabilities.
func FuzzParseAgent(f *testing.F) {
	for _, s := range append(Agents(), "informed-0", "informed-1", "informed-1e-3", "informed-NaN", "informed-+Inf", "informed-", "", "market ") {
		f.Add(s, 0.3, 0.6, 0.5)
	}
	f.Fuzz(func(t *testing.T, name string, q, price, stale float64) {
		a, err := ParseAgent(name)
		if err != nil {
			if arena.ErrorKind(err) != arena.EINVALID {
				t.Fatalf("ParseAgent(%q): %v", name, err)
			}
			return
		}
		if a.Name != name {
			t.Fatalf("ParseAgent(%q).Name = %q", name, a.Name)
		}
		clamp := func(v float64) float64 {
			if v != v {
				return 0.5
			}
			return clipPrice(v)
		}
		o := Obs{Q: clamp(q), Price: clamp(price), Stale: clamp(stale)}
		p := a.Forecast(o, newTestRNG(1))
		if !(p >= 0 && p <= 1) {
			t.Fatalf("%s forecast %v on %+v", name, p, o)
		}
	})
}
