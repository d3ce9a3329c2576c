package sim

import (
	"math"
	"math/rand/v2"
	"time"
)

// Draw is one scoreable market observed at one instant: what agents see
// (Obs) and the outcome. For the statistical power checks: an agent's
// forecast f on a draw has conditional expected Alpha (Price − Q)² −
// (f − Q)², and its realised Alpha is (Price − X)² − (f − X)².
type Draw struct {
	SourceID string // empty for Draws
	EventID  string // empty for Draws: direct draws are independent
	Category string
	Time     time.Time // zero for Draws
	Horizon  time.Duration
	Obs
	X int
}

// Draws samples n independent markets, each observed a uniform time in
// [minH, maxH] before its close, straight from the latent model's joint law
// (no paths), so a million draws take well under a second. Categories and
// lifetimes follow the world's distributions, conditioned on the market
// being open at the observation time; prices use the same lag (at least one
// default step), noise and tick as NewWorld. No draw is void.
//
// Draws is for statistics that need many independent (q, price, outcome)
// triples; the world's markets are clustered by event and finite.
func Draws(seed int64, n int, minH, maxH time.Duration) []Draw {
	if n <= 0 {
		return nil
	}
	minH = max(minH, time.Minute)
	maxH = min(max(maxH, minH), maxLife-time.Hour)
	minH = min(minH, maxH)
	r := rand.New(rand.NewPCG(uint64(seed), 0xd2a5_0000_0000_0002))
	out := make([]Draw, n)
	for i := range out {
		cat := pickCategory(r.Float64())
		h := minH + time.Duration(r.Float64()*float64(maxH-minH))
		life := logUniformLife(r)
		for life <= h {
			life = logUniformLife(r)
		}
		T := durDays(life)
		t := T - durDays(h)
		lag := durDays(max(cat.Lag, DefaultStep))
		s := math.Max(t-lag, 0)
		t2 := math.Max(t-durDays(staleAge), 0)
		s2 := math.Max(t2-lag, 0)

		sigma := cat.Vol
		c := thresholdMean + thresholdSD*r.NormFloat64()
		jump := cat.Jump
		tau := cat.Noise * sigma * math.Sqrt(T)
		// W at s2 ≤ s ≤ t ≤ T by independent increments.
		w2 := sigma * math.Sqrt(s2) * r.NormFloat64()
		ws := w2 + sigma*math.Sqrt(s-s2)*r.NormFloat64()
		wt := ws + sigma*math.Sqrt(t-s)*r.NormFloat64()
		wT := wt + sigma*math.Sqrt(T-t)*r.NormFloat64() + jump*r.NormFloat64()
		// Observation noise is Ornstein–Uhlenbeck, as on the grid.
		eta := tau * r.NormFloat64()
		rho := math.Exp(-(t - t2) / durDays(noiseCorrTime))
		eta2 := rho*eta + tau*math.Sqrt(1-rho*rho)*r.NormFloat64()

		d := Draw{Category: cat.Name, Horizon: h}
		d.Q = trueProb(wt, c, sigma, jump, T-t)
		d.Price = bpsProb(toTickBPS(marketProb(ws+eta, s, T, sigma, jump, tau, c)))
		d.Stale = bpsProb(toTickBPS(marketProb(w2+eta2, s2, T, sigma, jump, tau, c)))
		if wT > c {
			d.X = 1
		}
		out[i] = d
	}
	return out
}

// Draws observes every non-void market of the world h before its close (at
// open when it opened later than that), in index order.
func (w *World) Draws(h time.Duration) []Draw {
	out := make([]Draw, 0, len(w.markets))
	for _, m := range w.markets {
		if m.void {
			continue
		}
		t := m.spec.Close.Add(-h)
		if t.Before(m.spec.Open) {
			t = m.spec.Open
		}
		o, err := w.Observe(m.spec.SourceID, t)
		if err != nil {
			continue // h ≤ 0: the market is closed at t; nothing to observe
		}
		out = append(out, Draw{
			SourceID: m.spec.SourceID,
			EventID:  m.spec.EventID,
			Category: m.spec.Category,
			Time:     t,
			Horizon:  m.spec.Close.Sub(t),
			Obs:      o,
			X:        m.outcome(),
		})
	}
	return out
}

func logUniformLife(r *rand.Rand) time.Duration {
	lo, hi := math.Log(float64(minLife)), math.Log(float64(maxLife))
	return time.Duration(math.Exp(lo + r.Float64()*(hi-lo))).Round(time.Hour)
}

// durDays converts a duration to fractional days.
func durDays(d time.Duration) float64 { return float64(d) / float64(24*time.Hour) }
