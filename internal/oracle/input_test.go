package oracle

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/testscale"
)

func TestReadQuestionsCSV(t *testing.T) {
	in := "id,question,description,category,close_time,ground_truth,series_ticker,extra\n" +
		"a1,Will A?,Yes if A,Sports,2025-06-01T12:00:00Z,YES,S1,x\n" +
		"\"a2\",\"Will, B?\",,Politics,2025-06-02,no,S1,\n" +
		"a3,Will C?,,Crypto,,No,,\n"
	qs, err := ReadQuestionsCSV(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 3 || qs[0].Truth != "YES" || qs[1].Text != "Will, B?" || qs[1].Truth != "NO" || qs[2].Series != "" ||
		!qs[0].Cutoff.Equal(time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)) || !qs[2].Cutoff.IsZero() || qs[0].Criteria != "Yes if A" {
		t.Fatalf("%+v", qs)
	}
	bad := map[string]string{
		"id,question\n": "lacks column",
		"":              "empty file",
		"id,question,description,category,close_time,ground_truth,series_ticker\n":                              "no rows",
		"id,question,description,category,close_time,ground_truth,series_ticker\na,Q,,c,,yes,s\na,Q,,c,,no,s\n": "line 3: duplicate id \"a\" (first on line 2)",
		"id,question,description,category,close_time,ground_truth,series_ticker\na,Q,,c,,maybe,s\n":             "line 2: ground_truth",
		"id,question,description,category,close_time,ground_truth,series_ticker\na,Q,,c,tomorrow,yes,s\n":       "line 2: close_time",
		"id,question,description,category,close_time,ground_truth,series_ticker\na,Q,,c,,yes,s\nb,Q\n":          "line 3: 2 fields",
		"id,question,description,category,close_time,ground_truth,series_ticker\n,Q,,c,,yes,s\n":                "line 2: empty id",
		"id,question,description,category,close_time,ground_truth,series_ticker\na,\"Q,,c,,yes,s\n":             "line 2",
		"id,question,description,category,close_time,ground_truth,series_ticker\nx,Q,,c,,yes,s\ny,,,c,,yes,s\n": "line 3: empty question",
	}
	for in, want := range bad {
		_, err := ReadQuestionsCSV(strings.NewReader(in))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want %q", in, err, want)
		}
	}
}

// repeatReader yields a head, then its fill forever, like a pipe that
// never closes.
type repeatReader struct {
	head, fill string
	n          int
}

func (r *repeatReader) Read(p []byte) (int, error) {
	for i := range p {
		if r.n < len(r.head) {
			p[i] = r.head[r.n]
		} else {
			p[i] = r.fill[(r.n-len(r.head))%len(r.fill)]
		}
		r.n++
	}
	return len(p), nil
}

// An endless questions file is refused once the read passes a bound.
func TestReadQuestionsBounds(t *testing.T) {
	head := "id,question,description,category,close_time,ground_truth,series_ticker\n"
	// The whole-file bound is lowered outside full-size runs: reading
	// 64 MiB through the CSV parser takes seconds.
	limit := int64(testscale.Size(4<<20, MaxQuestionsBytes))
	for _, c := range []struct {
		name string
		in   *repeatReader
		want string
	}{
		{"endless line", &repeatReader{fill: "\x00"}, "questions: line 1 is longer than 1 MiB, the limit of a line"},
		{"endless field", &repeatReader{head: head + "a,\"", fill: "x"}, "questions: line 2 is longer than 1 MiB"},
		{"endless multi-line field", &repeatReader{head: head + "a,\"", fill: strings.Repeat("x", 999) + "\n"},
			fmt.Sprintf("questions: larger than %d MiB, the limit of a questions file", limit>>20)},
	} {
		read := ReadQuestionsCSV
		if limit != MaxQuestionsBytes {
			read = func(r io.Reader) ([]EvalQuestion, error) { return readQuestionsCSV(r, limit) }
		}
		_, err := read(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) || arena.ErrorCode(err) != arena.EINVALID {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if int64(c.in.n) > limit+1<<20 {
			t.Errorf("%s: read %d bytes", c.name, c.in.n)
		}
	}
}

func FuzzReadQuestionsCSV(f *testing.F) {
	f.Add("id,question,description,category,close_time,ground_truth,series_ticker\na,Q,,c,2025-01-01,yes,s\n")
	f.Add("id,question,description,category,close_time,ground_truth,series_ticker\n\"a\"\"\",Q,,c,,No,\n")
	f.Fuzz(func(t *testing.T, s string) {
		qs, err := ReadQuestionsCSV(strings.NewReader(s))
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, q := range qs {
			if q.ID == "" || q.Text == "" || !q.Truth.Binary() || seen[q.ID] {
				t.Fatalf("bad question %+v", q)
			}
			seen[q.ID] = true
		}
	})
}
