package sim

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

// mustJSON is the SHA-256 of v's JSON encoding: byte-for-byte equality
// without holding megabytes of history text.
func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	h := sha256.New()
	if err := json.NewEncoder(h).Encode(v); err != nil {
		t.Fatal(err)
	}
	return h.Sum(nil)
}

func TestSameConfigSameWorld(t *testing.T) {
	cfg := Config{Seed: 42, Markets: 40}
	a, b := NewWorld(cfg), NewWorld(cfg)
	start := a.Config().Start
	for _, now := range []time.Time{start.Add(90 * time.Hour), start.Add(80 * 24 * time.Hour)} {
		ja, jb := mustJSON(t, a.MarketsAt(now)), mustJSON(t, b.MarketsAt(now))
		if !bytes.Equal(ja, jb) {
			t.Fatalf("MarketsAt(%s) differs between two worlds with the same config", now)
		}
	}
	other := NewWorld(Config{Seed: 43, Markets: 40})
	now := start.Add(10 * 24 * time.Hour)
	if bytes.Equal(mustJSON(t, a.MarketsAt(now)), mustJSON(t, other.MarketsAt(now))) {
		t.Fatal("seeds 42 and 43 gave the same view")
	}
}

// The view at now must not depend on anything drawn for later times: a
// world whose future is re-drawn shows the same markets, prices and history
// up to the cut, and different ones after it.
func TestViewHasNoFuture(t *testing.T) {
	cfg := Config{Seed: 7, Markets: 80}
	cut := cfg.withDefaults().Start.Add(20 * 24 * time.Hour)
	alt := cfg
	alt.futureFrom, alt.futureSalt = cut, 99
	a, b := NewWorld(cfg), NewWorld(alt)
	start := a.Config().Start
	for _, now := range []time.Time{start.Add(7 * 24 * time.Hour), cut.Add(-time.Nanosecond)} {
		if !bytes.Equal(mustJSON(t, a.MarketsAt(now)), mustJSON(t, b.MarketsAt(now))) {
			t.Fatalf("view at %s depends on draws after %s", now, cut)
		}
	}
	if bytes.Equal(mustJSON(t, a.MarketsAt(cut.Add(24*time.Hour))), mustJSON(t, b.MarketsAt(cut.Add(24*time.Hour)))) {
		t.Fatal("re-drawing the future changed nothing after the cut; the test proves nothing")
	}
	changed := 0
	for _, s := range a.Markets() {
		xa, _ := a.Outcome(s.SourceID)
		xb, _ := b.Outcome(s.SourceID)
		if s.Close.After(cut) && xa != xb {
			changed++
		}
		if !s.Close.After(cut) && xa != xb {
			t.Fatalf("%s closed before the cut but its outcome changed", s.SourceID)
		}
	}
	if changed == 0 {
		t.Fatal("no outcome after the cut changed")
	}
}

func TestViewConsistency(t *testing.T) {
	for _, step := range []time.Duration{0, 15 * time.Minute, time.Hour} {
		w := NewWorld(Config{Seed: 3, Markets: 150, ResolveDelay: 2 * time.Hour, Step: step})
		t.Run(w.Config().Step.String(), func(t *testing.T) { checkViews(t, w) })
	}
}

