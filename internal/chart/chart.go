// Package chart draws the arena's charts as accessible, self-contained SVG:
// data in, SVG out, no I/O beyond the writer it is given. The CLI reports
// and the dashboard share it, so a chart looks the same in both.
//
// Every chart has a <title> and <desc> (role="img"), labelled axes, and
// encodes series by line dash and marker shape as well as colour, so it
// reads in greyscale and by screen reader. Text and axes use currentColor:
// inline in a page they follow its light or dark theme.
package chart

import (
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Palette is the Okabe–Ito colour-blind-safe palette without black and
// yellow, which vanish on dark and light backgrounds.
var Palette = []string{"#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#8C8C8C"}

// dashes and markers vary with the series index together with colour.
var dashes = []string{"", "7 3", "2 2", "9 3 2 3", "4 4", "1 3", "12 4"}

const markerKinds = 5 // circle, square, triangle, diamond, cross

// Axis describes one axis. Without Fixed the domain spans the data and is
// widened to round tick values.
type Axis struct {
	Label    string
	Fixed    bool
	Min, Max float64
	// Integer puts ticks on whole numbers only (rounds, counts).
	Integer bool
	// Time means values are Unix seconds; ticks are dates or clock times.
	Time bool
}

// Series is one line. Lo and Hi, when set (same length as X), draw a
// shaded band such as a confidence interval.
type Series struct {
	Name   string
	X, Y   []float64
	Lo, Hi []float64
	// Points puts a marker on every point; otherwise only on the last one.
	Points bool
	// NoLine draws the markers alone, unjoined (forecasts at points in
	// time rather than a path); it implies Points.
	NoLine bool
	// Labels, when set (same length as X), name every point: each gets a
	// marker in a group of class "pt", translated to the point and titled
	// with its label (a tooltip, and what a screen reader reads).
	Labels []string
}

// Ref is a dashed reference segment from (X0,Y0) to (X1,Y1), e.g. y = 0 or
// the diagonal of a reliability diagram.
type Ref struct {
	X0, Y0, X1, Y1 float64
	Label          string
}

// Line is a line chart.
type Line struct {
	// ID prefixes the element ids, unique within a page.
	ID            string
	Title, Desc   string
	Width, Height float64
	X, Y          Axis
	Series        []Series
	Refs          []Ref
	// Background fills the chart (standalone files); empty is transparent.
	Background string
	// Dodge sets the markers of NoLine series that share an x value side
	// by side, in series order, centred on it and this many units apart
	// (fewer when the groups at neighbouring x values would meet), so
	// that points made at one time, such as every agent's forecast at a
	// round's deadline, do not hide one another. Zero draws each at its x.
	Dodge  float64
	narrow bool
}

// Bars is a grouped bar chart: one group per label, one bar per series.
type Bars struct {
	ID            string
	Title, Desc   string
	Width, Height float64
	YLabel        string
	Groups        []string
	Series        []BarSeries
	// Ref draws one dashed level per group (e.g. the uncertainty term).
	Ref        *BarSeries
	Background string
	narrow     bool
}

// BarSeries is one value per group.
type BarSeries struct {
	Name   string
	Values []float64
}

// NarrowWidth is the width of a chart drawn for a phone: at most the
// content width of a 390 px screen, so its text is shown at full size.
const NarrowWidth = 360

// Narrow returns the chart drawn NarrowWidth wide for a phone, with the
// same text sizes: a wide drawing scaled down to a phone's width shrinks
// its 11-unit text to about 5 px. Its ID gets "-n" (ids stay unique on a
// page that shows both) and its svg the class "chart narrow".
func (c Line) Narrow() *Line {
	c.ID, c.narrow = idOr(c.ID, "chart")+"-n", true
	c.Width, c.Height = narrowSize(c.Width, c.Height, 720, 300)
	return &c
}

// Narrow returns the bar chart drawn for a phone (see Line.Narrow).
func (c Bars) Narrow() *Bars {
	c.ID, c.narrow = idOr(c.ID, "bars")+"-n", true
	c.Width, c.Height = narrowSize(c.Width, c.Height, 0, 380)
	return &c
}

// narrowSize keeps a chart of explicit size in proportion, else takes a
// phone-sized default height.
func narrowSize(w, h, defW, defH float64) (float64, float64) {
	if w == 0 {
		w = defW
	}
	if w > 0 && w <= NarrowWidth {
		return w, h
	}
	if w > 0 && h > 0 {
		return NarrowWidth, math.Round(h * NarrowWidth / w)
	}
	return NarrowWidth, defH
}

// frame is the geometry shared by both chart kinds.
type frame struct {
	w                 io.Writer
	id                string
	W, H              float64
	left, right       float64
	top, bottom       float64
	x0, x1, y0, y1    float64
	err               error
	axisSpace         float64 // below the plot: tick labels and axis label
	legendRows        int
	legendItemsPerRow int
	narrow            bool
}

func (f *frame) printf(format string, args ...any) {
	if f.err == nil {
		_, f.err = fmt.Fprintf(f.w, format, args...)
	}
}

func (f *frame) sx(x float64) float64 {
	return f.left + (x-f.x0)/(f.x1-f.x0)*(f.W-f.left-f.right)
}
func (f *frame) sy(y float64) float64 {
	return f.H - f.bottom - (y-f.y0)/(f.y1-f.y0)*(f.H-f.top-f.bottom)
}

// legendLayout reserves rows below the plot for n legend entries, so the
// legend never covers the data.
func (f *frame) legendLayout(names []string) {
	widest := 0
	for _, n := range names {
		widest = max(widest, len([]rune(n)))
	}
	item := 34 + 6.5*float64(widest) + 16
	f.legendItemsPerRow = max(1, int((f.W-f.left)/item))
	f.legendRows = (len(names) + f.legendItemsPerRow - 1) / f.legendItemsPerRow
	f.axisSpace = f.bottom
	f.bottom += float64(f.legendRows)*18 + 6
	f.H += float64(f.legendRows)*18 + 6
}

func (f *frame) begin(title, desc, background string) {
	class := "chart"
	if f.narrow {
		class = "chart narrow"
	}
	f.printf(`<svg xmlns="http://www.w3.org/2000/svg" class="%s" width="%s" height="%s" viewBox="0 0 %s %s" role="img" aria-labelledby="%s-title %s-desc" font-family="system-ui, sans-serif" font-size="11">`+"\n",
		class, num(f.W), num(f.H), num(f.W), num(f.H), f.id, f.id)
	f.printf("<title id=\"%s-title\">%s</title>\n<desc id=\"%s-desc\">%s</desc>\n", f.id, esc(title), f.id, esc(desc))
	if background != "" {
		f.printf(`<rect width="100%%" height="100%%" fill="%s"/>`+"\n", esc(background))
	}
	f.printf(`<text x="%s" y="18" font-size="13" font-weight="600" text-anchor="middle" fill="currentColor">%s</text>`+"\n", num(f.W/2), esc(title))
}

func (f *frame) yAxis(ticks []float64, label string, format func(float64) string) {
	f.printf(`<g class="axis y" fill="currentColor" stroke="none">` + "\n")
	for _, t := range ticks {
		y := f.sy(t)
		f.printf(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-opacity="0.15"/>`+"\n", num(f.left), num(f.W-f.right), num(y), num(y))
		f.printf(`<text x="%s" y="%s" text-anchor="end">%s</text>`+"\n", num(f.left-5), num(y+4), esc(format(t)))
	}
	mid := f.top + (f.H-f.top-f.bottom)/2
	f.printf(`<text x="14" y="%s" text-anchor="middle" transform="rotate(-90 14 %s)">%s</text>`+"\n", num(mid), num(mid), esc(label))
	f.printf("</g>\n")
}

func (f *frame) box() {
	f.printf(`<rect class="plot" x="%s" y="%s" width="%s" height="%s" fill="none" stroke="currentColor" stroke-opacity="0.6"/>`+"\n",
		num(f.left), num(f.top), num(f.W-f.left-f.right), num(f.H-f.top-f.bottom))
}

// legendItem draws entry i: a line sample with the series' dash and marker,
// then its name.
func (f *frame) legendItem(i int, name string, swatch func(x, y float64)) {
	row, col := i/f.legendItemsPerRow, i%f.legendItemsPerRow
	per := (f.W - f.left) / float64(f.legendItemsPerRow)
	x := f.left + float64(col)*per
	y := f.H - f.bottom + f.axisSpace + 12 + float64(row)*18
	swatch(x, y-4)
	f.printf(`<text x="%s" y="%s" fill="currentColor">%s</text>`+"\n", num(x+32), num(y), esc(name))
}

// WriteSVG writes the chart.
func (c *Line) WriteSVG(w io.Writer) error {
	f := &frame{w: w, id: idOr(c.ID, "chart"), W: or(c.Width, 720), H: or(c.Height, 400), left: 64, right: 20, top: 32, bottom: 44, narrow: c.narrow}
	var names []string
	for _, s := range c.Series {
		names = append(names, s.Name)
	}
	if len(c.Series) > 1 || (len(c.Series) == 1 && c.Series[0].Name != "") {
		f.legendLayout(names)
	}
	xlo, xhi, ylo, yhi := c.extent()
	// About one x tick per 90 units of plot width: a date-and-time label
	// is ~70 units wide, so a narrow chart gets fewer ticks, not overlaps.
	xt, xfmt := c.X.ticks(xlo, xhi, min(6, max(2, int((f.W-f.left-f.right)/90))))
	yt, yfmt := c.Y.ticks(ylo, yhi, 6)
	f.x0, f.x1 = domain(c.X, xt, xlo, xhi)
	f.y0, f.y1 = domain(c.Y, yt, ylo, yhi)

	f.begin(c.Title, c.Desc, c.Background)
	f.yAxis(yt, c.Y.Label, yfmt)
	f.xAxis(xt, c.X.Label, xfmt)
	f.box()
	for _, r := range c.Refs {
		f.printf(`<line class="ref" x1="%s" y1="%s" x2="%s" y2="%s" stroke="currentColor" stroke-opacity="0.5" stroke-dasharray="4 3"><title>%s</title></line>`+"\n",
			num(f.sx(clamp(r.X0, f.x0, f.x1))), num(f.sy(r.Y0)), num(f.sx(clamp(r.X1, f.x0, f.x1))), num(f.sy(r.Y1)), esc(r.Label))
	}
	dodge := c.dodges(f)
	for i, s := range c.Series {
		c.writeSeries(f, i, s, dodge)
	}
	c.writeLegend(f)
	f.printf("</svg>\n")
	return f.err
}

// extent is the range of the data, bands included, and of the references'
// y (a reference extends no x domain); the unit square without data.
func (c *Line) extent() (xlo, xhi, ylo, yhi float64) {
	xlo, xhi, ylo, yhi = math.Inf(1), math.Inf(-1), math.Inf(1), math.Inf(-1)
	see := func(x, y float64) {
		if finite(x) && finite(y) {
			xlo, xhi, ylo, yhi = math.Min(xlo, x), math.Max(xhi, x), math.Min(ylo, y), math.Max(yhi, y)
		}
	}
	for _, s := range c.Series {
		for i := range s.X {
			see(s.X[i], s.Y[i])
			if len(s.Lo) == len(s.X) && len(s.Hi) == len(s.X) {
				see(s.X[i], s.Lo[i])
				see(s.X[i], s.Hi[i])
			}
		}
	}
	for _, r := range c.Refs {
		if !math.IsInf(xlo, 1) { // references extend no x domain, only y
			ylo, yhi = math.Min(ylo, math.Min(r.Y0, r.Y1)), math.Max(yhi, math.Max(r.Y0, r.Y1))
		}
	}
	if math.IsInf(xlo, 1) {
		xlo, xhi, ylo, yhi = 0, 1, 0, 1
	}
	return xlo, xhi, ylo, yhi
}

// xAxis draws the x axis: a grid line and a label at each tick, and the
// axis label.
func (f *frame) xAxis(ticks []float64, label string, format func(float64) string) {
	f.printf(`<g class="axis x" fill="currentColor">` + "\n")
	for _, t := range ticks {
		x := f.sx(t)
		f.printf(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-opacity="0.15"/>`+"\n", num(x), num(x), num(f.top), num(f.H-f.bottom))
		f.printf(`<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(x), num(f.H-f.bottom+15), esc(format(t)))
	}
	f.printf(`<text x="%s" y="%s" text-anchor="middle">%s</text>`+"\n", num(f.left+(f.W-f.left-f.right)/2), num(f.H-f.bottom+31), esc(label))
	f.printf("</g>\n")
}

// writeSeries draws the i'th series: its band, its line and its markers,
// each x moved by dodge where points of several series would overlap.
func (c *Line) writeSeries(f *frame, i int, s Series, dodge map[[2]int]float64) {
	color := Palette[i%len(Palette)]
	f.printf(`<g class="series" data-name="%s">`+"\n", esc(s.Name))
	if len(s.Lo) == len(s.X) && len(s.Hi) == len(s.X) && len(s.X) > 1 {
		var b strings.Builder
		for j := range s.X {
			fmt.Fprintf(&b, "%s,%s ", num(f.sx(s.X[j])), num(f.sy(s.Hi[j])))
		}
		for j := len(s.X) - 1; j >= 0; j-- {
			fmt.Fprintf(&b, "%s,%s ", num(f.sx(s.X[j])), num(f.sy(s.Lo[j])))
		}
		f.printf(`<polygon class="band" fill="%s" fill-opacity="0.15" stroke="none" points="%s"/>`+"\n", color, strings.TrimSpace(b.String()))
	}
	var b strings.Builder
	n := 0
	for j := range s.X {
		if finite(s.X[j]) && finite(s.Y[j]) {
			fmt.Fprintf(&b, "%s,%s ", num(f.sx(s.X[j])), num(f.sy(s.Y[j])))
			n++
		}
	}
	if n > 1 && !s.NoLine {
		f.printf(`<polyline fill="none" stroke="%s" stroke-width="1.8"%s points="%s"/>`+"\n", color, dashAttr(i), strings.TrimSpace(b.String()))
	}
	labelled := len(s.Labels) == len(s.X)
	for j := range s.X {
		if !finite(s.X[j]) || !finite(s.Y[j]) {
			continue
		}
		x := f.sx(s.X[j]) + dodge[[2]int{i, j}]
		switch {
		case labelled:
			f.printf(`<g class="pt" transform="translate(%s %s)"><title>%s</title>`+"\n", num(x), num(f.sy(s.Y[j])), esc(s.Labels[j]))
			f.marker(i, 0, 0, color)
			f.printf("</g>\n")
		case s.Points || s.NoLine || j == len(s.X)-1 || n == 1:
			f.marker(i, x, f.sy(s.Y[j]), color)
		}
	}
	f.printf("</g>\n")
}

// writeLegend draws the legend, if the layout made room for one: each
// series' line and marker beside its name.
func (c *Line) writeLegend(f *frame) {
	if f.legendRows <= 0 {
		return
	}
	f.printf(`<g class="legend">` + "\n")
	for i, s := range c.Series {
		color := Palette[i%len(Palette)]
		f.legendItem(i, s.Name, func(x, y float64) {
			if !s.NoLine {
				f.printf(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="%s" stroke-width="1.8"%s/>`+"\n", num(x), num(x+26), num(y), num(y), color, dashAttr(i))
			}
			f.marker(i, x+13, y, color)
		})
	}
	f.printf("</g>\n")
}

