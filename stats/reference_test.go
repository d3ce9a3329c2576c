package stats_test

import (
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/stats"
)

func near(t *testing.T, name string, got, want, tol float64) {
	t.Helper()
	if math.Abs(got-want) > tol || math.IsNaN(got) {
		t.Errorf("%s = %.10g, want %.10g (±%g)", name, got, want, tol)
	}
}

// S3's check vector.
func TestCORPSpecVector(t *testing.T) {
	y := []float64{0, 0, 0, 1, 1, 1}
	p := []float64{0.4, 0.3, 0.2, 0.1, 0.5, 0.9}
	c := stats.DecomposeCORP(p, y)
	near(t, "score", c.Score, 0.2266667, 5e-8)
	near(t, "MCB", c.MCB, 0.1016667, 5e-8)
	near(t, "DSC", c.DSC, 0.125, 1e-15)
	near(t, "UNC", c.UNC, 0.25, 1e-15)
	near(t, "identity", c.MCB-c.DSC+c.UNC, c.Score, 1e-15)
	// PAV pools 0.1..0.4 (observed 1,0,0,0) into 0.25 and keeps 0.5, 0.9 at 1.
	want := []stats.Block{{PLo: 0.1, PHi: 0.4, Recal: 0.25, N: 4}, {PLo: 0.5, PHi: 0.5, Recal: 1, N: 1}, {PLo: 0.9, PHi: 0.9, Recal: 1, N: 1}}
	if len(c.Blocks) != len(want) {
		t.Fatalf("blocks = %+v, want %+v", c.Blocks, want)
	}
	for i := range want {
		if c.Blocks[i] != want[i] {
			t.Errorf("block %d = %+v, want %+v", i, c.Blocks[i], want[i])
		}
	}
	if got := c.Recalibrate(0.3); got != 0.25 {
		t.Errorf("Recalibrate(0.3) = %v", got)
	}
}

func readNiamey(t *testing.T) (map[string][]float64, []float64) {
	header, rows := shareddata.CSV(t, "reliabilitydiag", "precip_Niamey_2016.csv")
	cols := map[string][]float64{}
	var obs []float64
	for _, r := range rows {
		for _, h := range header[1:] { // after the date
			v, err := strconv.ParseFloat(r[h], 64)
			if err != nil {
				t.Fatal(err)
			}
			if h == "obs" {
				obs = append(obs, v)
			} else {
				cols[h] = append(cols[h], v)
			}
		}
	}
	return cols, obs
}

// The published CORP decomposition of the EMOS forecasts for Niamey 2016
// (Dimitriadis, Gneiting & Jordan 2021): Brier 0.232, MCB 0.0183,
// DSC 0.0305, UNC 0.244, each to its published digits.
func TestCORPNiameyEMOS(t *testing.T) {
	cols, obs := readNiamey(t)
	p := cols["EMOS"]
	if len(p) != 92 || len(obs) != 92 {
		t.Fatalf("read %d forecasts, %d outcomes; want 92", len(p), len(obs))
	}
	c := stats.DecomposeCORP(p, obs)
	round := func(v float64, d int) float64 { s := math.Pow(10, float64(d)); return math.Round(v*s) / s }
	for _, tc := range []struct {
		name string
		got  float64
		want float64
		dec  int
	}{{"Brier", c.Score, 0.232, 3}, {"MCB", c.MCB, 0.0183, 4}, {"DSC", c.DSC, 0.0305, 4}, {"UNC", c.UNC, 0.244, 3}} {
		if r := round(tc.got, tc.dec); r != tc.want {
			t.Errorf("%s = %.6f rounds to %v, published %v", tc.name, tc.got, r, tc.want)
		}
	}
	near(t, "identity", c.MCB-c.DSC+c.UNC, c.Score, 1e-15)
	// The recalibrated forecasts are monotone in p and each block's value is
	// its observed frequency.
	for i := 1; i < len(c.Blocks); i++ {
		if c.Blocks[i].Recal < c.Blocks[i-1].Recal || c.Blocks[i].PLo <= c.Blocks[i-1].PHi {
			t.Fatalf("blocks not isotonic: %+v then %+v", c.Blocks[i-1], c.Blocks[i])
		}
	}
}

