package oracle

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
	"github.com/forecast-arena/arena/internal/llm/llmtest"
	"github.com/forecast-arena/arena/stats"
)

// scripted answer of one resolver on one question in one round.
type scripted struct {
	kind string // "ok", "fail" (HTTP 500 on every attempt), "garbage" (unparseable, also when re-asked)
	dec  arena.OracleDecision
	conf float64
}

type world struct {
	agents []string
	items  []Item // truth, category, series; votes filled by the test's own reading of the script
	r1, r2 map[string]scripted
}

func key(agent string, q, round int) string { return fmt.Sprintf("%s/%d/%d", agent, q, round) }

// newWorld scripts three resolvers: alpha right ~85%, beta wrong mostly
// when alpha is (correlated errors), gamma abstaining, failing for good on
// some questions and producing garbage on one; round 2 sways resolvers
// toward the round-1 majority and flips a few the wrong way.
func newWorld(n int) *world {
	w := &world{agents: []string{"alpha", "beta", "gamma"}, r1: map[string]scripted{}, r2: map[string]scripted{}}
	rng := rand.New(rand.NewPCG(7, 11))
	confs := []float64{0.55, 0.7, 0.85, 0.95}
	cats := []string{"Sports", "Politics", "Crypto"}
	other := func(d arena.OracleDecision) arena.OracleDecision {
		if d == arena.OracleYes {
			return arena.OracleNo
		}
		return arena.OracleYes
	}
	for i := range n {
		truth := arena.OracleNo
		if rng.Float64() < 0.4 {
			truth = arena.OracleYes
		}
		series := fmt.Sprintf("S%d", i/3) // series of up to three rows
		if i%7 == 0 {
			series = ""
		}
		w.items = append(w.items, Item{ID: fmt.Sprintf("Q%03d", i), Category: cats[i%3], Series: series, Truth: truth})
		aWrong := rng.Float64() < 0.15
		bWrong := rng.Float64() < 0.1
		if aWrong {
			bWrong = rng.Float64() < 0.7
		}
		pick := func(wrong bool) scripted {
			d := truth
			if wrong {
				d = other(truth)
			}
			return scripted{kind: "ok", dec: d, conf: confs[rng.IntN(len(confs))]}
		}
		w.r1[key("alpha", i, 1)] = pick(aWrong)
		w.r1[key("beta", i, 1)] = pick(bWrong)
		g := pick(rng.Float64() < 0.25)
		switch {
		case i == 5 || i == 17:
			g = scripted{kind: "fail"}
		case i == 9:
			g = scripted{kind: "garbage"}
		case rng.Float64() < 0.12:
			g.dec = arena.OracleTooEarly
		}
		w.r1[key("gamma", i, 1)] = g
		// Round 2 for every resolver that answered.
		var yes, no int
		for _, a := range w.agents {
			s := w.r1[key(a, i, 1)]
			if s.kind == "ok" && s.dec == arena.OracleYes {
				yes++
			} else if s.kind == "ok" && s.dec == arena.OracleNo {
				no++
			}
		}
		for _, a := range w.agents {
			s := w.r1[key(a, i, 1)]
			if s.kind != "ok" {
				continue
			}
			s2 := s
			switch {
			case yes > no && s.dec != arena.OracleYes:
				s2 = scripted{kind: "ok", dec: arena.OracleYes, conf: 0.6}
			case no > yes && s.dec != arena.OracleNo:
				s2 = scripted{kind: "ok", dec: arena.OracleNo, conf: 0.6}
			case rng.Float64() < 0.08 && s.dec.Binary():
				s2 = scripted{kind: "ok", dec: other(s.dec), conf: 0.65}
			}
			w.r2[key(a, i, 2)] = s2
		}
	}
	return w
}

var qidRE = regexp.MustCompile(`Question: (Q\d+)`)

