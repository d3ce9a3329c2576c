package progress_test

import (
	"bytes"
	"os"
	"testing"

	"github.com/forecast-arena/arena/internal/progress"
)

// Off a terminal a bar draws nothing, and a nil bar takes every call.
func TestQuietOffTerminal(t *testing.T) {
	var buf bytes.Buffer
	b := progress.New(&buf, 10, "questions")
	if b != nil {
		t.Fatal("a bar on a buffer")
	}
	b.Set(3, 10)
	b.Add(2)
	b.Finish()
	f, err := os.CreateTemp(t.TempDir(), "out")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if progress.New(f, 10, "rounds") != nil {
		t.Fatal("a bar on a regular file")
	}
	if buf.Len() != 0 {
		t.Fatalf("wrote %q", buf.String())
	}
}
