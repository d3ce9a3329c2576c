package polymarket

import (
	"encoding/json"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
)

var decodeNow = time.Date(2026, 2, 1, 12, 0, 0, 0, time.UTC)

// decodeOne decodes one Gamma market object as a market fetched alone
// (GET /markets/{id}): with no listing event, only its embedded summary.
func decodeOne(raw []byte, now time.Time) (*arena.Market, error) {
	e, err := decodeMarket(raw, nil, now)
	if err != nil {
		return nil, err
	}
	return e.M, nil
}

func TestDecodeMarket(t *testing.T) {
	const base = `"question":"Will it rain?","conditionId":"0xabc","slug":"rain","endDate":"2026-03-01T00:00:00Z","active":true,"closed":false,"volumeNum":100.5,"liquidityNum":7`
	for _, tc := range []struct {
		name     string
		json     string
		reason   SkipReason // expected skip reason; "" means success
		outcomes []string
		typ      arena.MarketType
		prices   map[string]float64
		tokens   []string
	}{
		{name: "string-encoded lists",
			json:     `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"0.25\", \"0.75\"]","clobTokenIds":"[\"111\", \"222\"]"}`,
			outcomes: []string{"Yes", "No"}, typ: arena.Binary, prices: map[string]float64{"Yes": 0.25, "No": 0.75}, tokens: []string{"111", "222"}},
		{name: "real arrays, numeric id and prices",
			json:     `{"id":1,` + base + `,"outcomes":["Yes","No"],"outcomePrices":[0.25,0.75],"clobTokenIds":["111","222"]}`,
			outcomes: []string{"Yes", "No"}, typ: arena.Binary, prices: map[string]float64{"Yes": 0.25, "No": 0.75}, tokens: []string{"111", "222"}},
		{name: "two teams are multi",
			json:     `{"id":"1",` + base + `,"outcomes":"[\"Lakers\", \"Celtics\"]","outcomePrices":"[\"0.4\", \"0.6\"]"}`,
			outcomes: []string{"Lakers", "Celtics"}, typ: arena.Multi, prices: map[string]float64{"Lakers": 0.4, "Celtics": 0.6}},
		{name: "No/Yes order is multi",
			json:     `{"id":"1",` + base + `,"outcomes":"[\"No\", \"Yes\"]"}`,
			outcomes: []string{"No", "Yes"}, typ: arena.Multi},
		{name: "lower-case yes/no is multi",
			json:     `{"id":"1",` + base + `,"outcomes":"[\"yes\", \"no\"]"}`,
			outcomes: []string{"yes", "no"}, typ: arena.Multi},
		{name: "three outcomes",
			json:     `{"id":"1",` + base + `,"outcomes":"[\"A\", \"B\", \"C\"]","outcomePrices":"[\"0.2\", \"0.3\", \"0.5\"]"}`,
			outcomes: []string{"A", "B", "C"}, typ: arena.Multi, prices: map[string]float64{"A": 0.2, "B": 0.3, "C": 0.5}},
		{name: "no prices yet",
			json:     `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","outcomePrices":null,"clobTokenIds":""}`,
			outcomes: []string{"Yes", "No"}, typ: arena.Binary},
		{name: "missing id", json: `{` + base + `,"outcomes":"[\"Yes\", \"No\"]"}`, reason: SkipMissingID},
		{name: "null id", json: `{"id":null,` + base + `,"outcomes":"[\"Yes\", \"No\"]"}`, reason: SkipMissingID},
		{name: "missing question", json: `{"id":"1","question":"  ","outcomes":"[\"Yes\", \"No\"]"}`, reason: SkipMissingQuestion},
		{name: "outcomes not JSON", json: `{"id":"1",` + base + `,"outcomes":"Yes,No"}`, reason: SkipBadOutcomes},
		{name: "outcomes an object", json: `{"id":"1",` + base + `,"outcomes":{"a":1}}`, reason: SkipBadOutcomes},
		{name: "one outcome", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\"]"}`, reason: SkipBadOutcomes},
		{name: "missing outcomes", json: `{"id":"1",` + base + `}`, reason: SkipBadOutcomes},
		{name: "duplicate outcome", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"Yes\"]"}`, reason: SkipBadOutcomes},
		{name: "reserved outcome", json: `{"id":"1",` + base + `,"outcomes":"[\"VOID\", \"No\"]"}`, reason: SkipBadOutcomes},
		{name: "price count mismatch", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"0.5\"]"}`, reason: SkipCountMismatch},
		{name: "token count mismatch", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","clobTokenIds":"[\"1\"]"}`, reason: SkipCountMismatch},
		{name: "empty token", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","clobTokenIds":"[\"1\", \"\"]"}`, reason: SkipBadTokenIDs},
		{name: "tokens not JSON", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","clobTokenIds":"[1,"}`, reason: SkipBadTokenIDs},
		{name: "non-numeric price", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"abc\", \"0.5\"]"}`, reason: SkipBadPrices},
		{name: "price above 1", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"1.5\", \"0\"]"}`, reason: SkipBadPrices},
		{name: "NaN price", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"NaN\", \"0\"]"}`, reason: SkipBadPrices},
		{name: "prices not JSON", json: `{"id":"1",` + base + `,"outcomes":"[\"Yes\", \"No\"]","outcomePrices":"0.5/0.5"}`, reason: SkipBadPrices},
		{name: "bad end date", json: `{"id":"1","question":"Q","endDate":"next week","outcomes":"[\"Yes\", \"No\"]"}`, reason: SkipBadDate},
		{name: "volumeNum a word", json: `{"id":"1","question":"Q","volumeNum":"lots","outcomes":"[\"Yes\", \"No\"]"}`, reason: SkipBadField},
		{name: "not an object", json: `[1,2]`, reason: SkipInvalidJSON},
		{name: "truncated", json: `{"id":"1","question":"Q`, reason: SkipInvalidJSON},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, err := decodeOne([]byte(tc.json), decodeNow)
			if tc.reason != "" {
				if err == nil {
					t.Fatalf("decoded %+v, want skip %s", m, tc.reason)
				}
				if r := skipReason(err); r != tc.reason {
					t.Fatalf("skip reason %s (%v), want %s", r, err, tc.reason)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(m.Outcomes, tc.outcomes) || m.Type != tc.typ || !reflect.DeepEqual(m.Prices, tc.prices) || !reflect.DeepEqual(m.TokenIDs, tc.tokens) {
				t.Errorf("got outcomes %v type %s prices %v tokens %v", m.Outcomes, m.Type, m.Prices, m.TokenIDs)
			}
			if m.SourceID != "1" || m.Source != arena.SourcePolymarket || m.Volume != 100.5 || m.Liquidity != 7 || m.Slug != "rain" || m.ConditionID != "0xabc" {
				t.Errorf("fields: %+v", m)
			}
		})
	}
}