// naivePAV is an independent, quadratic isotonic regression: repeatedly
// pool the first adjacent violating pair of tie-pooled groups.
func naivePAV(p, y []float64) float64 {
	type g struct{ p, n, s float64 }
	idx := make([]int, len(p))
	for i := range idx {
		idx[i] = i
	}
	// insertion sort by p (small inputs)
	for i := 1; i < len(idx); i++ {
		for j := i; j > 0 && p[idx[j]] < p[idx[j-1]]; j-- {
			idx[j], idx[j-1] = idx[j-1], idx[j]
		}
	}
	var gs []g
	for _, i := range idx {
		if len(gs) > 0 && gs[len(gs)-1].p == p[i] {
			gs[len(gs)-1].n++
			gs[len(gs)-1].s += y[i]
			continue
		}
		gs = append(gs, g{p[i], 1, y[i]})
	}
	for {
		merged := false
		for i := 0; i+1 < len(gs); i++ {
			if gs[i].s/gs[i].n > gs[i+1].s/gs[i+1].n {
				gs[i].n += gs[i+1].n
				gs[i].s += gs[i+1].s
				gs = append(gs[:i+1], gs[i+2:]...)
				merged = true
				break
			}
		}
		if !merged {
			break
		}
	}
	var s float64
	for _, b := range gs {
		m := b.s / b.n
		s += b.s*(1-m)*(1-m) + (b.n-b.s)*m*m
	}
	return s / float64(len(p))
}

func TestCORPAgainstNaivePAV(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		n := 1 + r.IntN(300)
		p, y := make([]float64, n), make([]float64, n)
		for i := range p {
			// Coarse grid to force ties, sometimes continuous.
			if trial%2 == 0 {
				p[i] = float64(r.IntN(11)) / 10
			} else {
				p[i] = r.Float64()
			}
			if r.Float64() < p[i]*0.8+0.1 {
				y[i] = 1
			}
		}
		c := stats.DecomposeCORP(p, y)
		near(t, "S(p̂)", c.Score-c.MCB, naivePAV(p, y), 1e-12)
		if c.MCB < -1e-15 || c.DSC < -1e-15 {
			t.Fatalf("negative MCB %v or DSC %v", c.MCB, c.DSC)
		}
	}
}

func TestCORPLargeRadixPath(t *testing.T) {
	// Above the radix threshold, including 0, 1 and −0.
	r := rand.New(rand.NewPCG(3, 4))
	n := 5000
	p, y := make([]float64, n), make([]float64, n)
	for i := range p {
		switch i % 50 {
		case 0:
			p[i] = 0
		case 1:
			p[i] = 1
		case 2:
			p[i] = math.Copysign(0, -1)
		default:
			p[i] = r.Float64()
		}
		if r.Float64() < p[i] {
			y[i] = 1
		}
	}
	c := stats.DecomposeCORP(p, y)
	near(t, "S(p̂)", c.Score-c.MCB, naivePAV(p, y), 1e-12)
	total := 0
	for _, b := range c.Blocks {
		total += b.N
	}
	if total != n {
		t.Fatalf("blocks cover %d of %d predictions", total, n)
	}
}

// S2's identity brier = UNC + REL − RES + residual, to 1e-12 on random data,
// and residual = 0 exactly when forecasts are constant within bins.
func TestMurphyIdentity(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	for trial := range 100 {
		n := 1 + r.IntN(5000)
		k := 1 + r.IntN(20)
		p, x := make([]float64, n), make([]float64, n)
		for i := range p {
			p[i] = r.Float64()
			if trial%10 == 0 {
				p[i] = 1 // all in the closed last bin
			}
			if r.Float64() < p[i] {
				x[i] = 1
			}
		}
		m := stats.Decompose(p, x, k)
		var sse float64
		for i := range p {
			sse += (p[i] - x[i]) * (p[i] - x[i])
		}
		near(t, "brier", m.Brier, sse/float64(n), 1e-12)
		near(t, "identity", m.UNC+m.REL-m.RES+m.Residual, m.Brier, 1e-12)
		tot := 0
		for _, b := range m.Bins {
			tot += b.N
			if b.N == 0 {
				t.Fatal("empty bin reported")
			}
		}
		if tot != n {
			t.Fatalf("bins hold %d of %d", tot, n)
		}
	}
	// Forecasts at bin centres: no within-bin variance, residual 0.
	p := []float64{0.05, 0.05, 0.35, 0.35, 0.35, 0.95}
	x := []float64{0, 1, 0, 0, 1, 1}
	m := stats.Decompose(p, x, 10)
	near(t, "residual", m.Residual, 0, 1e-16)
	// Hand-computed: ō = 1/2, UNC = 1/4; bins: {0.05: ō=.5}, {0.35: ō=1/3}, {0.95: ō=1}.
	near(t, "UNC", m.UNC, 0.25, 0)
	near(t, "REL", m.REL, (2*0.45*0.45+3*(0.35-1.0/3)*(0.35-1.0/3)+0.05*0.05)/6, 1e-15)
	near(t, "RES", m.RES, (0+3*(1.0/3-0.5)*(1.0/3-0.5)+0.25)/6, 1e-15)
	near(t, "ECE", m.ECE(), (2*0.45+3*(0.35-1.0/3)+0.05)/6, 1e-15)
}

