package stats

import "math"

// SkillScore is Brier skill score 1 − B/B_ref; undefined when B_ref = 0.
func SkillScore(brier, ref float64) Float {
	if ref == 0 {
		return Undef
	}
	return Def(1 - brier/ref)
}

// LogClip is clipping bound for the log score.
const LogClip = 1e-15

// LogScore is mean of −ln(p if x = 1 else 1 − p), p clipped to
// [1e−15, 1 − 1e−15] so a confident miss costs ≈ 34.5, not +Inf.
func LogScore(p, x []float64) float64 { return logScore(p, x, nil) }

// logScore is LogScore taking each term from memo when it holds it:
// forecasts are mostly given to a few decimals, so an agent repeats few
// values, and a look-up costs less than a logarithm (the same function of
// the same value: the same sum). A nil memo computes every term.
func logScore(p, x []float64, memo *logMemo) float64 {
	if len(p) == 0 {
		return 0
	}
	x = x[:len(p)]
	var s float64
	for i, pi := range p {
		pi = min(max(pi, LogClip), 1-LogClip)
		yes := x[i] == 1
		if memo != nil {
			s -= memo.term(pi, yes)
			continue
		}
		if yes {
			s -= math.Log(pi)
		} else {
			s -= math.Log1p(-pi)
		}
	}
	return s / float64(len(p))
}

// logMemo is a direct-mapped table of log-score terms by forecast and
// outcome.
type logMemo struct {
	key [1 << 13]uint64 // bits(p)<<1 | outcome, plus 1 (0: empty)
	val [1 << 13]float64
}

// term is ln(p) for an outcome of 1, ln(1 − p) otherwise, p in (0, 1).
func (m *logMemo) term(p float64, yes bool) float64 {
	k := math.Float64bits(p) << 1
	if yes {
		k |= 1
	}
	k++
	h := (k * 0x9e3779b97f4a7c15) >> (64 - 13)
	if m.key[h] == k {
		return m.val[h]
	}
	v := math.Log1p(-p)
	if yes {
		v = math.Log(p)
	}
	m.key[h], m.val[h] = k, v
	return v
}

// WinRate counts markets where the agent's squared error is below (win),
// above (loss) or equal to (tie) the benchmark's ("win rate"). Rate is
// wins/(wins+losses): a tie, e.g. echoing the market, is no evidence
// either way. Undefined when every market is a tie.
type WinRate struct {
	Wins   int   `json:"wins"`
	Losses int   `json:"losses"`
	Ties   int   `json:"ties"`
	Rate   Float `json:"rate"`
}

// Wins computes win rate of forecasts p against benchmarks b.
func Wins(p, b, x []float64) WinRate {
	var w WinRate
	for i := range p {
		ea, eb := (p[i]-x[i])*(p[i]-x[i]), (b[i]-x[i])*(b[i]-x[i])
		switch {
		case ea < eb:
			w.Wins++
		case ea > eb:
			w.Losses++
		default:
			w.Ties++
		}
	}
	if d := w.Wins + w.Losses; d > 0 {
		w.Rate = Def(float64(w.Wins) / float64(d))
	}
	return w
}

// Proportion is k successes out of n with a Wilson score interval.
type Proportion struct {
	K    int   `json:"k"`
	N    int   `json:"n"`
	Rate Float `json:"rate"`
	Lo   Float `json:"lo"`
	Hi   Float `json:"hi"`
}

// Wilson95 is z_{0.975}, exact ("accuracy with Wilson 95% CI").
var Wilson95 = NormalQuantile(0.975)

// Wilson returns k/n with the Wilson score interval at normal quantile z:
// (p̂ + z²/2n ± z√(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n). Undefined for n = 0.
func Wilson(k, n int, z float64) Proportion {
	pr := Proportion{K: k, N: n}
	if n <= 0 {
		return pr
	}
	fn := float64(n)
	ph := float64(k) / fn
	z2 := z * z
	den := 1 + z2/fn
	c := (ph + z2/(2*fn)) / den
	h := z * math.Sqrt(ph*(1-ph)/fn+z2/(4*fn*fn)) / den
	pr.Rate = Def(ph)
	pr.Lo = Def(math.Max(0, c-h))
	pr.Hi = Def(math.Min(1, c+h))
	return pr
}

