package main

import (
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/forecast/scoring"
	"github.com/forecast-arena/arena/internal/report"
	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/stats"
)

func TestReportPower(t *testing.T) {
	t.Parallel()
	out, _, err := cli(t, nil, "report", "power", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []map[string]float64
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	// S5 with exact quantiles (the paper's 5567 moves by two).
	want := [][3]float64{{0.005, 5565, 795}, {0.01, 1392, 199}, {0.02, 348, 50}, {0.03, 155, 23}, {0.05, 56, 8}, {0.1, 14, 2}}
	if len(rows) != len(want) {
		t.Fatalf("rows %v", rows)
	}
	for i, w := range want {
		r := rows[i]
		if len(r) != 3 || r["alpha"] != w[0] || r["n"] != w[1] || r["rounds"] != w[2] {
			t.Errorf("row %d = %v, want alpha %v n %v rounds %v", i, r, w[0], w[1], w[2])
		}
	}
	out, _, err = cli(t, nil, "report", "power", "--alpha", "0.02", "--kappa", "0.025", "--power", "0.9", "--q", "0.3", "--boldness", "0.1", "--markets-per-round", "5", "--format", "csv")
	if err != nil {
		t.Fatal(err)
	}
	// ((z_.975 + z_.9)/0.02)² · 4·0.3·0.7·0.01 = (3.241516/0.02)²·0.0084 = 220.65… → 221, 45 rounds.
	if strings.TrimSpace(out) != "alpha,n,rounds\n0.02,221,45" {
		t.Errorf("csv = %q", out)
	}
	out, _, err = cli(t, nil, "report", "power", "--n", "348", "--format", "json")
	if err != nil || !strings.Contains(out, `"n": 348`) || !strings.Contains(out, `"alpha": 0.0199933`) {
		t.Errorf("inverse: %v %s", err, out)
	}
	out, _, err = cli(t, nil, "report", "power")
	if err != nil || !strings.Contains(out, "5565") || !strings.Contains(out, "exact normal quantiles") {
		t.Errorf("table: %v %s", err, out)
	}
	for _, bad := range [][]string{{"--kappa", "1"}, {"--power", "0"}, {"--q", "1.5"}, {"--boldness", "0"}, {"--markets-per-round", "0"},
		{"--alpha", "0.01,x"}, {"--alpha", "-1"}, {"--n", "0"}, {"--alpha", "0.1", "--n", "5"}, {"--format", "xml"}, {"extra"}} {
		if _, _, err := cli(t, nil, append([]string{"report", "power"}, bad...)...); err == nil {
			t.Errorf("accepted %v", bad)
		}
	}
}

func TestReportUsage(t *testing.T) {
	t.Parallel()
	if _, _, err := cli(t, nil, "report"); err == nil {
		t.Error("no kind accepted")
	}
	if _, _, err := cli(t, nil, "report", "nonsense"); err == nil || !strings.Contains(err.Error(), "baselines") {
		t.Errorf("unknown kind: %v", err)
	}
	if _, errOut, err := cli(t, nil, "report", "-h"); err != nil || !strings.Contains(errOut, "leaderboard") {
		t.Errorf("help: %v %q", err, errOut)
	}
}

// Small ForecastBench-shaped sets of our own: one market question with a
// freeze value (resolved Yes), one unresolved, one dataset question with
// two resolution dates (one Yes, one No).
const rptQuestions = `{"forecast_due_date": "2025-10-26", "question_set": "2025-10-26-llm.json", "questions": [
 {"id": "mq1", "source": "manifold", "question": "Will A happen?", "resolution_criteria": "r", "background": "", "market_info_open_datetime": "2025-01-01T00:00:00+00:00", "market_info_close_datetime": "2026-01-01T00:00:00+00:00", "market_info_resolution_criteria": "N/A", "url": "https://example.org/a", "freeze_datetime": "2025-10-16T00:00:00+00:00", "freeze_datetime_value": "0.8", "freeze_datetime_value_explanation": "The market value.", "source_intro": "", "resolution_dates": "N/A"},
 {"id": "mq2", "source": "polymarket", "question": "Will B happen?", "resolution_criteria": "r", "background": "", "market_info_open_datetime": "2025-01-01T00:00:00+00:00", "market_info_close_datetime": "2026-01-01T00:00:00+00:00", "market_info_resolution_criteria": "N/A", "url": "https://example.org/b", "freeze_datetime": "2025-10-16T00:00:00+00:00", "freeze_datetime_value": "0.3", "freeze_datetime_value_explanation": "The market value.", "source_intro": "", "resolution_dates": "N/A"},
 {"id": "DS1", "source": "fred", "question": "Will the series rise by {resolution_date}?", "resolution_criteria": "r", "background": "", "market_info_open_datetime": "N/A", "market_info_close_datetime": "N/A", "market_info_resolution_criteria": "N/A", "url": "https://example.org/d", "freeze_datetime": "2025-10-16T00:00:00+00:00", "freeze_datetime_value": "5.13", "freeze_datetime_value_explanation": "The latest value.", "source_intro": "", "resolution_dates": ["2025-11-02", "2025-11-25"]}
]}`

const rptResolutions = `{"forecast_due_date": "2025-10-26", "question_set": "2025-10-26-llm.json", "resolutions": [
 {"id": "mq1", "source": "manifold", "direction": null, "resolution_date": "2025-12-30", "resolved_to": 1.0, "resolved": true},
 {"id": "mq2", "source": "polymarket", "direction": null, "resolution_date": "2025-12-30", "resolved_to": 0.41, "resolved": false},
 {"id": "DS1", "source": "fred", "direction": null, "resolution_date": "2025-11-02", "resolved_to": 1.0, "resolved": true},
 {"id": "DS1", "source": "fred", "direction": null, "resolution_date": "2025-11-25", "resolved_to": 0.0, "resolved": true},
 {"id": ["mq1", "DS1"], "source": "manifold", "direction": [1, -1], "resolution_date": "2025-12-30", "resolved_to": 1.0, "resolved": true}
]}`

func TestReportBaselinesSmall(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	db := "sqlite:" + filepath.Join(dir, "a.db")
	q := filepath.Join(dir, "2025-10-26-llm.json")
	r := filepath.Join(dir, "2025-10-26_resolution_set.json")
	os.WriteFile(q, []byte(rptQuestions), 0o644)
	os.WriteFile(r, []byte(rptResolutions), 0o644)
	if _, _, err := cli(t, nil, "import", "forecastbench", "--questions", q, "--resolutions", r, "--db", db, "--now", "2026-01-05T00:00:00Z"); err != nil {
		t.Fatal(err)
	}
	out, _, err := cli(t, nil, "report", "baselines", "--db", db, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []stats.BaselineRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	got := map[string]stats.BaselineRow{}
	for _, r := range rows {
		got[r.Forecaster+"/"+r.Kind] = r
	}
	type want struct {
		Forecaster, Kind string
		N                int
		Brier            float64
	}
	for _, w := range []want{
		{stats.BaselineAlways0, "market", 1, 1}, {stats.BaselineAlways1, "market", 1, 0}, {stats.BaselineMarket, "market", 1, 0.04},
		{stats.BaselineAlways0, "dataset", 2, 0.5}, {stats.BaselineAlwaysHalf, "dataset", 2, 0.25},
		{stats.BaselineAlways0, "overall", 3, 0.75},
	} {
		g := got[w.Forecaster+"/"+w.Kind]
		if g.N != w.N || math.Abs(g.Brier-w.Brier) > 1e-12 {
			t.Errorf("%s/%s = %+v, want %+v", w.Forecaster, w.Kind, g, w)
		}
	}
	if _, ok := got[stats.BaselineMarket+"/dataset"]; ok {
		t.Error("dataset freeze values are data values, not prices")
	}
	if r, ok := got[stats.BaselineRandom+"/market"]; !ok || r.N != 1 {
		t.Errorf("random: %+v", r)
	}
	// Same seed, same output; table and csv formats.
	again, _, _ := cli(t, nil, "report", "baselines", "--db", db, "--format", "json")
	if again != out {
		t.Error("baselines not reproducible")
	}
	tab, _, err := cli(t, nil, "report", "baselines", "--db", db)
	if err != nil || !strings.Contains(tab, "Market price") || !strings.Contains(tab, "1 markets skipped") {
		t.Errorf("table: %v\n%s", err, tab)
	}
	c, _, err := cli(t, nil, "report", "baselines", "--db", db, "--format", "csv", "--source", "forecastbench")
	if recs, _ := csv.NewReader(strings.NewReader(c)).ReadAll(); err != nil || len(recs) != len(rows)+1 || strings.Join(recs[0], ",") != "forecaster,kind,n,brier" {
		t.Errorf("csv: %v %q", err, c)
	}
	// Another source: nothing stored.
	out, _, err = cli(t, nil, "report", "baselines", "--db", db, "--source", "polymarket", "--format", "json")
	if err != nil || strings.TrimSpace(out) != "[]" {
		t.Errorf("empty source: %v %q", err, out)
	}
	out, _, err = cli(t, nil, "report", "baselines", "--db", db, "--source", "polymarket")
	if err != nil || !strings.Contains(out, "no resolved binary questions stored of source polymarket") {
		t.Errorf("empty source table: %v %q", err, out)
	}
}

// After importing the 12 resolution sets behind ForecastBench's 2025-10-06
// baseline leaderboard, `arena report baselines` reproduces its "Always 0",
// "Always 1" and "Always 0.5" rows: dataset, market and overall N exactly,
// Brier to the published 3 decimals.
func TestReportBaselinesForecastBenchLeaderboard(t *testing.T) {
	t.Parallel()
	dir := shareddata.Path(t, "forecastbench", "leaderboard-2025-10-06")
	sets, _ := filepath.Glob(filepath.Join(dir, "resolution_sets", "*_resolution_set.json"))
	if len(sets) != 12 {
		t.Fatalf("%d resolution sets", len(sets))
	}
	db := "sqlite:" + filepath.Join(t.TempDir(), "fb.db")
	if _, _, err := cli(t, nil, append([]string{"import", "forecastbench", "--db", db, "--now", "2025-10-06T00:00:00Z", "--resolutions"}, sets...)...); err != nil {
		t.Fatal(err)
	}
	out, _, err := cli(t, nil, "report", "baselines", "--db", db, "--source", "forecastbench", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var rows []stats.BaselineRow
	if err := json.Unmarshal([]byte(out), &rows); err != nil {
		t.Fatal(err)
	}
	got := map[string]stats.BaselineRow{}
	for _, r := range rows {
		got[r.Forecaster+"/"+r.Kind] = r
	}
	checked := 0
	for name, rec := range shareddata.ForecastBenchLeaderboard(t) {
		if name != stats.BaselineAlways0 && name != stats.BaselineAlways1 && name != stats.BaselineAlwaysHalf {
			continue
		}
		for _, c := range []struct{ kind, brier, n string }{{"dataset", "Dataset", "N dataset"}, {"market", "Market", "N market"}, {"overall", "Overall", "N"}} {
			wantB, _ := strconv.ParseFloat(rec[c.brier], 64)
			wantN, _ := strconv.Atoi(rec[c.n])
			g := got[name+"/"+c.kind]
			if g.N != wantN || math.Round(g.Brier*1000)/1000 != wantB {
				t.Errorf("%s %s: N %d Brier %.5f; published N %d Brier %.3f", name, c.kind, g.N, g.Brier, wantN, wantB)
			}
			checked++
		}
	}
	if checked != 9 {
		t.Fatalf("checked %d cells, want 9", checked)
	}
}

// reportCSV is a richer S7 file: 3 agents × 30 rounds × 5 markets, two
// categories, events spanning two markets.
func reportCSV(t *testing.T) string {
	var b strings.Builder
	b.WriteString("agent,round,market,category,forecast,benchmark,outcome,event\n")
	for r := range 30 {
		for m := range 5 {
			q := float64((r*7+m*3)%10)/10 + 0.05
			x := 0
			if (r*13+m*5)%10 < int(q*10) {
				x = 1
			}
			bm := math.Round((q+0.1*float64(m%3-1))*100) / 100
			bm = min(max(bm, 0.01), 0.99)
			cat := []string{"politics", "crypto"}[m%2]
			for a, p := range []float64{q, bm, 0.5} {
				name := []string{"sharp", "echo", "coin"}[a]
				b.WriteString(name + "," + strconv.Itoa(r) + ",m" + strconv.Itoa(r*5+m) + "," + cat + "," +
					strconv.FormatFloat(p, 'g', -1, 64) + "," + strconv.FormatFloat(bm, 'g', -1, 64) + "," + strconv.Itoa(x) + ",e" + strconv.Itoa(r*3+m/2) + "\n")
			}
		}
	}
	return writeFile(t, "r.csv", b.String())
}

func TestReportFromFile(t *testing.T) {
	t.Parallel()
	in := reportCSV(t)
	// Leaderboard: ranked by the headline score; bootstrap reproducible by seed.
	out, _, err := cli(t, nil, "report", "leaderboard", "--in", in, "--format", "json", "--bootstrap", "299", "--seed", "5")
	if err != nil {
		t.Fatal(err)
	}
	var board scoring.Board
	if err := json.Unmarshal([]byte(out), &board); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	lb := board.Rows
	if len(lb) != 4 || lb[0].Agent != "sharp" || lb[0].Rank != 1 || lb[0].ScoreCILo == nil || lb[0].AlphaCILo == nil ||
		board.Methodology.Version != scoring.MethodVersion || board.Methodology.Digest == scoring.DefaultMethod().Digest() {
		t.Fatalf("leaderboard %+v", board)
	}
	for i := 1; i < len(lb); i++ {
		if lb[i].Score != nil && *lb[i].Score > *lb[i-1].Score {
			t.Errorf("not ranked by score: %v then %v", lb[i-1], lb[i])
		}
	}
	sc := runScoreJSON(t, "--in", in)
	if s := sc["sharp"]; math.Abs(*s.Alpha-*lb[0].Alpha) > 0 || s.N != 150 || lb[0].Provisional {
		t.Errorf("leaderboard and score disagree: %+v vs %+v", lb[0], s)
	}
	again, _, _ := cli(t, nil, "report", "leaderboard", "--in", in, "--format", "json", "--bootstrap", "299", "--seed", "5")
	if again != out {
		t.Error("leaderboard not reproducible with the same seed")
	}
	for _, f := range []string{"table", "csv"} {
		if o, _, err := cli(t, nil, "report", "leaderboard", "--in", in, "--format", f, "--bootstrap", "99"); err != nil || !strings.Contains(o, "sharp") || strings.Contains(o, "NaN") {
			t.Errorf("%s: %v\n%s", f, err, o)
		}
	}

	// Murphy: the S2 identity per agent and the corollary for alpha.
	out, _, err = cli(t, nil, "report", "murphy", "--in", in, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var mu []report.MurphyRow
	json.Unmarshal([]byte(out), &mu)
	if len(mu) != 4 {
		t.Fatalf("murphy %s", out)
	}
	for _, r := range mu {
		if math.Abs(r.UNC+r.REL-r.RES+r.Residual-r.Brier) > 1e-12 {
			t.Errorf("%s: identity broken %+v", r.Agent, r)
		}
		if a := r.AlphaSplit; a != nil && math.Abs(a.ResGain+a.RelGap+a.ResidualDiff-a.Alpha) > 1e-12 {
			t.Errorf("%s: corollary broken %+v", r.Agent, a)
		}
	}
	if mu[3].Agent != "market" || mu[3].AlphaSplit != nil || mu[1].AlphaSplit == nil {
		t.Errorf("alpha split: %+v", mu)
	}

	// Categories: per category, counts add up to the agent's total.
	out, _, err = cli(t, nil, "report", "categories", "--in", in, "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var cats []report.CategoryRow
	json.Unmarshal([]byte(out), &cats)
	n := map[string]int{}
	for _, c := range cats {
		n[c.Agent] += c.N
	}
	if n["sharp"] != 150 || n["market"] != 150 || len(cats) != 8 || cats[0].Category != "crypto" {
		t.Errorf("categories %+v", cats)
	}

	// Calibration: bins and PAV blocks cover every prediction.
	out, _, err = cli(t, nil, "report", "calibration", "--in", in, "--format", "json", "--bins", "5")
	if err != nil {
		t.Fatal(err)
	}
	var cal []struct {
		Agent string             `json:"agent"`
		N     int                `json:"n"`
		CORP  map[string]float64 `json:"corp"`
		Bins  []stats.Bin        `json:"bins"`
		PAV   []stats.Block      `json:"corp_diagram"`
	}
	if err := json.Unmarshal([]byte(out), &cal); err != nil || len(cal) != 4 {
		t.Fatalf("%v %s", err, out)
	}
	for _, c := range cal {
		nb, np := 0, 0
		for _, b := range c.Bins {
			nb += b.N
			if b.K >= 5 {
				t.Errorf("bin %d with --bins 5", b.K)
			}
		}
		for _, b := range c.PAV {
			np += b.N
		}
		if nb != c.N || np != c.N || len(c.CORP) != 4 {
			t.Errorf("%s: bins %d, blocks %d, n %d", c.Agent, nb, np, c.N)
		}
	}
	for _, kind := range []string{"calibration", "murphy", "categories"} {
		for _, f := range []string{"table", "csv"} {
			if o, _, err := cli(t, nil, "report", kind, "--in", in, "--format", f); err != nil || !strings.Contains(o, "sharp") {
				t.Errorf("%s %s: %v\n%s", kind, f, err, o)
			}
		}
	}
}

func TestReportSVG(t *testing.T) {
	t.Parallel()
	in := reportCSV(t)
	for _, kind := range []string{"leaderboard", "murphy", "calibration"} {
		out, _, err := cli(t, nil, "report", kind, "--in", in, "--format", "svg", "--bootstrap", "0")
		if kind != "leaderboard" {
			out, _, err = cli(t, nil, "report", kind, "--in", in, "--format", "svg")
		}
		if err != nil {
			t.Fatalf("%s: %v", kind, err)
		}
		dec := xml.NewDecoder(strings.NewReader(out))
		elems := map[string]int{}
		for {
			tok, err := dec.Token()
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("%s: invalid SVG: %v", kind, err)
			}
			if se, ok := tok.(xml.StartElement); ok {
				elems[se.Name.Local]++
			}
		}
		if elems["svg"] != 1 || elems["polyline"]+elems["rect"] < 3 || strings.Contains(out, "NaN") {
			t.Errorf("%s: elements %v", kind, elems)
		}
	}
	if _, _, err := cli(t, nil, "report", "categories", "--in", in, "--format", "svg"); err == nil {
		t.Error("categories has no svg")
	}
}

// Without --in, the reports read the store; nothing is stored yet, which is
// said plainly rather than failing.
func TestReportFromEmptyStore(t *testing.T) {
	t.Parallel()
	db := emptyDB(t)
	for _, kind := range []string{"leaderboard", "murphy", "categories", "calibration"} {
		out, _, err := cli(t, nil, "report", kind, "--db", db)
		if err != nil || !strings.Contains(out, "no scored forecasts stored yet") {
			t.Errorf("%s: %v %q", kind, err, out)
		}
		out, errOut, err := cli(t, nil, "report", kind, "--db", db, "--format", "json")
		if err != nil || strings.TrimSpace(out) != "[]" || !strings.Contains(errOut, "no scored forecasts stored yet") {
			t.Errorf("%s json: %v %q %q", kind, err, out, errOut)
		}
	}
	if _, _, err := cli(t, nil, "report", "leaderboard", "--in", writeFile(t, "bad.csv", "agent,x\n")); err == nil {
		t.Error("bad file accepted")
	}
	if _, _, err := cli(t, nil, "report", "murphy", "--in", reportCSV(t), "--bins", "0"); err == nil {
		t.Error("--bins 0 accepted")
	}
}

func TestReportAdjusted(t *testing.T) {
	t.Parallel()
	in := reportCSV(t)
	out, _, err := cli(t, nil, "report", "leaderboard", "--adjusted", "--in", in, "--bootstrap", "199", "--seed", "3", "--format", "json")
	if err != nil {
		t.Fatal(err)
	}
	var res stats.FEResult
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	// Balanced design (every agent on every question): adjusted = raw Brier.
	// The paired tests are the dashboard's: the best agent against each other.
	if len(res.Agents) != 4 || res.Questions != 150 || res.Bootstrap != 199 || len(res.Pairs) != 3 || res.Pairs[0].A != res.Agents[0].Agent {
		t.Fatalf("%+v", res)
	}
	for _, a := range res.Agents {
		if math.Abs(a.Adjusted-a.Brier) > 1e-12 || !a.CILo.OK || a.N != 150 {
			t.Errorf("%+v", a)
		}
	}
	again, _, _ := cli(t, nil, "report", "leaderboard", "--adjusted", "--in", in, "--bootstrap", "199", "--seed", "3", "--format", "json")
	if again != out {
		t.Error("not reproducible")
	}
	for _, f := range []string{"table", "csv"} {
		o, _, err := cli(t, nil, "report", "leaderboard", "--adjusted", "--in", in, "--bootstrap", "99", "--format", f, "--estimation", "sharp,coin")
		if err != nil || !strings.Contains(o, "sharp") {
			t.Errorf("%s: %v\n%s", f, err, o)
		}
	}
	if _, _, err := cli(t, nil, "report", "leaderboard", "--adjusted", "--in", in, "--estimation", "nobody"); err == nil {
		t.Error("unknown estimation agent accepted")
	}
}

// A report's CSV guards text cells against formulas and leaves numbers,
// negative ones included, as plain numbers a strict numeric reader takes.
func TestReportCSVCells(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(reportCSV(t))
	if err != nil {
		t.Fatal(err)
	}
	in := writeFile(t, "evil.csv", strings.ReplaceAll(string(b), "coin,", "\"=HYPERLINK(\"\"x\"\")\","))
	out, _, err := cli(t, nil, "report", "leaderboard", "--in", in, "--format", "csv", "--bootstrap", "99")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := func(name string) int { return slices.Index(recs[0], name) }
	negative, evil := 0, false
	for _, r := range recs[1:] {
		evil = evil || r[col("agent")] == `'=HYPERLINK("x")`
		for _, c := range []string{"brier", "alpha", "peer_score", "bss"} {
			if r[col(c)] == "" {
				continue
			}
			v, err := strconv.ParseFloat(r[col(c)], 64)
			if err != nil {
				t.Fatalf("%s: %v", c, err)
			}
			if v < 0 {
				negative++
			}
		}
	}
	if !evil || negative == 0 {
		t.Fatalf("formula agent guarded: %v; negative numbers read: %d\n%s", evil, negative, out)
	}
}
