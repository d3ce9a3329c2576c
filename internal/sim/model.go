package sim

import "math"

// The latent model, shared by the world's grid and by Draws.
//
// A market lives on [0,T] (days since it opened). Its latent path is
// W(t) = σ·B(t) with B a standard Brownian motion started at 0, plus at
// close a terminal shock J ~ N(0, Jump²) (the game, the count: what keeps
// real markets uncertain until they close); it resolves Yes when
// W(T) + J > c. The truth
//
//	q(t) = P(Yes | W(t)) = Φ((W(t) − c) / √(σ²(T−t) + Jump²))
//
// is a martingale (with Jump = 0 and σ = 1 it is Φ((W_t − c)/√(T − t)); the
// shock is Brownian motion run on an information clock with a lump at T).
// The market observes Y = W(s) + η with s = t − lag and η an
// Ornstein–Uhlenbeck noise of sd τ = ν·σ·√T, and prices p = P(Yes | Y).
// Because p is a conditional expectation of the outcome given something
// the market saw, the market is calibrated; because it saw less than W(t),
// it trails q, and an agent that sees q earns expected Alpha
// E[(p−q)²] − E[(f−q)²] > 0.

// phi is the standard normal CDF.
func phi(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

// trueProb is q given the latent value w with rem days to close and a
// terminal shock of sd jump still to come.
func trueProb(w, c, sigma, jump, rem float64) float64 {
	if rem <= 0 {
		if w > c {
			return 1
		}
		return 0
	}
	return phi((w - c) / math.Sqrt(sigma*sigma*rem+jump*jump))
}

// marketProb is P(W(T) > c | W(s) + η = y) for W(s) ~ N(0, σ²s),
// η ~ N(0, τ²) independent, W(T) − W(s) ~ N(0, σ²(T−s) + jump²).
func marketProb(y, s, T, sigma, jump, tau, c float64) float64 {
	vs := sigma * sigma * s
	tt := tau * tau
	k := 0.0 // weight on the observation: 0 when it carries no information
	if vs+tt > 0 {
		k = vs / (vs + tt)
	}
	v := k*tt + sigma*sigma*(T-s) + jump*jump
	if v <= 0 {
		if k*y > c {
			return 1
		}
		return 0
	}
	return phi((k*y - c) / math.Sqrt(v))
}

// toTickBPS rounds a probability to the market tick and clips it to
// [minPrice, maxPrice] basis points.
func toTickBPS(p float64) uint16 {
	b := math.Round(p*10000/tickBPS) * tickBPS
	b = math.Max(minPrice, math.Min(maxPrice, b))
	return uint16(b)
}

// bpsProb converts basis points to a probability.
func bpsProb(b uint16) float64 { return float64(b) / 10000 }

// clipPrice keeps an agent's forecast inside the market's price range.
func clipPrice(p float64) float64 {
	return math.Max(minPrice/10000.0, math.Min(maxPrice/10000.0, p))
}

// logit and expit are used by the overconfident agent.
func logit(p float64) float64 { return math.Log(p / (1 - p)) }
func expit(x float64) float64 { return 1 / (1 + math.Exp(-x)) }

// mix64 is SplitMix64's finaliser: it spreads seed material over 64 bits so
// that neighbouring indices give unrelated PCG streams.
func mix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
