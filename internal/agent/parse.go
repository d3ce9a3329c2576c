package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/forecast-arena/arena/internal/llm/jsonout"
	"regexp"
	"strconv"
	"strings"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/trading"
)

// Rejection codes of model output (arena.EINVALID kind).
const (
	CodeNoJSON        = "no_action_json" // no JSON object with an "action" field
	CodeTruncatedJSON = "truncated_json" // an object starts but never closes
	CodeBadAction     = "bad_action"     // an action object with wrong fields or types
	CodeInvalidAction = "invalid_action" // parsed, but against the rules or the snapshot
	CodeEmptyResponse = "empty_response" // nothing to parse
	maxParseBytes     = 256 << 10        // longer output is cut before parsing
	maxReasoningChars = 8000             // reasoning kept from one action
	reasoningCutMark  = " …[truncated]"
)

// ParseAction extracts the agent's action from raw model output.
//
// Where the JSON is found:
//   - anywhere in the text: code fences (```json … ```), prose before and
//     after, and <think>…</think> blocks are all tolerated. Text inside
//     <think> blocks is searched only when nothing outside them parses
//     (then the whole text, in case a tag sat inside a JSON string).
//   - every balanced {…} object is a candidate, nested ones included;
//     braces inside JSON strings do not count. The answer is told to come
//     last, so outermost objects are tried from the last to the first; an
//     object is tried before the objects nested in it (an outer action
//     wins over an example in its fields; a wrapper without "action" falls
//     through to its contents, again last first). The first candidate
//     tried with an "action" field that decodes is the action. When none
//     decodes, the error is that of the first action candidate tried (the
//     last answer given).
//
// What is accepted inside the object (the model's likely slips, each
// unambiguous):
//   - trailing commas before } or ] are removed; nothing else is repaired
//     (no comments, single quotes or Python literals).
//   - field names match case-insensitively; unknown fields are ignored.
//   - "action" is BET, SELL or HOLD in any case; anything else is an error
//     (no synonyms such as BUY are guessed).
//   - amounts are dollars, as a JSON number or a string like "100",
//     "$1,250.50"; converted from the decimal text (never through a float)
//     to micro-dollars, rounding half up past 6 decimals, as
//     arena.DollarsToMicros does ("333.3333333" → $333.333333,
//     "2499.9999999999995" → $2,500). Negative, zero (also after rounding),
//     NaN/Infinity and more than $1e12 are errors.
//   - ids are integers, as numbers (12 or 12.0) or digit strings ("12").
//   - percentages are numbers or strings like "50" or "50%"; the 1–100
//     range is checked by Validate (0.5 is not read as 50%).
//   - "bets"/"sells" may be a single object instead of an array, and a
//     BET with no "bets" may put market_id/side/amount at the top level.
//   - a non-string "reasoning" is kept as its JSON text; long reasoning is
//     cut to 8000 characters.
//
// Errors are *arena.Error (EINVALID) with a code above and a message meant
// to be sent back to the model.
func ParseAction(raw string) (trading.Action, error) {
	if len(raw) > maxParseBytes {
		raw = raw[:maxParseBytes]
	}
	if strings.TrimSpace(raw) == "" {
		return trading.Action{}, arena.Rejectf(arena.EINVALID, CodeEmptyResponse, "the response was empty; reply with one JSON object")
	}
	outside, inside := jsonout.SplitThink(raw)
	a, err := parseText(outside)
	if err != nil && inside != "" {
		if a2, err2 := parseText(inside); err2 == nil {
			return a2, nil
		}
		// A "<think>" inside a JSON string is not a block: try the text whole.
		if a2, err2 := parseText(raw); err2 == nil {
			return a2, nil
		}
	}
	return a, err
}

