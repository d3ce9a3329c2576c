package oracle

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/forecast-arena/arena/stats"
)

// WriteJSON writes the report as indented JSON.
func (r Report) WriteJSON(w io.Writer) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func ci(w [2]stats.Float) string {
	if !w[0].OK || !w[1].OK {
		return "–"
	}
	return fmt.Sprintf("[%.1f, %.1f]", 100*w[0].V, 100*w[1].V)
}

func num(f stats.Float, prec int) string {
	if !f.OK {
		return "–"
	}
	return strconv.FormatFloat(f.V, 'f', prec, 64)
}

// WriteTable writes the report for reading in a terminal.
func (r Report) WriteTable(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "questions: %d\n", r.Questions)
	for _, rc := range r.Resolvers {
		if rc.Failed > 0 {
			fmt.Fprintf(tw, "resolver %s: %d of %d votes failed (the first on %s)\n", rc.Agent, rc.Failed, rc.Votes, rc.FirstFailureID)
		}
	}
	fmt.Fprintln(tw, "\nsystem\tanswered (coverage)\tcorrect\taccuracy\t95% CI\tabstained\tunique acc.\t95% CI\tseries all/mixed/none")
	for _, s := range r.Systems {
		fmt.Fprintf(tw, "%s\t%d/%d (%s)\t%d/%d\t%s\t%s\t%d\t%s\t%s\t%d/%d/%d\n", s.System, s.Answered, s.N, pct(s.Coverage), s.Correct, s.Answered, pct(s.Accuracy), ci(s.Wilson), s.Abstained,
			pct(s.UniqueAccuracy), ci(s.UniqueWilson), s.Consistency.AllCorrect, s.Consistency.Mixed, s.Consistency.AllWrong)
	}
	fmt.Fprintln(tw, "accuracy is over the answered questions: a failed call answers nothing")
	fmt.Fprintln(tw, "\nmajority by agreement\tn\taccuracy")
	fmt.Fprintf(tw, "unanimous\t%d\t%s\nsplit\t%d\t%s\n", r.Agreement.Unanimous.N, pct(r.Agreement.Unanimous.Accuracy), r.Agreement.Split.N, pct(r.Agreement.Split.Accuracy))
	ac := r.AgreementConfidence
	fmt.Fprintf(tw, "\nagreement × confidence (median %s)\thigh\tlow\n", num(ac.Median, 3))
	fmt.Fprintf(tw, "unanimous\t%s (n=%d)\t%s (n=%d)\n", pct(ac.UnanimousHigh.Accuracy), ac.UnanimousHigh.N, pct(ac.UnanimousLow.Accuracy), ac.UnanimousLow.N)
	fmt.Fprintf(tw, "split\t%s (n=%d)\t%s (n=%d)\n", pct(ac.SplitHigh.Accuracy), ac.SplitHigh.N, pct(ac.SplitLow.Accuracy), ac.SplitLow.N)
	if len(r.McNemar) > 0 {
		fmt.Fprintln(tw, "\nMcNemar\ta only\tb only\tp")
		for _, m := range r.McNemar {
			fmt.Fprintf(tw, "%s vs %s\t%d\t%d\t%.4g\n", m.A, m.B, m.AOnly, m.BOnly, m.P)
		}
	}
	if len(r.ErrorCorrelation) > 0 {
		fmt.Fprintln(tw, "\nround-1 errors\tphi")
		for _, e := range r.ErrorCorrelation {
			fmt.Fprintf(tw, "%s, %s\t%s\n", e.A, e.B, num(e.Phi, 3))
		}
		fmt.Fprintln(tw, "\nP(other wrong | given wrong)\tp")
		for _, c := range r.ConditionalError {
			fmt.Fprintf(tw, "%s wrong → %s wrong\t%s\n", c.Given, c.Other, num(c.P, 3))
		}
	}
	if len(r.Revisions) > 0 {
		fmt.Fprintln(tw, "\nround-2 revisions\tcorrect→wrong\twrong→correct")
		for _, v := range r.Revisions {
			fmt.Fprintf(tw, "%s\t%d\t%d\n", v.Agent, v.CorrectToWrong, v.WrongToCorrect)
		}
	}
	fmt.Fprintln(tw, "\ncoverage\tn\tmajority accuracy")
	for _, c := range r.CoverageAccuracy {
		fmt.Fprintf(tw, "%.0f%%\t%d\t%s\n", 100*c.Coverage, c.N, pct(c.Accuracy))
	}
	return tw.Flush()
}