func TestBinOf(t *testing.T) {
	for _, tc := range []struct {
		p    float64
		k, b int
	}{{0, 10, 0}, {0.0999, 10, 0}, {0.1, 10, 1}, {0.5, 10, 5}, {0.99, 10, 9}, {1, 10, 9}, {1, 1, 0}, {0.5, 3, 1}} {
		if got := stats.BinOf(tc.p, tc.k); got != tc.b {
			t.Errorf("BinOf(%v,%d) = %d, want %d", tc.p, tc.k, got, tc.b)
		}
	}
}

// Student-t p against the published values and against closed forms
// (df = 1: Cauchy; df = 2: p = 1 − |t|/√(2+t²)).
func TestStudentP(t *testing.T) {
	round3 := func(v float64) float64 { return math.Round(v*1000) / 1000 }
	if p := stats.StudentP(1.37, 49); round3(p) != 0.177 {
		t.Errorf("p(1.37, 49) = %v, want 0.177", p)
	}
	if p := stats.StudentP(-2.03, 49); round3(p) != 0.048 {
		t.Errorf("p(−2.03, 49) = %v, want 0.048", p)
	}
	for _, tv := range []float64{0, 0.3, 1, 2.5, -4, 12.7} {
		near(t, "cauchy", stats.StudentP(tv, 1), 1-2/math.Pi*math.Atan(math.Abs(tv)), 1e-12)
		near(t, "df2", stats.StudentP(tv, 2), 1-math.Abs(tv)/math.Sqrt(2+tv*tv), 1e-12)
	}
	// Far tail keeps precision (not 1 − 1 = 0).
	if p := stats.StudentP(40, 49); !(p > 0 && p < 1e-30) {
		t.Errorf("p(40, 49) = %v", p)
	}
}

func TestTestMean(t *testing.T) {
	for _, tc := range []struct {
		name       string
		v          []float64
		mean       float64
		se, tt, pv stats.Float
	}{
		{"empty", nil, 0, stats.Undef, stats.Undef, stats.Undef},
		{"one round", []float64{0.2}, 0.2, stats.Undef, stats.Undef, stats.Undef},
		// Zero variance: SE exactly 0, t and p undefined (not NaN/Inf).
		{"constant", []float64{0.1, 0.1, 0.1}, 0.1, stats.Def(0), stats.Undef, stats.Undef},
		{"zeros", []float64{0, 0, 0, 0}, 0, stats.Def(0), stats.Undef, stats.Undef},
		// mean 2, s = 1, SE = 1/√3, t = 2√3, df 2: p = 1 − t/√(2+t²) = 1 − 2√3/√14.
		{"1 2 3", []float64{1, 2, 3}, 2, stats.Def(1 / math.Sqrt(3)), stats.Def(2 * math.Sqrt(3)), stats.Def(1 - 2*math.Sqrt(3)/math.Sqrt(14))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := stats.TestMean(tc.v)
			near(t, "mean", m.Mean, tc.mean, 1e-15)
			for _, f := range []struct {
				n         string
				got, want stats.Float
			}{{"se", m.SE, tc.se}, {"t", m.T, tc.tt}, {"p", m.P, tc.pv}} {
				if f.got.OK != f.want.OK {
					t.Errorf("%s defined = %v, want %v", f.n, f.got.OK, f.want.OK)
				} else if f.got.OK {
					near(t, f.n, f.got.V, f.want.V, 1e-12)
				}
			}
		})
	}
}

func TestFloatJSON(t *testing.T) {
	for _, tc := range []struct {
		f    stats.Float
		want string
	}{{stats.Undef, "null"}, {stats.Def(math.NaN()), "null"}, {stats.Def(math.Inf(1)), "null"}, {stats.Def(0.25), "0.25"}, {stats.Def(-1e-20), "-1e-20"}} {
		b, err := tc.f.MarshalJSON()
		if err != nil || string(b) != tc.want {
			t.Errorf("%+v → %s, %v; want %s", tc.f, b, err, tc.want)
		}
		var back stats.Float
		if err := back.UnmarshalJSON([]byte(tc.want)); err != nil || back.OK != (tc.want != "null") {
			t.Errorf("round trip of %s: %+v %v", tc.want, back, err)
		}
	}
}
