package polymarket

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

// shapeBase is a project-written Gamma market in the shape of the
// recordings (lists as JSON inside strings, numbers next to string twins,
// fields the arena ignores), for shapes the recordings do not show.
const shapeBase = `{"id":"900001","question":"Will the project-written market resolve?","conditionId":"0x01",
	"slug":"project-written","description":"Resolves Yes if it does.","endDate":"2026-06-30T12:00:00Z",
	"startDate":"2026-01-01T00:00:00.5Z","outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"0.42\", \"0.58\"]",
	"clobTokenIds":"[\"111\", \"222\"]","volume":"1500.5","volumeNum":1500.5,"liquidity":"20","liquidityNum":20,
	"active":true,"closed":false,"archived":false,"negRisk":false,"negRiskOther":false,
	"umaResolutionStatuses":"[]","feeSchedule":{"exponent":1,"rate":0.05,"rebateRate":0.25,"takerOnly":true},
	"feeType":"general_fees","resolvedBy":"0x65070BE91477460D8A7AeEb94ef92fe056C2f2A7",
	"events":[{"id":"9900","slug":"project-event","negRiskAugmented":false,"tags":[{"label":"Science"}]}]}`

// shape returns shapeBase with fields replaced by raw JSON values, or
// removed where the value is "-".
func shape(t *testing.T, set map[string]string) []byte {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(shapeBase), &m); err != nil {
		t.Fatal(err)
	}
	for k, v := range set {
		if v == "-" {
			delete(m, k)
			continue
		}
		m[k] = json.RawMessage(v)
	}
	b, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("%v: %v", set, err)
	}
	return b
}