// WriteCSV writes one row per system; accuracy is over the answered
// questions.
func (r Report) WriteCSV(w io.Writer) error {
	cw := csv.NewWriter(w)
	cw.Write([]string{"system", "n", "correct", "accuracy", "abstained", "wilson_lo", "wilson_hi", "unique_accuracy", "unique_wilson_lo", "unique_wilson_hi", "all_correct", "mixed", "all_wrong", "answered", "coverage"})
	f := func(x stats.Float) string {
		if !x.OK {
			return ""
		}
		return strconv.FormatFloat(x.V, 'g', -1, 64)
	}
	for _, s := range r.Systems {
		cw.Write([]string{s.System, strconv.Itoa(s.N), strconv.Itoa(s.Correct), f(s.Accuracy), strconv.Itoa(s.Abstained), f(s.Wilson[0]), f(s.Wilson[1]),
			f(s.UniqueAccuracy), f(s.UniqueWilson[0]), f(s.UniqueWilson[1]), strconv.Itoa(s.Consistency.AllCorrect), strconv.Itoa(s.Consistency.Mixed), strconv.Itoa(s.Consistency.AllWrong),
			strconv.Itoa(s.Answered), f(s.Coverage)})
	}
	cw.Flush()
	return cw.Error()
}

// WriteSVG draws the coverage–accuracy curve of the majority system and the
// agreement × confidence table.
func (r Report) WriteSVG(w io.Writer) error {
	const (
		width, height = 640, 480
		left, top     = 70, 40
		pw, ph        = 520, 260
	)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="15">Coverage–accuracy (majority, %d questions)</text>`+"\n", left, r.Questions)
	// Accuracy axis from the lowest point (rounded down to 10%) to 100%.
	lo := 1.0
	for _, c := range r.CoverageAccuracy {
		if c.Accuracy.OK && c.Accuracy.V < lo {
			lo = c.Accuracy.V
		}
	}
	lo = float64(int(lo*10)) / 10
	if lo >= 1 {
		lo = 0.9
	}
	x := func(c float64) float64 { return left + c*pw }
	y := func(a float64) float64 { return top + (1-(a-lo)/(1-lo))*ph }
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#888"/>`+"\n", left, top, pw, ph)
	for t := 0; t <= 10; t += 2 {
		c := float64(t) / 10
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%d%%</text>`+"\n", x(c), top+ph+16, t*10)
	}
	for a := lo; a <= 1.0001; a += (1 - lo) / 5 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#eee"/><text x="%d" y="%.1f" text-anchor="end">%.0f%%</text>`+"\n", left, left+pw, y(a), y(a), left-6, y(a)+4, 100*a)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">coverage (share auto-resolved, most certain first)</text>`+"\n", left+pw/2, top+ph+34)
	fmt.Fprintf(&b, `<text transform="translate(18 %d) rotate(-90)" text-anchor="middle">accuracy</text>`+"\n", top+ph/2)
	var pts []string
	for _, c := range r.CoverageAccuracy {
		if !c.Accuracy.OK {
			continue
		}
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(c.Coverage), y(c.Accuracy.V)))
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="#1f77b4"><title>%.0f%%: %s (n=%d)</title></circle>`+"\n", x(c.Coverage), y(c.Accuracy.V), 100*c.Coverage, pct(c.Accuracy), c.N)
	}
	if len(pts) > 0 {
		fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="#1f77b4" stroke-width="2"/>`+"\n", strings.Join(pts, " "))
	}
	ac := r.AgreementConfidence
	ty := top + ph + 70
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14">Majority accuracy by agreement × confidence (median %s)</text>`+"\n", left, ty, html.EscapeString(num(ac.Median, 3)))
	rows := []struct {
		name      string
		high, low Rate
	}{{"unanimous", ac.UnanimousHigh, ac.UnanimousLow}, {"split", ac.SplitHigh, ac.SplitLow}}
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">high confidence</text><text x="%d" y="%d" font-weight="bold">low confidence</text>`+"\n", left+140, ty+24, left+320, ty+24)
	for i, row := range rows {
		yy := ty + 46 + 22*i
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-weight="bold">%s</text><text x="%d" y="%d">%s (n=%d)</text><text x="%d" y="%d">%s (n=%d)</text>`+"\n",
			left, yy, row.name, left+140, yy, html.EscapeString(pct(row.high.Accuracy)), row.high.N, left+320, yy, html.EscapeString(pct(row.low.Accuracy)), row.low.N)
	}
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}
