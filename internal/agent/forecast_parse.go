package agent

import (
	"encoding/json"
	"github.com/forecast-arena/arena/internal/llm/jsonout"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
)

// Rejection codes of a round forecast (arena.EINVALID kind).
const (
	CodeNoPredictions  = "no_predictions_json" // no JSON object with a "predictions" field
	CodeBadPredictions = "bad_predictions"     // wrong count, range or type
)

// ParsePredictions reads a round forecast from a model's text answer:
// {"predictions":[k integers 0..10000],"reasoning":[k strings]}.
//
// The object is found as ParseAction finds an action (code fences, prose
// and <think> blocks tolerated; the last object with a "predictions" field
// wins; trailing commas removed). Inside it, field names match
// case-insensitively; predictions may be numbers or digit strings but must
// be whole numbers from 0 to 10000 (7500.0 is 7500; 0.75 is refused, never
// guessed to be a probability); reasoning is optional, a single string
// applies to every market, missing entries are empty and extra ones are
// dropped. Errors are *arena.Error (EINVALID) with a message meant for the
// model.
func ParsePredictions(raw string, k int) ([]uint16, []string, error) {
	if len(raw) > maxParseBytes {
		raw = raw[:maxParseBytes]
	}
	if strings.TrimSpace(raw) == "" {
		return nil, nil, arena.Rejectf(arena.EINVALID, CodeEmptyResponse, "the response was empty")
	}
	outside, inside := jsonout.SplitThink(raw)
	p, r, err := parsePredText(outside, k)
	if err != nil && inside != "" {
		if p2, r2, err2 := parsePredText(inside, k); err2 == nil {
			return p2, r2, nil
		}
		if p2, r2, err2 := parsePredText(raw, k); err2 == nil {
			return p2, r2, nil
		}
	}
	return p, r, err
}

func parsePredText(s string, k int) ([]uint16, []string, error) {
	texts, unclosed := jsonout.Candidates(s)
	var firstErr error
	for _, text := range texts {
		obj, err := jsonout.Decode(text)
		if err != nil {
			if firstErr == nil && strings.Contains(strings.ToLower(text), `"predictions"`) {
				firstErr = arena.Rejectf(arena.EINVALID, CodeBadPredictions, "the JSON object is malformed: %s", jsonErr(err))
			}
			continue
		}
		if _, ok := obj["predictions"]; !ok {
			continue
		}
		p, r, err := predictionsFrom(obj, k)
		if err == nil {
			return p, r, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return nil, nil, firstErr
	}
	if unclosed && strings.Contains(s, `"predictions"`) {
		return nil, nil, arena.Rejectf(arena.EINVALID, CodeTruncatedJSON, "the JSON object is incomplete (it never closes; was the answer cut off?)")
	}
	return nil, nil, arena.Rejectf(arena.EINVALID, CodeNoPredictions, `no JSON object with a "predictions" field was found`)
}

// predictionsFrom checks a decoded object (lower-cased keys).
func predictionsFrom(obj map[string]json.RawMessage, k int) ([]uint16, []string, error) {
	raw, ok := obj["predictions"]
	if !ok {
		return nil, nil, arena.Rejectf(arena.EINVALID, CodeBadPredictions, `"predictions" is missing`)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, nil, arena.Rejectf(arena.EINVALID, CodeBadPredictions, `"predictions" must be an array of %d integers from 0 to 10000`, k)
	}
	if len(items) != k {
		return nil, nil, arena.Rejectf(arena.EINVALID, CodeBadPredictions, `"predictions" has %d values; exactly %d are needed, one per market in index order`, len(items), k)
	}
	preds := make([]uint16, k)
	for i, it := range items {
		v, ok := wholeBps(it)
		if !ok {
			return nil, nil, arena.Rejectf(arena.EINVALID, CodeBadPredictions, `predictions[%d] = %s is not an integer from 0 to 10000 (basis points: 7250 means 72.5%%)`, i, clip(string(it), 40))
		}
		preds[i] = v
	}
	reasons := make([]string, k)
	if rr, ok := obj["reasoning"]; ok && !isNull(rr) {
		var list []json.RawMessage
		if json.Unmarshal(rr, &list) == nil {
			for i := 0; i < k && i < len(list); i++ {
				reasons[i] = reasoningText(list[i])
			}
		} else {
			s := reasoningText(rr)
			for i := range reasons {
				reasons[i] = s
			}
		}
	}
	limit := maxReasonBytes(k)
	for i := range reasons {
		reasons[i] = clipBytes(reasons[i], limit)
	}
	return preds, reasons, nil
}

// wholeBps reads a JSON number or numeric string that is a whole number in
// [0, 10000], (a float64 within the range is exact for whole numbers).
func wholeBps(raw json.RawMessage) (uint16, bool) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		var n json.Number
		if err := json.Unmarshal(raw, &n); err != nil {
			return 0, false
		}
		s = n.String()
	}
	s = strings.TrimSpace(s)
	if s == "" || len(s) > 64 {
		return 0, false
	}
	if strings.ContainsAny(s, "xXpP_") { // ParseFloat's hex and underscore forms are not JSON
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f != math.Trunc(f) || f < 0 || f > forecast.MaxBps {
		return 0, false
	}
	return uint16(f), true
}

// clipBytes cuts s to at most n bytes on a rune boundary, marking the cut.
func clipBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len(reasoningCutMark)
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:max(cut, 0)] + reasoningCutMark
}
