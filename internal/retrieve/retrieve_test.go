package retrieve

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm"
)

var fixed = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func tp(s string) *time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return &t
}

func TestQuestion(t *testing.T) {
	r, name, err := New("question", Options{Now: func() time.Time { return fixed }})
	if err != nil || name != "question" {
		t.Fatal(name, err)
	}
	p, err := r.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "q1", Question: "Will X?", Criteria: "Yes if X."})
	if err != nil {
		t.Fatal(err)
	}
	want := arena.EvidencePacket{Question: "Will X?", Criteria: "Yes if X.", RetrievedAt: fixed, Sources: []arena.EvidenceSource{}}
	if !reflect.DeepEqual(p, want) {
		t.Fatalf("got %+v want %+v", p, want)
	}
	b, _ := json.Marshal(p)
	const wantJSON = `{"question":"Will X?","criteria":"Yes if X.","retrieved_at":"2026-01-02T03:04:05Z","query":"","sources":[]}`
	if string(b) != wantJSON {
		t.Fatalf("json %s", b)
	}
}

func TestDir(t *testing.T) {
	d := t.TempDir()
	pk := `{"question":"","criteria":"","retrieved_at":"2025-06-01T00:00:00Z","query":"q","sources":[
	 {"title":"early","url":"u1","published":"2025-05-01T00:00:00Z","highlights":["a"]},
	 {"title":"day after","url":"u2","published":"2025-05-11T00:00:00Z","highlights":null},
	 {"title":"late","url":"u3","published":"2025-05-11T00:00:01Z","highlights":["c"]},
	 {"title":"undated","url":"u4","published":null,"highlights":[]}]}`
	if err := os.WriteFile(filepath.Join(d, "a%2Fb.json"), []byte(pk), 0o644); err != nil {
		t.Fatal(err)
	}
	r, name, err := New("dir:"+d, Options{})
	if err != nil || name != "dir" {
		t.Fatal(name, err)
	}
	cutoff := time.Date(2025, 5, 10, 0, 0, 0, 0, time.UTC)
	p, err := r.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "a/b", Question: "Q?", Criteria: "C", Cutoff: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	var titles []string
	for _, s := range p.Sources {
		titles = append(titles, s.Title)
		if s.Highlights == nil {
			t.Errorf("%s: nil highlights", s.Title)
		}
	}
	if !reflect.DeepEqual(titles, []string{"early", "day after", "undated"}) || p.Question != "Q?" || p.Criteria != "C" || p.Query != "q" {
		t.Fatalf("packet %+v", p)
	}
	if _, err := r.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "missing"}); err == nil {
		t.Fatal("missing packet: no error")
	}
	if _, err := r.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: ".."}); err == nil {
		t.Fatal("id .. : no error")
	}
	os.WriteFile(filepath.Join(d, "bad.json"), []byte(`{"question":"x","sorces":[]}`), 0o644)
	if _, err := r.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "bad"}); err == nil {
		t.Fatal("misspelt key: no error")
	}
	if _, _, err := New("dir:"+filepath.Join(d, "nope"), Options{}); err == nil {
		t.Fatal("missing dir accepted")
	}
	if _, _, err := New("google", Options{}); err == nil {
		t.Fatal("unknown provider accepted")
	}
}

// fakeExa speaks Exa's /search wire format and records what it was sent.
type fakeExa struct {
	calls  atomic.Int64
	fail   []int    // statuses answered before succeeding
	after  []string // the Retry-After header of each failure ("" none; "ms:N" Retry-After-Ms)
	last   exaRequest
	key    string
	result string
}

func (f *fakeExa) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := f.calls.Add(1)
	if r.Method != http.MethodPost || r.URL.Path != "/search" {
		http.Error(w, "not found", 404)
		return
	}
	f.key = r.Header.Get("x-api-key")
	b, _ := io.ReadAll(r.Body)
	var req exaRequest
	if err := json.Unmarshal(b, &req); err != nil {
		http.Error(w, err.Error(), 400)
		return
	}
	f.last = req
	if int(n) <= len(f.fail) {
		if int(n) <= len(f.after) {
			if ms, ok := strings.CutPrefix(f.after[n-1], "ms:"); ok {
				w.Header().Set("Retry-After-Ms", ms)
			} else if f.after[n-1] != "" {
				w.Header().Set("Retry-After", f.after[n-1])
			}
		}
		http.Error(w, `{"error":"busy"}`, f.fail[n-1])
		return
	}
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, f.result)
}

