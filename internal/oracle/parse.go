package oracle

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/llm/jsonout"
)

const (
	maxParseBytes     = 256 << 10 // longer output is cut before parsing
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
	outside, inside := jsonout.SplitThink(raw)
	a, err := parseText(outside)
	if err != nil && inside != "" {
		if a2, err2 := parseText(raw); err2 == nil {
			return a2, nil
		}
	}
	return a, err
}

func parseText(s string) (Answer, error) {
	texts, _ := jsonout.Candidates(s)
	if len(texts) == 0 {
		return Answer{}, fmt.Errorf("%w: no JSON object", ErrUnparseable)
	}
	var firstErr error
	for _, text := range texts {
		a, isAnswer, err := decodeCandidate(text)
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

func decodeCandidate(text string) (Answer, bool, error) {
	obj, err := jsonout.Decode(text)
	if err != nil {
		return Answer{}, false, err
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

func clip(s string, n int) string { return jsonout.Clip(s, n, " …[truncated]") }