func TestDecodeMarketMapping(t *testing.T) {
	raw := `{"id":"77","question":" Will X? ","description":"Resolves Yes if X.","conditionId":"0xc","slug":"will-x",
		"startDate":"2025-10-01T10:00:00.5Z","endDate":"2026-01-31","closedTime":"2026-02-01 08:15:00+00",
		"active":true,"closed":true,"volume":"5","volumeNum":"1234.5","liquidityNum":null,"negRisk":true,
		"umaResolutionStatus":"resolved","outcomes":"[\"Yes\", \"No\"]","outcomePrices":"[\"1\", \"0\"]",
		"clobTokenIds":"[\"9\", \"8\"]","events":[{"id":12,"slug":"x-event","title":"X","tags":[{"label":"World"}]}]}`
	m, err := decodeOne([]byte(raw), decodeNow)
	if err != nil {
		t.Fatal(err)
	}
	want := &arena.Market{
		Source: arena.SourcePolymarket, SourceID: "77", Kind: arena.KindMarket, Question: "Will X?",
		Criteria: "Resolves Yes if X.", URL: "https://polymarket.com/event/x-event/will-x", Category: "World",
		EventID: "12", Type: arena.Binary, Outcomes: []string{"Yes", "No"},
		Prices: map[string]float64{"Yes": 1, "No": 0}, Volume: 1234.5,
		OpenTime:  time.Date(2025, 10, 1, 10, 0, 0, 5e8, time.UTC),
		CloseTime: time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC),
		Status:    arena.StatusResolved, Resolution: "Yes",
		ResolvedAt:  time.Date(2026, 2, 1, 8, 15, 0, 0, time.UTC),
		ConditionID: "0xc", TokenIDs: []string{"9", "8"}, Slug: "will-x", EventSlug: "x-event",
		NegRisk: true, UMAStatus: "resolved",
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got  %+v\nwant %+v", m, want)
	}
}

