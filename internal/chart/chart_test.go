package chart

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/golden"
)

// checkGolden compares got with testdata/name.svg (-update rewrites it).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	golden.Check(t, name+".svg", got)
}

// element is a parsed SVG element, for structural checks.
type element struct {
	name  string
	attrs map[string]string
	text  string
}

func parse(t *testing.T, b []byte) []element {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(b))
	var out []element
	var stack []int
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return out
			}
			t.Fatalf("not well-formed XML: %v\n%s", err, b)
		}
		switch v := tok.(type) {
		case xml.StartElement:
			e := element{name: v.Name.Local, attrs: map[string]string{}}
			for _, a := range v.Attr {
				e.attrs[a.Name.Local] = a.Value
			}
			out = append(out, e)
			stack = append(stack, len(out)-1)
		case xml.EndElement:
			i := stack[len(stack)-1]
			out[i].text = strings.TrimSpace(out[i].text)
			stack = stack[:len(stack)-1]
		case xml.CharData:
			if len(stack) > 0 {
				out[stack[len(stack)-1]].text += string(v)
			}
		}
	}
}

// accessible checks what every chart must carry: role, title, description,
// no NaN.
func accessible(t *testing.T, name string, b []byte, els []element) {
	t.Helper()
	if els[0].name != "svg" || els[0].attrs["role"] != "img" || els[0].attrs["aria-labelledby"] == "" {
		t.Errorf("%s: root %+v lacks role=img and aria-labelledby", name, els[0])
	}
	var title, desc bool
	for _, e := range els {
		title = title || (e.name == "title" && e.attrs["id"] != "" && strings.TrimSpace(e.text) != "")
		desc = desc || (e.name == "desc" && strings.TrimSpace(e.text) != "")
	}
	if !title || !desc {
		t.Errorf("%s: title %v, desc %v", name, title, desc)
	}
	if bytes.Contains(b, []byte("NaN")) || bytes.Contains(b, []byte("Inf")) {
		t.Errorf("%s: NaN or Inf in output", name)
	}
}

func f(s string) float64 { v, _ := strconv.ParseFloat(s, 64); return v }

func alphaLines(agents, rounds int) *Line {
	c := &Line{ID: "alpha", Title: "Cumulative alpha by round", Desc: "Mean alpha over the first R rounds, per agent.",
		X: Axis{Label: "round", Integer: true}, Y: Axis{Label: "cumulative alpha"}, Background: "white",
		Refs: []Ref{{X0: 1, X1: float64(rounds), Label: "alpha = 0: the market's own skill"}}}
	for a := range agents {
		s := Series{Name: fmt.Sprintf("agent-with-a-long-name-%d", a)}
		sum := 0.0
		for r := 1; r <= rounds; r++ {
			sum += 0.01*math.Sin(float64(r*(a+1))) + 0.002*float64(a-agents/2)
			s.X = append(s.X, float64(r))
			s.Y = append(s.Y, sum/float64(r))
		}
		c.Series = append(c.Series, s)
	}
	return c
}

func TestGolden(t *testing.T) {
	t0 := float64(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Unix())
	portfolio := &Line{ID: "pf", Title: "Portfolio value", Desc: "Total value of each agent's portfolio.",
		X: Axis{Label: "time (UTC)", Time: true}, Y: Axis{Label: "value ($)"}}
	for a, name := range []string{"informed", "stale"} {
		s := Series{Name: name}
		for i := range 30 {
			s.X = append(s.X, t0+float64(i)*6*3600)
			s.Y = append(s.Y, 10000+float64(i*(a*2-1))*37)
		}
		portfolio.Series = append(portfolio.Series, s)
	}
	band := &Line{ID: "band", Title: "Cumulative alpha with 95% CI", Desc: "One agent.", X: Axis{Label: "round", Integer: true},
		Y: Axis{Label: "alpha"}, Series: []Series{{Name: "alpha", X: []float64{1, 2, 3}, Y: []float64{0.02, 0.01, 0.015},
			Lo: []float64{-0.05, -0.03, -0.01}, Hi: []float64{0.09, 0.05, 0.04}}}}
	reliability := &Line{ID: "rel", Title: "Reliability diagram (CORP)", Desc: "PAV-recalibrated event frequency against forecast.",
		X: Axis{Label: "forecast probability", Fixed: true, Min: 0, Max: 1}, Y: Axis{Label: "observed frequency", Fixed: true, Min: 0, Max: 1},
		Refs:   []Ref{{X0: 0, Y0: 0, X1: 1, Y1: 1, Label: "perfect calibration"}},
		Series: []Series{{Name: "a (MCB 0.0100, DSC 0.0500)", X: []float64{0, 0.3, 0.3, 0.7, 0.7, 1}, Y: []float64{0.1, 0.1, 0.5, 0.5, 0.8, 0.8}}}}
	murphy := &Bars{ID: "murphy", Title: "Murphy decomposition", Desc: "REL and RES per agent; UNC as a dashed level.", YLabel: "Brier components",
		Groups: []string{"informed-0.02", "overconfident", "0x00000000000000000000000000000000000000aa"},
		Series: []BarSeries{{Name: "REL (miscalibration)", Values: []float64{0.002, 0.03, 0.01}}, {Name: "RES (resolution)", Values: []float64{0.06, 0.05, 0.001}}},
		Ref:    &BarSeries{Name: "UNC (uncertainty)", Values: []float64{0.24, 0.24, 0.24}}}
	for name, c := range map[string]interface{ WriteSVG(io.Writer) error }{
		"alpha_3rounds": alphaLines(4, 3), "alpha_10agents": alphaLines(10, 40), "portfolio_time": portfolio,
		"alpha_band": band, "reliability": reliability, "murphy_bars": murphy,
	} {
		var b bytes.Buffer
		if err := c.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		els := parse(t, b.Bytes())
		accessible(t, name, b.Bytes(), els)
		checkGolden(t, name, b.Bytes())
	}
}

