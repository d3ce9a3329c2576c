package scoreio

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/score"
)

func TestParseFloatMatchesStrconv(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	cases := []string{"0", "1", "0.5", ".5", "1.", "0.1", "0.3", "0.7", "0.123456789012345", "0.1234567890123456", "1e-3", "+0.5", "-0", "00.25", "0.0000001"}
	for range 20000 {
		v := r.Float64()
		cases = append(cases, fmt.Sprintf("%.*f", 1+r.IntN(16), v), fmt.Sprint(v))
	}
	for _, c := range cases {
		got, err := parseFloat([]byte(c))
		want, werr := strconvParse(c)
		if (err != nil) != (werr != nil) || (err == nil && math.Float64bits(got) != math.Float64bits(want)) {
			t.Fatalf("parseFloat(%q) = %v, %v; strconv %v, %v", c, got, err, want, werr)
		}
	}
	for _, c := range []string{"", ".", "abc", "0.5x", "1..2", "--1"} {
		if _, err := parseFloat([]byte(c)); err == nil {
			t.Errorf("parseFloat(%q) accepted", c)
		}
	}
}

// FuzzScoreInput: the parser never panics, and whatever it accepts is a
// valid table (probabilities in range, outcomes 0/1, one row per line).
func FuzzScoreInput(f *testing.F) {
	f.Add([]byte("agent,round,market,category,forecast,benchmark,outcome\nA,1,m1,x,0.7,0.6,1\nB,1,m1,x,0.2,0.6,1\n"), false)
	f.Add([]byte("agent,round,market,category,forecast,benchmark,outcome,event\nA,1,\"m,\"\"x\"\"\",c,0.5,,1,e\r\n"), false)
	f.Add([]byte(`{"agent":"A","round":1,"market":"m","category":"c","forecast":0.5,"benchmark":null,"outcome":1}`+"\n"), true)
	f.Add([]byte("agent,round\n\"unterminated"), false)
	f.Fuzz(func(t *testing.T, data []byte, jsonl bool) {
		timer := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("hang on %q jsonl=%v", data, jsonl)) })
		defer timer.Stop()
		tab, err := Parse(data, jsonl)
		if err != nil {
			return
		}
		for i := range tab.Len() {
			r := tab.Row(i)
			if err := r.Validate(); err != nil {
				t.Fatalf("accepted invalid row %+v: %v", r, err)
			}
		}
		if _, err := score.Analyze(tab, score.Options{Bootstrap: 10}); err != nil {
			var ie *score.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("analyze: %v", err)
			}
		}
	})
}

// The parallel chunked parse gives exactly the sequential result: same rows
// in the same order, same dictionaries, same line numbers, same problems.
func TestParseParallelMatchesSequential(t *testing.T) {
	var b strings.Builder
	b.WriteString("agent,round,market,category,forecast,benchmark,outcome,event\n")
	r := rand.New(rand.NewPCG(5, 5))
	for i := range 20000 {
		switch {
		case i == 3 || i == 15000:
			b.WriteString("A,1,m,c,1.5,,1,\n") // bad forecast in both halves
		case i%997 == 0:
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "agent-%d,%d,m%d,c%d,%.4f,%.3f,%d,e%d\r\n", i%7, i/70, i/7, i%3, r.Float64(), r.Float64(), r.IntN(2), i/21)
		}
	}
	data := []byte(b.String())
	old := parallelMin
	defer func() { parallelMin = old }()
	parallelMin = 1 << 40
	_, seqErr := Parse(data, false)
	parallelMin = 0
	_, parErr := Parse(data, false)
	if seqErr == nil || parErr == nil || seqErr.Error() != parErr.Error() || !strings.Contains(seqErr.Error(), "line 5:") || !strings.Contains(seqErr.Error(), "line 15002:") {
		t.Fatalf("errors differ:\n%v\n%v", seqErr, parErr)
	}
	// Without the bad rows both parse; tables must be identical.
	clean := strings.ReplaceAll(b.String(), "A,1,m,c,1.5,,1,\n", "A,1,m,c,0.5,,1,\n")
	parallelMin = 1 << 40
	seq, err := Parse([]byte(clean), false)
	if err != nil {
		t.Fatal(err)
	}
	parallelMin = 0
	par, err := Parse([]byte(clean), false)
	if err != nil {
		t.Fatal(err)
	}
	if seq.Len() != par.Len() || seq.Len() != 20000-21 {
		t.Fatalf("rows %d vs %d", seq.Len(), par.Len())
	}
	for i := range seq.Len() {
		if fmt.Sprint(seq.Row(i)) != fmt.Sprint(par.Row(i)) || seq.Line[i] != par.Line[i] { // Sprint: NaN benchmarks compare equal
			t.Fatalf("row %d: %+v (line %d) vs %+v (line %d)", i, seq.Row(i), seq.Line[i], par.Row(i), par.Line[i])
		}
	}
	for _, d := range [][2]*score.Dict{{seq.Agents, par.Agents}, {seq.Markets, par.Markets}, {seq.Events, par.Events}} {
		if strings.Join(d[0].Names, ",") != strings.Join(d[1].Names, ",") {
			t.Fatal("dictionaries differ")
		}
	}
}

// endless yields its pattern forever, like /dev/zero or a pipe that never
// closes.
type endless struct {
	pattern []byte
	n       int64 // bytes read
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.pattern[(e.n+int64(i))%int64(len(e.pattern))]
	}
	e.n += int64(len(p))
	return len(p), nil
}

// A scores file past a bound is refused once the read gets there, with
// an error naming the file and the limit.
func TestReadBounds(t *testing.T) {
	defer func(f int64, l int) { MaxFileBytes, MaxLineBytes = f, l }(MaxFileBytes, MaxLineBytes)
	MaxFileBytes, MaxLineBytes = 1<<20, 4<<10
	row := []byte("a,r1,m1,c,0.5,0.5,1\n")
	for _, c := range []struct {
		name string
		in   *endless
		want string
	}{
		{"endless line", &endless{pattern: []byte{0}}, "in.csv: line 1 is longer than 4 KiB, the limit of a line"},
		{"endless rows", &endless{pattern: row}, "in.csv: larger than 1 MiB, the limit of a scores file"},
		{"long line after short ones", &endless{pattern: append(bytes.Repeat(row, 3), bytes.Repeat([]byte("x"), 8<<10)...)}, "in.csv: line 4 is longer than 4 KiB"},
	} {
		_, err := Read(c.in, "in.csv")
		if err == nil || !strings.Contains(err.Error(), c.want) || arena.ErrorCode(err) != arena.EINVALID {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if limit := MaxFileBytes + 256<<10; c.in.n > limit {
			t.Errorf("%s: read %d bytes before refusing, want at most %d", c.name, c.in.n, limit)
		}
	}
	// Within the bounds, a file reads as before.
	in := "agent,round,market,category,forecast,benchmark,outcome\n" + strings.Repeat(string(row), 1000)
	if tab, err := Read(strings.NewReader(in), "in.csv"); err != nil || tab.Len() != 1000 {
		t.Fatalf("%v", err)
	}
}
