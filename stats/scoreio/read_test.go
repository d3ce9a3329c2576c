package scoreio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/stats"
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
		// Cut into pieces of a few bytes, the input parses the same,
		// whatever size it is said to have: none, too small (the rows'
		// columns grow), too large.
		for _, hint := range []int64{0, int64(len(data) / 7), int64(len(data) * 5)} {
			pieces, perr := parsePieces(data, jsonl, 1+len(data)%13, 1+len(data)%5, hint, nil)
			if fmt.Sprint(err) != fmt.Sprint(perr) {
				t.Fatalf("in pieces, size %d: error %v, want %v", hint, perr, err)
			}
			if err != nil {
				return
			}
			if d := sameTable(tab, pieces); d != "" {
				t.Fatalf("in pieces, size %d: %s", hint, d)
			}
		}
		for i := range tab.Len() {
			r := tab.Row(i)
			if err := r.Validate(); err != nil {
				t.Fatalf("accepted invalid row %+v: %v", r, err)
			}
		}
		if _, err := stats.Analyze(context.Background(), tab, stats.Options{Bootstrap: 10}); err != nil {
			var ie *stats.InputError
			if !errors.As(err, &ie) {
				t.Fatalf("analyze: %v", err)
			}
		}
	})
}

// parsePieces is Parse cutting data into pieces of about size bytes, read
// n bytes at a time by r (a bytes.Reader when nil), the input said to be
// of hint bytes (0: not known).
func parsePieces(data []byte, jsonl bool, size, n int, hint int64, r io.Reader) (*stats.Table, error) {
	if r == nil {
		r = bytes.NewReader(data)
	}
	return parse(&source{r: r, size: hint, piece: size, read: n}, func([]byte) bool { return jsonl })
}

// sameTable reports how two tables differ: rows in order, line numbers,
// dictionaries ("" when equal).
func sameTable(a, b *stats.Table) string {
	if a.Len() != b.Len() {
		return fmt.Sprintf("rows %d vs %d", a.Len(), b.Len())
	}
	for i := range a.Len() {
		if fmt.Sprint(a.Row(i)) != fmt.Sprint(b.Row(i)) || a.Line[i] != b.Line[i] { // Sprint: NaN benchmarks compare equal
			return fmt.Sprintf("row %d: %+v (line %d) vs %+v (line %d)", i, a.Row(i), a.Line[i], b.Row(i), b.Line[i])
		}
	}
	for k, d := range dicts(a) {
		if e := dicts(b)[k]; !slices.Equal(d.Names, e.Names) {
			return fmt.Sprintf("dictionary %d differs", k)
		}
	}
	for k, c := range columns(a) {
		if !slices.Equal(c, columns(b)[k]) {
			return fmt.Sprintf("ids of column %d differ", k)
		}
	}
	return ""
}

