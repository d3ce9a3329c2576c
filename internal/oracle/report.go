package oracle

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/stats"
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
	Accuracy stats.Float `json:"accuracy"`
}

// Consistency counts the series with more than one question by how many of
// their questions a system got right.
type Consistency struct {
	AllCorrect int `json:"all_correct"`
	Mixed      int `json:"mixed"`
	AllWrong   int `json:"all_wrong"`
}

// SystemReport is one architecture's accuracy figures. A question is
// answered when a vote the architecture reads is not a failure; accuracy
// and the figures after it are over the answered questions only, so a
// dead model server shows as low coverage, never as accuracy.
type SystemReport struct {
	System         string          `json:"system"`
	N              int             `json:"n"`
	Answered       int             `json:"answered"`
	Coverage       stats.Float     `json:"coverage"`
	Correct        int             `json:"correct"`
	Accuracy       stats.Float     `json:"accuracy"`
	Abstained      int             `json:"abstained"`
	Wilson         [2]stats.Float  `json:"wilson"`
	UniqueAccuracy stats.Float     `json:"unique_accuracy"`
	UniqueWilson   [2]stats.Float  `json:"unique_wilson"`
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
	Median        stats.Float `json:"median"`
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
	Phi stats.Float `json:"phi"`
}

// CondRow is P(other wrong | given wrong) in round 1.
type CondRow struct {
	Given string      `json:"given"`
	Other string      `json:"other"`
	P     stats.Float `json:"p"`
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
	Accuracy stats.Float `json:"accuracy"`
}

// ResolverCalls counts one resolver's failed votes (both rounds) and
// keeps the first, in question order, for the run's summary: not in the
// report, whose bytes a cache-only replay repeats while a failure's text
// differs between the live call and the cache miss.
type ResolverCalls struct {
	Agent          string `json:"agent"`
	Votes          int    `json:"votes"`
	Failed         int    `json:"failed"`
	FirstFailure   string `json:"-"`
	FirstFailureID string `json:"-"` // the question of the first failure
}

// AllFailed reports whether the resolver answered nothing.
func (r ResolverCalls) AllFailed() bool { return r.Votes > 0 && r.Failed == r.Votes }

// Report is the evaluation report (`arena oracle eval --format json`).
// The agreement tables and the coverage curve are over the questions the
// majority system answered; the error correlations over the questions
// both resolvers answered.
type Report struct {
	Questions           int                 `json:"questions"`
	Resolvers           []ResolverCalls     `json:"resolvers"`
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
		r.Accuracy = stats.Def(float64(k) / float64(n))
	}
	return r
}

func wilson(k, n int) [2]stats.Float {
	w := stats.Wilson(k, n, stats.Wilson95)
	return [2]stats.Float{w.Lo, w.Hi}
}

// voteCorrect: a YES/NO answer equal to the truth. An abstention or a
// failure is an error.
func voteCorrect(v arena.OracleVote, truth arena.OracleDecision) bool {
	return v.Answered() && v.Decision.Binary() && v.Decision == truth
}

// anyAnswered reports whether a vote is not a failure.
func anyAnswered(votes []arena.OracleVote) bool {
	return slices.ContainsFunc(votes, arena.OracleVote.Answered)
}

// systemAnswered reports whether a system had a vote to decide from: its
// resolver's for single, any round-1 vote otherwise (round 2 asks only
// the resolvers that answered round 1).
func systemAnswered(sys string, round1 []arena.OracleVote) bool {
	if id, ok := strings.CutPrefix(sys, archSinglePrefix); ok {
		v, found := voteOf(round1, id)
		return found && v.Answered()
	}
	return anyAnswered(round1)
}

// BuildReport computes every figure of the evaluation report from the
// votes. systems are architecture names in report order; agents the panel
// in order. The agreement tables and the coverage curve use the majority
// system whether or not it is listed; revisions are reported only when
// deliberative is.
func BuildReport(items []Item, agents, systems []string) Report {
	rep := Report{Questions: len(items), Resolvers: resolverCalls(items, agents), Systems: []SystemReport{}}
	ser := seriesOf(items)
	correct := make([][]bool, len(systems))
	for s, sys := range systems {
		var sr SystemReport
		sr, correct[s] = systemReport(items, sys, ser)
		rep.Systems = append(rep.Systems, sr)
	}
	maj := majorityOf(items)
	rep.Agreement = maj.agreement()
	rep.AgreementConfidence = maj.agreementConfidence()
	rep.McNemar = mcNemar(systems, correct)
	r1 := resolverCorrectnessOf(items, agents)
	rep.ErrorCorrelation = r1.errorCorrelation()
	rep.ConditionalError = r1.conditionalError()
	rep.Revisions = []RevisionRow{}
	if slices.Contains(systems, ArchDeliberative) {
		rep.Revisions = revisions(items, agents)
	}
	rep.CoverageAccuracy = maj.coverageAccuracy(items)
	return rep
}

