package forecastbench

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"
)

// WriteText prints what was read, skipped and imported; saved says whether
// the Saved line applies (false for a dry run).
func (r *Report) WriteText(w io.Writer, saved bool) error {
	fmt.Fprintf(w, "forecastbench: read %d question sets (%d questions) and %d resolution sets (%d rows)\n",
		r.Read.QuestionSets, r.Read.Questions, r.Read.ResolutionSets, r.Read.Rows)
	comb := r.Read.Combination["market"] + r.Read.Combination["dataset"]
	fmt.Fprintf(w, "skipped: %d combination rows (market %d, dataset %d), %d repeated questions or rows\n",
		comb, r.Read.Combination["market"], r.Read.Combination["dataset"], r.Read.Duplicates)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\titems\tresolved\tvoid\tunresolved\tno text\t")
	var tot Stats
	for _, s := range r.Counts {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t\n", s.Kind, s.Items, s.Resolved, s.Void, s.Unresolved, s.NoText)
		tot.Items += s.Items
		tot.Resolved += s.Resolved
		tot.Void += s.Void
		tot.Unresolved += s.Unresolved
		tot.NoText += s.NoText
	}
	fmt.Fprintf(tw, "total\t%d\t%d\t%d\t%d\t%d\t\n", tot.Items, tot.Resolved, tot.Void, tot.Unresolved, tot.NoText)
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, h := range r.Humans {
		fmt.Fprintf(w, "humans: %d %s forecasts by %d forecasters on %d questions, due %s (%d combination forecasts skipped)\n",
			h.Forecasts, h.Group, h.Forecasters, h.Questions, h.Due.Format(time.DateOnly), h.Combination)
	}
	var err error
	if saved {
		_, err = fmt.Fprintf(w, "store: %d inserted, %d updated, %d unchanged, %d new price points\n",
			r.Saved.Inserted, r.Saved.Updated, r.Saved.Unchanged, r.Saved.Prices)
	} else {
		_, err = fmt.Fprintln(w, "dry run: nothing written")
	}
	return err
}