const exaResult = `{"requestId":"r","results":[
 {"id":"1","title":"Result day","url":"https://a.example/1","publishedDate":"2025-05-10T12:00:00.000Z","author":null,"highlights":["X happened."],"highlightScores":[0.5]},
 {"id":"2","title":"Plain date","url":"https://a.example/2","publishedDate":"2025-05-11","highlights":["Also."]},
 {"id":"3","title":"Too late","url":"https://a.example/3","publishedDate":"2025-05-12T00:00:00Z","highlights":["Later."]},
 {"id":"4","title":"No date","url":"https://a.example/4"}]}`

func TestExa(t *testing.T) {
	f := &fakeExa{result: exaResult, fail: []int{503, 429}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	c := &Exa{BaseURL: srv.URL, Key: "k123", Backoff: time.Millisecond, Now: func() time.Time { return fixed }}
	cutoff := time.Date(2025, 5, 10, 0, 0, 0, 0, time.UTC)
	p, err := c.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "q", Question: "Did X happen?", Criteria: "Yes if X", Cutoff: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if f.calls.Load() != 3 {
		t.Fatalf("calls %d, want 3 (two retried failures)", f.calls.Load())
	}
	want := exaRequest{Query: "What is the result of this question Did X happen?", NumResults: 10, EndPublishedDate: "2025-05-11T00:00:00Z", Contents: exaContents{Highlights: true}}
	if f.last != want || f.key != "k123" {
		t.Fatalf("request %+v key %q", f.last, f.key)
	}
	wantSrc := []arena.EvidenceSource{
		{Title: "Result day", URL: "https://a.example/1", Published: tp("2025-05-10T12:00:00Z"), Highlights: []string{"X happened."}},
		{Title: "Plain date", URL: "https://a.example/2", Published: tp("2025-05-11T00:00:00Z"), Highlights: []string{"Also."}},
		{Title: "No date", URL: "https://a.example/4", Highlights: []string{}},
	}
	if !reflect.DeepEqual(p.Sources, wantSrc) || p.Query != want.Query || p.Question != "Did X happen?" || p.Criteria != "Yes if X" || !p.RetrievedAt.Equal(fixed) {
		t.Fatalf("packet %+v", p)
	}

	// 401 is not retried.
	f2 := &fakeExa{result: exaResult, fail: []int{401, 401, 401}}
	srv2 := httptest.NewServer(f2)
	defer srv2.Close()
	c2 := &Exa{BaseURL: srv2.URL, Key: "bad", Backoff: time.Millisecond}
	if _, err := c2.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "q", Question: "?"}); err == nil || f2.calls.Load() != 1 {
		t.Fatalf("401: err %v calls %d", err, f2.calls.Load())
	}
	// Exhausted retries.
	f3 := &fakeExa{result: exaResult, fail: []int{500, 500, 500, 500}}
	srv3 := httptest.NewServer(f3)
	defer srv3.Close()
	c3 := &Exa{BaseURL: srv3.URL, Key: "k", Backoff: time.Millisecond}
	if _, err := c3.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "q", Question: "?"}); err == nil || f3.calls.Load() != 3 {
		t.Fatalf("500s: err %v calls %d", err, f3.calls.Load())
	}
	// No key: no request.
	if _, err := (&Exa{BaseURL: srv3.URL}).Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "q"}); err == nil || f3.calls.Load() != 3 {
		t.Fatal("no key: expected error and no call")
	}
}

