package agent

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	arena "github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/shareddata"
	"github.com/forecast-arena/arena/internal/trading"
)

const usd = trading.Micros(1_000_000)

func bet(id int64, side string, amount trading.Micros) trading.Bet {
	return trading.Bet{MarketID: id, Side: side, Amount: amount}
}

func TestParseActionAccepts(t *testing.T) {
	cases := []struct {
		name string
		raw  string
		want trading.Action
	}{
		{"bare HOLD", `{"action":"HOLD","reasoning":"nothing to do"}`, trading.Hold("nothing to do")},
		{"fenced json",
			"Here is my decision:\n```json\n{\n  \"action\": \"BET\",\n  \"bets\": [{\"market_id\": 12, \"side\": \"YES\", \"amount\": 500}],\n  \"reasoning\": \"underpriced\"\n}\n```\nGood luck!",
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(12, "YES", 500*usd)}, Reasoning: "underpriced"}},
		{"plain fence", "```\n{\"action\":\"SELL\",\"sells\":[{\"position_id\":7,\"percentage\":50}],\"reasoning\":\"take profit\"}\n```",
			trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: 7, Percentage: 50}}, Reasoning: "take profit"}},
		{"prose around", `After careful analysis I will hold. {"action": "hold", "reasoning": "markets look fair"} That's final.`,
			trading.Hold("markets look fair")},
		{"last of several objects", `{"action":"HOLD","reasoning":"a"} or maybe {"action":"BET","bets":[{"market_id":1,"side":"NO","amount":60}]}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(1, "NO", 60*usd)}}},
		{"example before the answer", `Example: {"action": "HOLD", "reasoning": "..."}. My decision: {"action":"BET","bets":[{"market_id":12,"side":"YES","amount":500}]}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(12, "YES", 500*usd)}}},
		{"last answer malformed falls back to an earlier one", `{"action":"HOLD","reasoning":"a"} {"action":"BET","bets":[{"market_id":"abc","side":"YES","amount":100}]}`,
			trading.Hold("a")},
		{"non-action object last", `Decision: {"action":"HOLD","reasoning":"r"} Context: {"cash": 10000}`, trading.Hold("r")},
		{"last of nested wrappers", `{"draft":{"action":"HOLD","reasoning":"d"},"final":{"action":"SELL","sells":[{"position_id":4,"percentage":100}]}}`,
			trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: 4, Percentage: 100}}}},
		{"array of actions takes the last", `[{"action":"hold"}, {"action":"bet","market_id":3,"side":"yes","amount":".5"}]`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(3, "yes", 500_000)}}},
		{"amount rounded half up past 6 decimals", `{"action":"BET","bets":[{"market_id":5,"side":"YES","amount":2499.9999999999995},{"market_id":6,"side":"NO","amount":"333.3333333"}]}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(5, "YES", 2_500*usd), bet(6, "NO", 333_333_333)}}},
		{"non-action object first", `Context: {"cash": 10000} Decision: {"action":"HOLD","reasoning":"r"}`, trading.Hold("r")},
		{"invalid action object then valid", `{"action":"BET","bets":[{"market_id":"abc","side":"YES","amount":100}]} Sorry, corrected: {"action":"BET","bets":[{"market_id":3,"side":"YES","amount":100}]}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(3, "YES", 100*usd)}}},
		{"braces and quotes in strings", `{"action":"HOLD","reasoning":"the \"{best}\" bet is } none { really"}`,
			trading.Hold(`the "{best}" bet is } none { really`)},
		{"nested under another key", `{"decision": {"action": "HOLD", "reasoning": "nested"}}`, trading.Hold("nested")},
		{"trailing commas", "{\"action\":\"BET\",\"bets\":[{\"market_id\":5,\"side\":\"NO\",\"amount\":75.5,},],\"reasoning\":\"x\",}",
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(5, "NO", 75_500_000)}, Reasoning: "x"}},
		{"amounts as strings", `{"action":"BET","bets":[{"market_id":"5","side":"yes","amount":"$1,250.25"},{"market_id":6.0,"side":"Trump","amount":"100"}]}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(5, "yes", 1_250_250_000), bet(6, "Trump", 100*usd)}}},
		{"exponent amount", `{"action":"BET","bets":[{"market_id":5,"side":"YES","amount":1.5e2}]}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(5, "YES", 150*usd)}}},
		{"micro-dollar precision", `{"action":"BET","bets":[{"market_id":5,"side":"YES","amount":50.000001}]}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(5, "YES", 50*usd+1)}}},
		{"uppercase keys", `{"Action":"Bet","Bets":[{"Market_ID":9,"Side":"NO","Amount":80}],"Reasoning":"caps"}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(9, "NO", 80*usd)}, Reasoning: "caps"}},
		{"single bet object", `{"action":"BET","bets":{"market_id":9,"side":"NO","amount":80}}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(9, "NO", 80*usd)}}},
		{"flat bet", `{"action":"BET","market_id":9,"side":"NO","amount":80,"reasoning":"flat"}`,
			trading.Action{Kind: trading.ActionBet, Bets: []trading.Bet{bet(9, "NO", 80*usd)}, Reasoning: "flat"}},
		{"percent string", `{"action":"SELL","sells":[{"position_id":"4","percentage":"25%"}]}`,
			trading.Action{Kind: trading.ActionSell, Sells: []trading.Sell{{PositionID: 4, Percentage: 25}}}},
		{"unknown fields ignored", `{"action":"HOLD","confidence":0.7,"reasoning":"r","extra":[1,2]}`, trading.Hold("r")},
		{"hold with empty lists", `{"action":"HOLD","bets":[],"sells":null,"reasoning":"r"}`, trading.Hold("r")},
		{"reasoning as object", `{"action":"HOLD","reasoning":{"summary":"fair prices","risk":"low"}}`,
			trading.Hold(`{"summary":"fair prices","risk":"low"}`)},
		{"think block draft ignored", "<think>maybe {\"action\":\"BET\",\"bets\":[{\"market_id\":1,\"side\":\"YES\",\"amount\":60}]}</think>\n{\"action\":\"HOLD\",\"reasoning\":\"final\"}",
			trading.Hold("final")},
		{"only inside think", "<think>I'll answer {\"action\":\"HOLD\",\"reasoning\":\"in think\"}</think>", trading.Hold("in think")},
		{"prose quote before json", `The market "looks {cheap, so: {"action":"HOLD","reasoning":"q"}`, trading.Hold("q")},
		{"think tag inside a string", `{"action":"HOLD","reasoning":"I skipped <think> tags"}`, trading.Hold("I skipped <think> tags")},
		{"array wrapper", `[{"action":"HOLD","reasoning":"arr"}]`, trading.Hold("arr")},
		{"outer action wins over nested example", `{"action":"HOLD","reasoning":"not {\"action\":\"BET\"}","example":{"action":"BET"}}`,
			trading.Hold(`not {"action":"BET"}`)},
	}
	for _, tc := range cases {
		got, err := ParseAction(tc.raw)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, tc.want)
		}
	}
}