// Round axes tick whole rounds only, even over three rounds.
func TestIntegerTicks(t *testing.T) {
	for _, rounds := range []int{1, 2, 3, 7, 40, 500} {
		var b bytes.Buffer
		if err := alphaLines(2, rounds).WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		var ticks []string
		inX := false
		for _, e := range parse(t, b.Bytes()) {
			if e.name == "g" {
				inX = strings.Contains(e.attrs["class"], "axis x")
			}
			if inX && e.name == "text" && e.text != "round" {
				ticks = append(ticks, e.text)
			}
		}
		if len(ticks) < 1 || len(ticks) > 12 {
			t.Errorf("%d rounds: %d x ticks %v", rounds, len(ticks), ticks)
		}
		for _, tk := range ticks {
			if _, err := strconv.Atoi(tk); err != nil {
				t.Errorf("%d rounds: fractional round tick %q in %v", rounds, tk, ticks)
			}
		}
	}
}

// The legend sits below the plot and its entries do not overlap, however
// many agents and however long their names.
func TestLegendDoesNotOverlap(t *testing.T) {
	for _, agents := range []int{1, 3, 10, 25} {
		var b bytes.Buffer
		if err := alphaLines(agents, 20).WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		els := parse(t, b.Bytes())
		var plotBottom float64
		inLegend := false
		type box struct{ x0, x1, y float64 }
		var boxes []box
		for _, e := range els {
			if e.name == "rect" && e.attrs["class"] == "plot" {
				plotBottom = f(e.attrs["y"]) + f(e.attrs["height"])
			}
			if e.name == "g" {
				inLegend = e.attrs["class"] == "legend"
			}
			if inLegend && e.name == "text" {
				x := f(e.attrs["x"])
				boxes = append(boxes, box{x - 32, x + 6.5*float64(len(e.text)), f(e.attrs["y"])})
			}
		}
		if len(boxes) != agents {
			t.Fatalf("%d agents: %d legend entries", agents, len(boxes))
		}
		for i, a := range boxes {
			if a.y-12 < plotBottom+24 {
				t.Errorf("%d agents: legend entry %d at y %v overlaps the plot or axis (bottom %v)", agents, i, a.y, plotBottom)
			}
			for _, c := range boxes[i+1:] {
				if math.Abs(a.y-c.y) < 14 && a.x0 < c.x1 && c.x0 < a.x1 {
					t.Errorf("%d agents: legend entries overlap: %+v %+v", agents, a, c)
				}
			}
		}
	}
}

func TestTicks(t *testing.T) {
	for _, c := range []struct {
		a      Axis
		lo, hi float64
		want   string
	}{
		{Axis{}, 0.0013, 0.0271, "0 0.01 0.02 0.03"},
		{Axis{}, -0.03, 0.02, "-0.03 -0.02 -0.01 0 0.01 0.02"},
		{Axis{Integer: true}, 1, 3, "1 2 3"},
		{Axis{Integer: true}, 1, 1, "0 1 2"},
		{Axis{Fixed: true, Min: 0, Max: 1}, 0.2, 0.4, "0 0.2 0.4 0.6 0.8 1.0"},
		{Axis{}, 9500, 11200, "9500 10000 10500 11000 11500"},
	} {
		ts, format := c.a.ticks(c.lo, c.hi, 6)
		var got []string
		for _, v := range ts {
			got = append(got, format(v))
		}
		if strings.Join(got, " ") != c.want {
			t.Errorf("ticks(%+v, %v, %v) = %v, want %s", c.a, c.lo, c.hi, got, c.want)
		}
	}
	t0 := float64(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Unix())
	ts, format := Axis{Time: true}.ticks(t0+100, t0+7*24*3600, 6)
	if len(ts) < 3 || len(ts) > 8 || format(ts[0]) != "Mar 2" {
		t.Errorf("time ticks over a week: %v (%s)", ts, format(ts[0]))
	}
}