// resolverCalls counts each resolver's votes and failures, both rounds.
func resolverCalls(items []Item, agents []string) []ResolverCalls {
	out := []ResolverCalls{}
	for _, id := range agents {
		rc := ResolverCalls{Agent: id}
		for _, it := range items {
			for _, v := range append(slices.Clone(it.Round1), it.Round2...) {
				if v.Agent != id {
					continue
				}
				rc.Votes++
				if !v.Answered() {
					if rc.Failed++; rc.Failed == 1 {
						rc.FirstFailure, rc.FirstFailureID = redact.String(v.Failure), it.ID
					}
				}
			}
		}
		out = append(out, rc)
	}
	return out
}

// questionSeries is one series of questions: their indices, in order.
type questionSeries struct {
	name string
	rows []int
}

// seriesOf groups the questions by series, in first-seen order, for
// consistency; a question without a series is in none.
func seriesOf(items []Item) []questionSeries {
	at := map[string]int{} // name → index in out
	var out []questionSeries
	for i, it := range items {
		if it.Series == "" {
			continue
		}
		j, ok := at[it.Series]
		if !ok {
			j = len(out)
			at[it.Series] = j
			out = append(out, questionSeries{name: it.Series})
		}
		out[j].rows = append(out[j].rows, i)
	}
	return out
}

// systemReport computes one architecture's figures, and whether it was
// right on each question (false where it did not answer).
func systemReport(items []Item, sys string, ser []questionSeries) (SystemReport, []bool) {
	n := len(items)
	c := make([]bool, n)
	sr := SystemReport{System: sys, N: n, ByCategory: map[string]Rate{}}
	catK, catN := map[string]int{}, map[string]int{}
	// Unique markets: the first answered row of each series (rows
	// without a series stand alone).
	uk, un := 0, 0
	seen := map[string]bool{}
	for i, it := range items {
		if !systemAnswered(sys, it.Round1) {
			continue
		}
		sr.Answered++
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
		if it.Series == "" || !seen[it.Series] {
			seen[it.Series] = it.Series != ""
			un++
			if c[i] {
				uk++
			}
		}
	}
	for cat, cn := range catN {
		sr.ByCategory[cat] = rate(catK[cat], cn)
	}
	sr.Coverage = rate(sr.Answered, n).Accuracy
	sr.Accuracy = rate(sr.Correct, sr.Answered).Accuracy
	sr.Wilson = wilson(sr.Correct, sr.Answered)
	sr.UniqueAccuracy = rate(uk, un).Accuracy
	sr.UniqueWilson = wilson(uk, un)
	sr.Consistency = consistency(items, sys, c, ser)
	return sr, c
}

// consistency counts the series with more than one answered question by
// how many of them the system got right (correct[i]).
func consistency(items []Item, sys string, correct []bool, ser []questionSeries) Consistency {
	var out Consistency
	for _, s := range ser {
		rows := slices.DeleteFunc(slices.Clone(s.rows), func(i int) bool { return !systemAnswered(sys, items[i].Round1) })
		if len(rows) < 2 {
			continue
		}
		k := 0
		for _, i := range rows {
			if correct[i] {
				k++
			}
		}
		switch k {
		case len(rows):
			out.AllCorrect++
		case 0:
			out.AllWrong++
		default:
			out.Mixed++
		}
	}
	return out
}

// majorityView is the majority system over the questions it answered (sub
// holds their indices): whether it was right and whether the panel was
// unanimous (by question), the panel's mean confidence (in sub's order)
// and its composite certainty (by question). The agreement tables and the
// coverage curve are computed from it.
type majorityView struct {
	sub       []int
	maj, unan []bool
	conf      []float64
	comp      []float64
}

func majorityOf(items []Item) majorityView {
	var sub []int
	for i, it := range items {
		if anyAnswered(it.Round1) {
			sub = append(sub, i)
		}
	}
	n := len(items)
	m := majorityView{sub: sub, maj: make([]bool, n), unan: make([]bool, n), conf: make([]float64, 0, len(sub)), comp: make([]float64, n)}
	for _, i := range sub {
		it := items[i]
		m.maj[i] = Majority(it.Round1).Decision == it.Truth
		m.unan[i] = Unanimous(it.Round1)
		m.conf = append(m.conf, MeanConfidence(it.Round1))
		m.comp[i] = Composite(it.Round1)
	}
	return m
}

// agreement splits the majority's accuracy by panel unanimity.
func (m majorityView) agreement() Agreement {
	var uK, uN, sK, sN int
	for _, i := range m.sub {
		if m.unan[i] {
			uN++
			if m.maj[i] {
				uK++
			}
		} else {
			sN++
			if m.maj[i] {
				sK++
			}
		}
	}
	return Agreement{Unanimous: rate(uK, uN), Split: rate(sK, sN)}
}

