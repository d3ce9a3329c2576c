package progress

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

// On a writer that is not a file (a test's buffer) a bar writes nothing,
// and a nil bar takes every call.
func TestQuietOnBuffer(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 10, "questions")
	if b != nil {
		t.Fatal("a bar on a buffer")
	}
	b.Set(3, 10)
	b.Add(2)
	b.Finish()
	if buf.Len() != 0 {
		t.Fatalf("wrote %q", buf.String())
	}
}

// On a file or a pipe, a bar writes a line every LineEvery, none for a
// run shorter than that, and a last one when it wrote before.
func TestLinesOffTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if b := New(f, 10, "rounds"); b == nil || b.pb != nil {
		t.Fatal("no line writer on a regular file")
	}

	var buf bytes.Buffer
	now := time.Unix(0, 0)
	clock := func() time.Time { return now }
	short := newLines(&buf, 10, "rounds", clock)
	now = now.Add(LineEvery - time.Millisecond)
	short.Set(9, 10)
	short.Finish()
	if buf.Len() != 0 {
		t.Fatalf("a run shorter than %s wrote %q", LineEvery, buf.String())
	}

	b := newLines(&buf, 50, "rounds", clock)
	now = now.Add(LineEvery)
	b.Set(10, 50)
	now = now.Add(time.Second)
	b.Add(1) // within LineEvery of the last line: nothing
	now = now.Add(LineEvery)
	b.Set(25, 50)
	b.Set(50, 50)
	b.Finish()
	want := "rounds: 10/50 (20%), 2.0 rounds/s, 5s elapsed, ~20s left\n" +
		"rounds: 25/50 (50%), 2.3 rounds/s, 11s elapsed, ~11s left\n" +
		"rounds: 50/50 (100%), 4.5 rounds/s, 11s elapsed, done\n"
	if got := buf.String(); got != want {
		t.Fatalf("got\n%swant\n%s", got, want)
	}

	buf.Reset()
	stopped := newLines(&buf, 0, "steps", clock)
	now = now.Add(2 * LineEvery)
	stopped.Add(3)
	stopped.Finish()
	if got := buf.String(); !strings.HasSuffix(got, "steps: 3, 0.3 steps/s, 10s elapsed, stopped\n") {
		t.Fatalf("got %q", got)
	}
}