func parseText(s string) (trading.Action, error) {
	texts, unclosed := jsonout.Candidates(s)
	var firstErr error
	for _, text := range texts {
		a, isAction, err := decodeCandidate(text)
		if !isAction {
			continue
		}
		if err == nil {
			return a, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	if firstErr != nil {
		return trading.Action{}, firstErr
	}
	if unclosed && strings.Contains(s, `"action"`) {
		return trading.Action{}, arena.Rejectf(arena.EINVALID, CodeTruncatedJSON,
			"the JSON object is incomplete (it never closes; was the answer cut off?); reply with one short, complete JSON object")
	}
	return trading.Action{}, arena.Rejectf(arena.EINVALID, CodeNoJSON,
		`no JSON object with an "action" field was found; reply with one JSON object such as {"action":"HOLD","reasoning":"..."}`)
}

// decodeCandidate decodes one object. isAction reports whether it has an
// "action" field at all (others are skipped silently).
func decodeCandidate(text string) (a trading.Action, isAction bool, err error) {
	obj, err := jsonout.Decode(text)
	if err != nil {
		if !hasActionKey(text) {
			return a, false, nil
		}
		return a, true, arena.Rejectf(arena.EINVALID, CodeBadAction, "the action JSON is malformed: %s", jsonErr(err))
	}
	kindRaw, ok := obj["action"]
	if !ok {
		return a, false, nil
	}
	a, err = actionFrom(obj, kindRaw)
	return a, true, err
}

var actionKeyRE = regexp.MustCompile(`(?i)"action"\s*:`)

func hasActionKey(text string) bool { return actionKeyRE.MatchString(text) }

func jsonErr(err error) string {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Sprintf("%v (at byte %d of the object)", se, se.Offset)
	}
	return err.Error()
}

func actionFrom(obj map[string]json.RawMessage, kindRaw json.RawMessage) (trading.Action, error) {
	var a trading.Action
	var kind string
	if err := json.Unmarshal(kindRaw, &kind); err != nil {
		return a, bad(`"action" must be a string: "BET", "SELL" or "HOLD"`)
	}
	switch k := trading.ActionKind(strings.ToUpper(strings.TrimSpace(kind))); k {
	case trading.ActionBet, trading.ActionSell, trading.ActionHold:
		a.Kind = k
	default:
		return a, bad(`unknown action %q: use "BET", "SELL" or "HOLD"`, clip(kind, 40))
	}
	if r, ok := obj["reasoning"]; ok {
		a.Reasoning = reasoningText(r)
	}
	switch a.Kind {
	case trading.ActionBet:
		items, err := itemList(obj, "bets")
		if err != nil {
			return a, err
		}
		if items == nil {
			// Flat form: {"action":"BET","market_id":…,"side":…,"amount":…}.
			if _, ok := obj["market_id"]; ok {
				items = []map[string]json.RawMessage{obj}
			}
		}
		if len(items) == 0 {
			return a, bad(`a BET needs "bets": [{"market_id": <id>, "side": "YES" or "NO" or an outcome name, "amount": <dollars>}]`)
		}
		if len(items) > trading.MaxItems {
			return a, bad("%d bets in one action (max %d)", len(items), trading.MaxItems)
		}
		for i, it := range items {
			b, err := betFrom(it)
			if err != nil {
				return a, bad("bets[%d]: %s", i, err)
			}
			a.Bets = append(a.Bets, b)
		}
	case trading.ActionSell:
		items, err := itemList(obj, "sells")
		if err != nil {
			return a, err
		}
		if items == nil {
			if _, ok := obj["position_id"]; ok {
				items = []map[string]json.RawMessage{obj}
			}
		}
		if len(items) == 0 {
			return a, bad(`a SELL needs "sells": [{"position_id": <id>, "percentage": <1-100>}]`)
		}
		if len(items) > trading.MaxItems {
			return a, bad("%d sells in one action (max %d)", len(items), trading.MaxItems)
		}
		for i, it := range items {
			s, err := sellFrom(it)
			if err != nil {
				return a, bad("sells[%d]: %s", i, err)
			}
			a.Sells = append(a.Sells, s)
		}
	case trading.ActionHold:
		// Bets or sells on a HOLD are a contradiction Validate reports;
		// an empty list is harmless and dropped.
		for _, k := range []string{"bets", "sells"} {
			items, err := itemList(obj, k)
			if err != nil {
				return a, err
			}
			if len(items) > 0 {
				return a, bad("a HOLD must not carry %s; use BET or SELL instead", k)
			}
		}
	}
	return a, nil
}

func bad(format string, args ...any) error {
	return arena.Rejectf(arena.EINVALID, CodeBadAction, format, args...)
}

// itemList reads "bets" or "sells": an array of objects, a single object,
// or null/absent (nil).
func itemList(obj map[string]json.RawMessage, key string) ([]map[string]json.RawMessage, error) {
	raw, ok := obj[key]
	if !ok || isNull(raw) {
		return nil, nil
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '{' {
		m, err := jsonout.Decode(string(raw))
		if err != nil {
			return nil, bad("%q must be a list of objects", key)
		}
		return []map[string]json.RawMessage{m}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, bad("%q must be a list of objects", key)
	}
	out := make([]map[string]json.RawMessage, 0, len(list))
	for i, el := range list {
		m, err := jsonout.Decode(string(el))
		if err != nil {
			return nil, bad("%s[%d] must be an object", key, i)
		}
		out = append(out, m)
	}
	return out, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func betFrom(it map[string]json.RawMessage) (trading.Bet, error) {
	var b trading.Bet
	id, err := idField(it, "market_id")
	if err != nil {
		return b, err
	}
	b.MarketID = id
	sraw, ok := it["side"]
	if !ok || isNull(sraw) {
		return b, fmt.Errorf(`missing "side" (YES or NO, or the outcome name for a multi-outcome market)`)
	}
	var side string
	if err := json.Unmarshal(sraw, &side); err != nil {
		return b, fmt.Errorf(`"side" must be a string`)
	}
	b.Side = strings.TrimSpace(side)
	if b.Side == "" {
		return b, fmt.Errorf(`"side" is empty`)
	}
	araw, ok := it["amount"]
	if !ok || isNull(araw) {
		return b, fmt.Errorf(`missing "amount" (dollars)`)
	}
	amt, err := amountField(araw)
	if err != nil {
		return b, err
	}
	b.Amount = amt
	return b, nil
}

func sellFrom(it map[string]json.RawMessage) (trading.Sell, error) {
	var s trading.Sell
	id, err := idField(it, "position_id")
	if err != nil {
		return s, err
	}
	s.PositionID = id
	praw, ok := it["percentage"]
	if !ok || isNull(praw) {
		return s, fmt.Errorf(`missing "percentage" (1-100)`)
	}
	p, err := percentField(praw)
	if err != nil {
		return s, err
	}
	s.Percentage = p
	return s, nil
}

var intRE = regexp.MustCompile(`^[0-9]{1,18}(\.0+)?$`)

// idField reads a positive integer id given as a number or digit string.
func idField(it map[string]json.RawMessage, key string) (int64, error) {
	raw, ok := it[key]
	if !ok || isNull(raw) {
		return 0, fmt.Errorf("missing %q", key)
	}
	text := strings.TrimSpace(string(raw))
	var s string
	if json.Unmarshal(raw, &s) == nil {
		text = strings.TrimSpace(s)
	}
	if !intRE.MatchString(text) {
		return 0, fmt.Errorf("%q must be a whole number id from the list, got %s", key, clip(string(raw), 40))
	}
	whole, _, _ := strings.Cut(text, ".")
	v, err := strconv.ParseInt(whole, 10, 64)
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("%q must be a positive id from the list, got %s", key, clip(string(raw), 40))
	}
	return v, nil
}

var (
	numberRE  = regexp.MustCompile(`^[0-9]+(\.[0-9]*)?([eE][+-]?[0-9]{1,3})?$|^\.[0-9]+$`)
	groupedRE = regexp.MustCompile(`^[0-9]{1,3}(,[0-9]{3})+(\.[0-9]*)?$`)
)

// maxAmountDollars matches trading's bound on converted amounts.
const maxAmountDollars = 1_000_000_000_000

// amountField reads a dollar amount: a JSON number, or a string with an
// optional "$" and thousands separators.
func amountField(raw json.RawMessage) (trading.Micros, error) {
	text := strings.TrimSpace(string(raw))
	var s string
	quoted := json.Unmarshal(raw, &s) == nil
	if quoted {
		text = strings.TrimSpace(s)
		text = strings.TrimSpace(strings.TrimPrefix(text, "$"))
		if groupedRE.MatchString(text) {
			text = strings.ReplaceAll(text, ",", "")
		}
	}
	if strings.HasPrefix(text, "-") {
		return 0, fmt.Errorf(`"amount" must be positive, got %s`, clip(string(raw), 40))
	}
	if !numberRE.MatchString(text) {
		return 0, fmt.Errorf(`"amount" must be a number of dollars such as 100 or 250.50, got %s`, clip(string(raw), 40))
	}
	m, err := dollarsToMicros(text)
	if err != nil {
		return 0, fmt.Errorf(`"amount" %s: %v`, clip(string(raw), 40), err)
	}
	return m, nil
}

// dollarsToMicros converts a non-negative decimal (as matched by numberRE)
// to micro-dollars, exactly when it has at most 6 decimals, else rounded
// half up to the micro-dollar.
func dollarsToMicros(text string) (trading.Micros, error) {
	mant, expStr, hasExp := strings.Cut(strings.ToLower(text), "e")
	exp := 0
	if hasExp {
		e, err := strconv.Atoi(expStr)
		if err != nil {
			return 0, fmt.Errorf("is not a number")
		}
		exp = e
	}
	whole, frac, _ := strings.Cut(mant, ".")
	digits := strings.TrimLeft(whole+frac, "0")
	// value = digits × 10^(exp − len(frac)); micros = value × 10^6.
	shift := exp - len(frac) + 6
	trimmed := strings.TrimRight(digits, "0")
	shift += len(digits) - len(trimmed)
	digits = trimmed
	up := false
	if shift < 0 {
		// Finer than a micro-dollar: keep the whole micro-dollars and round
		// on the first digit dropped (an implicit 0 when none is kept).
		keep := len(digits) + shift
		if keep >= 0 {
			up = digits[keep] >= '5'
		} else {
			keep = 0
		}
		digits, shift = digits[:keep], 0
	}
	if digits == "" && !up {
		return 0, fmt.Errorf("must be positive (at least one micro-dollar)")
	}
	if len(digits)+shift > 19 {
		return 0, fmt.Errorf("is too large")
	}
	var v int64
	if digits != "" {
		var err error
		if v, err = strconv.ParseInt(digits+strings.Repeat("0", shift), 10, 64); err != nil {
			return 0, fmt.Errorf("is too large")
		}
	}
	if v > maxAmountDollars*int64(arena.Dollar) {
		return 0, fmt.Errorf("is too large")
	}
	if up {
		v++
	}
	if v > maxAmountDollars*int64(arena.Dollar) {
		return 0, fmt.Errorf("is too large")
	}
	return trading.Micros(v), nil
}

var percentRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$|^\.[0-9]+$`)

// percentField reads a percentage given as a number or a string such as
// "50" or "50%".
func percentField(raw json.RawMessage) (float64, error) {
	text := strings.TrimSpace(string(raw))
	var s string
	ok := false
	if json.Unmarshal(raw, &s) == nil {
		// Strings hold plain decimals only, so no "NaN" or "Inf".
		text = strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
		ok = percentRE.MatchString(text)
	} else {
		ok = numberRE.MatchString(text) // a JSON number, possibly with an exponent
	}
	if strings.HasPrefix(text, "-") {
		return 0, fmt.Errorf(`"percentage" must be between 1 and 100, got %s`, clip(string(raw), 40))
	}
	if !ok {
		return 0, fmt.Errorf(`"percentage" must be a number from 1 to 100, got %s`, clip(string(raw), 40))
	}
	v, err := strconv.ParseFloat(text, 64)
	if err != nil || v != v {
		return 0, fmt.Errorf(`"percentage" must be a number from 1 to 100, got %s`, clip(string(raw), 40))
	}
	return v, nil
}

// reasoningText returns a string field's value, or the compact JSON of any
// other value, cut to maxReasoningChars.
func reasoningText(raw json.RawMessage) string {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		if isNull(raw) {
			return ""
		}
		var buf bytes.Buffer
		if json.Compact(&buf, raw) == nil {
			s = buf.String()
		} else {
			s = string(raw)
		}
	}
	return clip(s, maxReasoningChars)
}

// clip cuts s to at most n runes, marking the cut.
func clip(s string, n int) string { return jsonout.Clip(s, n, reasoningCutMark) }
