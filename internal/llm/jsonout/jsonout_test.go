package jsonout

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestCandidatesOrder(t *testing.T) {
	for _, c := range []struct {
		in       string
		want     []string
		unclosed bool
	}{
		{`no json here`, nil, false},
		{`I'd say {"a":1} then {"b":2}`, []string{`{"b":2}`, `{"a":1}`}, false},
		// The outer object before the example nested in it.
		{`{"action":"HOLD","reasoning":"e.g. {\"x\":1} or {\"y\":2}"} `, []string{`{"action":"HOLD","reasoning":"e.g. {\"x\":1} or {\"y\":2}"}`}, false},
		{"{\"outer\":{\"in\":1}}", []string{`{"outer":{"in":1}}`, `{"in":1}`}, false},
		// A stray quote in prose does not swallow the rest: a raw newline ends it.
		{"{\"a\": \"x\n} {\"z\":3}", []string{`{"z":3}`, "{\"a\": \"x\n}"}, false},
		{`answer: {"decision":"YES", "conf`, nil, true},
	} {
		got, unclosed := Candidates(c.in)
		if strings.Join(got, "|") != strings.Join(c.want, "|") || unclosed != c.unclosed {
			t.Errorf("Candidates(%q) = %q, %v; want %q, %v", c.in, got, unclosed, c.want, c.unclosed)
		}
	}
}

func TestDecode(t *testing.T) {
	obj, err := Decode(`{"Decision":"YES","decision":"NO","CONFIDENCE":0.9,}`)
	if err != nil {
		t.Fatal(err)
	}
	if string(obj["decision"]) != `"NO"` || string(obj["confidence"]) != "0.9" {
		t.Errorf("keys: %v", obj)
	}
	if _, err := Decode(`[1,2]`); err == nil {
		t.Error("an array decoded as an object")
	}
	if _, err := Decode(`null`); err == nil {
		t.Error("null decoded as an object")
	}
}

func TestSplitThink(t *testing.T) {
	out, in := SplitThink(`a<think>b</think>c<think>d`)
	if out != "ac" || in != "b\nd" {
		t.Errorf("got %q, %q", out, in)
	}
	if Clip("héllo", 2, "…") != "hé…" || Clip("hi", 5, "…") != "hi" {
		t.Error("Clip")
	}
}

// FuzzCandidates: never panics; every candidate is a substring of the
// input that starts with '{' and ends with '}'; the work stays bounded;
// Decode never panics on any candidate and gives lower-case keys.
func FuzzCandidates(f *testing.F) {
	f.Add(`text {"a":{"b":[1,2,]}} more {"C":"}"}`)
	f.Add("{\"x\": \"unterminated\n}")
	f.Add(`<think>{"no":1}</think>{"yes":2}`)
	f.Fuzz(func(t *testing.T, s string) {
		texts, _ := Candidates(s)
		if len(texts) > MaxCandidates {
			t.Fatalf("%d candidates", len(texts))
		}
		for _, x := range texts {
			if !strings.Contains(s, x) || x[0] != '{' || x[len(x)-1] != '}' {
				t.Fatalf("candidate %q of %q", x, s)
			}
			if obj, err := Decode(x); err == nil {
				for k := range obj {
					if k != strings.ToLower(strings.TrimSpace(k)) {
						t.Fatalf("key %q not normalised", k)
					}
				}
				if _, err := json.Marshal(obj); err != nil {
					t.Fatalf("decoded values are not JSON: %v", err)
				}
			}
		}
	})
}