// An input parsed in many pieces, in parallel, gives exactly the result of
// one piece: same rows in the same order, same dictionaries and ids, same
// line numbers, same problems; also when a quote midway sends the rest to
// one pass, and when the reader returns a byte at a time.
func TestParsePiecesMatchOnePiece(t *testing.T) {
	var b strings.Builder
	b.WriteString("agent,round,market,category,forecast,benchmark,outcome,event\n")
	r := rand.New(rand.NewPCG(5, 5))
	for i := range 6000 {
		switch {
		case i == 3 || i == 4500:
			b.WriteString("A,1,m,c,1.5,,1,\n") // bad forecast early and late
		case i%997 == 0:
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "agent-%d,%d,m%d,c%d,%.4f,%.3f,%d,e%d\r\n", i%7, i/70, i/7, i%3, r.Float64(), r.Float64(), r.IntN(2), i/21)
		}
	}
	dirty := b.String()
	clean := strings.ReplaceAll(dirty, "A,1,m,c,1.5,,1,\n", "A,1,m,c,0.5,,1,\n")
	// A quoted category with a newline, two thirds in.
	at := strings.Index(clean[len(clean)*2/3:], "\n") + len(clean)*2/3 + 1
	quoted := clean[:at] + "Q,1,mq,\"multi\nline\",0.5,,1,e\n" + clean[at:]
	for _, in := range []string{dirty, clean, quoted} {
		one, oneErr := parsePieces([]byte(in), false, 1<<30, 1<<30, 0, nil)
		for _, size := range []int{1, 100, 4096, 50000} { // 1: a piece a line
			// The input's size unknown, too small (the rows' columns
			// grow, the first rows moved into the last), right, too large.
			for _, hint := range []int64{0, int64(len(in) / 10), int64(len(in)), int64(len(in) * 10)} {
				many, err := parsePieces([]byte(in), false, size, max(size/3, 1), hint, nil)
				if fmt.Sprint(err) != fmt.Sprint(oneErr) {
					t.Fatalf("pieces of %d, size %d: error %v, want %v", size, hint, err, oneErr)
				}
				if err == nil {
					if d := sameTable(one, many); d != "" {
						t.Fatalf("pieces of %d, size %d: %s", size, hint, d)
					}
				}
			}
		}
		bytewise, err := parsePieces(nil, false, 300, 7, 0, iotest.OneByteReader(strings.NewReader(in)))
		if fmt.Sprint(err) != fmt.Sprint(oneErr) {
			t.Fatalf("one byte a read: error %v, want %v", err, oneErr)
		}
		if err == nil {
			if d := sameTable(one, bytewise); d != "" {
				t.Fatalf("one byte a read: %s", d)
			}
		}
	}
	_, err := Parse([]byte(dirty), false)
	if err == nil || !strings.Contains(err.Error(), "line 5:") || !strings.Contains(err.Error(), "line 4502:") {
		t.Fatalf("problems: %v", err)
	}
}

// endless yields its head, then its pattern forever, like /dev/zero or a
// pipe that never closes.
type endless struct {
	head, pattern []byte
	n             int64 // bytes read
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		if k := e.n + int64(i); k < int64(len(e.head)) {
			p[i] = e.head[k]
		} else {
			p[i] = e.pattern[(k-int64(len(e.head)))%int64(len(e.pattern))]
		}
	}
	e.n += int64(len(p))
	return len(p), nil
}

// A scores file past a bound is refused once the read gets there, with
// an error naming the file and the limit.
func TestReadBounds(t *testing.T) {
	defer func(f int64, l int) { MaxFileBytes, MaxLineBytes = f, l }(MaxFileBytes, MaxLineBytes)
	MaxFileBytes, MaxLineBytes = 1<<20, 4<<10
	hdr := []byte("agent,round,market,category,forecast,benchmark,outcome\n")
	row := []byte("a,r1,m1,c,0.5,0.5,1\n")
	for _, c := range []struct {
		name string
		in   *endless
		want string
	}{
		{"endless line", &endless{pattern: []byte{0}}, "in.csv: line 1 is longer than 4 KiB, the limit of a line"},
		{"endless rows", &endless{head: hdr, pattern: row}, "in.csv: larger than 1 MiB, the limit of a scores file"},
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
	in := string(hdr) + strings.Repeat(string(row), 1000)
	if tab, err := Read(strings.NewReader(in), "in.csv"); err != nil || tab.Len() != 1000 {
		t.Fatalf("%v", err)
	}
}

// bytesEqual marks exactly the bytes equal to c, every one of a word.
func TestBytesEqual(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 9))
	alphabet := []byte{',', '\n', '"', 0, 0x80, 0xff, 0x7f, 0x2c ^ 0x80, 'a', 1}
	for range 100_000 {
		var b [8]byte
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
			if r.IntN(4) == 0 {
				b[i] = byte(r.Uint32())
			}
		}
		w := binary.LittleEndian.Uint64(b[:])
		for _, c := range []byte{',', '\n', '"'} {
			var want uint64
			for i, x := range b {
				if x == c {
					want |= 0x80 << (8 * i)
				}
			}
			if got := bytesEqual(w, c); got != want {
				t.Fatalf("bytesEqual(% x, %q) = %x, want %x", b, c, got, want)
			}
		}
	}
}