func TestParseActionRejects(t *testing.T) {
	cases := []struct {
		name, raw, code, msg string
	}{
		{"empty", "  \n", CodeEmptyResponse, "empty"},
		{"no json", "I think YES is likely, 70%.", CodeNoJSON, `"action" field`},
		{"json without action", `{"decision":"HOLD"}`, CodeNoJSON, `"action" field`},
		{"truncated", `{"action":"BET","bets":[{"market_id":12,"side":"YES","amou`, CodeTruncatedJSON, "incomplete"},
		{"unknown kind", `{"action":"BUY","bets":[]}`, CodeBadAction, `unknown action "BUY"`},
		{"kind not string", `{"action":1}`, CodeBadAction, "must be a string"},
		{"bet without bets", `{"action":"BET","reasoning":"r"}`, CodeBadAction, `"bets"`},
		{"sell without sells", `{"action":"SELL"}`, CodeBadAction, `"sells"`},
		{"negative amount", `{"action":"BET","bets":[{"market_id":1,"side":"YES","amount":-100}]}`, CodeBadAction, "positive"},
		{"zero amount", `{"action":"BET","bets":[{"market_id":1,"side":"YES","amount":0}]}`, CodeBadAction, "positive"},
		{"rounds to zero", `{"action":"BET","bets":[{"market_id":1,"side":"YES","amount":0.0000004}]}`, CodeBadAction, "positive"},
		{"error of the last answer", `{"action":"BUY"} then {"action":"BET","bets":[{"market_id":1,"side":"YES"}]}`, CodeBadAction, `missing "amount"`},
		{"NaN string", `{"action":"BET","bets":[{"market_id":1,"side":"YES","amount":"NaN"}]}`, CodeBadAction, "number of dollars"},
		{"Infinity", `{"action":"BET","bets":[{"market_id":1,"side":"YES","amount":Infinity}]}`, CodeBadAction, "malformed"},
		{"huge amount", `{"action":"BET","bets":[{"market_id":1,"side":"YES","amount":1e30}]}`, CodeBadAction, "too large"},
		{"words amount", `{"action":"BET","bets":[{"market_id":1,"side":"YES","amount":"100 dollars"}]}`, CodeBadAction, "number of dollars"},
		{"missing amount", `{"action":"BET","bets":[{"market_id":1,"side":"YES"}]}`, CodeBadAction, `missing "amount"`},
		{"missing side", `{"action":"BET","bets":[{"market_id":1,"amount":60}]}`, CodeBadAction, `missing "side"`},
		{"side not string", `{"action":"BET","bets":[{"market_id":1,"side":true,"amount":60}]}`, CodeBadAction, `"side" must be a string`},
		{"fractional id", `{"action":"BET","bets":[{"market_id":1.5,"side":"YES","amount":60}]}`, CodeBadAction, "whole number"},
		{"uuid id", `{"action":"BET","bets":[{"market_id":"0x12ab","side":"YES","amount":60}]}`, CodeBadAction, "whole number"},
		{"zero id", `{"action":"SELL","sells":[{"position_id":0,"percentage":60}]}`, CodeBadAction, "positive id"},
		{"percentage words", `{"action":"SELL","sells":[{"position_id":1,"percentage":"half"}]}`, CodeBadAction, "1 to 100"},
		{"negative percentage", `{"action":"SELL","sells":[{"position_id":1,"percentage":-5}]}`, CodeBadAction, "between 1 and 100"},
		{"hold with bets", `{"action":"HOLD","bets":[{"market_id":1,"side":"YES","amount":60}]}`, CodeBadAction, "must not carry bets"},
		{"bets not a list", `{"action":"BET","bets":"all in"}`, CodeBadAction, "list of objects"},
		{"malformed action object", `{"action":"HOLD", "reasoning": 'single'}`, CodeBadAction, "malformed"},
		{"python literals", `{"action": "SELL", "sells": [{"position_id": 1, "percentage": 100}], "done": True}`, CodeBadAction, "malformed"},
	}
	for _, tc := range cases {
		a, err := ParseAction(tc.raw)
		if err == nil {
			t.Errorf("%s: accepted as %+v", tc.name, a)
			continue
		}
		if arena.ErrorKind(err) != arena.EINVALID || arena.ErrorCode(err) != tc.code {
			t.Errorf("%s: kind %s code %s, want %s (%v)", tc.name, arena.ErrorKind(err), arena.ErrorCode(err), tc.code, err)
		}
		if !strings.Contains(err.Error(), tc.msg) {
			t.Errorf("%s: message %q lacks %q", tc.name, err, tc.msg)
		}
	}
}

