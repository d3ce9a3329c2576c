// Package jsonout finds the JSON object a model was asked to answer with in
// what it actually wrote: prose around it, code fences, <think> blocks,
// examples nested in its reasoning, keys in any letter case, trailing
// commas, or an answer cut off before it closes. The trading decider, the
// round forecaster and the oracle's resolvers all read model output
// through it, with bounded work per response.
package jsonout

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Work bounds per response: hostile or runaway output cannot make a parse
// try more objects or decode more bytes than this.
const (
	MaxCandidates     = 4096    // JSON objects tried
	MaxCandidateBytes = 4 << 20 // bytes decoded
)

// SplitThink separates the text outside <think>…</think> blocks from the
// text inside them; an unclosed block runs to the end.
func SplitThink(s string) (outside, inside string) {
	const open, close = "<think>", "</think>"
	var out, in strings.Builder
	for {
		i := strings.Index(s, open)
		if i < 0 {
			out.WriteString(s)
			break
		}
		out.WriteString(s[:i])
		s = s[i+len(open):]
		j := strings.Index(s, close)
		if j < 0 {
			in.WriteString(s)
			break
		}
		in.WriteString(s[:j])
		in.WriteByte('\n')
		s = s[j+len(close):]
	}
	return out.String(), in.String()
}

// Candidates returns the balanced {…} objects of s in the order to try
// them: outermost objects last to first, each before the objects nested
// in it, whose siblings are again taken last to first. A model told to end
// with its answer is read from its last object, an answer beats an example
// nested inside it, and a wrapper without the wanted field falls through
// to what it contains. The list stops at MaxCandidates objects or once
// MaxCandidateBytes are taken. unclosed reports an object still open at
// the end of s (an answer cut off).
func Candidates(s string) (texts []string, unclosed bool) {
	spans, unclosed := objectSpans(s)
	budget := MaxCandidateBytes
	for _, sp := range order(spans) {
		if len(texts) >= MaxCandidates || budget <= 0 {
			break
		}
		texts = append(texts, s[sp[0]:sp[1]])
		budget -= sp[1] - sp[0]
	}
	return texts, unclosed
}

// objectSpans returns the [start,end) byte ranges of every balanced {…}
// object in s, ordered by start, in one pass. Quotes start a JSON string
// only inside an object, so apostrophes and quotes in prose are harmless,
// and a raw newline ends a string (JSON strings cannot hold one), so a
// stray quote does not swallow the rest.
func objectSpans(s string) (spans [][2]int, unclosed bool) {
	var stack []int
	var str jsonString
	for i := 0; i < len(s); i++ {
		c := s[i]
		if str.in {
			if c == '\n' && !str.esc && len(stack) > 0 {
				str.in = false
			} else {
				str.next(c)
			}
			continue
		}
		switch c {
		case '"':
			str.in = len(stack) > 0
		case '{':
			stack = append(stack, i)
		case '}':
			if n := len(stack); n > 0 {
				spans = append(spans, [2]int{stack[n-1], i + 1})
				stack = stack[:n-1]
			}
		}
	}
	// Spans close innermost first; order them by opening brace.
	slices.SortFunc(spans, func(a, b [2]int) int { return a[0] - b[0] })
	return spans, len(stack) > 0
}

// order arranges spans (sorted by start, properly nested) for trying, as
// Candidates describes.
func order(spans [][2]int) [][2]int {
	if len(spans) < 2 {
		return spans
	}
	children := make([][]int, len(spans))
	var roots, open []int
	for i, sp := range spans {
		for len(open) > 0 && spans[open[len(open)-1]][1] <= sp[0] {
			open = open[:len(open)-1]
		}
		if n := len(open); n > 0 {
			children[open[n-1]] = append(children[open[n-1]], i)
		} else {
			roots = append(roots, i)
		}
		open = append(open, i)
	}
	out := make([][2]int, 0, len(spans))
	stack := append([]int(nil), roots...) // popped from the end: last first
	for len(stack) > 0 {
		i := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		out = append(out, spans[i])
		stack = append(stack, children[i]...)
	}
	return out
}

// Decode decodes a JSON object with its keys lower-cased and trimmed,
// retrying once with trailing commas removed. Numbers stay json.Number
// text. When two keys differ only in case, the one already in lower case
// wins, else the first in byte order, so the result never depends on map
// iteration. The error is the first attempt's.
func Decode(text string) (map[string]json.RawMessage, error) {
	obj, err := decodeLower(text)
	if err == nil {
		return obj, nil
	}
	if fixed := dropTrailingCommas(text); fixed != text {
		if obj, err2 := decodeLower(fixed); err2 == nil {
			return obj, nil
		}
	}
	return nil, err
}

func decodeLower(text string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	dec.UseNumber()
	var m map[string]json.RawMessage
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not an object")
	}
	out := make(map[string]json.RawMessage, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		lk := strings.ToLower(strings.TrimSpace(k))
		if _, dup := out[lk]; dup && lk != k {
			continue
		}
		out[lk] = m[k]
	}
	return out, nil
}

// dropTrailingCommas removes commas followed (after whitespace) by } or ],
// outside strings.
func dropTrailingCommas(s string) string {
	var b strings.Builder
	var str jsonString
	for i := 0; i < len(s); i++ {
		c := s[i]
		if str.in {
			str.next(c)
			b.WriteByte(c)
			continue
		}
		str.in = c == '"'
		if c == ',' {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r') {
				j++
			}
			if j < len(s) && (s[j] == '}' || s[j] == ']') {
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Clip shortens s to at most n runes, appending mark when it cut.
func Clip(s string, n int, mark string) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + mark
}

// jsonString follows a byte scan through a JSON string: its escapes and
// the quote that closes it.
type jsonString struct{ in, esc bool }

// next consumes c, a byte inside the string.
func (s *jsonString) next(c byte) {
	switch {
	case s.esc:
		s.esc = false
	case c == '\\':
		s.esc = true
	case c == '"':
		s.in = false
	}
}
