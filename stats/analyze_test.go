package stats_test

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/stats"
)

func row(agent, round, market string, p float64, b any, x float64) stats.Row {
	r := stats.Row{Agent: agent, Round: round, Market: market, Category: "c", Forecast: p, Outcome: x}
	if bv, ok := b.(float64); ok {
		r.Benchmark, r.HasBenchmark = bv, true
	}
	return r
}

func analyze(t *testing.T, rows []stats.Row, opt stats.Options) map[string]stats.AgentResult {
	t.Helper()
	tab, err := stats.FromRows(rows)
	if err != nil {
		t.Fatal(err)
	}
	res, err := stats.Analyze(context.Background(), tab, opt)
	if err != nil {
		t.Fatal(err)
	}
	m := map[string]stats.AgentResult{}
	for _, r := range res {
		m[r.Agent] = r
	}
	return m
}

func defined(t *testing.T, name string, f stats.Float, want float64, tol float64) {
	t.Helper()
	if !f.OK {
		t.Errorf("%s undefined, want %v", name, want)
		return
	}
	near(t, name, f.V, want, tol)
}

func undefined(t *testing.T, name string, f stats.Float) {
	t.Helper()
	if f.OK {
		t.Errorf("%s = %v, want undefined", name, f.V)
	}
}

// A hand-computed two-round example (F6, S1).
func TestAnalyzeHandComputed(t *testing.T) {
	rows := []stats.Row{
		row("A", "r1", "m1", 0.8, 0.6, 1),
		row("A", "r1", "m2", 0.3, 0.5, 0),
		row("B", "r1", "m1", 0.6, 0.6, 1),
		row("A", "r2", "m3", 0.4, 0.7, 0),
		row("B", "r2", "m3", 0.7, 0.7, 0),
	}
	got := analyze(t, rows, stats.Options{})
	a := got["A"]
	// Round 1: B = (0.04+0.09)/2 = 0.065, base (0.16+0.25)/2 = 0.205, α = 0.14.
	// Round 2: B = 0.16, base 0.49, α = 0.33.
	if a.N != 3 || a.Rounds != 2 {
		t.Fatalf("A: n %d rounds %d", a.N, a.Rounds)
	}
	near(t, "brier", a.Brier, 0.1125, 1e-15)
	defined(t, "brier_se", a.BrierSE, 0.0475, 1e-15)
	defined(t, "alpha", a.Alpha, 0.235, 1e-15)
	defined(t, "alpha_se", a.AlphaSE, 0.095, 1e-15)
	defined(t, "t", a.T, 0.235/0.095, 1e-12)
	defined(t, "p", a.P, 1-2/math.Pi*math.Atan(0.235/0.095), 1e-12) // df 1: Cauchy
	defined(t, "beat_pct", a.BeatPct, 100, 0)
	near(t, "murphy brier", a.Murphy.Brier, (0.04+0.09+0.16)/3, 1e-15)
	near(t, "corp score", a.CORP.Score, (0.04+0.09+0.16)/3, 1e-15)
	near(t, "log", a.LogScore, -(math.Log(0.8)+math.Log(0.7)+math.Log(0.6))/3, 1e-15)
	rs := a.RoundScores
	if len(rs) != 2 || rs[0].Round != "r1" || rs[0].N != 2 || rs[1].Round != "r2" {
		t.Fatalf("round scores %+v", rs)
	}
	defined(t, "α r1", rs[0].Alpha, 0.14, 1e-15)
	defined(t, "base r2", rs[1].BaseBrier, 0.49, 1e-15)
	inf := a.Inference
	if inf.AlphaN != 3 || inf.AlphaRounds != 2 || !inf.Provisional || inf.Clusters != 3 {
		t.Errorf("inference %+v", inf)
	}
	defined(t, "shrunk", inf.ShrunkAlpha, 3.0/143*0.235, 1e-15)
	defined(t, "boldness", inf.Boldness, (0.2+0.2+0.3)/3, 1e-15)
	defined(t, "bss", inf.BSS, 1-0.1125/0.25, 1e-15)
	defined(t, "bss market", inf.BSSMarket, 1-0.1125/((0.205+0.49)/2), 1e-15)
	if inf.WinRate.Wins != 3 || inf.Accuracy.K != 3 {
		t.Errorf("wins %+v accuracy %+v", inf.WinRate, inf.Accuracy)
	}
	near(t, "corollary", inf.AlphaParts.ResGain+inf.AlphaParts.RelGap+inf.AlphaParts.ResidualDiff, inf.AlphaParts.Alpha, 1e-15)

	// Agents echoing the benchmark, and the market baseline itself: α = 0
	// exactly in every round, so SE = 0 and t, p are undefined (F7).
	for _, name := range []string{"B", stats.MarketAgent} {
		b := got[name]
		defined(t, name+" alpha", b.Alpha, 0, 0)
		if b.Alpha.V != 0 || math.Signbit(b.Alpha.V) {
			t.Errorf("%s alpha = %v, want exactly +0", name, b.Alpha.V)
		}
		defined(t, name+" alpha_se", b.AlphaSE, 0, 0)
		undefined(t, name+" t", b.T)
		undefined(t, name+" p", b.P)
		defined(t, name+" beat", b.BeatPct, 0, 0)
	}
	m := got[stats.MarketAgent]
	if m.N != 3 || m.Rounds != 2 {
		t.Errorf("market n %d rounds %d", m.N, m.Rounds)
	}
	near(t, "market brier", m.Brier, (0.205+0.49)/2, 1e-15)
}

