package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	arena "github.com/forecast-arena/arena"
)

const (
	maxParseBytes     = 256 << 10 // longer output is cut before parsing
	maxCandidates     = 4096      // JSON objects tried per response
	maxCandidateBytes = 4 << 20   // total bytes decoded per response
	maxReasoningChars = 8000
)

// Answer is what ParseAnswer reads from a resolver's output.
type Answer struct {
	Decision   arena.OracleDecision
	Confidence float64
	Reasoning  string
}

// ErrUnparseable wraps every reason an output yields no answer.
var ErrUnparseable = errors.New("unparseable resolver output")

// ParseAnswer reads {"decision","confidence","reasoning"} from model output.
//
// The answer is the last balanced JSON object in the text that has a
// "decision" field and decodes; objects are tried from the last to the
// first, an outer object before the objects nested in it, so code fences,
// prose and earlier drafts around the answer are ignored. Text inside
// <think>…</think> is searched only when nothing outside it parses.
// Field names match in any case; decision is YES, NO or TOO_EARLY in any
// case ("TOO EARLY" and "TOO-EARLY" too); confidence is a number or numeric
// string in [0, 1]; a missing or non-string reasoning is kept as its JSON
// text (or ""). Trailing commas before } or ] are tolerated.
func ParseAnswer(raw string) (Answer, error) {
	if len(raw) > maxParseBytes {
		raw = raw[:maxParseBytes]
	}
	if strings.TrimSpace(raw) == "" {
		return Answer{}, fmt.Errorf("%w: empty response", ErrUnparseable)
	}
	outside, inside := splitThink(raw)
	a, err := parseText(outside)
	if err != nil && inside != "" {
		if a2, err2 := parseText(raw); err2 == nil {
			return a2, nil
		}
	}
	return a, err
}

func splitThink(s string) (outside, inside string) {
	var o, in strings.Builder
	for {
		i := strings.Index(s, "<think>")
		if i < 0 {
			o.WriteString(s)
			break
		}
		o.WriteString(s[:i])
		rest := s[i+len("<think>"):]
		j := strings.Index(rest, "</think>")
		if j < 0 {
			in.WriteString(rest)
			break
		}
		in.WriteString(rest[:j])
		s = rest[j+len("</think>"):]
	}
	return o.String(), in.String()
}

func parseText(s string) (Answer, error) {
	spans := objectSpans(s)
	if len(spans) == 0 {
		return Answer{}, fmt.Errorf("%w: no JSON object", ErrUnparseable)
	}
	var firstErr error
	budget := maxCandidateBytes
	for _, sp := range candidateOrder(spans) {
		if budget -= sp[1] - sp[0]; budget < 0 {
			break
		}
		a, isAnswer, err := decodeCandidate(s[sp[0]:sp[1]])
		if err == nil {
			return a, nil
		}
		if isAnswer && firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return Answer{}, firstErr
	}
	return Answer{}, fmt.Errorf("%w: no JSON object with a \"decision\" field", ErrUnparseable)
}

// objectSpans returns the [start, end) of every balanced {…} in s, in order
// of their start; braces inside JSON strings do not count.
func objectSpans(s string) [][2]int {
	var spans [][2]int
	var stack []int
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			if len(stack) > 0 {
				inStr = true
			}
		case '{':
			stack = append(stack, i)
		case '}':
			if len(stack) > 0 {
				start := stack[len(stack)-1]
				stack = stack[:len(stack)-1]
				spans = append(spans, [2]int{start, i + 1})
			}
		}
	}
	return spans
}