// The Exa client waits as the shared retry convention says: the wait the
// server asks for (it once retried on its own schedule, ignoring it), a
// date in the past as no wait, and a wait past MaxRetryAfter ends the
// retries at once, saying so.
func TestExaRetryAfter(t *testing.T) {
	cases := []struct {
		name     string
		fail     []int
		after    []string
		calls    int64
		least    time.Duration
		wantErr  string
		maxAfter time.Duration
	}{
		{"Retry-After-Ms honoured over a 1 ms backoff", []int{429}, []string{"ms:300"}, 2, 300 * time.Millisecond, "", 0},
		{"Retry-After in seconds honoured", []int{503}, []string{"1"}, 2, time.Second, "", 0},
		{"Retry-After as a past date: no wait", []int{429}, []string{"Wed, 21 Oct 2015 07:28:00 GMT"}, 2, 0, "", 0},
		{"Retry-After past the bound ends the retries", []int{429, 429}, []string{"120", "120"}, 1, 0, "the server asks to wait 2m0s, longer than 1m0s", 0},
		{"Retry-After past a bound set lower", []int{503}, []string{"ms:500"}, 1, 0, "the server asks to wait 500ms, longer than 100ms", 100 * time.Millisecond},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := &fakeExa{result: exaResult, fail: c.fail, after: c.after}
			srv := httptest.NewServer(f)
			defer srv.Close()
			ex := &Exa{BaseURL: srv.URL, Key: "k", Backoff: time.Millisecond, MaxRetryAfter: c.maxAfter}
			start := time.Now()
			_, err := ex.Retrieve(context.Background(), arena.EvidenceQuery{QuestionID: "q", Question: "?"})
			took := time.Since(start)
			switch {
			case c.wantErr == "" && err != nil, c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("%v, want error %q", err, c.wantErr)
			case f.calls.Load() != c.calls:
				t.Fatalf("%d calls, want %d", f.calls.Load(), c.calls)
			case took < c.least:
				t.Fatalf("retried after %s, want at least %s", took, c.least)
			case c.least == 0 && took > 5*time.Second:
				t.Fatalf("took %s", took)
			}
		})
	}
}

func TestCache(t *testing.T) {
	f := &fakeExa{result: exaResult}
	srv := httptest.NewServer(f)
	defer srv.Close()
	dir := t.TempDir()
	mk := func(only bool) *Cache {
		return &Cache{Next: &Exa{BaseURL: srv.URL, Key: "k", Now: func() time.Time { return fixed }}, Provider: "exa", Store: llm.DirStore{Dir: dir}, CacheOnly: only}
	}
	ctx := context.Background()
	q := arena.EvidenceQuery{QuestionID: "q1", Question: "Did X?", Cutoff: time.Date(2025, 5, 10, 0, 0, 0, 0, time.UTC)}
	c := mk(false)
	p1, err := c.Retrieve(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := c.Retrieve(ctx, q)
	if err != nil || !reflect.DeepEqual(p1, p2) || f.calls.Load() != 1 {
		t.Fatalf("second retrieval: err %v calls %d", err, f.calls.Load())
	}
	// A new process (new Cache over the same directory) in cache-only mode
	// sees the same packet and makes no request.
	c2 := mk(true)
	p3, err := c2.Retrieve(ctx, q)
	if err != nil || !reflect.DeepEqual(p1, p3) || f.calls.Load() != 1 {
		t.Fatalf("cache-only: err %v calls %d", err, f.calls.Load())
	}
	if _, err := c2.Retrieve(ctx, arena.EvidenceQuery{QuestionID: "q2"}); !errors.Is(err, llm.ErrCacheMiss) || f.calls.Load() != 1 {
		t.Fatalf("cache-only miss: %v, calls %d", err, f.calls.Load())
	}
	if h, m := c2.Stats(); h != 1 || m != 1 {
		t.Fatalf("stats %d %d", h, m)
	}
	// Another provider does not share entries.
	if Key("exa", "q1") == Key("question", "q1") || Key("a", "b\x00c") == Key("a\x00b", "c") {
		t.Fatal("keys collide")
	}
}

// The Exa key comes from the caller (the configuration) alone: the
// process's EXA_API_KEY is not read behind its back.
func TestExaKeyFromCaller(t *testing.T) {
	f := &fakeExa{result: exaResult}
	srv := httptest.NewServer(f)
	defer srv.Close()
	t.Setenv("EXA_API_KEY", "from-the-environment")
	q := arena.EvidenceQuery{QuestionID: "q", Question: "Did X happen?"}
	r, _, err := New("exa", Options{ExaBaseURL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Retrieve(context.Background(), q); err == nil || !strings.Contains(err.Error(), "no API key") || f.calls.Load() != 0 {
		t.Fatalf("no key given: %v, %d calls", err, f.calls.Load())
	}
	if r, _, err = New("exa", Options{ExaBaseURL: srv.URL, ExaKey: "given"}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Retrieve(context.Background(), q); err != nil || f.key != "given" {
		t.Fatalf("key given: %v, sent %q", err, f.key)
	}
}