func checkViews(t *testing.T, w *World) {
	start := w.Config().Start
	for _, now := range []time.Time{start.Add(-time.Hour), start.Add(33*time.Hour + 7*time.Minute), start.Add(40 * 24 * time.Hour)} {
		views := w.MarketsAt(now)
		seen := map[string]bool{}
		for _, m := range views {
			seen[m.SourceID] = true
			if err := m.Validate(); err != nil {
				t.Fatalf("at %s: %v", now, err)
			}
			if m.Source != arena.SourceSim || m.Kind != arena.KindMarket || !m.IsBinary() || m.OpenTime.After(now) {
				t.Fatalf("bad market %+v", m)
			}
			yes, no := m.Prices[arena.Yes], m.Prices[arena.No]
			if math.Abs(yes+no-1) > 1e-12 {
				t.Fatalf("%s: prices %v do not sum to 1", m.SourceID, m.Prices)
			}
			x, void := w.Outcome(m.SourceID)
			switch {
			case now.Before(m.CloseTime):
				p, ok := w.PriceAt(m.SourceID, now)
				if m.Status != arena.StatusOpen || !ok || p != yes || yes < 0.01 || yes > 0.99 {
					t.Fatalf("%s open at %s: status %s price %v, PriceAt %v %v", m.SourceID, now, m.Status, yes, p, ok)
				}
			case now.Before(m.CloseTime.Add(2 * time.Hour)):
				if m.Status != arena.StatusClosed || m.Resolution != "" {
					t.Fatalf("%s: status %s resolution %q inside the resolve delay", m.SourceID, m.Status, m.Resolution)
				}
			default:
				want := arena.No
				if void {
					want = arena.Void
				} else if x == 1 {
					want = arena.Yes
				}
				if m.Status != arena.StatusResolved || m.Resolution != want || !m.ResolvedAt.Equal(m.CloseTime.Add(2*time.Hour)) {
					t.Fatalf("%s: status %s resolution %q, want resolved %q", m.SourceID, m.Status, m.Resolution, want)
				}
			}
			if len(m.History) == 0 {
				t.Fatalf("%s: no history", m.SourceID)
			}
			for i, pp := range m.History {
				if pp.Time.After(now) || pp.Time.After(m.CloseTime) || (i > 0 && !pp.Time.After(m.History[i-1].Time)) {
					t.Fatalf("%s: history point %d at %s out of order or beyond now/close", m.SourceID, i, pp.Time)
				}
				if p, _ := w.PriceAt(m.SourceID, pp.Time); p != pp.Price || pp.Source != arena.PriceSim || pp.Outcome != arena.Yes {
					t.Fatalf("%s: history point %+v disagrees with PriceAt %v", m.SourceID, pp, p)
				}
			}
			if last := m.History[len(m.History)-1].Time; now.Before(m.CloseTime) && now.Sub(last) >= w.Config().Step {
				t.Fatalf("%s: last history point %s is more than a step before now %s", m.SourceID, last, now)
			}
		}
		for _, s := range w.Markets() {
			if !s.Open.After(now) != seen[s.SourceID] {
				t.Fatalf("at %s: market %s (open %s) visibility wrong", now, s.SourceID, s.Open)
			}
		}
	}
}

func TestMarketsSinceIsIncremental(t *testing.T) {
	w := NewWorld(Config{Seed: 5, Markets: 40})
	t1 := w.Config().Start.Add(5*24*time.Hour + 25*time.Minute)
	t2 := t1.Add(3*24*time.Hour + 10*time.Minute)
	full := map[string]int{}
	for _, m := range w.MarketsAt(t1) {
		full[m.SourceID] = len(m.History)
	}
	inc := w.MarketsSince(t1, t2)
	all := w.MarketsAt(t2)
	if len(inc) != len(all) {
		t.Fatalf("MarketsSince lists %d markets, MarketsAt %d", len(inc), len(all))
	}
	for i, m := range all {
		got := full[m.SourceID] + len(inc[i].History)
		if got != len(m.History) {
			t.Fatalf("%s: %d points at t1 + %d since = %d, want %d", m.SourceID, full[m.SourceID], len(inc[i].History), got, len(m.History))
		}
		if n := len(inc[i].History); n > 0 && !inc[i].History[0].Time.After(t1) {
			t.Fatalf("%s: incremental history starts at %s, not after %s", m.SourceID, inc[i].History[0].Time, t1)
		}
	}
}

