package oracle

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAnswer(t *testing.T) {
	ok := []struct {
		in   string
		want Answer
	}{
		{`{"decision":"YES","confidence":0.9,"reasoning":"r"}`, Answer{"YES", 0.9, "r"}},
		{"Here you go:\n```json\n{\"decision\": \"no\", \"confidence\": \"0.75\", \"reasoning\": \"x\",}\n```\nThanks", Answer{"NO", 0.75, "x"}},
		{`draft {"decision":"YES","confidence":0.2} final {"Decision":"Too Early","Confidence":1,"Reasoning":{"a":1}}`, Answer{"TOO_EARLY", 1, `{"a":1}`}},
		{`<think>{"decision":"YES","confidence":0.5}</think>{"decision":"NO","confidence":0.6,"reasoning":"{}"}`, Answer{"NO", 0.6, "{}"}},
		{`<think>only here {"decision":"YES","confidence":0.5}</think> and no json`, Answer{"YES", 0.5, ""}},
		{`{"result":{"decision":"NO","confidence":0}}`, Answer{"NO", 0, ""}},
		{`{"decision":"TOO-EARLY","confidence":0.3,"reasoning":"brace } in \"string\" {"}`, Answer{"TOO_EARLY", 0.3, `brace } in "string" {`}},
	}
	for _, c := range ok {
		got, err := ParseAnswer(c.in)
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v, want %+v", c.in, got, err, c.want)
		}
	}
	bad := []string{"", "   ", "I think yes.", `{"decision":"MAYBE","confidence":0.5}`, `{"decision":"YES"}`,
		`{"decision":"YES","confidence":1.5}`, `{"decision":"YES","confidence":-0.1}`, `{"decision":true,"confidence":0.5}`,
		`{"decision":"YES","confidence":"high"}`, `{"decision":"YES","confidence":0.5`, `{"other":1}`}
	for _, in := range bad {
		if a, err := ParseAnswer(in); err == nil || !errors.Is(err, ErrUnparseable) && !strings.Contains(err.Error(), "invalid") {
			t.Errorf("%q: %+v %v", in, a, err)
		}
	}
}

func FuzzParseAnswer(f *testing.F) {
	for _, s := range []string{`{"decision":"YES","confidence":0.9,"reasoning":"r"}`, "```json\n{\"decision\":\"no\",\"confidence\":\"1\",}\n```",
		`<think>{}</think>{"decision":"TOO_EARLY","confidence":0}`, `{{{{}}}}`, `{"a":{"decision":"YES","confidence":0.5}}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := ParseAnswer(s)
		if err != nil {
			return
		}
		if !a.Decision.Binary() && a.Decision != "TOO_EARLY" {
			t.Fatalf("decision %q", a.Decision)
		}
		if !(a.Confidence >= 0 && a.Confidence <= 1) {
			t.Fatalf("confidence %v", a.Confidence)
		}
	})
}
