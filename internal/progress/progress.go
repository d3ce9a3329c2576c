// Package progress draws the progress of a long command on a terminal:
// done of a known total, the rate and the time left. It draws nothing when
// its writer is not a terminal (a pipe, a file, CI logs), so scripted runs
// print only their results.
package progress

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// Bar is a progress bar, or nothing when its writer is not a terminal. A
// nil *Bar is a valid bar that draws nothing. Its methods are safe for
// concurrent use.
type Bar struct {
	pb *progressbar.ProgressBar
	w  io.Writer
}

// New returns a bar of total steps, described by what ("questions",
// "rounds"), drawn on w when w is a terminal.
func New(w io.Writer, total int, what string) *Bar {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return nil
	}
	return &Bar{w: w, pb: progressbar.NewOptions(total,
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(what),
		progressbar.OptionShowCount(),
		progressbar.OptionShowIts(),
		progressbar.OptionSetItsString(what),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionSetWidth(30),
		progressbar.OptionOnCompletion(func() { io.WriteString(w, "\n") }),
	)}
}

// Set records done steps of total: a total that grows (work discovered as
// it runs) is taken as the new total.
func (b *Bar) Set(done, total int) {
	if b == nil {
		return
	}
	if int64(total) != b.pb.GetMax64() {
		b.pb.ChangeMax(total)
	}
	b.pb.Set(done)
}

// Add records n more steps done.
func (b *Bar) Add(n int) {
	if b != nil {
		b.pb.Add(n)
	}
}

// Finish ends the bar's line (also when the work stopped early).
func (b *Bar) Finish() {
	if b != nil && !b.pb.IsFinished() {
		b.pb.Exit()
		io.WriteString(b.w, "\n")
	}
}