func TestDollarsToMicros(t *testing.T) {
	good := map[string]trading.Micros{
		"50": 50 * usd, "50.": 50 * usd, ".5": 500_000, "0.000001": 1, "1234.5678": 1_234_567_800,
		"1e3": 1000 * usd, "1.25E2": 125 * usd, "12345678e-6": 12_345_678, "1000000000000": 1_000_000_000_000 * usd,
		"00100": 100 * usd, "100.000000000": 100 * usd,
		// Past 6 decimals: half up to the micro-dollar.
		"100.1234567": 100_123_457, "100.1234564": 100_123_456, "100.1234565": 100_123_457, "2499.9999999999995": 2_500 * usd,
		"333.3333333": 333_333_333, "0.0000005": 1, "1.5e-6": 2, "999999999999.9999995": 1_000_000_000_000 * usd,
	}
	for s, want := range good {
		got, err := dollarsToMicros(s)
		if err != nil || got != want {
			t.Errorf("dollarsToMicros(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"0", "0.0", "0.0000001", "1e-7", "0.00000049999", "1000000000000.0000005", "1000000000001", "1e13", "9999999999999999999999"} {
		if got, err := dollarsToMicros(s); err == nil {
			t.Errorf("dollarsToMicros(%q) = %d, want error", s, got)
		}
	}
}

func TestObjectSpansLinear(t *testing.T) {
	// Pathological nesting must stay cheap: one pass, bounded decoding.
	raw := strings.Repeat("{", 100_000) + `{"action":"HOLD","reasoning":"deep"}` + strings.Repeat("}", 50)
	a, err := ParseAction(raw)
	if err != nil || a.Reasoning != "deep" {
		t.Errorf("got %+v, %v", a, err)
	}
	raw = strings.Repeat(`{"a":`, 20_000) + "1" + strings.Repeat("}", 20_000)
	if _, err := ParseAction(raw); arena.ErrorCode(err) != CodeNoJSON {
		t.Errorf("deep non-action: %v", err)
	}
}

// canonical renders an action in the documented format with exact
// amounts, for the parse round-trip property.
func canonical(a trading.Action) string {
	type bj struct {
		MarketID int64       `json:"market_id"`
		Side     string      `json:"side"`
		Amount   json.Number `json:"amount"`
	}
	type sj struct {
		PositionID int64       `json:"position_id"`
		Percentage json.Number `json:"percentage"`
	}
	out := struct {
		Action    string `json:"action"`
		Bets      []bj   `json:"bets,omitempty"`
		Sells     []sj   `json:"sells,omitempty"`
		Reasoning string `json:"reasoning"`
	}{Action: string(a.Kind), Reasoning: a.Reasoning}
	for _, b := range a.Bets {
		whole, frac := int64(b.Amount)/1e6, int64(b.Amount)%1e6
		out.Bets = append(out.Bets, bj{b.MarketID, b.Side, json.Number(strconv.FormatInt(whole, 10) + "." + strconv.FormatInt(1e6+frac, 10)[1:])})
	}
	for _, s := range a.Sells {
		out.Sells = append(out.Sells, sj{s.PositionID, json.Number(strconv.FormatFloat(s.Percentage, 'g', -1, 64))})
	}
	b, _ := json.Marshal(out)
	return string(b)
}

// kalshibenchOutputs returns the raw model outputs of the published
// KalshiBench run, or nil when the shared data is absent.
func kalshibenchOutputs(tb testing.TB) []string {
	dir, ok := shareddata.Find()
	if !ok {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, "kalshibench", "gpt-4o_tier2_2025-12-17.json"))
	if err != nil {
		return nil
	}
	var run struct {
		Predictions []struct {
			RawOutput string `json:"raw_output"`
		} `json:"predictions"`
	}
	if err := json.Unmarshal(b, &run); err != nil {
		tb.Fatalf("kalshibench: %v", err)
	}
	var out []string
	for _, p := range run.Predictions {
		out = append(out, p.RawOutput)
	}
	return out
}

func TestParseKalshiBenchOutputs(t *testing.T) {
	outs := kalshibenchOutputs(t)
	if outs == nil {
		t.Skip("../shared/data/kalshibench not present")
	}
	// Real model output in another answer format (<answer>/<confidence>
	// tags): none holds an action, and each must be rejected cleanly with
	// a message the model can act on, never accepted by accident.
	for i, raw := range outs {
		a, err := ParseAction(raw)
		if err == nil {
			t.Errorf("output %d parsed as an action %+v: %q", i, a, raw)
			continue
		}
		if c := arena.ErrorCode(err); c != CodeNoJSON && c != CodeEmptyResponse {
			t.Errorf("output %d: code %s: %v", i, c, err)
		}
	}
	// Wrapped the way a trading model would answer, the same text is prose
	// around a valid action.
	for i, raw := range outs[:min(len(outs), 50)] {
		wrapped := raw + "\n```json\n{\"action\":\"HOLD\",\"reasoning\":\"see above\"}\n```"
		if a, err := ParseAction(wrapped); err != nil || a.Kind != trading.ActionHold {
			t.Errorf("wrapped output %d: %+v, %v", i, a, err)
		}
	}
	t.Logf("%d KalshiBench outputs rejected cleanly", len(outs))
}

func FuzzParseAction(f *testing.F) {
	seeds := []string{
		`{"action":"HOLD","reasoning":"fine"}`,
		"```json\n{\"action\":\"BET\",\"bets\":[{\"market_id\":12,\"side\":\"YES\",\"amount\":500}],\"reasoning\":\"r\"}\n```",
		"I'll sell.\n{\"action\":\"SELL\",\"sells\":[{\"position_id\":3,\"percentage\":\"50%\"}]}\nDone.",
		`{"action":"BET","bets":[{"market_id":"7","side":"Trump","amount":"$1,000.50"},]}`,
		`{"action":"BET","bets":[{"market_id":1,"side":"NO","amou`,
		`{"action":"HOLD","reasoning":"braces { } and \"quotes\" inside"} {"action":"BET"}`,
		"<think>draft {\"action\":\"BET\"}</think>{\"action\":\"HOLD\"}",
		`{"action":"BET","bets":[{"market_id":1e400,"side":"YES","amount":1e-999}]}`,
		`{"action":"SELL","sells":{"position_id":1.0,"percentage":1e2}}`,
		`[{"action":"hold"}, {"action":"bet","market_id":3,"side":"yes","amount":".5"}]`,
		`Example: {"action": "HOLD", "reasoning": "..."}. My decision: {"action":"BET","bets":[{"market_id":12,"side":"YES","amount":500}]}`,
		`{"draft":{"action":"HOLD"},"final":{"action":"SELL","sells":[{"position_id":4,"percentage":100}]}} {"note":{"x":{}}}`,
		`{"action":"BET","bets":[{"market_id":12,"side":"YES","amount":2499.9999999999995},{"market_id":13,"side":"NO","amount":"333.3333333"}]}`,
		"\n<answer>no</answer>\n<confidence>10</confidence>",
		"{\"action\":\"HOLD\",\"reasoning\":\"\xff\xfe invalid utf8\"}",
	}
	for _, s := range seeds {
		f.Add(s)
	}
	for _, s := range kalshibenchOutputs(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		a, err := ParseAction(raw)
		if err != nil {
			if arena.ErrorKind(err) != arena.EINVALID || arena.ErrorMessage(err) == "" {
				t.Fatalf("error %v is not a user-facing *arena.Error", err)
			}
			return
		}
		switch a.Kind {
		case trading.ActionHold:
			if len(a.Bets)+len(a.Sells) != 0 {
				t.Fatalf("HOLD with items: %+v", a)
			}
		case trading.ActionBet:
			if len(a.Bets) == 0 || len(a.Sells) != 0 {
				t.Fatalf("BET shape: %+v", a)
			}
			for _, b := range a.Bets {
				if b.MarketID <= 0 || b.Amount <= 0 || strings.TrimSpace(b.Side) != b.Side || b.Side == "" {
					t.Fatalf("bad bet %+v", b)
				}
			}
		case trading.ActionSell:
			if len(a.Sells) == 0 || len(a.Bets) != 0 {
				t.Fatalf("SELL shape: %+v", a)
			}
			for _, s := range a.Sells {
				if s.PositionID <= 0 || s.Percentage < 0 || s.Percentage != s.Percentage {
					t.Fatalf("bad sell %+v", s)
				}
			}
		default:
			t.Fatalf("kind %q", a.Kind)
		}
		// Round trip: the canonical rendering parses back to the same action.
		if len([]rune(a.Reasoning)) >= maxReasoningChars {
			return
		}
		c := canonical(a)
		b, err := ParseAction(c)
		if err != nil {
			t.Fatalf("canonical form %s does not parse: %v", c, err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Fatalf("round trip changed the action:\n%+v\n%+v\n%s", a, b, c)
		}
	})
}

func TestManySmallObjectsBeforeAction(t *testing.T) {
	raw := strings.Repeat(`{"p":0.5} `, 2000) + `{"action":"HOLD","reasoning":"late"}`
	if a, err := ParseAction(raw); err != nil || a.Reasoning != "late" {
		t.Errorf("%+v %v", a, err)
	}
}

// BenchmarkParseAction measures parsing a realistic answer: prose, a fenced
// BET with three bets, and a long reasoning string.
func BenchmarkParseAction(b *testing.B) {
	raw := strings.Repeat("Looking at the markets, several look mispriced given base rates. ", 30) +
		"\n```json\n{\"action\":\"BET\",\"bets\":[{\"market_id\":101,\"side\":\"YES\",\"amount\":500}," +
		"{\"market_id\":102,\"side\":\"Newsom\",\"amount\":\"$250.50\"},{\"market_id\":103,\"side\":\"NO\",\"amount\":75}]," +
		"\"reasoning\":\"" + strings.Repeat("Rates {likely} to fall; ", 40) + "\"}\n```\nThat is my decision."
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseAction(raw); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "parses/s")
}