// Correct reports whether a forecast calls the outcome: p > 0.5 for x = 1,
// p < 0.5 for x = 0. A forecast of exactly 0.5 calls nothing and counts as
// not correct.
func Correct(p, x float64) bool {
	return (x == 1 && p > 0.5) || (x == 0 && p < 0.5)
}

// Accuracy is accuracy (share of markets called, see Correct) with
// its Wilson 95% interval.
func Accuracy(p, x []float64) Proportion {
	k := 0
	for i := range p {
		if Correct(p[i], x[i]) {
			k++
		}
	}
	return Wilson(k, len(p), Wilson95)
}

// Pair is the 2×2 table of two systems' correctness on the same items.
// N11: both correct, N10: only A correct, N01: only B correct, N00: both wrong.
type Pair struct {
	N11, N10, N01, N00 int
}

// CrossTab counts paired correctness; a and b must have the same length.
func CrossTab(a, b []bool) Pair {
	var t Pair
	for i := range a {
		switch {
		case a[i] && b[i]:
			t.N11++
		case a[i]:
			t.N10++
		case b[i]:
			t.N01++
		default:
			t.N00++
		}
	}
	return t
}

// N is the number of paired items.
func (t Pair) N() int { return t.N11 + t.N10 + t.N01 + t.N00 }

// McNemar is exact McNemar test for paired systems: under H0 the
// discordant items split Binomial(N10+N01, ½); the two-sided p is
// min(1, 2·P(X ≤ min(N10, N01))). With no discordant item p = 1.
func (t Pair) McNemar() float64 {
	return mcnemarExact(t.N10, t.N01)
}

func mcnemarExact(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// Sum the lower tail in log space: C(n,i)/2^n for i ≤ k.
	lg := func(v int) float64 { r, _ := math.Lgamma(float64(v) + 1); return r }
	ln2n := float64(n) * math.Ln2
	var tail float64
	for i := 0; i <= k; i++ {
		tail += math.Exp(lg(n) - lg(i) - lg(n-i) - ln2n)
	}
	return math.Min(1, 2*tail)
}

// Phi is pairwise error correlation: the phi coefficient of the two
// systems' error indicators, (N00·N11 − N01·N10)/√(row and column margins).
// Undefined when either system is always or never wrong.
func (t Pair) Phi() Float {
	// Errors: A wrong = N01+N00, B wrong = N10+N00.
	bothWrong, onlyAWrong, onlyBWrong, noneWrong := float64(t.N00), float64(t.N01), float64(t.N10), float64(t.N11)
	aw, ar := bothWrong+onlyAWrong, onlyBWrong+noneWrong
	bw, br := bothWrong+onlyBWrong, onlyAWrong+noneWrong
	den := math.Sqrt(aw * ar * bw * br)
	if den == 0 {
		return Undef
	}
	return Def((bothWrong*noneWrong - onlyAWrong*onlyBWrong) / den)
}

// CondErrors are conditional error probabilities between two systems.
type CondErrors struct {
	BWrongGivenAWrong Float `json:"b_wrong_given_a_wrong"` // P(B wrong | A wrong)
	AWrongGivenBWrong Float `json:"a_wrong_given_b_wrong"` // P(A wrong | B wrong)
	BothWrong         Float `json:"both_wrong"`            // P(A and B wrong)
}

// CondErrors returns P(B wrong | A wrong), P(A wrong | B wrong) and the
// joint error rate; a conditional is undefined when its condition never occurs.
func (t Pair) CondErrors() CondErrors {
	var c CondErrors
	aw, bw := t.N01+t.N00, t.N10+t.N00
	if aw > 0 {
		c.BWrongGivenAWrong = Def(float64(t.N00) / float64(aw))
	}
	if bw > 0 {
		c.AWrongGivenBWrong = Def(float64(t.N00) / float64(bw))
	}
	if n := t.N(); n > 0 {
		c.BothWrong = Def(float64(t.N00) / float64(n))
	}
	return c
}