func TestAnalyzeOrderAndJSONKeys(t *testing.T) {
	tab, _ := stats.FromRows([]stats.Row{row("zed", "1", "m", 0.5, 0.4, 1), row("amy", "1", "m", 0.7, 0.4, 1)})
	res, err := stats.Analyze(context.Background(), tab, stats.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range res {
		names = append(names, r.Agent)
	}
	if strings.Join(names, ",") != "amy,zed,market" {
		t.Errorf("order %v", names)
	}
	b, err := json.Marshal(res[0])
	if err != nil {
		t.Fatal(err)
	}
	// S7's keys, in order, and nothing else at the top level.
	want := []string{"agent", "n", "rounds", "brier", "brier_se", "alpha", "alpha_se", "t", "p", "beat_pct", "murphy", "corp", "ece", "log_score"}
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.Token()
	var keys []string
	for dec.More() {
		k, _ := dec.Token()
		keys = append(keys, k.(string))
		var skip json.RawMessage
		dec.Decode(&skip)
	}
	if strings.Join(keys, ",") != strings.Join(want, ",") {
		t.Errorf("keys %v\nwant %v", keys, want)
	}
	var back map[string]any
	json.Unmarshal(b, &back)
	for _, k := range []string{"unc", "rel", "res", "residual", "bins"} {
		if _, ok := back["murphy"].(map[string]any)[k]; !ok {
			t.Errorf("murphy.%s missing in %s", k, b)
		}
	}
	for _, k := range []string{"score", "mcb", "dsc", "unc"} {
		if _, ok := back["corp"].(map[string]any)[k]; !ok {
			t.Errorf("corp.%s missing", k)
		}
	}
	// One round: SEs, t and p are JSON null, never NaN.
	if back["brier_se"] != nil || back["t"] != nil || back["p"] != nil || back["alpha_se"] != nil {
		t.Errorf("one round should give null SE/t/p: %s", b)
	}
}

func TestAnalyzeEdgeCases(t *testing.T) {
	t.Run("one round one market", func(t *testing.T) {
		a := analyze(t, []stats.Row{row("A", "1", "m", 0.7, 0.5, 1)}, stats.Options{})["A"]
		if a.N != 1 || a.Rounds != 1 {
			t.Fatalf("%+v", a)
		}
		near(t, "brier", a.Brier, 0.09, 1e-15)
		defined(t, "alpha", a.Alpha, 0.16, 1e-15)
		undefined(t, "brier_se", a.BrierSE)
		undefined(t, "alpha_se", a.AlphaSE)
		undefined(t, "t", a.T)
		undefined(t, "cluster se", a.Inference.ClusterSE)
		near(t, "corp identity", a.CORP.MCB-a.CORP.DSC+a.CORP.UNC, a.CORP.Score, 1e-15)
	})
	t.Run("no benchmarks", func(t *testing.T) {
		got := analyze(t, []stats.Row{row("A", "1", "m", 0.7, nil, 1), row("A", "2", "n", 0.2, nil, 0)}, stats.Options{})
		if _, ok := got[stats.MarketAgent]; ok || len(got) != 1 {
			t.Fatalf("no market baseline without benchmarks: %v", got)
		}
		a := got["A"]
		undefined(t, "alpha", a.Alpha)
		undefined(t, "beat", a.BeatPct)
		undefined(t, "shrunk", a.Inference.ShrunkAlpha)
		defined(t, "brier_se", a.BrierSE, math.Abs(0.09-0.04)/2, 1e-15)
	})
	t.Run("benchmark on some rows only", func(t *testing.T) {
		// F5: markets without a benchmark count for Brier, not for Alpha.
		got := analyze(t, []stats.Row{
			row("A", "r1", "m1", 0.8, 0.6, 1), row("A", "r1", "m2", 0.3, nil, 0), row("A", "r2", "m3", 0.4, nil, 0),
		}, stats.Options{})
		a := got["A"]
		if a.N != 3 || a.Rounds != 2 || a.Inference.AlphaN != 1 || a.Inference.AlphaRounds != 1 || a.Inference.MissingB != 2 {
			t.Fatalf("%+v", a.Inference)
		}
		defined(t, "alpha", a.Alpha, 0.12, 1e-15)
		undefined(t, "alpha_se", a.AlphaSE)
		m := got[stats.MarketAgent]
		if m.N != 1 || m.Rounds != 1 {
			t.Errorf("market baseline covers only benchmarked markets: %+v", m)
		}
	})
	t.Run("all identical forecasts", func(t *testing.T) {
		var rows []stats.Row
		for i := range 20 {
			rows = append(rows, row("A", string(rune('a'+i%4)), string(rune('A'+i)), 0.3, 0.3, float64(i%3%2)))
		}
		a := analyze(t, rows, stats.Options{})["A"]
		if len(a.Murphy.Bins) != 1 || len(a.CORP.Blocks) != 1 {
			t.Fatalf("bins %v blocks %v", a.Murphy.Bins, a.CORP.Blocks)
		}
		near(t, "RES", a.Murphy.RES, 0, 1e-17)
		near(t, "DSC", a.CORP.DSC, 0, 1e-16)
		near(t, "residual", a.Murphy.Residual, 0, 1e-16)
		defined(t, "alpha", a.Alpha, 0, 0)
		undefined(t, "t", a.T)
	})
}

func TestAnalyzeRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		rows []stats.Row
		want string
	}{
		{"conflicting outcome", []stats.Row{row("A", "1", "m", 0.5, nil, 1), row("B", "1", "m", 0.5, nil, 0)}, "row 2: outcome 0 of market \"m\" in round \"1\" conflicts with row 1"},
		{"benchmark on one agent only", []stats.Row{row("A", "1", "m", 0.5, 0.4, 1), row("B", "1", "m", 0.5, nil, 1)}, "row 2: benchmark empty of market \"m\" in round \"1\" conflicts with row 1 (0.4)"},
		{"different benchmark", []stats.Row{row("A", "1", "m", 0.5, 0.4, 1), row("B", "1", "m", 0.5, 0.41, 1)}, "benchmark 0.41"},
		{"duplicate", []stats.Row{row("A", "1", "m", 0.5, nil, 1), row("A", "2", "m", 0.5, nil, 1), row("A", "1", "m", 0.6, nil, 1)}, "row 3: agent \"A\" forecasts market \"m\" in round \"1\" twice (also row 1)"},
		{"reserved name", []stats.Row{row("market", "1", "m", 0.5, 0.5, 1)}, "reserved"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tab, err := stats.FromRows(tc.rows)
			if err != nil {
				t.Fatal(err)
			}
			_, err = stats.Analyze(context.Background(), tab, stats.Options{})
			var ie *stats.InputError
			if !errors.As(err, &ie) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want InputError containing %q", err, tc.want)
			}
		})
	}
	if _, err := stats.Analyze(context.Background(), stats.NewTable(0), stats.Options{}); err == nil {
		t.Error("empty table accepted")
	}
	// Reserved name is fine without benchmarks (no baseline is added).
	tab, _ := stats.FromRows([]stats.Row{row("market", "1", "m", 0.5, nil, 1)})
	if _, err := stats.Analyze(context.Background(), tab, stats.Options{}); err != nil {
		t.Errorf("agent named market without benchmarks: %v", err)
	}
	for _, r := range []stats.Row{row("A", "1", "m", 1.2, nil, 1), row("A", "1", "m", 0.5, -0.1, 1), row("A", "1", "m", 0.5, nil, 2), row("", "1", "m", 0.5, nil, 1), row("A", "1", "m", math.NaN(), nil, 1)} {
		if _, err := stats.FromRows([]stats.Row{r}); err == nil {
			t.Errorf("accepted %+v", r)
		}
	}
	// Many problems: capped list with a total.
	var rows []stats.Row
	for i := range 30 {
		rows = append(rows, row("A", "1", "m", 0.5, nil, float64(i%2)))
	}
	tab, _ = stats.FromRows(rows)
	_, err := stats.Analyze(context.Background(), tab, stats.Options{})
	var ie *stats.InputError
	if !errors.As(err, &ie) || ie.Total < 29 || len(ie.Problems) != stats.MaxProblems || !strings.Contains(err.Error(), "more") {
		t.Errorf("err = %v", err)
	}
}

