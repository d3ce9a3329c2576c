package oracle

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/score"
)

// Item is one evaluated question: its ground truth and the panel's votes.
type Item struct {
	ID       string
	Category string
	Series   string
	Truth    arena.OracleDecision // YES or NO
	Round1   []arena.OracleVote   // one per resolver, panel order
	Round2   []arena.OracleVote
}

// Rate is a count with its accuracy (null when n is 0).
type Rate struct {
	N        int         `json:"n"`
	Accuracy score.Float `json:"accuracy"`
}

// Consistency counts the series with more than one question by how many of
// their questions a system got right.
type Consistency struct {
	AllCorrect int `json:"all_correct"`
	Mixed      int `json:"mixed"`
	AllWrong   int `json:"all_wrong"`
}

// SystemReport is one architecture's accuracy figures.
type SystemReport struct {
	System         string          `json:"system"`
	N              int             `json:"n"`
	Correct        int             `json:"correct"`
	Accuracy       score.Float     `json:"accuracy"`
	Abstained      int             `json:"abstained"`
	Wilson         [2]score.Float  `json:"wilson"`
	UniqueAccuracy score.Float     `json:"unique_accuracy"`
	UniqueWilson   [2]score.Float  `json:"unique_wilson"`
	Consistency    Consistency     `json:"consistency"`
	ByCategory     map[string]Rate `json:"by_category"`
}

// Agreement splits the majority system's accuracy by panel unanimity.
type Agreement struct {
	Unanimous Rate `json:"unanimous"`
	Split     Rate `json:"split"`
}

// AgreementConfidence crosses unanimity with mean confidence, split at its
// median over questions.
type AgreementConfidence struct {
	Median        score.Float `json:"median"`
	UnanimousHigh Rate        `json:"unanimous_high"`
	UnanimousLow  Rate        `json:"unanimous_low"`
	SplitHigh     Rate        `json:"split_high"`
	SplitLow      Rate        `json:"split_low"`
}

// McNemarRow compares two systems on the questions one got right and the
// other wrong.
type McNemarRow struct {
	A     string  `json:"a"`
	B     string  `json:"b"`
	AOnly int     `json:"a_only"`
	BOnly int     `json:"b_only"`
	P     float64 `json:"p"`
}

// PhiRow is the phi coefficient of two resolvers' round-1 error indicators
// (symmetric: the rows (a, b) and (b, a) agree).
type PhiRow struct {
	A   string      `json:"a"`
	B   string      `json:"b"`
	Phi score.Float `json:"phi"`
}

// CondRow is P(other wrong | given wrong) in round 1.
type CondRow struct {
	Given string      `json:"given"`
	Other string      `json:"other"`
	P     score.Float `json:"p"`
}

// RevisionRow counts one resolver's round-2 changes of correctness.
type RevisionRow struct {
	Agent          string `json:"agent"`
	CorrectToWrong int    `json:"correct_to_wrong"`
	WrongToCorrect int    `json:"wrong_to_correct"`
}

// CoveragePoint is the majority accuracy on the most certain share of
// questions.
type CoveragePoint struct {
	Coverage float64     `json:"coverage"`
	N        int         `json:"n"`
	Accuracy score.Float `json:"accuracy"`
}

// Report is the evaluation report (`arena oracle eval --format json`).
type Report struct {
	Questions           int                 `json:"questions"`
	Systems             []SystemReport      `json:"systems"`
	Agreement           Agreement           `json:"agreement"`
	AgreementConfidence AgreementConfidence `json:"agreement_confidence"`
	McNemar             []McNemarRow        `json:"mcnemar"`
	ErrorCorrelation    []PhiRow            `json:"error_correlation"`
	ConditionalError    []CondRow           `json:"conditional_error"`
	Revisions           []RevisionRow       `json:"revisions"`
	CoverageAccuracy    []CoveragePoint     `json:"coverage_accuracy"`
}

func rate(k, n int) Rate {
	r := Rate{N: n}
	if n > 0 {
		r.Accuracy = score.Def(float64(k) / float64(n))
	}
	return r
}

func wilson(k, n int) [2]score.Float {
	w := score.Wilson(k, n, score.Wilson95)
	return [2]score.Float{w.Lo, w.Hi}
}

