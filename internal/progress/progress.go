// Package progress shows the progress of a long command: done of a known
// total, the rate and the time left. On a terminal it draws a bar; on a
// file or a pipe (a log, CI output) it writes a plain line every few
// seconds, so a long run is never silent; on any other writer (a test's
// buffer) it writes nothing.
package progress

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"
)

// LineEvery is how often a bar off a terminal writes a line. A run
// shorter than that writes none: its result is its output.
const LineEvery = 5 * time.Second

// Bar is a progress bar. A nil *Bar is a valid bar that shows nothing.
// Its methods are safe for concurrent use.
type Bar struct {
	pb *progressbar.ProgressBar // on a terminal
	w  io.Writer

	// Off a terminal: the line writer's state.
	mu          sync.Mutex
	what        string
	done, total int
	start, last time.Time
	wrote       bool
	now         func() time.Time
}

// New returns a bar of total steps, described by what ("questions",
// "rounds"): drawn on w when w is a terminal, written as a line every
// LineEvery when w is another file or a pipe, nil otherwise.
func New(w io.Writer, total int, what string) *Bar {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if !term.IsTerminal(int(f.Fd())) {
		return newLines(w, total, what, time.Now)
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

func newLines(w io.Writer, total int, what string, now func() time.Time) *Bar {
	t := now()
	return &Bar{w: w, what: what, total: total, start: t, last: t, now: now}
}

// Set records done steps of total: a total that grows (work discovered as
// it runs) is taken as the new total.
func (b *Bar) Set(done, total int) {
	if b == nil {
		return
	}
	if b.pb != nil {
		if int64(total) != b.pb.GetMax64() {
			b.pb.ChangeMax(total)
		}
		b.pb.Set(done)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done, b.total = done, total
	b.line(false)
}

// Add records n more steps done.
func (b *Bar) Add(n int) {
	if b == nil {
		return
	}
	if b.pb != nil {
		b.pb.Add(n)
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.done += n
	b.line(false)
}

// Finish ends the bar (also when the work stopped early). Off a terminal
// it writes a last line if it wrote any before, so a log that showed the
// run going also shows where it ended.
func (b *Bar) Finish() {
	if b == nil {
		return
	}
	if b.pb != nil {
		if !b.pb.IsFinished() {
			b.pb.Exit()
			io.WriteString(b.w, "\n")
		}
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.wrote {
		b.line(true)
		b.wrote = false
	}
}

// line writes "rounds: 12/50 (24%), 3.1 rounds/s, 4s elapsed, ~12s left"
// when LineEvery has passed since the last line, or at once when final.
func (b *Bar) line(final bool) {
	t := b.now()
	if !final && t.Sub(b.last) < LineEvery {
		return
	}
	b.last, b.wrote = t, true
	elapsed := t.Sub(b.start)
	s := fmt.Sprintf("%s: %d", b.what, b.done)
	if b.total > 0 {
		s += fmt.Sprintf("/%d (%d%%)", b.total, b.done*100/b.total)
	}
	if secs := elapsed.Seconds(); secs > 0 {
		s += fmt.Sprintf(", %.1f %s/s", float64(b.done)/secs, b.what)
	}
	s += fmt.Sprintf(", %s elapsed", elapsed.Round(time.Second))
	switch {
	case final && b.total > 0 && b.done >= b.total:
		s += ", done"
	case final:
		s += ", stopped"
	case b.total > b.done && b.done > 0:
		left := time.Duration(float64(elapsed) * float64(b.total-b.done) / float64(b.done))
		s += fmt.Sprintf(", ~%s left", left.Round(time.Second))
	}
	fmt.Fprintln(b.w, s)
}
