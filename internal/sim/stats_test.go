package sim

import (
	"math"
	"testing"
	"time"
)

// twentyWorlds builds the default world for seeds 1..20 once per test binary.
var twentyWorlds = func() func() []*World {
	var ws []*World
	return func() []*World {
		if ws == nil {
			for s := int64(1); s <= 20; s++ {
				ws = append(ws, NewWorld(Config{Seed: s}))
			}
		}
		return ws
	}
}()

func brier(f float64, x int) float64 { return (f - float64(x)) * (f - float64(x)) }

// reliability bins forecasts into deciles and fails any decile with at
// least 30 forecasts whose mean forecast is more than 3 binomial standard
// errors (plus the half-tick slack of the price grid) from its outcome rate.
func reliability(t *testing.T, name string, f []float64, x []int) {
	t.Helper()
	var n, sf, sx [10]float64
	for i := range f {
		b := min(int(f[i]*10), 9)
		n[b]++
		sf[b] += f[i]
		sx[b] += float64(x[i])
	}
	for b := range 10 {
		if n[b] < 30 {
			continue
		}
		pf, px := sf[b]/n[b], sx[b]/n[b]
		se := math.Sqrt(math.Max(pf*(1-pf), 0.01) / n[b])
		t.Logf("%s decile %d: n=%4.0f mean forecast %.3f outcome rate %.3f (%.1f SE)", name, b, n[b], pf, px, (px-pf)/se)
		if math.Abs(px-pf) > 3*se+0.0005 {
			t.Errorf("%s decile %d: mean forecast %.3f, outcome rate %.3f over %.0f, beyond 3 SE (%.3f)", name, b, pf, px, n[b], se)
		}
	}
}

// The market is near-calibrated and its Brier lies in the target band, on
// every one of 20 seeds; the truth q is calibrated too, which is what proves
// that outcomes follow the latent model.
func TestMarketBrierAndCalibration(t *testing.T) {
	const h = 3 * 24 * time.Hour
	var prices, truths []float64
	var outs []int
	lo, hi := 1.0, 0.0
	for _, w := range twentyWorlds() {
		var sum float64
		ds := w.Draws(h)
		for _, d := range ds {
			sum += brier(d.Price, d.X)
			prices = append(prices, d.Price)
			truths = append(truths, d.Q)
			outs = append(outs, d.X)
		}
		b := sum / float64(len(ds))
		lo, hi = math.Min(lo, b), math.Max(hi, b)
		if b < 0.12 || b > 0.22 {
			t.Errorf("seed %d: market Brier %.4f at %s before close, outside [0.12, 0.22]", w.Config().Seed, b, h)
		}
	}
	t.Logf("market Brier over 20 seeds in [%.4f, %.4f]", lo, hi)
	reliability(t, "market", prices, outs)
	reliability(t, "truth", truths, outs)
}

// The truth is a martingale: at every horizon its mean equals the outcome
// rate, and the latent prior at open is already calibrated.
func TestTruthIsMartingale(t *testing.T) {
	ws := twentyWorlds()
	for _, h := range []time.Duration{30 * 24 * time.Hour, 7 * 24 * time.Hour, 24 * time.Hour, time.Hour} {
		var sq, sx float64
		var n int
		for _, w := range ws {
			for _, d := range w.Draws(h) {
				sq += d.Q
				sx += float64(d.X)
				n++
			}
		}
		mq, mx := sq/float64(n), sx/float64(n)
		// Markets on one event are correlated; 4 SE of independent draws
		// leaves room for that.
		se := math.Sqrt(mx * (1 - mx) / float64(n))
		t.Logf("h=%s: mean q %.4f, outcome rate %.4f (n=%d)", h, mq, mx, n)
		if math.Abs(mq-mx) > 4*se {
			t.Errorf("h=%s: mean q %.4f vs outcome rate %.4f (SE %.4f)", h, mq, mx, se)
		}
	}
}