// dodges are the horizontal offsets, in drawing units and by (series,
// point), that set side by side the markers of NoLine series sharing an
// x value (see Dodge): one spacing for the whole chart, at most Dodge and
// small enough that neighbouring groups keep apart, each group kept
// inside the plot.
func (c *Line) dodges(f *frame) map[[2]int]float64 {
	out := map[[2]int]float64{}
	if c.Dodge <= 0 {
		return out
	}
	groups := map[float64][][2]int{}
	for i, s := range c.Series {
		if !s.NoLine {
			continue
		}
		for j := range s.X {
			if finite(s.X[j]) && finite(s.Y[j]) {
				groups[s.X[j]] = append(groups[s.X[j]], [2]int{i, j})
			}
		}
	}
	xs := make([]float64, 0, len(groups))
	widest := 1
	for x, g := range groups {
		xs = append(xs, f.sx(x))
		widest = max(widest, len(g))
	}
	if widest == 1 {
		return out
	}
	sort.Float64s(xs)
	step := c.Dodge
	for k := 1; k < len(xs); k++ {
		step = math.Min(step, (xs[k]-xs[k-1])*0.9/float64(widest))
	}
	for x, g := range groups {
		half := step * float64(len(g)-1) / 2
		// The group's middle, moved in so that its ends stay in the plot.
		mid := math.Max(f.left+half, math.Min(f.W-f.right-half, f.sx(x)))
		for k, p := range g {
			out[p] = mid - f.sx(x) - half + step*float64(k)
		}
	}
	return out
}

