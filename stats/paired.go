package stats

// Paired compares agent b with agent a round by round: over the rounds
// both were scored in, the differences of their round Brier scores
// (b − a, positive when b did worse) and their mean test (mean, SE, t and
// the two-sided Student-t p). Pairing by round removes the rounds'
// difficulty from the comparison, which unpaired CIs leave in.
type Paired struct {
	MeanTest
	// CILo and CIHi are the 95% interval of the mean difference,
	// mean ± t(0.975, R−1)·SE; undefined when the SE is.
	CILo, CIHi Float
}

// PairedRounds computes Paired over a's and b's round scores.
func PairedRounds(a, b []RoundScore) Paired {
	of := make(map[string]float64, len(a))
	for _, r := range a {
		of[r.Round] = r.Brier
	}
	var d []float64
	for _, r := range b {
		if x, ok := of[r.Round]; ok {
			d = append(d, r.Brier-x)
		}
	}
	p := Paired{MeanTest: TestMean(d)}
	if p.SE.OK && p.R > 1 {
		q := StudentQuantile(0.975, float64(p.R-1))
		p.CILo, p.CIHi = Def(p.Mean-q*p.SE.V), Def(p.Mean+q*p.SE.V)
	}
	return p
}