func TestAgentsSkill(t *testing.T) {
	// Forecast every non-void market of 20 worlds at 1..7 days before close.
	type stat struct{ n, brier, alpha, alpha2 float64 }
	stats := map[string]*stat{}
	for _, a := range Agents() {
		stats[a] = &stat{}
	}
	for _, w := range twentyWorlds() {
		for i, s := range w.Markets() {
			x, void := w.Outcome(s.SourceID)
			if void {
				continue
			}
			at := s.Close.Add(-time.Duration(24+i%145) * time.Hour)
			if at.Before(s.Open) {
				at = s.Open
			}
			price, _ := w.PriceAt(s.SourceID, at)
			for _, a := range Agents() {
				f, err := w.Forecast(a, s.SourceID, at)
				if err != nil {
					t.Fatal(err)
				}
				if a == AgentMarket && f != price {
					t.Fatalf("market agent %v, price %v", f, price)
				}
				st := stats[a]
				al := brier(price, x) - brier(f, x)
				st.n++
				st.brier += brier(f, x)
				st.alpha += al
				st.alpha2 += al * al
			}
		}
	}
	for _, a := range Agents() {
		st := stats[a]
		mb, ma := st.brier/st.n, st.alpha/st.n
		se := math.Sqrt((st.alpha2/st.n - ma*ma) / st.n)
		t.Logf("%-14s n=%.0f Brier %.4f alpha %+.4f (SE %.4f)", a, st.n, mb, ma, se)
		switch a {
		case AgentRandom:
			// Uniform forecasts have Brier 1/3 whatever the outcomes:
			// per-forecast variance ≤ 4/45, so SE ≤ 0.005 at n ≈ 3,900.
			if math.Abs(mb-1.0/3) > 0.02 {
				t.Errorf("random Brier %.4f, want ≈ 1/3", mb)
			}
		case AgentMarket:
			if st.alpha != 0 {
				t.Errorf("market alpha %v, want exactly 0", st.alpha)
			}
		case "informed-0.02", "informed-0.05", "informed-0.10":
			if ma < 3*se {
				t.Errorf("%s alpha %.4f not significantly positive (SE %.4f)", a, ma, se)
			}
		case AgentOverconfident, AgentStale:
			if ma >= 0 {
				t.Errorf("%s alpha %.4f, want negative", a, ma)
			}
		}
	}
	if !(stats["informed-0.02"].alpha > stats["informed-0.10"].alpha) {
		t.Error("less noise did not give more alpha")
	}
}

// Draws samples the same model as the world: its market is calibrated with
// a Brier close to the world's, and the conditional expected alpha it
// reports is unbiased for the realised alpha.
func TestDrawsMatchModel(t *testing.T) {
	ds := Draws(9, 100000, 24*time.Hour, 7*24*time.Hour)
	if again := Draws(9, 100000, 24*time.Hour, 7*24*time.Hour); again[777] != ds[777] || again[99999] != ds[99999] {
		t.Fatal("Draws is not deterministic")
	}
	var prices []float64
	var outs []int
	var bm, gap, gap2 float64
	a, _ := ParseAgent("informed-0.05")
	r := newTestRNG(1)
	var exp, real, real2 float64
	for _, d := range ds {
		prices = append(prices, d.Price)
		outs = append(outs, d.X)
		bm += brier(d.Price, d.X)
		g := (d.Price - d.Q) * (d.Price - d.Q)
		gap += g
		gap2 += g * g
		f := a.Forecast(d.Obs, r)
		exp += expectedAlpha(d.Obs, f)
		ra := brier(d.Price, d.X) - brier(f, d.X)
		real += ra
		real2 += ra * ra
		if d.Horizon < 24*time.Hour || d.Horizon > 7*24*time.Hour || d.Price < 0.01 || d.Price > 0.99 || d.Q < 0 || d.Q > 1 {
			t.Fatalf("draw out of range: %+v", d)
		}
	}
	n := float64(len(ds))
	bm, gap, exp, real = bm/n, gap/n, exp/n, real/n
	se := math.Sqrt((real2/n - real*real) / n)
	t.Logf("Draws: market Brier %.4f, gap G = E[(b−q)²] %.4f, informed-0.05 expected alpha %.4f, realised %.4f (SE %.4f)", bm, gap, exp, real, se)
	if bm < 0.15 || bm > 0.21 {
		t.Errorf("Draws market Brier %.4f outside [0.15, 0.21]", bm)
	}
	if math.Abs(exp-real) > 4*se {
		t.Errorf("expected alpha %.4f vs realised %.4f: outcomes do not follow q", exp, real)
	}
	// Informed-σ alpha ≈ G − σ² (clipping makes it a little larger).
	if want := gap - 0.05*0.05; math.Abs(exp-want) > 0.002 {
		t.Errorf("informed-0.05 expected alpha %.4f, want ≈ G − σ² = %.4f", exp, want)
	}
	reliability(t, "draws market", prices, outs)
}