// serve answers every resolver's requests from the script.
func (w *world) serve(srv *llmtest.Server, delay time.Duration) {
	for _, a := range w.agents {
		srv.Handle(a, func(req llmtest.ChatRequest) llmtest.Reply {
			user := req.Messages[1].Text()
			m := qidRE.FindStringSubmatch(user)
			if m == nil {
				return llmtest.Fail(400, "no question id in prompt")
			}
			var qi int
			fmt.Sscanf(m[1], "Q%d", &qi)
			round := 1
			if strings.Contains(user, "Other resolvers answered") {
				round = 2
			}
			s, ok := w.r1[key(a, qi, 1)]
			if round == 2 {
				s, ok = w.r2[key(a, qi, 2)]
			}
			if !ok {
				return llmtest.Fail(400, "unscripted call")
			}
			var r llmtest.Reply
			switch s.kind {
			case "fail":
				r = llmtest.Fail(500, "resolver down")
			case "garbage":
				r = llmtest.OK("I am not sure what to say.", 100, 10)
			default:
				b, _ := json.Marshal(map[string]any{"decision": s.dec, "confidence": s.conf, "reasoning": fmt.Sprintf("the evidence says %s", s.dec)})
				r = llmtest.OK("Answer:\n```json\n"+string(b)+"\n```", 1000, 50)
			}
			r.Delay = delay
			return r
		})
	}
}

func (w *world) questions() []Question {
	qs := make([]Question, len(w.items))
	for i, it := range w.items {
		qs[i] = Question{ID: it.ID, Text: it.ID + ": will it happen?", Criteria: "Resolves YES if it happens.", Category: it.Category, Series: it.Series,
			Cutoff: time.Date(2025, 6, 1, 0, 0, 0, 0, time.UTC)}
	}
	return qs
}

func testPanel(t testing.TB, srv *llmtest.Server, agents []string, cacheDir string, cacheOnly bool) *Panel {
	t.Helper()
	p := &Panel{Retriever: nil, Now: func() time.Time { return time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC) }}
	for _, a := range agents {
		spec := llm.ModelSpec{ID: a, Name: a, Provider: "local", Model: a, BaseURL: srv.BaseURL, Timeout: arena.Duration(5 * time.Second),
			InputUSDPerMtok: 1_000_000, OutputUSDPerMtok: 4_000_000}
		c, err := llm.NewClient(spec, "", llm.WithRetryPolicy(llm.RetryPolicy{MaxAttempts: 3, BaseDelay: time.Millisecond, MaxDelay: 2 * time.Millisecond}),
			llm.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		var comp llm.Completer = c
		if cacheDir != "" {
			comp = llm.NewChain(c, llm.ChainConfig{Cache: llm.DirStore{Dir: cacheDir}, CacheOnly: cacheOnly})
		}
		p.Resolvers = append(p.Resolvers, &Resolver{ID: a, Completer: comp})
	}
	return p
}

// ---- independent computation of the report from the script ----

func wilsonRef(k, n int) [2]any {
	if n == 0 {
		return [2]any{nil, nil}
	}
	z := 1.959963984540054 // Φ⁻¹(0.975)
	p := float64(k) / float64(n)
	fn := float64(n)
	c := (p + z*z/(2*fn)) / (1 + z*z/fn)
	h := z * math.Sqrt(p*(1-p)/fn+z*z/(4*fn*fn)) / (1 + z*z/fn)
	return [2]any{math.Max(0, c-h), math.Min(1, c+h)}
}

func acc(k, n int) any {
	if n == 0 {
		return nil
	}
	return float64(k) / float64(n)
}

func binomP(b, c int) float64 {
	n := b + c
	if n == 0 {
		return 1
	}
	k := min(b, c)
	// Exact: sum C(n,i) / 2^n with big-number-free recurrence in float64
	// (n is small here).
	term := math.Pow(0.5, float64(n))
	sum := 0.0
	for i := 0; i <= k; i++ {
		sum += term
		term = term * float64(n-i) / float64(i+1)
	}
	return math.Min(1, 2*sum)
}