// Empty and degenerate input still draws a valid, labelled chart.
func TestDegenerate(t *testing.T) {
	for name, c := range map[string]interface{ WriteSVG(io.Writer) error }{
		"no series":    &Line{Title: "t", Desc: "d"},
		"one point":    &Line{Title: "t", Desc: "d", Series: []Series{{Name: "a", X: []float64{1}, Y: []float64{2}}}},
		"nan":          &Line{Title: "t", Desc: "d", Series: []Series{{Name: "a", X: []float64{1, 2}, Y: []float64{math.NaN(), 1}}}},
		"no bars":      &Bars{Title: "t", Desc: "d"},
		"zero bars":    &Bars{Title: "t", Desc: "d", Groups: []string{"a"}, Series: []BarSeries{{Name: "x", Values: []float64{0}}}},
		"escaped text": &Line{Title: "<a&b>", Desc: `"q"`, Series: []Series{{Name: "<script>", X: []float64{1, 2}, Y: []float64{1, 2}}}},
	} {
		var b bytes.Buffer
		if err := c.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		accessible(t, name, b.Bytes(), parse(t, b.Bytes()))
	}
}

// Labelled points each get a marker in a group translated to the point
// and titled with the label, where the axes put the value; a series
// without its line draws markers only, and its legend sample too.
func TestLabelledPoints(t *testing.T) {
	c := &Line{ID: "overlay", Title: "Price and forecasts", Desc: "A price path with two agents' forecasts at two times.",
		X: Axis{Label: "x", Fixed: true, Min: 0, Max: 10}, Y: Axis{Label: "p", Fixed: true, Min: 0, Max: 1},
		Series: []Series{{Name: "price", X: []float64{0, 5, 10}, Y: []float64{0.4, 0.5, 0.45}},
			{Name: "a", NoLine: true, X: []float64{2, 7}, Y: []float64{0.25, 0.8}, Labels: []string{"a, round #1: 0.2500", "a, round #2: 0.8000"}},
			{Name: "<b>", NoLine: true, X: []float64{2}, Y: []float64{1}, Labels: []string{"<b> & co: 1"}}}}
	var b bytes.Buffer
	if err := c.WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	els := parse(t, b.Bytes())
	accessible(t, "overlay", b.Bytes(), els)
	checkGolden(t, "overlay", b.Bytes())
	var px, py, pw, ph float64
	polylines := 0
	type pt struct {
		x, y  float64
		label string
	}
	var pts []pt
	for i, e := range els {
		switch {
		case e.name == "rect" && e.attrs["class"] == "plot":
			px, py, pw, ph = f(e.attrs["x"]), f(e.attrs["y"]), f(e.attrs["width"]), f(e.attrs["height"])
		case e.name == "polyline":
			polylines++
		case e.name == "g" && e.attrs["class"] == "pt":
			var x, y float64
			if _, err := fmt.Sscanf(e.attrs["transform"], "translate(%g %g)", &x, &y); err != nil {
				t.Fatalf("transform %q: %v", e.attrs["transform"], err)
			}
			if els[i+1].name != "title" {
				t.Fatalf("point %q has no title first", e.attrs["transform"])
			}
			pts = append(pts, pt{x, y, els[i+1].text})
		}
	}
	if polylines != 1 {
		t.Errorf("%d lines drawn, want the price's only", polylines)
	}
	want := []pt{{2, 0.25, "a, round #1: 0.2500"}, {7, 0.8, "a, round #2: 0.8000"}, {2, 1, "<b> & co: 1"}}
	if len(pts) != len(want) {
		t.Fatalf("%d labelled points, want %d", len(pts), len(want))
	}
	for i, w := range want {
		x, y := px+w.x/10*pw, py+(1-w.y)*ph
		if math.Abs(pts[i].x-x) > 0.06 || math.Abs(pts[i].y-y) > 0.06 || pts[i].label != w.label {
			t.Errorf("point %d at (%v, %v) %q, want (%v, %v) %q", i, pts[i].x, pts[i].y, pts[i].label, x, y, w.label)
		}
	}
}