func TestAccessorsAtEdges(t *testing.T) {
	w := NewWorld(Config{Seed: 11, Markets: 20})
	s := w.Markets()[0]
	if _, ok := w.PriceAt(s.SourceID, s.Open.Add(-time.Nanosecond)); ok {
		t.Fatal("price before open")
	}
	if _, ok := w.PriceAt("nope", s.Open); ok {
		t.Fatal("price for unknown market")
	}
	if !math.IsNaN(w.TrueProb("nope", s.Open)) {
		t.Fatal("TrueProb of unknown market is not NaN")
	}
	x, _ := w.Outcome(s.SourceID)
	if q := w.TrueProb(s.SourceID, s.Close); q != float64(x) {
		t.Fatalf("TrueProb at close = %v, outcome %d", q, x)
	}
	pre := w.TrueProb(s.SourceID, s.Open.Add(-time.Hour))
	if q := w.TrueProb(s.SourceID, s.Open); q != pre || q <= 0 || q >= 1 {
		t.Fatalf("TrueProb before open %v, at open %v", pre, q)
	}
	// The price is a step function on the grid.
	p1, _ := w.PriceAt(s.SourceID, s.Open.Add(10*time.Minute))
	p2, _ := w.PriceAt(s.SourceID, s.Open.Add(19*time.Minute))
	if p1 != p2 {
		t.Fatalf("price changed inside a grid step: %v, %v", p1, p2)
	}
	last, _ := w.PriceAt(s.SourceID, s.Close)
	after, _ := w.PriceAt(s.SourceID, s.Close.Add(1000*time.Hour))
	if last != after {
		t.Fatalf("price after close %v, want the last price %v", after, last)
	}
	if _, void := w.Outcome("nope"); !void {
		t.Fatal("unknown market is not void")
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		ok   bool
	}{
		{"zero", Config{}, true},
		{"hourly", Config{Step: time.Hour}, true},
		{"too many", Config{Markets: MaxMarkets + 1}, false},
		{"negative markets", Config{Markets: -1}, false},
		{"step 7m", Config{Step: 7 * time.Minute}, false},
		{"step 2h", Config{Step: 2 * time.Hour}, false},
		{"negative delay", Config{ResolveDelay: -time.Second}, false},
		{"void rate", Config{VoidRate: 0.9}, false},
		{"negative horizon", Config{Horizon: -time.Hour}, false},
	} {
		err := tc.cfg.Validate()
		if (err == nil) != tc.ok {
			t.Errorf("%s: Validate() = %v", tc.name, err)
		}
		if err != nil && arena.ErrorKind(err) != arena.EINVALID {
			t.Errorf("%s: error kind %s", tc.name, arena.ErrorKind(err))
		}
		if _, err := New(tc.cfg); (err == nil) != tc.ok {
			t.Errorf("%s: New error %v", tc.name, err)
		}
	}
	c := NewWorld(Config{Markets: 5}).Config()
	if !c.Start.Equal(DefaultStart) || c.Horizon != DefaultHorizon || c.Step != DefaultStep || c.VoidRate != DefaultVoidRate {
		t.Fatalf("defaults not applied: %+v", c)
	}
	if n := len(NewWorld(Config{Markets: 7}).Markets()); n != 7 {
		t.Fatalf("7 markets requested, %d built", n)
	}
}

func TestNoVoidWhenDisabled(t *testing.T) {
	w := NewWorld(Config{Seed: 1, VoidRate: -1})
	for _, s := range w.Markets() {
		if _, void := w.Outcome(s.SourceID); void {
			t.Fatalf("%s void with VoidRate < 0", s.SourceID)
		}
	}
}

// Naming the markets after venues draws nothing: the same world, each
// event's markets named after the next venue in turn.
func TestVenues(t *testing.T) {
	cfg := Config{Seed: 42, Markets: 60}
	named := cfg
	named.Venues = "kalshi,manifold,polymarket"
	a, b := NewWorld(cfg), NewWorld(named)
	now := a.Config().Start.Add(20 * 24 * time.Hour)
	ma, mb := a.MarketsAt(now), b.MarketsAt(now)
	if len(ma) != len(mb) || len(ma) == 0 {
		t.Fatalf("%d and %d markets", len(ma), len(mb))
	}
	venues := map[string]string{} // event → venue
	seen := map[string]bool{}
	for i := range ma {
		if ma[i].Origin != "" || mb[i].Venue() == arena.SourceSim {
			t.Fatalf("%s: origin %q unnamed, venue %q named", ma[i].SourceID, ma[i].Origin, mb[i].Venue())
		}
		if v, ok := venues[mb[i].EventID]; ok && v != mb[i].Origin {
			t.Errorf("event %s on %s and %s", mb[i].EventID, v, mb[i].Origin)
		}
		venues[mb[i].EventID], seen[mb[i].Origin] = mb[i].Origin, true
		mb[i].Origin = ""
	}
	if !bytes.Equal(mustJSON(t, ma), mustJSON(t, mb)) || len(seen) != 3 {
		t.Errorf("the named world differs beyond its venues, or names %d venues", len(seen))
	}
	for in, want := range map[string]string{"": "", " Kalshi , polymarket": "kalshi,polymarket"} {
		if got, err := ParseVenues(in); err != nil || got != want {
			t.Errorf("ParseVenues(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"kalshi,kalshi", "kalshi,,manifold", "predictit", "sim"} {
		if _, err := ParseVenues(bad); err == nil {
			t.Errorf("ParseVenues(%q) accepted", bad)
		}
		if _, err := New(Config{Venues: bad}); err == nil {
			t.Errorf("a world named after %q", bad)
		}
	}
}
