package rounds

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/forecast"

	"github.com/forecast-arena/arena"
)

var (
	t0    = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC) // commit deadline
	sched = forecast.Schedule{CommitDeadline: t0, RevealStart: t0.Add(time.Hour), RevealDeadline: t0.Add(3 * time.Hour)}
)

func mkt(id, event, cat string, vol float64, closeAt time.Time) *arena.Market {
	return &arena.Market{
		Source: arena.SourcePolymarket, SourceID: id, Kind: arena.KindMarket, Question: "Q " + id,
		EventID: event, Category: cat, Type: arena.Binary, Outcomes: []string{arena.Yes, arena.No},
		Prices: map[string]float64{arena.Yes: 0.4, arena.No: 0.6}, Volume: vol, Liquidity: 5000,
		CloseTime: closeAt, Status: arena.StatusOpen,
	}
}

func TestValidateRound(t *testing.T) {
	after := sched.RevealDeadline.Add(time.Hour)
	good := func() []*arena.Market {
		return []*arena.Market{mkt("a", "e1", "politics", 9, after), mkt("b", "e2", "sports", 8, after), mkt("c", "", "crypto", 7, after)}
	}
	if err := ValidateRound(sched, 3, good()); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func([]*arena.Market) []*arena.Market{
		"count":      func(ms []*arena.Market) []*arena.Market { return ms[:2] },
		"nil market": func(ms []*arena.Market) []*arena.Market { ms[1] = nil; return ms },
		"multi":      func(ms []*arena.Market) []*arena.Market { ms[0].Type = arena.Multi; return ms },
		"resolved": func(ms []*arena.Market) []*arena.Market {
			ms[0].Status, ms[0].Resolution = arena.StatusResolved, arena.Yes
			return ms
		},
		"closed":           func(ms []*arena.Market) []*arena.Market { ms[0].Status = arena.StatusClosed; return ms },
		"no close time":    func(ms []*arena.Market) []*arena.Market { ms[2].CloseTime = time.Time{}; return ms },
		"closes at reveal": func(ms []*arena.Market) []*arena.Market { ms[2].CloseTime = sched.RevealDeadline; return ms },
		"closes in reveal": func(ms []*arena.Market) []*arena.Market { ms[2].CloseTime = sched.RevealStart; return ms },
		"same market":      func(ms []*arena.Market) []*arena.Market { ms[2] = ms[0]; return ms },
		"same event":       func(ms []*arena.Market) []*arena.Market { ms[1].EventID = "e1"; return ms },
	} {
		if err := ValidateRound(sched, 3, edit(good())); arena.ErrorCode(err) != forecast.CodeRoundMarketsInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	if err := ValidateRound(forecast.Schedule{}, 3, good()); arena.ErrorCode(err) != forecast.CodeScheduleInvalid {
		t.Errorf("bad schedule: %v", err)
	}
	if err := ValidateRound(sched, 0, nil); arena.ErrorCode(err) != forecast.CodeRoundMarketsInvalid {
		t.Errorf("k = 0: %v", err)
	}
}

func TestRulesJSON(t *testing.T) {
	r := DefaultRules()
	r.ExcludeCategories = []string{"Sports"}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"min_volume":10000,"min_liquidity":1000,"min_price":0.03,"max_price":0.97,"min_close_after":"1h0m0s","max_close_after":"168h0m0s","max_per_category":0,"sources":["polymarket"],"exclude_categories":["Sports"]}`
	if string(b) != want {
		t.Errorf("rules JSON\n got %s\nwant %s", b, want)
	}
	var back Rules
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(back) != fmt.Sprint(r) {
		t.Errorf("round trip %+v != %+v", back, r)
	}
	// Like every duration in JSON, a number is seconds.
	if err := json.Unmarshal([]byte(`{"min_close_after":3600}`), &back); err != nil || back.MinCloseAfter != arena.Duration(time.Hour) {
		t.Errorf("numeric duration: %v %v", back.MinCloseAfter, err)
	}
	if err := json.Unmarshal([]byte(`{"min_close_after":"soon"}`), &back); err == nil {
		t.Error("bad duration accepted")
	}
}

func TestRulesValidate(t *testing.T) {
	if err := DefaultRules().Validate(); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(*Rules){
		"negative volume":    func(r *Rules) { r.MinVolume = -1 },
		"NaN liquidity":      func(r *Rules) { r.MinLiquidity = math.NaN() },
		"inf volume":         func(r *Rules) { r.MinVolume = math.Inf(1) },
		"price > 1":          func(r *Rules) { r.MaxPrice = 1.5 },
		"price inverted":     func(r *Rules) { r.MinPrice, r.MaxPrice = 0.9, 0.1 },
		"min without max":    func(r *Rules) { r.MaxPrice = 0 },
		"negative close":     func(r *Rules) { r.MinCloseAfter = -1 },
		"window inverted":    func(r *Rules) { r.MaxCloseAfter = r.MinCloseAfter },
		"negative cat limit": func(r *Rules) { r.MaxPerCategory = -1 },
	} {
		r := DefaultRules()
		edit(&r)
		if err := r.Validate(); arena.ErrorCode(err) != forecast.CodeRulesInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func TestEligible(t *testing.T) {
	rules := DefaultRules()
	rules.ExcludeCategories = []string{" Sports "}
	rd := sched.RevealDeadline
	ok := func() *arena.Market { return mkt("a", "e", "Politics", 50_000, rd.Add(2*time.Hour)) }
	if e, why := rules.Eligible(ok(), rd); !e {
		t.Fatalf("eligible market refused: %s", why)
	}
	for want, edit := range map[string]func(*arena.Market){
		"not binary":                           func(m *arena.Market) { m.Type = arena.Multi },
		"not open":                             func(m *arena.Market) { m.Ambiguous = true },
		"source sim not in the rules":          func(m *arena.Market) { m.Source = arena.SourceSim },
		"closes too early":                     func(m *arena.Market) { m.CloseTime = rd.Add(time.Hour) }, // = reveal + MinCloseAfter
		"closes too late":                      func(m *arena.Market) { m.CloseTime = rd.Add(8 * 24 * time.Hour) },
		"volume below min_volume":              func(m *arena.Market) { m.Volume = math.NaN() },
		"liquidity below min_liquidity":        func(m *arena.Market) { m.Liquidity = 999 },
		"category sports":                      func(m *arena.Market) { m.Category = "SPORTS" },
		"price outside [min_price, max_price]": func(m *arena.Market) { m.Prices = map[string]float64{arena.Yes: 0.98, arena.No: 0.02} },
	} {
		m := ok()
		edit(m)
		if e, why := rules.Eligible(m, rd); e || why != want {
			t.Errorf("want refusal %q, got eligible=%v %q", want, e, why)
		}
	}
	m := ok()
	m.Prices = nil
	if e, why := rules.Eligible(m, rd); e || why != "price outside [min_price, max_price]" {
		t.Errorf("unknown price with price bounds: %v %q", e, why)
	}
	rules.MinPrice, rules.MaxPrice = 0, 0
	if e, why := rules.Eligible(m, rd); !e {
		t.Errorf("unknown price without price bounds refused: %s", why)
	}
}

// world is a candidate pool: 4 categories of very different sizes, events
// with several markets, and a few ineligible markets.
func world() []*arena.Market {
	closeAt := sched.RevealDeadline.Add(48 * time.Hour)
	var ms []*arena.Market
	add := func(id, event, cat string, vol float64) *arena.Market {
		m := mkt(id, event, cat, vol, closeAt)
		ms = append(ms, m)
		return m
	}
	// Politics dominates by volume, and its top event has three markets.
	add("p1a", "election", "Politics", 9_000_000)
	add("p1b", "election", "Politics", 8_000_000)
	add("p1c", "election", "Politics", 7_000_000)
	add("p2", "senate", "Politics", 6_000_000)
	add("p3", "", "Politics", 5_000_000)
	add("p4", "house", "politics", 4_000_000)
	add("s1", "final", "Sports", 900_000)
	add("s2", "derby", "Sports", 800_000)
	add("c1", "btc", "Crypto", 500_000)
	add("c2", "eth", "Crypto", 500_000) // volume tie with c1: SourceID breaks it
	add("e1", "oscars", "", 100_000)
	// Ineligible.
	add("x1", "x1", "Crypto", 99_000_000).Type = arena.Multi
	add("x2", "x2", "Crypto", 99_000_000).CloseTime = sched.RevealDeadline
	add("x3", "x3", "Sports", 5)
	return ms
}

func ids(ms []*arena.Market) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.SourceID
	}
	return out
}

func TestSelectMarkets(t *testing.T) {
	got, err := SelectMarkets(world(), 7, DefaultRules(), sched.RevealDeadline)
	if err != nil {
		t.Fatal(err)
	}
	// Round-robin over categories ordered by their best market's volume:
	// politics, sports, crypto, uncategorized; then the second of each.
	want := []string{"p1a", "s1", "c1", "e1", "p2", "s2", "c2"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("selected %v, want %v", ids(got), want)
	}
	if err := ValidateRound(sched, 7, got); err != nil {
		t.Fatalf("selection is not a valid round: %v", err)
	}

	// Deterministic whatever the candidates' order.
	rng := rand.New(rand.NewPCG(1, 1))
	for i := 0; i < 50; i++ {
		w := world()
		rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		again, err := SelectMarkets(w, 7, DefaultRules(), sched.RevealDeadline)
		if err != nil || !slices.Equal(ids(again), want) {
			t.Fatalf("shuffle %d: %v, %v", i, ids(again), err)
		}
	}

	// k larger than one layer per category takes more from the big ones.
	got, err = SelectMarkets(world(), 9, DefaultRules(), sched.RevealDeadline)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"p1a", "s1", "c1", "e1", "p2", "s2", "c2", "p3", "p4"}; !slices.Equal(ids(got), want) {
		t.Errorf("k = 9: %v, want %v", ids(got), want)
	}

	// One per event: 11 eligible markets on 9 events give at most 9.
	if _, err := SelectMarkets(world(), 10, DefaultRules(), sched.RevealDeadline); arena.ErrorCode(err) != forecast.CodeNotEnoughMarkets {
		t.Errorf("k = 10: %v, want %s", err, forecast.CodeNotEnoughMarkets)
	}

	// A category cap of 1 leaves 4 markets.
	capped := DefaultRules()
	capped.MaxPerCategory = 1
	if got, err := SelectMarkets(world(), 4, capped, sched.RevealDeadline); err != nil || !slices.Equal(ids(got), []string{"p1a", "s1", "c1", "e1"}) {
		t.Errorf("cap 1: %v %v", ids(got), err)
	}
	if _, err := SelectMarkets(world(), 5, capped, sched.RevealDeadline); arena.ErrorCode(err) != forecast.CodeNotEnoughMarkets {
		t.Errorf("cap 1, k = 5: %v", err)
	}

	// Bad k and bad rules.
	if _, err := SelectMarkets(world(), 0, DefaultRules(), sched.RevealDeadline); arena.ErrorCode(err) != forecast.CodeRulesInvalid {
		t.Errorf("k = 0: %v", err)
	}
	bad := DefaultRules()
	bad.MinVolume = -1
	if _, err := SelectMarkets(world(), 3, bad, sched.RevealDeadline); arena.ErrorCode(err) != forecast.CodeRulesInvalid {
		t.Errorf("bad rules: %v", err)
	}
	// Candidates are not reordered or modified.
	w := world()
	before := ids(w)
	if _, err := SelectMarkets(w, 7, DefaultRules(), sched.RevealDeadline); err != nil || !slices.Equal(ids(w), before) {
		t.Errorf("candidates changed: %v", ids(w))
	}
}

func TestVenueRulesValidate(t *testing.T) {
	neg, inf := -1.0, math.Inf(1)
	for name, v := range map[string]map[string]VenueRules{
		"unknown venue":    {"kalshy": {Share: 1}},
		"negative volume":  {arena.SourceKalshi: {MinVolume: &neg}},
		"inf liquidity":    {arena.SourceKalshi: {MinLiquidity: &inf}},
		"negative share":   {arena.SourceKalshi: {Share: -1}},
		"NaN share":        {arena.SourceKalshi: {Share: math.NaN()}},
		"enormous share":   {arena.SourceKalshi: {Share: 1e7}},
		"forecastbench":    {arena.SourceForecastBench: {Share: 1}},
		"empty venue name": {"": {Share: 1}},
	} {
		r := DefaultRules()
		r.Venues = v
		if err := r.Validate(); arena.ErrorCode(err) != forecast.CodeRulesInvalid {
			t.Errorf("%s: %v", name, err)
		}
	}
	r := DefaultRules()
	r.Venues = map[string]VenueRules{arena.SourceKalshi: {Share: 2}, arena.SourceSim: {Share: 1}}
	if err := r.Validate(); err != nil {
		t.Errorf("good venues refused: %v", err)
	}
	// The venues round-trip through the JSON a round stores.
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var back Rules
	if err := json.Unmarshal(b, &back); err != nil || back.Venues[arena.SourceKalshi].Share != 2 || len(back.Venues) != 2 {
		t.Errorf("round trip %s: %+v %v", b, back.Venues, err)
	}
}

func TestQuotas(t *testing.T) {
	for _, c := range []struct {
		shares map[string]float64
		k      int
		want   map[string]int
	}{
		{nil, 7, nil},
		{map[string]float64{"kalshi": 0}, 7, nil},
		{map[string]float64{"kalshi": 1}, 7, map[string]int{"kalshi": 7}},
		// Equal shares: the remainder goes to the venue named first.
		{map[string]float64{"polymarket": 1, "kalshi": 1}, 7, map[string]int{"kalshi": 4, "polymarket": 3}},
		{map[string]float64{"polymarket": 1, "kalshi": 1, "manifold": 1}, 7, map[string]int{"kalshi": 3, "manifold": 2, "polymarket": 2}},
		// Largest remainder: 7 × (0.5, 0.3, 0.2) = 3.5, 2.1, 1.4 → 3+1, 2, 1.
		{map[string]float64{"polymarket": 5, "kalshi": 3, "manifold": 2}, 7, map[string]int{"polymarket": 4, "kalshi": 2, "manifold": 1}},
		// A venue without a share takes none.
		{map[string]float64{"polymarket": 3, "kalshi": 0, "manifold": 1}, 4, map[string]int{"polymarket": 3, "manifold": 1}},
		// A share too small for one market gets none.
		{map[string]float64{"polymarket": 99, "kalshi": 1}, 7, map[string]int{"polymarket": 7, "kalshi": 0}},
	} {
		r := Rules{Venues: map[string]VenueRules{}}
		for v, s := range c.shares {
			r.Venues[v] = VenueRules{Share: s}
		}
		got := r.Quotas(c.k)
		sum := 0
		for _, n := range got {
			sum += n
		}
		if fmt.Sprint(got) != fmt.Sprint(c.want) || (got != nil && sum != c.k) {
			t.Errorf("shares %v, k %d: %v, want %v", c.shares, c.k, got, c.want)
		}
	}
}

// venueWorld is world() with each market also offered by Kalshi, whose
// volumes count contracts and whose liquidity is 0.
func venueWorld() []*arena.Market {
	ms := world()
	for _, m := range world() {
		k := *m
		k.Source, k.SourceID, k.Volume, k.Liquidity = arena.SourceKalshi, "K-"+m.SourceID, m.Volume/1000, 0
		ms = append(ms, &k)
	}
	return ms
}

func TestEligibleVenueMinimums(t *testing.T) {
	rd := sched.RevealDeadline
	m := mkt("a", "e", "Politics", 50_000, rd.Add(2*time.Hour))
	m.Source, m.Liquidity = arena.SourceKalshi, 0
	rules := DefaultRules()
	rules.Sources = append(rules.Sources, arena.SourceKalshi)
	if e, why := rules.Eligible(m, rd); e || why != "liquidity below min_liquidity" {
		t.Fatalf("Kalshi market under the dollar minimums: %v %q", e, why)
	}
	zero, big := 0.0, 60_000.0
	rules.Venues = map[string]VenueRules{arena.SourceKalshi: {MinLiquidity: &zero}}
	if e, why := rules.Eligible(m, rd); !e {
		t.Errorf("Kalshi minimums not applied: %s", why)
	}
	rules.Venues[arena.SourceKalshi] = VenueRules{MinLiquidity: &zero, MinVolume: &big}
	if e, why := rules.Eligible(m, rd); e || why != "volume below min_volume" {
		t.Errorf("Kalshi min_volume not applied: %v %q", e, why)
	}
	// Another venue's minimums stay the rules' own.
	p := mkt("b", "e", "Politics", 50_000, rd.Add(2*time.Hour))
	p.Liquidity = 0
	if e, _ := rules.Eligible(p, rd); e {
		t.Error("Polymarket market took Kalshi's minimums")
	}
	// A simulated market named after Kalshi is Kalshi's.
	s := mkt("c", "e", "Politics", 50_000, rd.Add(2*time.Hour))
	s.Source, s.Origin, s.Liquidity = arena.SourceSim, arena.SourceKalshi, 0
	rules.Sources = append(rules.Sources, arena.SourceSim)
	rules.Venues[arena.SourceKalshi] = VenueRules{MinLiquidity: &zero}
	if e, why := rules.Eligible(s, rd); !e {
		t.Errorf("simulated Kalshi market: %s", why)
	}
}

func TestSelectMarketsByVenue(t *testing.T) {
	zero := 0.0
	rules := DefaultRules()
	rules.Sources = append(rules.Sources, arena.SourceKalshi)
	rules.Venues = map[string]VenueRules{
		arena.SourcePolymarket: {Share: 1},
		arena.SourceKalshi:     {Share: 1, MinVolume: &zero, MinLiquidity: &zero},
	}
	got, err := SelectMarkets(venueWorld(), 7, rules, sched.RevealDeadline)
	if err != nil {
		t.Fatal(err)
	}
	// 4 Kalshi markets (the venue named first takes the remainder), then 3
	// Polymarket ones, each venue's chosen as a round of its own would be:
	// Kalshi's smaller volumes do not rank them below Polymarket's.
	want := []string{"K-p1a", "K-s1", "K-c1", "K-e1", "p1a", "s1", "c1"}
	if !slices.Equal(ids(got), want) {
		t.Fatalf("selected %v, want %v", ids(got), want)
	}
	if err := ValidateRound(sched, 7, got); err != nil {
		t.Fatalf("selection is not a valid round: %v", err)
	}
	// Deterministic whatever the candidates' order.
	rng := rand.New(rand.NewPCG(2, 2))
	for i := 0; i < 20; i++ {
		w := venueWorld()
		rng.Shuffle(len(w), func(a, b int) { w[a], w[b] = w[b], w[a] })
		if again, err := SelectMarkets(w, 7, rules, sched.RevealDeadline); err != nil || !slices.Equal(ids(again), want) {
			t.Fatalf("shuffle %d: %v, %v", i, ids(again), err)
		}
	}
	// Without shares, volumes in different units rank Polymarket first.
	noShares := rules
	noShares.Venues = map[string]VenueRules{arena.SourceKalshi: {MinVolume: &zero, MinLiquidity: &zero}}
	if got, err := SelectMarkets(venueWorld(), 7, noShares, sched.RevealDeadline); err != nil || got[0].Source != arena.SourcePolymarket {
		t.Errorf("without shares: %v %v", ids(got), err)
	}
	// A venue that cannot fill its quota leaves its places to the others;
	// the round is refused only when all of them together fall short.
	short := rules
	short.Venues = map[string]VenueRules{
		arena.SourcePolymarket: {Share: 1},
		arena.SourceKalshi:     {Share: 1}, // the dollar minimums take no Kalshi market
	}
	got, err = SelectMarkets(venueWorld(), 7, short, sched.RevealDeadline)
	if want := []string{"p1a", "s1", "c1", "p2", "s2", "c2", "e1"}; err != nil || !slices.Equal(ids(got), want) {
		t.Errorf("short venue: %v %v, want %v", ids(got), err, want)
	}
	if _, err = SelectMarkets(venueWorld(), 10, short, sched.RevealDeadline); arena.ErrorCode(err) != forecast.CodeNotEnoughMarkets {
		t.Errorf("9 events for 10 places: %v", err)
	}
	// MaxPerCategory holds over the round, not per venue.
	capped := rules
	capped.MaxPerCategory = 1
	got, err = SelectMarkets(venueWorld(), 4, capped, sched.RevealDeadline)
	if want := []string{"K-p1a", "K-s1", "c1", "e1"}; err != nil || !slices.Equal(ids(got), want) {
		t.Errorf("one per category: %v %v, want %v", ids(got), err, want)
	}
	// A venue without a share is refused, and counted so.
	only := rules
	only.Venues = map[string]VenueRules{arena.SourcePolymarket: {Share: 1}}
	got, err = SelectMarkets(venueWorld(), 7, only, sched.RevealDeadline)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range got {
		if m.Source != arena.SourcePolymarket {
			t.Errorf("venue without a share selected: %s", m)
		}
	}
	if e, why := only.Eligible(venueWorld()[len(world())], sched.RevealDeadline); e || why != "venue kalshi has no share" {
		t.Errorf("unshared venue: %v %q", e, why)
	}
}

// The rules file of docs/operations.md's section on rounds over several
// venues is complete and valid, and gives the shares it says.
func TestRulesDocExample(t *testing.T) {
	doc, err := os.ReadFile("../../docs/operations.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, _ := strings.Cut(string(doc), "**Rounds over several venues.**")
	m := regexp.MustCompile("(?s)```json\n(.*?)```").FindStringSubmatch(section)
	if m == nil {
		t.Fatal("no rules example in docs/operations.md")
	}
	dec := json.NewDecoder(strings.NewReader(m[1]))
	dec.DisallowUnknownFields()
	var rules Rules
	if err := dec.Decode(&rules); err != nil {
		t.Fatal(err)
	}
	if err := rules.Validate(); err != nil {
		t.Fatal(err)
	}
	if q := rules.Quotas(7); q[arena.SourcePolymarket] != 5 || q[arena.SourceKalshi] != 2 {
		t.Errorf("quotas of 7: %v", q)
	}
}