func TestEventsAndCategories(t *testing.T) {
	sizes := map[int]int{}
	cats := map[string]int{}
	var void, total int
	// Within-event outcome agreement vs across-event agreement.
	var sameEv, sameEvAgree, pairs, pairsAgree float64
	for _, w := range twentyWorlds() {
		byEvent := map[string][]Spec{}
		specs := w.Markets()
		for _, s := range specs {
			byEvent[s.EventID] = append(byEvent[s.EventID], s)
			cats[s.Category]++
			total++
			if _, v := w.Outcome(s.SourceID); v {
				void++
			}
		}
		for _, ms := range byEvent {
			sizes[len(ms)]++
			for i := 1; i < len(ms); i++ {
				if ms[i].Close != ms[0].Close || ms[i].Category != ms[0].Category || ms[i].Open != ms[0].Open {
					t.Fatalf("event %s mixes schedules or categories", ms[0].EventID)
				}
				xa, _ := w.Outcome(ms[0].SourceID)
				xb, _ := w.Outcome(ms[i].SourceID)
				sameEv++
				if xa == xb {
					sameEvAgree++
				}
			}
		}
		for i := 0; i+1 < len(specs); i += 2 {
			if specs[i].EventID == specs[i+1].EventID {
				continue
			}
			xa, _ := w.Outcome(specs[i].SourceID)
			xb, _ := w.Outcome(specs[i+1].SourceID)
			pairs++
			if xa == xb {
				pairsAgree++
			}
		}
	}
	t.Logf("event sizes %v, categories %v, void %d/%d", sizes, cats, void, total)
	t.Logf("outcome agreement: same event %.3f (n=%.0f), different events %.3f (n=%.0f)", sameEvAgree/sameEv, sameEv, pairsAgree/pairs, pairs)
	if sizes[2] == 0 || sizes[3] == 0 || sizes[1] < sizes[2] {
		t.Errorf("event sizes %v: want mostly single markets with some 2- and 3-market events", sizes)
	}
	if len(cats) != len(categories) {
		t.Errorf("categories %v", cats)
	}
	if rate := float64(void) / float64(total); rate < 0.02 || rate > 0.04 {
		t.Errorf("void rate %.4f, want ≈ 0.03", rate)
	}
	if sameEvAgree/sameEv < pairsAgree/pairs+0.1 {
		t.Errorf("markets on one event agree %.3f, unrelated ones %.3f: events are not correlated", sameEvAgree/sameEv, pairsAgree/pairs)
	}
}

// Categories differ in volatility: the price of a crypto market moves more
// per day than that of a science market.
func TestCategoryVolatility(t *testing.T) {
	move := map[string]float64{}
	cnt := map[string]float64{}
	for _, w := range twentyWorlds()[:5] {
		for _, m := range w.markets {
			perDay := int(24 * time.Hour / w.cfg.Step)
			for k := perDay; k < len(m.price); k += perDay {
				move[m.cat.Name] += math.Abs(float64(m.price[k]) - float64(m.price[k-perDay]))
				cnt[m.cat.Name]++
			}
		}
	}
	for c := range move {
		move[c] /= cnt[c] * 10000
	}
	t.Logf("mean absolute daily price move by category: %v", move)
	if !(move["crypto"] > 1.3*move["science"]) {
		t.Errorf("crypto daily move %.4f not well above science %.4f", move["crypto"], move["science"])
	}
}

// At every hour of the horizon, a forecast round of 7 markets on distinct
// events closing 1–7 days later, and a weekly trading cohort, can be formed.
func TestScheduleSupportsRoundsAndCohorts(t *testing.T) {
	minEvents, minOpen, minCats := 1<<30, 1<<30, 1<<30
	for _, w := range twentyWorlds()[:5] {
		specs := w.Markets()
		start := w.Config().Start
		for now := start; !now.After(start.Add(w.Config().Horizon)); now = now.Add(time.Hour) {
			events := map[string]bool{}
			cats := map[string]bool{}
			open := 0
			for _, s := range specs {
				if s.Open.After(now) || !now.Before(s.Close) {
					continue
				}
				open++
				if s.Close.After(now.Add(24*time.Hour)) && !s.Close.After(now.Add(7*24*time.Hour)) {
					events[s.EventID] = true
					cats[s.Category] = true
				}
			}
			minEvents, minOpen, minCats = min(minEvents, len(events)), min(minOpen, open), min(minCats, len(cats))
		}
	}
	t.Logf("over every hour of the horizon: ≥ %d events closing in (1d, 7d], ≥ %d categories among them, ≥ %d open markets", minEvents, minCats, minOpen)
	if minEvents < 7 || minCats < 3 || minOpen < 25 {
		t.Errorf("schedule too thin: %d events, %d categories, %d open markets", minEvents, minCats, minOpen)
	}
}

// expectedAlpha is the expected Brier advantage of forecast f over the
// market given the truth: E[(b−x)² − (f−x)² | q] = (b−q)² − (f−q)².
func expectedAlpha(o Obs, f float64) float64 {
	return (o.Price-o.Q)*(o.Price-o.Q) - (f-o.Q)*(f-o.Q)
}