func (w *world) expected(systems []string) map[string]any {
	n := len(w.items)
	ans := func(a string, q, round int) (arena.OracleDecision, float64, bool) {
		m := w.r1
		if round == 2 {
			m = w.r2
		}
		s, ok := m[key(a, q, round)]
		if !ok || s.kind != "ok" {
			return "", 0, false
		}
		return s.dec, s.conf, true
	}
	majority := func(q, round int) (arena.OracleDecision, bool) { // decision, strict
		y, no := 0, 0
		for _, a := range w.agents {
			d, _, ok := ans(a, q, round)
			if ok && d == arena.OracleYes {
				y++
			}
			if ok && d == arena.OracleNo {
				no++
			}
		}
		if y > no {
			return arena.OracleYes, true
		}
		return arena.OracleNo, no > y
	}
	decide := func(sys string, q int) arena.OracleDecision {
		switch {
		case sys == "majority":
			d, _ := majority(q, 1)
			return d
		case sys == "weighted":
			var y, no float64
			for _, a := range w.agents {
				d, c, ok := ans(a, q, 1)
				if ok && d == arena.OracleYes {
					y += c
				}
				if ok && d == arena.OracleNo {
					no += c
				}
			}
			if y > no {
				return arena.OracleYes
			}
			return arena.OracleNo
		case sys == "deliberative":
			if d, ok := majority(q, 2); ok {
				return d
			}
			if d, ok := majority(q, 1); ok {
				return d
			}
			return arena.OracleNo
		default:
			d, _, _ := ans(strings.TrimPrefix(sys, "single:"), q, 1)
			return d
		}
	}
	// answered: the system had a vote that is not a failure.
	answered := func(sys string, q int) bool {
		if a, ok := strings.CutPrefix(sys, "single:"); ok {
			_, _, ok := ans(a, q, 1)
			return ok
		}
		for _, a := range w.agents {
			if _, _, ok := ans(a, q, 1); ok {
				return true
			}
		}
		return false
	}
	correct := map[string][]bool{}
	var sysOut []any
	for _, sys := range systems {
		c := make([]bool, n)
		k, abst, na := 0, 0, 0
		catK, catN := map[string]int{}, map[string]int{}
		seen := map[string]bool{}
		uk, un := 0, 0
		for i, it := range w.items {
			if !answered(sys, i) {
				continue
			}
			na++
			d := decide(sys, i)
			c[i] = d == it.Truth
			if c[i] {
				k++
				catK[it.Category]++
			}
			if d == arena.OracleTooEarly {
				abst++
			}
			catN[it.Category]++
			if it.Series == "" || !seen[it.Series] {
				seen[it.Series] = it.Series != ""
				un++
				if c[i] {
					uk++
				}
			}
		}
		groups := map[string][]bool{}
		for i, it := range w.items {
			if it.Series != "" && answered(sys, i) {
				groups[it.Series] = append(groups[it.Series], c[i])
			}
		}
		ac, mx, aw := 0, 0, 0
		for _, g := range groups {
			if len(g) < 2 {
				continue
			}
			good := 0
			for _, x := range g {
				if x {
					good++
				}
			}
			switch good {
			case len(g):
				ac++
			case 0:
				aw++
			default:
				mx++
			}
		}
		byCat := map[string]any{}
		for cat, cn := range catN {
			byCat[cat] = map[string]any{"n": cn, "accuracy": acc(catK[cat], cn)}
		}
		correct[sys] = c
		sysOut = append(sysOut, map[string]any{"system": sys, "n": n, "answered": na, "coverage": acc(na, n), "correct": k, "accuracy": acc(k, na), "abstained": abst,
			"wilson": wilsonRef(k, na), "unique_accuracy": acc(uk, un), "unique_wilson": wilsonRef(uk, un),
			"consistency": map[string]any{"all_correct": ac, "mixed": mx, "all_wrong": aw}, "by_category": byCat})
	}
	// Agreement, with the majority system.
	unan := make([]bool, n)
	meanConf := make([]float64, n)
	majOK := make([]bool, n)
	for i, it := range w.items {
		d0, _, ok0 := ans(w.agents[0], i, 1)
		unan[i] = true
		var s float64
		m := 0
		for _, a := range w.agents {
			d, c, ok := ans(a, i, 1)
			if !ok || d == arena.OracleTooEarly || !ok0 || d != d0 {
				unan[i] = false
			}
			if ok && d != arena.OracleTooEarly {
				s += c
				m++
			}
		}
		if m > 0 {
			meanConf[i] = s / float64(m)
		}
		d, _ := majority(i, 1)
		majOK[i] = d == it.Truth
	}
	cell := func(u, high bool) map[string]any {
		k, m := 0, 0
		for i := range w.items {
			hi := meanConf[i] >= stats.Median(meanConf)
			if unan[i] == u && (high == hi) {
				m++
				if majOK[i] {
					k++
				}
			}
		}
		return map[string]any{"n": m, "accuracy": acc(k, m)}
	}
	agree := func(u bool) map[string]any {
		k, m := 0, 0
		for i := range w.items {
			if unan[i] == u {
				m++
				if majOK[i] {
					k++
				}
			}
		}
		return map[string]any{"n": m, "accuracy": acc(k, m)}
	}
	sorted := slices.Clone(meanConf)
	sort.Float64s(sorted)
	med := (sorted[n/2-1] + sorted[n/2]) / 2
	if n%2 == 1 {
		med = sorted[n/2]
	}
	var mcn []any
	for a := range systems {
		for b := a + 1; b < len(systems); b++ {
			ao, bo := 0, 0
			for i := range w.items {
				if correct[systems[a]][i] && !correct[systems[b]][i] {
					ao++
				}
				if !correct[systems[a]][i] && correct[systems[b]][i] {
					bo++
				}
			}
			mcn = append(mcn, map[string]any{"a": systems[a], "b": systems[b], "a_only": ao, "b_only": bo, "p": binomP(ao, bo)})
		}
	}
	wrong := func(a string, i int) bool {
		d, _, ok := ans(a, i, 1)
		return !ok || d != w.items[i].Truth
	}
	// Two resolvers' errors are compared where both answered.
	bothAnswered := func(a, b string, i int) bool {
		_, _, oka := ans(a, i, 1)
		_, _, okb := ans(b, i, 1)
		return oka && okb
	}
	var phis, conds []any
	for x := range w.agents {
		for y := range w.agents {
			if x == y {
				continue
			}
			var n11, n10, n01, n00 float64 // over errors: both, x only, y only, neither
			for i := range w.items {
				if !bothAnswered(w.agents[x], w.agents[y], i) {
					continue
				}
				ex, ey := wrong(w.agents[x], i), wrong(w.agents[y], i)
				switch {
				case ex && ey:
					n11++
				case ex:
					n10++
				case ey:
					n01++
				default:
					n00++
				}
			}
			den := math.Sqrt((n11 + n10) * (n01 + n00) * (n11 + n01) * (n10 + n00))
			var phi any
			if den > 0 {
				phi = (n11*n00 - n10*n01) / den
			}
			phis = append(phis, map[string]any{"a": w.agents[x], "b": w.agents[y], "phi": phi})
		}
	}
	for _, g := range w.agents {
		for _, o := range w.agents {
			if g == o {
				continue
			}
			gw, both := 0, 0
			for i := range w.items {
				if bothAnswered(g, o, i) && wrong(g, i) {
					gw++
					if wrong(o, i) {
						both++
					}
				}
			}
			conds = append(conds, map[string]any{"given": g, "other": o, "p": acc(both, gw)})
		}
	}
	var revs []any
	if slices.Contains(systems, "deliberative") {
		for _, a := range w.agents {
			cw, wc := 0, 0
			for i, it := range w.items {
				d1, _, ok1 := ans(a, i, 1)
				d2, _, ok2 := ans(a, i, 2)
				if !ok1 || !ok2 {
					continue
				}
				if d1 == it.Truth && d2 != it.Truth {
					cw++
				}
				if d1 != it.Truth && d2 == it.Truth {
					wc++
				}
			}
			revs = append(revs, map[string]any{"agent": a, "correct_to_wrong": cw, "wrong_to_correct": wc})
		}
	}
	order := make([]int, n)
	for i := range order {
		order[i] = i
	}
	comp := func(i int) float64 {
		c := meanConf[i]
		if unan[i] {
			c++
		}
		return c
	}
	sort.SliceStable(order, func(a, b int) bool {
		if comp(order[a]) != comp(order[b]) {
			return comp(order[a]) > comp(order[b])
		}
		return w.items[order[a]].ID < w.items[order[b]].ID
	})
	var cov []any
	for s := 1; s <= 10; s++ {
		k := int(math.Ceil(float64(s) * float64(n) / 10))
		good := 0
		for _, i := range order[:k] {
			if majOK[i] {
				good++
			}
		}
		cov = append(cov, map[string]any{"coverage": float64(s) / 10, "n": k, "accuracy": acc(good, k)})
	}
	var resolvers []any
	for _, a := range w.agents {
		votes, failed, first := 0, 0, ""
		for i, it := range w.items {
			votes++
			if _, _, ok := ans(a, i, 1); !ok {
				if failed++; failed == 1 {
					first = it.ID
				}
			}
			if _, ok := w.r2[key(a, i, 2)]; ok {
				votes++
			}
		}
		resolvers = append(resolvers, map[string]any{"agent": a, "votes": votes, "failed": failed, "first_failure_id": first})
	}
	return map[string]any{"questions": n, "resolvers": resolvers, "systems": sysOut,
		"agreement":            map[string]any{"unanimous": agree(true), "split": agree(false)},
		"agreement_confidence": map[string]any{"median": med, "unanimous_high": cell(true, true), "unanimous_low": cell(true, false), "split_high": cell(false, true), "split_low": cell(false, false)},
		"mcnemar":              mcn, "error_correlation": phis, "conditional_error": conds, "revisions": revs, "coverage_accuracy": cov}
}