// Bootstrap in Analyze is seeded and reproducible; categories via Subset.
func TestAnalyzeBootstrapAndSubset(t *testing.T) {
	var rows []stats.Row
	for r := range 30 {
		for m := range 7 {
			p := 0.3 + 0.05*float64(m)
			x := float64((r + m) % 2)
			rows = append(rows, stats.Row{Agent: "A", Round: string(rune('a' + r)), Market: string(rune('A'+r)) + string(rune('0'+m)),
				Category: []string{"pol", "eco"}[m%2], Event: string(rune('A' + r)), Forecast: p, Benchmark: 0.5, HasBenchmark: true, Outcome: x})
		}
	}
	tab, _ := stats.FromRows(rows)
	opt := stats.Options{Bootstrap: 499, Seed: 7}
	r1, _ := stats.Analyze(context.Background(), tab, opt)
	r2, _ := stats.Analyze(context.Background(), tab, opt)
	if r1[0].Inference.CI != r2[0].Inference.CI || !r1[0].Inference.CI.Lo.OK {
		t.Fatalf("bootstrap not reproducible: %+v vs %+v", r1[0].Inference.CI, r2[0].Inference.CI)
	}
	if r1[0].Inference.Clusters != 30 {
		t.Errorf("clusters = %d, want 30 events", r1[0].Inference.Clusters)
	}
	// Events = rounds here, so the cluster SE is S1's SE.
	near(t, "cluster SE", r1[0].Inference.ClusterSE.V, r1[0].AlphaSE.V, 1e-15)
	var idx []int
	for i := range tab.Len() {
		if tab.Categories.Names[tab.Category[i]] == "pol" {
			idx = append(idx, i)
		}
	}
	sub, err := stats.Analyze(context.Background(), tab.Subset(idx), stats.Options{})
	if err != nil || sub[0].N != 30*4 {
		t.Fatalf("subset: %v %+v", err, sub)
	}
}