// Gamma shapes the recordings do not show: each gives the stated market or
// a skip for a named reason, never a panic or a silently wrong parse.
func TestDecodeUnseenShapes(t *testing.T) {
	closedAt := time.Date(2026, 7, 1, 8, 0, 0, 0, time.UTC)
	closed := func(uma, prices string) map[string]string {
		set := map[string]string{"closed": "true", "closedTime": `"2026-07-01 08:00:00+00"`, "outcomePrices": prices}
		if uma != "" {
			set["umaResolutionStatus"] = uma
		}
		return set
	}
	with := func(base map[string]string, k, v string) map[string]string {
		base[k] = v
		return base
	}
	type want struct {
		skip       SkipReason
		status     arena.MarketStatus
		resolution string
		ambiguous  bool
		resolvedAt time.Time
		outcomes   []string
		prices     map[string]float64
		tokens     []string
		close      time.Time
		volume     float64
		eligible   bool
	}
	open := want{status: arena.StatusOpen, outcomes: yesNo, prices: map[string]float64{"Yes": 0.42, "No": 0.58},
		tokens: []string{"111", "222"}, close: time.Date(2026, 6, 30, 12, 0, 0, 0, time.UTC), volume: 1500.5, eligible: true}
	edit := func(w want, f func(w *want)) want { f(&w); return w }
	// shut is the base market closed at prices, in the state Resolve gives.
	shut := func(status arena.MarketStatus, resolution string, ambiguous bool, at time.Time, prices map[string]float64) want {
		return edit(open, func(w *want) {
			w.status, w.resolution, w.ambiguous, w.resolvedAt, w.prices, w.eligible = status, resolution, ambiguous, at, prices, false
		})
	}
	yn := func(y, n float64) map[string]float64 { return map[string]float64{"Yes": y, "No": n} }
	for _, tc := range []struct {
		name string
		set  map[string]string
		want want
	}{
		{"as written", nil, open},
		{"unknown fields and objects", map[string]string{"newField": `{"nested":[1,{"x":null}]}`, "rewards": `[]`}, open},
		{"team names", map[string]string{"outcomes": `"[\"Lakers\", \"Celtics\"]"`},
			edit(open, func(w *want) {
				w.outcomes, w.prices = []string{"Lakers", "Celtics"}, map[string]float64{"Lakers": 0.42, "Celtics": 0.58}
			})},
		{"three outcomes, prices and tokens", map[string]string{"outcomes": `"[\"Home\", \"Draw\", \"Away\"]"`,
			"outcomePrices": `"[\"0.5\", \"0.3\", \"0.2\"]"`, "clobTokenIds": `"[\"1\", \"2\", \"3\"]"`},
			edit(open, func(w *want) {
				w.outcomes, w.prices, w.tokens = []string{"Home", "Draw", "Away"}, map[string]float64{"Home": 0.5, "Draw": 0.3, "Away": 0.2}, []string{"1", "2", "3"}
			})},
		{"three prices for two outcomes", map[string]string{"outcomePrices": `"[\"0.5\", \"0.3\", \"0.2\"]"`}, want{skip: SkipCountMismatch}},
		{"three token ids for two outcomes", map[string]string{"clobTokenIds": `"[\"1\", \"2\", \"3\"]"`}, want{skip: SkipCountMismatch}},
		{"clobTokenIds missing", map[string]string{"clobTokenIds": "-"}, edit(open, func(w *want) { w.tokens = nil })},
		{"endDate missing", map[string]string{"endDate": "-"}, edit(open, func(w *want) { w.close = time.Time{} })},
		{"endDate null", map[string]string{"endDate": "null"}, edit(open, func(w *want) { w.close = time.Time{} })},
		{"nulls everywhere", map[string]string{"conditionId": "null", "slug": "null", "outcomePrices": "null", "clobTokenIds": "null",
			"volumeNum": "null", "liquidityNum": "null", "negRisk": "null", "negRiskOther": "null", "events": "null", "archived": "null",
			"umaResolutionStatus": "null", "closedTime": "null", "description": "null"},
			edit(open, func(w *want) { w.prices, w.tokens = nil, nil })}, // volume from the string twin
		{"empty strings", map[string]string{"outcomePrices": `""`, "clobTokenIds": `""`, "endDate": `""`, "volumeNum": `""`, "closed": `""`},
			edit(open, func(w *want) { w.prices, w.tokens, w.close = nil, nil, time.Time{} })},
		{"numbers as strings", map[string]string{"id": "900001", "volumeNum": `"1500.5"`, "active": `"true"`, "closed": `"false"`,
			"outcomePrices": `["0.42", 0.58]`}, open},
		{"volume only as a string", map[string]string{"volumeNum": "-"}, open},
		{"no volume at all", map[string]string{"volumeNum": "-", "volume": "-"}, edit(open, func(w *want) { w.volume, w.eligible = 0, false })},
		{"string volume unreadable", map[string]string{"volumeNum": "-", "volume": `"lots"`}, edit(open, func(w *want) { w.volume, w.eligible = 0, false })},
		{"huge volume", map[string]string{"volumeNum": "1.5e308"}, edit(open, func(w *want) { w.volume = 1.5e308 })},
		{"volume beyond float range", map[string]string{"volumeNum": "1e999"}, want{skip: SkipBadField}},
		{"token ids as JSON integers", map[string]string{"clobTokenIds": `[104239898038807136052399800151408521467737075933964991162589336683346093173875, 7]`},
			edit(open, func(w *want) {
				w.tokens = []string{"104239898038807136052399800151408521467737075933964991162589336683346093173875", "7"}
			})},
		{"token ids rendered as floats", map[string]string{"clobTokenIds": `[1.0423989803880714e+77, 7.118396081070582e+76]`}, want{skip: SkipBadTokenIDs}},
		{"token id in hex", map[string]string{"clobTokenIds": `"[\"0x6f\", \"222\"]"`}, want{skip: SkipBadTokenIDs}},
		{"token id longer than a uint256", map[string]string{"clobTokenIds": `"[\"1234567890123456789012345678901234567890123456789012345678901234567890123456789\", \"2\"]"`}, want{skip: SkipBadTokenIDs}},
		{"closed a number", map[string]string{"closed": "1"}, want{skip: SkipBadField}},
		{"events an object", map[string]string{"events": `{"id":"9900"}`}, want{skip: SkipBadField}},
		{"question a number", map[string]string{"question": "42"}, want{skip: SkipBadField}},
		{"scalar market", map[string]string{"marketType": `"scalar"`, "lowerBound": `"0"`, "upperBound": `"100"`}, want{skip: SkipScalar}},
		{"normal market type", map[string]string{"marketType": `"normal"`}, open},
		{"negRisk Other", map[string]string{"negRisk": "true", "negRiskOther": "true"}, want{skip: SkipNegRiskOther}},
		{"archived", map[string]string{"archived": "true"}, edit(open, func(w *want) { w.eligible = false })},

		{"closed, proposed, priced 1/0", closed(`"proposed"`, `"[\"1\", \"0\"]"`), shut(arena.StatusClosed, "", false, time.Time{}, yn(1, 0))},
		{"closed, disputed, priced 0/1", closed(`"disputed"`, `"[\"0\", \"1\"]"`), shut(arena.StatusClosed, "", false, time.Time{}, yn(0, 1))},
		{"closed, resolved, priced 0/1", closed(`"resolved"`, `"[\"0\", \"1\"]"`), shut(arena.StatusResolved, "No", false, closedAt, yn(0, 1))},
		{"closed, resolved 50-50", closed(`"resolved"`, `"[\"0.5\", \"0.5\"]"`), shut(arena.StatusResolved, arena.Void, false, closedAt, yn(0.5, 0.5))},
		{"closed, resolved, no winner in the prices", closed(`"resolved"`, `"[\"0.6\", \"0.4\"]"`), shut(arena.StatusClosed, "", true, time.Time{}, yn(0.6, 0.4))},
		{"closed at zero prices while proposed", closed(`"proposed"`, `"[\"0\", \"0\"]"`), shut(arena.StatusClosed, "", false, time.Time{}, yn(0, 0))},
		{"closed at zero prices, three outcomes", with(with(closed("", `"[\"0\", \"0\", \"0\"]"`), "outcomes", `"[\"A\", \"B\", \"C\"]"`), "clobTokenIds", "-"),
			edit(shut(arena.StatusClosed, "", true, time.Time{}, map[string]float64{"A": 0, "B": 0, "C": 0}), func(w *want) {
				w.outcomes, w.tokens = []string{"A", "B", "C"}, nil
			})},
		{"closed, team wins", with(closed(`"resolved"`, `"[\"0\", \"1\"]"`), "outcomes", `"[\"Lakers\", \"Celtics\"]"`),
			edit(shut(arena.StatusResolved, "Celtics", false, closedAt, map[string]float64{"Lakers": 0, "Celtics": 1}), func(w *want) {
				w.outcomes = []string{"Lakers", "Celtics"}
			})},
		{"closedTime with T and an hour offset", with(closed(`"resolved"`, `"[\"1\", \"0\"]"`), "closedTime", `"2026-07-01T10:00:00+02"`),
			shut(arena.StatusResolved, "Yes", false, closedAt, yn(1, 0))},
		{"closedTime with fraction and a full offset", with(closed(`"resolved"`, `"[\"1\", \"0\"]"`), "closedTime", `"2026-07-01 08:00:00.000+00:00"`),
			shut(arena.StatusResolved, "Yes", false, closedAt, yn(1, 0))},
		{"closedTime in RFC 3339", with(closed(`"resolved"`, `"[\"1\", \"0\"]"`), "closedTime", `"2026-07-01T08:00:00Z"`),
			shut(arena.StatusResolved, "Yes", false, closedAt, yn(1, 0))},
		{"closedTime unreadable: the sync's time", with(closed(`"resolved"`, `"[\"1\", \"0\"]"`), "closedTime", `"yesterday"`),
			shut(arena.StatusResolved, "Yes", false, decodeNow, yn(1, 0))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := decodeMarket(shape(t, tc.set), nil, decodeNow)
			if tc.want.skip != "" {
				if err == nil || skipReason(err) != tc.want.skip {
					t.Fatalf("got %v, want skip %s", err, tc.want.skip)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := e.M
			got := want{status: m.Status, resolution: m.Resolution, ambiguous: m.Ambiguous, resolvedAt: m.ResolvedAt,
				outcomes: m.Outcomes, prices: m.Prices, tokens: m.TokenIDs, close: m.CloseTime, volume: m.Volume, eligible: e.Eligible}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got  %+v\nwant %+v", got, tc.want)
			}
			if tc.set["events"] != "null" && (m.Category != "Science" || m.EventID != "9900") {
				t.Errorf("category %q event %q", m.Category, m.EventID)
			}
		})
	}
}