func TestFlexList(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
		err  bool
	}{
		{`"[\"Yes\", \"No\"]"`, []string{"Yes", "No"}, false},
		{`["Yes","No"]`, []string{"Yes", "No"}, false},
		{`"[0.5, 0.5]"`, []string{"0.5", "0.5"}, false},
		{`[1, "2"]`, []string{"1", "2"}, false},
		{`null`, nil, false},
		{`""`, nil, false},
		{`"[]"`, []string{}, false},
		{`"Yes"`, nil, true},
		{`42`, nil, true},
		{`"[[1]]"`, nil, true},
	} {
		var l flexList
		if err := json.Unmarshal([]byte(tc.in), &l); err != nil {
			t.Errorf("%s: unmarshal error %v", tc.in, err)
			continue
		}
		if (l.Err != "") != tc.err || (!tc.err && !reflect.DeepEqual(l.V, tc.want)) {
			t.Errorf("%s: got %q err %q, want %q err %v", tc.in, l.V, l.Err, tc.want, tc.err)
		}
	}
}

func TestResolve(t *testing.T) {
	yn := []string{"Yes", "No"}
	teams := []string{"Lakers", "Celtics"}
	for _, tc := range []struct {
		name    string
		closed  bool
		uma     string
		out     []string
		prices  []float64
		winners []string
		want    Resolution
	}{
		{"open", false, "", yn, []float64{1, 0}, nil, Resolution{Status: arena.StatusOpen}},
		{"yes wins", true, "resolved", yn, []float64{1, 0}, nil, Resolution{Status: arena.StatusResolved, Resolution: "Yes"}},
		{"no wins at thresholds", true, "", yn, []float64{0.01, 0.99}, nil, Resolution{Status: arena.StatusResolved, Resolution: "No"}},
		{"team wins", true, "resolved", teams, []float64{0.0005, 0.9995}, nil, Resolution{Status: arena.StatusResolved, Resolution: "Celtics"}},
		{"three-way winner", true, "resolved", []string{"A", "B", "C"}, []float64{0, 1, 0}, nil, Resolution{Status: arena.StatusResolved, Resolution: "B"}},
		{"just below threshold", true, "", yn, []float64{0.985, 0.015}, nil, Resolution{Status: arena.StatusClosed}},
		{"loser too high", true, "resolved", []string{"A", "B", "C"}, []float64{0.99, 0.005, 0.02}, nil, Resolution{Status: arena.StatusClosed, Ambiguous: true}},
		{"void 50-50", true, "resolved", yn, []float64{0.5, 0.5}, nil, Resolution{Status: arena.StatusResolved, Resolution: arena.Void}},
		{"closed at default 50-50, UMA silent", true, "", yn, []float64{0.5, 0.5}, nil, Resolution{Status: arena.StatusClosed}},
		{"near even is not void", true, "", yn, []float64{0.505, 0.495}, nil, Resolution{Status: arena.StatusClosed}},
		{"closed at zero prices, UMA silent", true, "", yn, []float64{0, 0}, nil, Resolution{Status: arena.StatusClosed, Ambiguous: true}},
		{"closed at zero prices, UMA resolved", true, "resolved", yn, []float64{0, 0}, nil, Resolution{Status: arena.StatusClosed, Ambiguous: true}},
		{"zero prices while proposed", true, "proposed", yn, []float64{0, 0}, nil, Resolution{Status: arena.StatusClosed}},
		{"open at zero prices", false, "", yn, []float64{0, 0}, nil, Resolution{Status: arena.StatusOpen}},
		{"ambiguous", true, "resolved", yn, []float64{0.6, 0.4}, nil, Resolution{Status: arena.StatusClosed, Ambiguous: true}},
		{"ambiguous without prices", true, "Resolved", yn, nil, nil, Resolution{Status: arena.StatusClosed, Ambiguous: true}},
		{"closed awaiting resolution", true, "", yn, []float64{0.7, 0.3}, nil, Resolution{Status: arena.StatusClosed}},
		{"proposal pending", true, "proposed", yn, []float64{1, 0}, nil, Resolution{Status: arena.StatusClosed}},
		{"disputed", true, "disputed", yn, []float64{0.5, 0.5}, nil, Resolution{Status: arena.StatusClosed}},
		{"winner token", true, "resolved", yn, []float64{0.6, 0.4}, []string{"No"}, Resolution{Status: arena.StatusResolved, Resolution: "No"}},
		{"winner token while proposed", true, "proposed", yn, nil, []string{"Yes"}, Resolution{Status: arena.StatusResolved, Resolution: "Yes"}},
		{"two winner tokens", true, "resolved", yn, []float64{0.6, 0.4}, []string{"Yes", "No"}, Resolution{Status: arena.StatusClosed, Ambiguous: true}},
		{"unknown winner token", true, "resolved", yn, []float64{0.6, 0.4}, []string{"Maybe"}, Resolution{Status: arena.StatusClosed, Ambiguous: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Resolve(tc.closed, tc.uma, tc.out, tc.prices, tc.winners); got != tc.want {
				t.Errorf("got %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestNearest(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	pt := func(off time.Duration, p float64) arena.PricePoint {
		return arena.PricePoint{Time: at.Add(off), Price: p}
	}
	for _, tc := range []struct {
		name  string
		pts   []arena.PricePoint
		want  float64
		found bool
	}{
		{"empty", nil, 0, false},
		{"exact", []arena.PricePoint{pt(-60*time.Second, 0.1), pt(0, 0.2), pt(60*time.Second, 0.3)}, 0.2, true},
		{"nearest after", []arena.PricePoint{pt(-200*time.Second, 0.1), pt(100*time.Second, 0.3)}, 0.3, true},
		{"tie prefers earlier", []arena.PricePoint{pt(120*time.Second, 0.3), pt(-120*time.Second, 0.1)}, 0.1, true},
		{"at tolerance", []arena.PricePoint{pt(300*time.Second, 0.4)}, 0.4, true},
		{"beyond tolerance", []arena.PricePoint{pt(-301*time.Second, 0.4), pt(301*time.Second, 0.5)}, 0, false},
	} {
		got, ok := Nearest(tc.pts, at, BenchmarkTolerance)
		if ok != tc.found || got.Price != tc.want {
			t.Errorf("%s: got %v %v, want %v %v", tc.name, got.Price, ok, tc.want, tc.found)
		}
	}
}

// FuzzDecodeMarket feeds arbitrary bytes to the Gamma decoder, as a market
// and as an /events entry whose markets are then decoded: it must never
// panic, errors must be *SkipError with a listed reason, and every market
// it accepts must satisfy the domain invariants. Seeds: the hand-written
// fixtures, the committed corpus in testdata/fuzz (project-written objects
// in the recorded shapes), and the recordings in ../shared/data when present.
func FuzzDecodeMarket(f *testing.F) {
	for _, name := range []string{"gamma_markets.json", "gamma_events.json"} {
		for _, raw := range polymarkettest.FixtureList(f, name) {
			f.Add([]byte(raw))
		}
	}
	for _, raw := range polymarkettest.RecordedSeeds() {
		f.Add(raw)
	}
	f.Add([]byte(`{"id":7,"question":"Q","outcomes":["A","B"],"outcomePrices":"[\"0.5\",\"0.5\"]","closed":"true","umaResolutionStatus":"resolved"}`))
	f.Add([]byte(`{"id":"7","question":"Q","outcomes":"[\"Yes\",\"No\"]","tokens":[{"outcome":"No","winner":true}],"closed":true}`))
	f.Add([]byte(`{"id":"","outcomes":"\"[\\\"x\\\"]\""}`))
	check := func(t *testing.T, raw []byte, m *arena.Market, err error) {
		if err != nil {
			se, ok := err.(*SkipError)
			if !ok {
				t.Fatalf("error %T %v is not a *SkipError", err, err)
			}
			if !slices.Contains(SkipReasons, se.Reason) {
				t.Fatalf("unlisted skip reason %q", se.Reason)
			}
			if strings.Contains(err.Error(), "\n") && !strings.Contains(string(raw), "\n") {
				t.Fatalf("multi-line error %q", err)
			}
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("accepted an invalid market: %v", err)
		}
		if m.Type != arena.TypeOf(m.Outcomes) || (m.Type == arena.Binary) != (len(m.Outcomes) == 2 && m.Outcomes[0] == "Yes" && m.Outcomes[1] == "No") {
			t.Fatalf("type %s for outcomes %q", m.Type, m.Outcomes)
		}
		if m.TokenIDs != nil && len(m.TokenIDs) != len(m.Outcomes) {
			t.Fatalf("%d tokens for %d outcomes", len(m.TokenIDs), len(m.Outcomes))
		}
		for _, tok := range m.TokenIDs {
			if !tokenID(tok) {
				t.Fatalf("token id %q", tok)
			}
		}
		for _, p := range m.Prices {
			if math.IsNaN(p) || p < 0 || p > 1 {
				t.Fatalf("price %v", p)
			}
		}
		if math.IsNaN(m.Volume) || math.IsInf(m.Volume, 0) || math.IsNaN(m.Liquidity) || math.IsInf(m.Liquidity, 0) {
			t.Fatalf("volume %v", m.Volume)
		}
		if (m.Status == arena.StatusResolved) != (m.Resolution != "") || (m.Status == arena.StatusResolved && m.ResolvedAt.IsZero()) {
			t.Fatalf("status %s resolution %q at %v", m.Status, m.Resolution, m.ResolvedAt)
		}
		if m.Ambiguous && m.Status != arena.StatusClosed {
			t.Fatalf("ambiguous market with status %s", m.Status)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, err := decodeOne(raw, decodeNow)
		check(t, raw, m, err)
		ev, err := decodeEvent(raw)
		if err != nil {
			if skipReason(err) != SkipBadEvent {
				t.Fatalf("event error %v", err)
			}
			return
		}
		for _, mraw := range ev.Markets {
			e, err := decodeMarket(mraw, &ev.gammaEventRef, decodeNow)
			if err == nil {
				check(t, mraw, e.M, nil)
				if e.M.EventID == "" {
					t.Fatalf("market of event %q/%q without an event id", ev.ID, ev.Slug)
				}
				continue
			}
			check(t, mraw, nil, err)
		}
	})
}

// BenchmarkDecodeMarket measures decoding and mapping one realistic Gamma
// market (string-encoded lists, event summary); a full sync decodes ~1,000.
func BenchmarkDecodeMarket(b *testing.B) {
	raw := []byte(polymarkettest.FixtureList(b, "gamma_markets.json")[0])
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := decodeOne(raw, decodeNow); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "markets/s")
}

// Every skip reason a sync can count is explained in docs/operations.md.
func TestSkipReasonsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range SkipReasons {
		if !strings.Contains(string(doc), "| `"+string(r)+"`") && !strings.Contains(string(doc), ", `"+string(r)+"` |") {
			t.Errorf("skip reason %s is not in the skip table of docs/operations.md", r)
		}
	}
}