// agreementConfidence crosses unanimity with mean confidence, split at
// its median; zero when the majority answered nothing.
func (m majorityView) agreementConfidence() AgreementConfidence {
	var ac AgreementConfidence
	if len(m.sub) == 0 {
		return ac
	}
	med := stats.Median(m.conf)
	ac.Median = stats.Def(med)
	var k, n [4]int // unanimous high, unanimous low, split high, split low
	for j, i := range m.sub {
		cell := 0
		if !m.unan[i] {
			cell = 2
		}
		if m.conf[j] < med {
			cell++
		}
		n[cell]++
		if m.maj[i] {
			k[cell]++
		}
	}
	ac.UnanimousHigh = rate(k[0], n[0])
	ac.UnanimousLow = rate(k[1], n[1])
	ac.SplitHigh = rate(k[2], n[2])
	ac.SplitLow = rate(k[3], n[3])
	return ac
}

// coverageAccuracy is the majority's accuracy on the most certain tenth
// of the questions it answered, two tenths, and so on: most certain first
// (composite descending, id ascending).
func (m majorityView) coverageAccuracy(items []Item) []CoveragePoint {
	order := slices.Clone(m.sub)
	slices.SortStableFunc(order, func(a, b int) int {
		if c := cmp.Compare(m.comp[b], m.comp[a]); c != 0 {
			return c
		}
		return strings.Compare(items[a].ID, items[b].ID)
	})
	var out []CoveragePoint
	for step := 1; step <= 10; step++ {
		k := (step*len(order) + 9) / 10 // ⌈step·N/10⌉ in integers
		good := 0
		for _, i := range order[:k] {
			if m.maj[i] {
				good++
			}
		}
		out = append(out, CoveragePoint{Coverage: float64(step) / 10, N: k, Accuracy: rate(good, k).Accuracy})
	}
	return out
}

// mcNemar compares every pair of systems, from whether each was right on
// each question.
func mcNemar(systems []string, correct [][]bool) []McNemarRow {
	out := []McNemarRow{}
	for a := range systems {
		for b := a + 1; b < len(systems); b++ {
			t := stats.CrossTab(correct[a], correct[b])
			out = append(out, McNemarRow{A: systems[a], B: systems[b], AOnly: t.N10, BOnly: t.N01, P: t.McNemar()})
		}
	}
	return out
}

// resolverCorrectness is each resolver's round-1 correctness (an
// abstention is an error) and whether it answered, by question; a
// failure is no answer, so a pair is compared where both answered.
type resolverCorrectness struct {
	agents            []string
	correct, answered [][]bool
}

func resolverCorrectnessOf(items []Item, agents []string) resolverCorrectness {
	n := len(items)
	r1 := resolverCorrectness{agents: agents, correct: make([][]bool, len(agents)), answered: make([][]bool, len(agents))}
	for r, id := range agents {
		r1.correct[r], r1.answered[r] = make([]bool, n), make([]bool, n)
		for i, it := range items {
			if v, ok := voteOf(it.Round1, id); ok {
				r1.correct[r][i], r1.answered[r][i] = voteCorrect(v, it.Truth), v.Answered()
			}
		}
	}
	return r1
}

// both is resolvers a's and b's correctness on the questions both
// answered.
func (r1 resolverCorrectness) both(a, b int) (ca, cb []bool) {
	for i := range r1.answered[a] {
		if r1.answered[a][i] && r1.answered[b][i] {
			ca, cb = append(ca, r1.correct[a][i]), append(cb, r1.correct[b][i])
		}
	}
	return ca, cb
}

// errorCorrelation is the phi coefficient of every ordered pair of
// resolvers, like conditionalError, though phi is symmetric: one row per
// (a, b) keeps the two tables aligned.
func (r1 resolverCorrectness) errorCorrelation() []PhiRow {
	out := []PhiRow{}
	for a := range r1.agents {
		for b := range r1.agents {
			if a != b {
				ca, cb := r1.both(a, b)
				out = append(out, PhiRow{A: r1.agents[a], B: r1.agents[b], Phi: stats.CrossTab(ca, cb).Phi()})
			}
		}
	}
	return out
}

// conditionalError is P(other wrong | given wrong) for every ordered pair
// of resolvers.
func (r1 resolverCorrectness) conditionalError() []CondRow {
	out := []CondRow{}
	for g := range r1.agents {
		for o := range r1.agents {
			if g == o {
				continue
			}
			cg, co := r1.both(g, o)
			var gw, bw int
			for i := range cg {
				if !cg[i] {
					gw++
					if !co[i] {
						bw++
					}
				}
			}
			row := CondRow{Given: r1.agents[g], Other: r1.agents[o]}
			if gw > 0 {
				row.P = stats.Def(float64(bw) / float64(gw))
			}
			out = append(out, row)
		}
	}
	return out
}

// revisions counts each resolver's round-2 changes of correctness, over
// the questions it answered in both rounds.
func revisions(items []Item, agents []string) []RevisionRow {
	out := []RevisionRow{}
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
		out = append(out, row)
	}
	return out
}

func voteOf(votes []arena.OracleVote, agent string) (arena.OracleVote, bool) {
	for _, v := range votes {
		if v.Agent == agent {
			return v, true
		}
	}
	return arena.OracleVote{}, false
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
func pct(f stats.Float) string {
	if !f.OK || math.IsNaN(f.V) {
		return "–"
	}
	return fmt.Sprintf("%.1f%%", 100*f.V)
}