// candidateOrder sorts spans: outermost objects last-first, each followed
// by the objects nested in it in the same order.
func candidateOrder(spans [][2]int) [][2]int {
	sorted := slices.Clone(spans)
	slices.SortFunc(sorted, func(a, b [2]int) int { return a[0] - b[0] })
	// Balanced spans nest or are disjoint, so one stack pass finds each
	// span's children (in start order).
	kids := make([][]int, len(sorted)+1) // index len(sorted) is the root
	root := len(sorted)
	var stack []int
	for i, sp := range sorted {
		for len(stack) > 0 && sorted[stack[len(stack)-1]][1] <= sp[0] {
			stack = stack[:len(stack)-1]
		}
		parent := root
		if len(stack) > 0 {
			parent = stack[len(stack)-1]
		}
		kids[parent] = append(kids[parent], i)
		stack = append(stack, i)
	}
	order := make([][2]int, 0, min(len(sorted), maxCandidates))
	var visit func(n int)
	visit = func(n int) {
		k := kids[n]
		for i := len(k) - 1; i >= 0 && len(order) < maxCandidates; i-- {
			order = append(order, sorted[k[i]])
			visit(k[i])
		}
	}
	visit(root)
	return order
}

func decodeCandidate(text string) (Answer, bool, error) {
	obj, err := decodeLower(text)
	if err != nil {
		obj, err = decodeLower(dropTrailingCommas(text))
		if err != nil {
			return Answer{}, false, err
		}
	}
	dr, ok := obj["decision"]
	if !ok {
		return Answer{}, false, fmt.Errorf("%w: no decision field", ErrUnparseable)
	}
	var a Answer
	var ds string
	if err := json.Unmarshal(dr, &ds); err != nil {
		return Answer{}, true, fmt.Errorf("%w: decision is not a string: %s", ErrUnparseable, clip(string(dr), 60))
	}
	switch strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToUpper(strings.TrimSpace(ds))) {
	case "YES":
		a.Decision = arena.OracleYes
	case "NO":
		a.Decision = arena.OracleNo
	case "TOO_EARLY":
		a.Decision = arena.OracleTooEarly
	default:
		return Answer{}, true, fmt.Errorf("%w: decision %q is not YES, NO or TOO_EARLY", ErrUnparseable, clip(ds, 60))
	}
	cr, ok := obj["confidence"]
	if !ok {
		return Answer{}, true, fmt.Errorf("%w: no confidence field", ErrUnparseable)
	}
	c, err := confidence(cr)
	if err != nil {
		return Answer{}, true, err
	}
	a.Confidence = c
	if rr, ok := obj["reasoning"]; ok {
		var s string
		if json.Unmarshal(rr, &s) == nil {
			a.Reasoning = s
		} else if t := string(bytes.TrimSpace(rr)); t != "null" {
			a.Reasoning = t
		}
	}
	a.Reasoning = clip(a.Reasoning, maxReasoningChars)
	return a, true, nil
}

func confidence(raw json.RawMessage) (float64, error) {
	var f float64
	if err := json.Unmarshal(raw, &f); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, fmt.Errorf("%w: confidence is not a number: %s", ErrUnparseable, clip(string(raw), 60))
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return 0, fmt.Errorf("%w: confidence %q is not a number", ErrUnparseable, clip(s, 60))
		}
		f = v
	}
	if math.IsNaN(f) || f < 0 || f > 1 {
		return 0, fmt.Errorf("%w: confidence %v is outside [0, 1]", ErrUnparseable, f)
	}
	return f, nil
}

// decodeLower decodes one JSON object with lower-cased keys (the first
// spelling of a key wins).
func decodeLower(text string) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(text), &m); err != nil {
		return nil, err
	}
	keys := slices.Sorted(maps.Keys(m))
	out := make(map[string]json.RawMessage, len(m))
	for _, k := range keys {
		// The lower-case spelling wins, then the first in byte order, so
		// the result never depends on map iteration.
		lk := strings.ToLower(k)
		if _, dup := out[lk]; dup && lk != k {
			continue
		}
		out[lk] = m[k]
	}
	return out, nil
}

// dropTrailingCommas removes commas followed (after spaces) by } or ],
// outside strings.
func dropTrailingCommas(s string) string {
	var b strings.Builder
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if inStr {
			b.WriteByte(c)
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
			continue
		}
		if c == '"' {
			inStr = true
		}
		if c == ',' {
			j := i + 1
			for j < len(s) && (s[j] == ' ' || s[j] == '\n' || s[j] == '\t' || s[j] == '\r') {
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

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + " …[truncated]"
}