// voteCorrect: a YES/NO answer equal to the truth. An abstention or a
// failure is an error.
func voteCorrect(v arena.OracleVote, truth arena.OracleDecision) bool {
	return v.Answered() && v.Decision.Binary() && v.Decision == truth
}

// BuildReport computes every figure of the evaluation report from the
// votes. systems are architecture names in report order; agents the panel
// in order. The agreement tables and the coverage curve use the majority
// system whether or not it is listed; revisions are reported only when
// deliberative is.
func BuildReport(items []Item, agents, systems []string) Report {
	n := len(items)
	rep := Report{Questions: n, McNemar: []McNemarRow{}, ErrorCorrelation: []PhiRow{}, ConditionalError: []CondRow{}, Revisions: []RevisionRow{}}

	// Unique markets: the first row of each series (rows without a series
	// stand alone); multi-row series for consistency, in first-seen order.
	unique := make([]bool, n)
	seen := map[string]bool{}
	series := map[string][]int{}
	var seriesOrder []string
	for i, it := range items {
		if it.Series == "" {
			unique[i] = true
			continue
		}
		if !seen[it.Series] {
			seen[it.Series] = true
			unique[i] = true
			seriesOrder = append(seriesOrder, it.Series)
		}
		series[it.Series] = append(series[it.Series], i)
	}

	correct := make([][]bool, len(systems))
	for s, sys := range systems {
		c := make([]bool, n)
		sr := SystemReport{System: sys, N: n, ByCategory: map[string]Rate{}}
		catK, catN := map[string]int{}, map[string]int{}
		uk, un := 0, 0
		for i, it := range items {
			o := Decide(sys, it.Round1, it.Round2)
			c[i] = o.Decision == it.Truth
			if c[i] {
				sr.Correct++
			}
			if o.Decision == arena.OracleTooEarly {
				sr.Abstained++
			}
			catN[it.Category]++
			if c[i] {
				catK[it.Category]++
			}
			if unique[i] {
				un++
				if c[i] {
					uk++
				}
			}
		}
		for cat, cn := range catN {
			sr.ByCategory[cat] = rate(catK[cat], cn)
		}
		sr.Accuracy = rate(sr.Correct, n).Accuracy
		sr.Wilson = wilson(sr.Correct, n)
		sr.UniqueAccuracy = rate(uk, un).Accuracy
		sr.UniqueWilson = wilson(uk, un)
		for _, name := range seriesOrder {
			rows := series[name]
			if len(rows) < 2 {
				continue
			}
			k := 0
			for _, i := range rows {
				if c[i] {
					k++
				}
			}
			switch k {
			case len(rows):
				sr.Consistency.AllCorrect++
			case 0:
				sr.Consistency.AllWrong++
			default:
				sr.Consistency.Mixed++
			}
		}
		correct[s] = c
		rep.Systems = append(rep.Systems, sr)
	}
	if rep.Systems == nil {
		rep.Systems = []SystemReport{}
	}

	// Majority system: agreement tables and coverage.
	maj := make([]bool, n)
	unan := make([]bool, n)
	conf := make([]float64, n)
	comp := make([]float64, n)
	for i, it := range items {
		maj[i] = Majority(it.Round1).Decision == it.Truth
		unan[i] = Unanimous(it.Round1)
		conf[i] = MeanConfidence(it.Round1)
		comp[i] = Composite(it.Round1)
	}
	var uK, uN, sK, sN int
	for i := range items {
		if unan[i] {
			uN++
			if maj[i] {
				uK++
			}
		} else {
			sN++
			if maj[i] {
				sK++
			}
		}
	}
	rep.Agreement = Agreement{Unanimous: rate(uK, uN), Split: rate(sK, sN)}
	if n > 0 {
		med := median(conf)
		rep.AgreementConfidence.Median = score.Def(med)
		var k, m [4]int // unanimous high, unanimous low, split high, split low
		for i := range items {
			cell := 0
			if !unan[i] {
				cell = 2
			}
			if conf[i] < med {
				cell++
			}
			m[cell]++
			if maj[i] {
				k[cell]++
			}
		}
		rep.AgreementConfidence.UnanimousHigh = rate(k[0], m[0])
		rep.AgreementConfidence.UnanimousLow = rate(k[1], m[1])
		rep.AgreementConfidence.SplitHigh = rate(k[2], m[2])
		rep.AgreementConfidence.SplitLow = rate(k[3], m[3])
	}

	for a := range systems {
		for b := a + 1; b < len(systems); b++ {
			t := score.CrossTab(correct[a], correct[b])
			rep.McNemar = append(rep.McNemar, McNemarRow{A: systems[a], B: systems[b], AOnly: t.N10, BOnly: t.N01, P: t.McNemar()})
		}
	}

	// Round-1 correctness per resolver (abstention or failure = error).
	rc := make([][]bool, len(agents))
	for r, id := range agents {
		rc[r] = make([]bool, n)
		for i, it := range items {
			if v, ok := voteOf(it.Round1, id); ok {
				rc[r][i] = voteCorrect(v, it.Truth)
			}
		}
	}
	// Every ordered pair, like conditional_error, though phi is symmetric:
	// one row per (a, b) keeps the two tables aligned.
	for a := range agents {
		for b := range agents {
			if a != b {
				rep.ErrorCorrelation = append(rep.ErrorCorrelation, PhiRow{A: agents[a], B: agents[b], Phi: score.CrossTab(rc[a], rc[b]).Phi()})
			}
		}
	}
	for g := range agents {
		for o := range agents {
			if g == o {
				continue
			}
			var gw, both int
			for i := range items {
				if !rc[g][i] {
					gw++
					if !rc[o][i] {
						both++
					}
				}
			}
			row := CondRow{Given: agents[g], Other: agents[o]}
			if gw > 0 {
				row.P = score.Def(float64(both) / float64(gw))
			}
			rep.ConditionalError = append(rep.ConditionalError, row)
		}
	}

	if slices.Contains(systems, ArchDeliberative) {
		for _, id := range agents {
			row := RevisionRow{Agent: id}
			for _, it := range items {
				v1, ok1 := voteOf(it.Round1, id)
				v2, ok2 := voteOf(it.Round2, id)
				if !ok1 || !ok2 || !v1.Answered() || !v2.Answered() {
					continue
				}
				c1, c2 := voteCorrect(v1, it.Truth), voteCorrect(v2, it.Truth)
				if c1 && !c2 {
					row.CorrectToWrong++
				}
				if !c1 && c2 {
					row.WrongToCorrect++
				}
			}
			rep.Revisions = append(rep.Revisions, row)
		}
	}

	// Coverage: most certain first (composite descending, id ascending).
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(comp[b], comp[a]); c != 0 {
			return c
		}
		return strings.Compare(items[a].ID, items[b].ID)
	})
	for step := 1; step <= 10; step++ {
		k := (step*n + 9) / 10 // ⌈step·N/10⌉ in integers
		good := 0
		for _, i := range order[:k] {
			if maj[i] {
				good++
			}
		}
		rep.CoverageAccuracy = append(rep.CoverageAccuracy, CoveragePoint{Coverage: float64(step) / 10, N: k, Accuracy: rate(good, k).Accuracy})
	}
	return rep
}

func voteOf(votes []arena.OracleVote, agent string) (arena.OracleVote, bool) {
	for _, v := range votes {
		if v.Agent == agent {
			return v, true
		}
	}
	return arena.OracleVote{}, false
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	m := len(s) / 2
	if len(s)%2 == 1 {
		return s[m]
	}
	return (s[m-1] + s[m]) / 2
}

// Systems expands an --arch list: "single" becomes single:<id> for every
// resolver in panel order; duplicates are dropped; unknown names are errors.
func Systems(list []string, agents []string) ([]string, error) {
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, a := range list {
		a = strings.TrimSpace(a)
		if a == "single" {
			for _, id := range agents {
				add(SingleArch(id))
			}
			continue
		}
		if _, err := ParseArch(a, agents); err != nil {
			return nil, err
		}
		add(a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("oracle: no architecture given")
	}
	return out, nil
}

// pct formats a nullable rate for tables.
func pct(f score.Float) string {
	if !f.OK || math.IsNaN(f.V) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*f.V)
}