// WriteSVG writes the chart.
func (c *Bars) WriteSVG(w io.Writer) error {
	groups := max(len(c.Groups), 1)
	f := &frame{w: w, id: idOr(c.ID, "bars"), W: or(c.Width, math.Max(360, 96*float64(groups)+84)), H: or(c.Height, 380),
		left: 64, right: 20, top: 32, bottom: 44, narrow: c.narrow}
	// Long group labels are set at an angle, with room reserved for them.
	widest := 0
	for _, g := range c.Groups {
		widest = max(widest, len([]rune(g)))
	}
	const maxLabel = 22 // longer group labels are shortened; the bar titles keep them whole
	widest = min(widest, maxLabel+1)
	slant := float64(widest)*6 > (f.W-f.left-f.right)/float64(groups)-8
	if slant {
		extra := float64(widest) * 4.2
		f.bottom += extra
		f.H += extra
	}
	names := make([]string, 0, len(c.Series)+1)
	for _, s := range c.Series {
		names = append(names, s.Name)
	}
	if c.Ref != nil {
		names = append(names, c.Ref.Name)
	}
	f.legendLayout(names)
	lo, hi := 0.0, 0.0
	for _, s := range append(append([]BarSeries{}, c.Series...), deref(c.Ref)...) {
		for _, v := range s.Values {
			if finite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == lo {
		hi = lo + 1
	}
	ya := Axis{Label: c.YLabel}
	yt, yfmt := ya.ticks(lo, hi, 6)
	f.x0, f.x1 = 0, float64(groups)
	f.y0, f.y1 = domain(ya, yt, lo, hi)
	f.begin(c.Title, c.Desc, c.Background)
	f.printf(`<defs><pattern id="%s-hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="white" fill-opacity="0"/><line x1="0" y1="0" x2="0" y2="6" stroke="black" stroke-opacity="0.55" stroke-width="2.5"/></pattern></defs>`+"\n", f.id)
	f.yAxis(yt, c.YLabel, yfmt)
	f.box()
	nb := max(len(c.Series), 1)
	slot := (f.W - f.left - f.right) / float64(groups)
	bw := slot * 0.7 / float64(nb)
	for g, name := range c.Groups {
		x0 := f.sx(float64(g)) + slot*0.15
		f.printf(`<g class="group" data-name="%s">`+"\n", esc(name))
		for i, s := range c.Series {
			if g >= len(s.Values) || !finite(s.Values[g]) {
				continue
			}
			v := s.Values[g]
			y, h := f.sy(math.Max(v, 0)), math.Abs(f.sy(v)-f.sy(0))
			x := x0 + float64(i)*bw
			f.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="%s"><title>%s %s: %s</title></rect>`+"\n", num(x), num(y), num(bw), num(h), Palette[i%len(Palette)], esc(name), esc(s.Name), yfmtExact(v))
			if i%2 == 1 { // alternate bars are hatched: the series differ without colour
				f.printf(`<rect x="%s" y="%s" width="%s" height="%s" fill="url(#%s-hatch)"/>`+"\n", num(x), num(y), num(bw), num(h), f.id)
			}
		}
		if c.Ref != nil && g < len(c.Ref.Values) && finite(c.Ref.Values[g]) {
			y := f.sy(c.Ref.Values[g])
			f.printf(`<line class="ref" x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-width="1.5" stroke-dasharray="4 3"><title>%s %s: %s</title></line>`+"\n",
				num(x0-slot*0.05), num(x0+slot*0.75), num(y), num(y), esc(name), esc(c.Ref.Name), yfmtExact(c.Ref.Values[g]))
		}
		f.printf("</g>\n")
	}
	f.printf(`<g class="axis x" fill="currentColor">` + "\n")
	for g, name := range c.Groups {
		x0 := f.sx(float64(g)) + slot*0.15
		cx := x0 + slot*0.35
		if r := []rune(name); len(r) > maxLabel {
			name = string(r[:maxLabel-1]) + "…"
		}
		if slant {
			f.printf(`<text x="%s" y="%s" text-anchor="end" fill="currentColor" transform="rotate(-35 %s %s)">%s</text>`+"\n", num(cx), num(f.H-f.bottom+14), num(cx), num(f.H-f.bottom+14), esc(name))
		} else {
			f.printf(`<text x="%s" y="%s" text-anchor="middle" fill="currentColor">%s</text>`+"\n", num(cx), num(f.H-f.bottom+15), esc(name))
		}
	}
	f.printf("</g>\n")
	f.printf(`<g class="legend">` + "\n")
	for i, s := range c.Series {
		f.legendItem(i, s.Name, func(x, y float64) {
			f.printf(`<rect x="%s" y="%s" width="26" height="10" fill="%s"/>`+"\n", num(x), num(y-5), Palette[i%len(Palette)])
			if i%2 == 1 {
				f.printf(`<rect x="%s" y="%s" width="26" height="10" fill="url(#%s-hatch)"/>`+"\n", num(x), num(y-5), f.id)
			}
		})
	}
	if c.Ref != nil {
		f.legendItem(len(c.Series), c.Ref.Name, func(x, y float64) {
			f.printf(`<line x1="%s" x2="%s" y1="%s" y2="%s" stroke="currentColor" stroke-width="1.5" stroke-dasharray="4 3"/>`+"\n", num(x), num(x+26), num(y), num(y))
		})
	}
	f.printf("</g>\n</svg>\n")
	return f.err
}

func deref(b *BarSeries) []BarSeries {
	if b == nil {
		return nil
	}
	return []BarSeries{*b}
}

// marker draws series i's marker shape centred on (x, y).
func (f *frame) marker(i int, x, y float64, color string) {
	switch i % markerKinds {
	case 0:
		f.printf(`<circle cx="%s" cy="%s" r="3.2" fill="%s"/>`+"\n", num(x), num(y), color)
	case 1:
		f.printf(`<rect x="%s" y="%s" width="6" height="6" fill="%s"/>`+"\n", num(x-3), num(y-3), color)
	case 2:
		f.printf(`<path d="M%s %sL%s %sL%s %sZ" fill="%s"/>`+"\n", num(x), num(y-4), num(x+3.6), num(y+2.6), num(x-3.6), num(y+2.6), color)
	case 3:
		f.printf(`<path d="M%s %sL%s %sL%s %sL%s %sZ" fill="%s"/>`+"\n", num(x), num(y-4), num(x+4), num(y), num(x), num(y+4), num(x-4), num(y), color)
	default:
		f.printf(`<path d="M%s %sL%s %sM%s %sL%s %s" stroke="%s" stroke-width="2"/>`+"\n", num(x-3.5), num(y-3.5), num(x+3.5), num(y+3.5), num(x-3.5), num(y+3.5), num(x+3.5), num(y-3.5), color)
	}
}

func dashAttr(i int) string {
	if d := dashes[i%len(dashes)]; d != "" {
		return ` stroke-dasharray="` + d + `"`
	}
	return ""
}

// domain is the axis range: fixed, or the data widened to the outer ticks.
func domain(a Axis, ticks []float64, lo, hi float64) (float64, float64) {
	if a.Fixed {
		return a.Min, a.Max
	}
	if len(ticks) > 0 {
		lo, hi = math.Min(lo, ticks[0]), math.Max(hi, ticks[len(ticks)-1])
	}
	if hi <= lo {
		hi = lo + 1
	}
	return lo, hi
}

// ticks picks about five round tick values covering [lo, hi] and their
// label format.
// ticks places at most about n ticks (n-1 steps) on the axis.
func (a Axis) ticks(lo, hi float64, n int) ([]float64, func(float64) string) {
	if a.Fixed {
		lo, hi = a.Min, a.Max
	}
	if a.Time {
		return timeTicks(lo, hi, n)
	}
	if hi <= lo {
		d := math.Max(math.Abs(lo)*0.1, 1e-3)
		if a.Integer {
			d = 1
		}
		lo, hi = lo-d, hi+d
	}
	step := niceStep((hi - lo) / float64(n-1))
	if a.Integer {
		step = math.Max(1, math.Round(step))
	}
	// A free axis runs from the tick at or below the data to the tick at
	// or above it; a fixed one keeps its bounds and ticks inside them.
	first, last := math.Floor(lo/step+1e-9), math.Ceil(hi/step-1e-9)
	if a.Fixed {
		first, last = math.Ceil(lo/step-1e-9), math.Floor(hi/step+1e-9)
	}
	var out []float64
	for k := first; k <= last && len(out) <= 50; k++ {
		out = append(out, k*step)
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	return out, func(v float64) string {
		if v == 0 {
			return "0"
		}
		return strconv.FormatFloat(v, 'f', prec, 64)
	}
}

// niceStep rounds a raw step up to 1, 2 or 5 times a power of ten, so an
// axis gets at most about six ticks.
func niceStep(raw float64) float64 {
	if raw <= 0 || !finite(raw) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(raw)))
	switch m := raw / p; {
	case m <= 1+1e-9:
		return p
	case m <= 2+1e-9:
		return 2 * p
	case m <= 5+1e-9:
		return 5 * p
	}
	return 10 * p
}

var timeSteps = []struct {
	d      time.Duration
	layout string
}{
	{10 * time.Minute, "15:04"}, {30 * time.Minute, "15:04"}, {time.Hour, "15:04"}, {3 * time.Hour, "Jan 2 15:04"},
	{6 * time.Hour, "Jan 2 15:04"}, {12 * time.Hour, "Jan 2 15:04"}, {24 * time.Hour, "Jan 2"}, {2 * 24 * time.Hour, "Jan 2"},
	{7 * 24 * time.Hour, "Jan 2"}, {14 * 24 * time.Hour, "Jan 2"}, {30 * 24 * time.Hour, "Jan 2006"}, {91 * 24 * time.Hour, "Jan 2006"},
	{365 * 24 * time.Hour, "2006"},
}

// timeTicks places at most n ticks on UTC multiples of a round duration.
func timeTicks(lo, hi float64, n int) ([]float64, func(float64) string) {
	if hi <= lo {
		lo, hi = lo-1800, hi+1800
	}
	span := time.Duration((hi - lo) * float64(time.Second))
	st := timeSteps[len(timeSteps)-1]
	for _, s := range timeSteps {
		if span/s.d <= time.Duration(n) {
			st = s
			break
		}
	}
	sec := st.d.Seconds()
	var out []float64
	for v := math.Ceil(lo/sec) * sec; v <= hi; v += sec {
		out = append(out, v)
	}
	return out, func(v float64) string { return time.Unix(int64(v), 0).UTC().Format(st.layout) }
}

func yfmtExact(v float64) string { return strconv.FormatFloat(v, 'g', 4, 64) }

func num(v float64) string {
	s := strconv.FormatFloat(math.Round(v*10)/10, 'f', -1, 64)
	if s == "-0" {
		return "0"
	}
	return s
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

func clamp(v, lo, hi float64) float64 { return math.Max(lo, math.Min(hi, v)) }

func or(v, def float64) float64 {
	if v > 0 {
		return v
	}
	return def
}

func idOr(id, def string) string {
	if id == "" {
		return def
	}
	var b strings.Builder
	for _, r := range id {
		if r == '-' || r == '_' || (r >= '0' && r <= '9') || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;", "'", "&#39;").Replace(s)
}