// A chart drawn for a phone is NarrowWidth wide with the wide chart's text
// sizes, keeps an explicit aspect ratio, has ids of its own, and puts its
// time ticks at least a label's width apart.
func TestNarrow(t *testing.T) {
	t0 := float64(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC).Unix())
	wide := &Line{ID: "price", Title: "Yes price", Desc: "d", X: Axis{Label: "time (UTC)", Time: true}, Y: Axis{Label: "p"},
		Series: []Series{{Name: "a", X: []float64{t0, t0 + 2*24*3600}, Y: []float64{0.2, 0.7}}}}
	for _, c := range []struct {
		name string
		ch   interface{ WriteSVG(io.Writer) error }
		w, h string
		id   string
	}{
		{"line", wide.Narrow(), "360", "324", "price-n"}, // 300 and a legend row
		{"square", (&Line{ID: "rel", Title: "t", Desc: "d", Width: 420, Height: 400}).Narrow(), "360", "343", "rel-n"},
		{"bars", (&Bars{ID: "murphy", Title: "t", Desc: "d", Width: 360, Groups: []string{"g"}, Series: []BarSeries{{Name: "x", Values: []float64{1}}}}).Narrow(), "360", "", "murphy-n"},
	} {
		var b bytes.Buffer
		if err := c.ch.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		els := parse(t, b.Bytes())
		accessible(t, c.name, b.Bytes(), els)
		root := els[0].attrs
		if root["class"] != "chart narrow" || root["width"] != c.w || (c.h != "" && root["height"] != c.h) || root["font-size"] != "11" {
			t.Errorf("%s: narrow root %v, want class \"chart narrow\", %s×%s, font-size 11", c.name, root, c.w, c.h)
		}
		if !strings.Contains(b.String(), `id="`+c.id+`-title"`) {
			t.Errorf("%s: narrow chart's ids do not start %q", c.name, c.id)
		}
	}
	if wide.ID != "price" || wide.Width != 0 {
		t.Errorf("Narrow changed the wide chart: %+v", wide)
	}
	var b bytes.Buffer
	if err := wide.Narrow().WriteSVG(&b); err != nil {
		t.Fatal(err)
	}
	var xs []float64
	for _, m := range regexp.MustCompile(`<text x="([-\d.]+)" y="[-\d.]+" text-anchor="middle">[A-Z][a-z]{2} \d`).FindAllStringSubmatch(b.String(), -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		xs = append(xs, x)
	}
	if len(xs) < 2 {
		t.Fatalf("narrow time axis has %d date ticks: %s", len(xs), b.String())
	}
	for i := 1; i < len(xs); i++ {
		if xs[i]-xs[i-1] < 70 {
			t.Errorf("narrow time ticks %v are closer than a label's width", xs)
		}
	}
}

// Dodge sets the labelled points of one x side by side, centred on it and
// Dodge units apart in series order, closer when neighbouring groups would
// meet, and leaves lines and lone points where they are.
func TestLineDodge(t *testing.T) {
	pts := func(c *Line) map[string]float64 {
		var b bytes.Buffer
		if err := c.WriteSVG(&b); err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, m := range regexp.MustCompile(`<g class="pt" transform="translate\(([-\d.]+) [-\d.]+\)"><title>([^<]*)</title>`).FindAllStringSubmatch(b.String(), -1) {
			x, _ := strconv.ParseFloat(m[1], 64)
			out[m[2]] = x
		}
		return out
	}
	series := func(name string, xs ...float64) Series {
		s := Series{Name: name, NoLine: true, X: xs}
		for _, x := range xs {
			s.Y = append(s.Y, 0.5)
			s.Labels = append(s.Labels, fmt.Sprintf("%s@%g", name, x))
		}
		return s
	}
	c := &Line{Width: 720, X: Axis{Fixed: true, Min: 0, Max: 100}, Y: Axis{Fixed: true, Min: 0, Max: 1}, Dodge: 8,
		Series: []Series{{Name: "price", X: []float64{0, 100}, Y: []float64{0.2, 0.8}}, series("a", 20, 60), series("b", 20, 60), series("c", 20), series("d", 90)}}
	got := pts(c)
	// The plot spans 64 to 700: x 20 is at 191.2, 60 at 445.6, 90 at 636.4.
	for label, want := range map[string]float64{"a@20": 183.2, "b@20": 191.2, "c@20": 199.2, "a@60": 441.6, "b@60": 449.6, "d@90": 636.4} {
		if math.Abs(got[label]-want) > 0.01 {
			t.Errorf("%s drawn at x %v, want %v", label, got[label], want)
		}
	}
	// Groups 12.72 units apart with three points each: 12.72 × 0.9 / 3.
	c.Series = []Series{series("a", 20, 22), series("b", 20, 22), series("c", 20, 22)}
	got = pts(c)
	if step := got["b@20"] - got["a@20"]; math.Abs(step-3.816) > 0.05 || got["c@20"] >= got["a@22"] {
		t.Errorf("crowded groups: step %v, %v", step, got)
	}
	c.Dodge = 0
	if got := pts(c); got["a@20"] != got["b@20"] {
		t.Errorf("without Dodge the points of one x moved: %v", got)
	}
}