// normalize turns a value into its generic JSON form.
func normalize(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

// diff compares generic JSON values, numbers within 1e-12.
func diff(path string, a, b any, out *[]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, fmt.Sprintf("%s: %v != %v", path, a, b))
			return
		}
		for k := range x {
			diff(path+"."+k, x[k], y[k], out)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, fmt.Sprintf("%s: %v != %v", path, a, b))
			return
		}
		for i := range x {
			diff(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], out)
		}
	case float64:
		y, ok := b.(float64)
		if !ok || math.Abs(x-y) > 1e-12 {
			*out = append(*out, fmt.Sprintf("%s: %v != %v", path, a, b))
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, fmt.Sprintf("%s: %v != %v", path, a, b))
		}
	}
}

func items(w *world, res []Result) []Item {
	out := make([]Item, len(res))
	for i, r := range res {
		out[i] = w.items[i]
		out[i].Round1, out[i].Round2 = r.Round1, r.Round2
	}
	return out
}

func TestScriptedEvaluation(t *testing.T) {
	w := newWorld(60)
	srv := llmtest.New(t)
	w.serve(srv, 0)
	p := testPanel(t, srv, w.agents, "", false)
	p.Workers, p.Deliberate = 8, true
	var progress []int
	var pmu sync.Mutex
	totals := map[int]bool{}
	p.Progress = func(d, tot int) { pmu.Lock(); progress = append(progress, d); totals[tot] = true; pmu.Unlock() }
	res := p.Run(context.Background(), w.questions())
	systems := []string{"single:alpha", "single:beta", "single:gamma", "majority", "weighted", "deliberative"}
	rep := BuildReport(items(w, res), w.agents, systems)
	want := w.expected(systems)
	// The first failure is kept out of the report; its text is the client's.
	for i, r := range want["resolvers"].([]any) {
		m, got := r.(map[string]any), rep.Resolvers[i]
		if id := m["first_failure_id"].(string); got.FirstFailureID != id || (id != "") != strings.Contains(got.FirstFailure, "HTTP 500 Internal Server Error: resolver down") {
			t.Errorf("%s: first failure on %q: %q, want on %q", got.Agent, got.FirstFailureID, got.FirstFailure, id)
		}
		delete(m, "first_failure_id")
	}
	var d []string
	diff("report", normalize(t, want), normalize(t, rep), &d)
	for _, s := range d {
		t.Error(s)
	}

	// Call log: one round-1 call per resolver and question, plus the
	// retries of failures (3 attempts for a dead endpoint, 1 re-ask for
	// garbage); one round-2 call per resolver that answered.
	calls := map[string]int{}
	for _, r := range srv.Requests("") {
		user := r.Body.Messages[1].Text()
		var qi int
		fmt.Sscanf(qidRE.FindStringSubmatch(user)[1], "Q%d", &qi)
		round := 1
		if strings.Contains(user, "Other resolvers answered") {
			round = 2
			if strings.Contains(user, "alpha") || strings.Contains(user, "beta") || strings.Contains(user, "gamma") {
				t.Errorf("round-2 prompt names a resolver: %s", user)
			}
		}
		calls[key(r.Model, qi, round)]++
	}
	wantTotal := 0
	for i := range w.items {
		for _, a := range w.agents {
			s := w.r1[key(a, i, 1)]
			want := 1
			switch s.kind {
			case "fail":
				want = 3
			case "garbage":
				want = 2
			}
			if got := calls[key(a, i, 1)]; got != want {
				t.Errorf("%s round 1: %d calls, want %d", key(a, i, 1), got, want)
			}
			want2 := 0
			if s.kind == "ok" {
				want2 = 1
			}
			if got := calls[key(a, i, 2)]; got != want2 {
				t.Errorf("%s round 2: %d calls, want %d", key(a, i, 2), got, want2)
			}
			wantTotal += want + want2
		}
	}
	if got := len(srv.Requests("")); got != wantTotal {
		t.Errorf("%d requests, want %d", got, wantTotal)
	}
	// Recorded failures, with what was asked and answered.
	g5 := res[5].Round1[2]
	if g5.Answered() || !strings.Contains(g5.Failure, "500") || g5.Prompt == "" {
		t.Errorf("dead resolver vote %+v", g5)
	}
	g9 := res[9].Round1[2]
	if g9.Answered() || g9.Raw != "I am not sure what to say." || g9.Calls != 2 || !strings.Contains(g9.Failure, "unparseable") {
		t.Errorf("garbage vote %+v", g9)
	}
	a0 := res[0].Round1[0]
	if a0.InputTokens != 1000 || a0.OutputTokens != 50 || a0.CostMicros != 1200 || a0.Format != llm.FormatJSONSchema || a0.Reasoning == "" {
		t.Errorf("vote accounting %+v", a0)
	}
	// The total is known from the start (a retrieval and two calls per
	// resolver per question, deliberating) and the count reaches it, the
	// round-2 calls of resolvers that did not answer counted as done.
	if planned := len(w.items) * (1 + 2*len(w.agents)); len(progress) == 0 || progress[len(progress)-1] != planned || len(totals) != 1 || !totals[planned] {
		t.Errorf("progress ended at %v of totals %v, want %d of %d", progress[len(progress)-1:], totals, planned, planned)
	}
	if slices.Max(progress) != progress[len(progress)-1] {
		t.Errorf("progress went past its end: %v", progress)
	}
	// The script must exercise what it claims to.
	cw, wc := 0, 0
	for _, r := range rep.Revisions {
		cw += r.CorrectToWrong
		wc += r.WrongToCorrect
	}
	if cw == 0 || wc == 0 || rep.Systems[2].Abstained == 0 || rep.Agreement.Split.N == 0 || rep.Agreement.Unanimous.N == 0 {
		t.Errorf("script too tame: revisions %+v, gamma abstained %d, agreement %+v", rep.Revisions, rep.Systems[2].Abstained, rep.Agreement)
	}
	t.Logf("revisions %s agreement %s", mustJSON(rep.Revisions), mustJSON(rep.Agreement))
}

func mustJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
