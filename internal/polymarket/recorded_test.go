package polymarket

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
	"github.com/forecast-arena/arena/internal/shareddata"
)

// The contract suite: real Gamma and CLOB payloads recorded by other
// projects (../shared/data/polymarket, read in place, never copied), and
// what the arena makes of each.

const nautilus = polymarkettest.NautilusData

// recordedWant is what the arena makes of one recorded Gamma market: a
// market with these facts, or a skip for a named reason.
type recordedWant struct {
	file, event, id string // event: the recorded /events entry it sits in
	skip            SkipReason

	status     arena.MarketStatus
	resolution string
	ambiguous  bool
	outcomes   []string
	prices     []float64 // aligned with outcomes
	tokens     []string  // aligned with outcomes
	close      string    // endDate, RFC 3339
	resolved   string    // closedTime, RFC 3339; "" unless resolved
	category   string
	eventID    string
	eventSlug  string
	volume     float64
	eligible   bool // listed by a sync: active, not closed or archived, with volume
}

var yesNo = []string{"Yes", "No"}

// recordedMarkets states the outcome of every recorded Gamma market.
var recordedMarkets = []recordedWant{
	// Legacy market 12, closed in 2020 at ["0","0"]: no outcome is worth
	// anything, so the winner is unknown: closed and ambiguous, for the
	// oracle. Gamma's answer with its event (cascadian) and without it
	// (nautilus_trader).
	{file: "cascadian/biden-market-raw-response.json", id: "12",
		status: arena.StatusClosed, ambiguous: true, outcomes: yesNo, prices: []float64{0, 0},
		tokens: []string{"53135072462907880191400140706440867753044989936304433583131786753949599718775", "60869871469376321574904667328762911501870754872924453995477779862968218702336"},
		close:  "2020-11-04T00:00:00Z", category: "US-current-affairs", eventID: "4690", eventSlug: "will-joe-biden-get-coronavirus-before-the-election", volume: 32257.45},
	{file: nautilus + "gamma_market_closed_zero_zero_legacy.json", id: "12",
		status: arena.StatusClosed, ambiguous: true, outcomes: yesNo, prices: []float64{0, 0},
		tokens: []string{"53135072462907880191400140706440867753044989936304433583131786753949599718775", "60869871469376321574904667328762911501870754872924453995477779862968218702336"},
		close:  "2020-11-04T00:00:00Z", category: "US-current-affairs", volume: 32257.45},

	// Five open markets of one event (no category, no tags: none).
	{file: "guzus-dr-manhattan/polymarket_markets.json", id: "540817",
		status: arena.StatusOpen, outcomes: yesNo, prices: []float64{0.51, 0.49},
		tokens: []string{"98022490269692409998126496127597032490334070080325855126491859374983463996227", "53831553061883006530739877284105938919721408776239639687877978808906551086026"},
		close:  "2026-07-31T12:00:00Z", eventID: "23784", eventSlug: "what-will-happen-before-gta-vi", volume: 832995.125818007, eligible: true},
	{file: "guzus-dr-manhattan/polymarket_markets.json", id: "540818",
		status: arena.StatusOpen, outcomes: yesNo, prices: []float64{0.51, 0.49},
		tokens: []string{"88275040060084773376557187972215267513049848642895776801789297917961077894224", "94376205816022955542979635542279932967359915765455578534002478996104754801969"},
		close:  "2026-07-31T12:00:00Z", eventID: "23784", eventSlug: "what-will-happen-before-gta-vi", volume: 742163.5754899461, eligible: true},
	{file: "guzus-dr-manhattan/polymarket_markets.json", id: "540819",
		status: arena.StatusOpen, outcomes: yesNo, prices: []float64{0.495, 0.505},
		tokens: []string{"90435811253665578014957380826505992530054077692143838383981805324273750424057", "92388629082681805622801622703528982922543286352927708208755887536971583436902"},
		close:  "2026-07-31T12:00:00Z", eventID: "23784", eventSlug: "what-will-happen-before-gta-vi", volume: 11604921.919033712, eligible: true},
	{file: "guzus-dr-manhattan/polymarket_markets.json", id: "540820",
		status: arena.StatusOpen, outcomes: yesNo, prices: []float64{0.505, 0.495},
		tokens: []string{"108999723207897941876452935557011604067917389120996960199512481363958770540884", "64533579809297525579033609963634939501013332859992608996100633472507000251907"},
		close:  "2026-07-31T12:00:00Z", eventID: "23784", eventSlug: "what-will-happen-before-gta-vi", volume: 671451.7376070076, eligible: true},
	{file: "guzus-dr-manhattan/polymarket_markets.json", id: "540843",
		status: arena.StatusOpen, outcomes: yesNo, prices: []float64{0.505, 0.495},
		tokens: []string{"21695138873211375451055566770107682325494206727818897067665810321709249824909", "17516427576383382756368467656206258206490015951115433065318503962238754362428"},
		close:  "2026-07-31T12:00:00Z", eventID: "23784", eventSlug: "what-will-happen-before-gta-vi", volume: 1870990.3078720653, eligible: true},

	// An open 5-minute crypto market: Up/Down is multi-outcome, not binary.
	{file: nautilus + "gamma_market.json", id: "1557558",
		status: arena.StatusOpen, outcomes: []string{"Up", "Down"}, prices: []float64{0.505, 0.495},
		tokens: []string{"104239898038807136052399800151408521467737075933964991162589336683346093173875", "71183960810705820955071415844881728181970340514894896943812046065452395013351"},
		close:  "2026-03-12T09:25:00Z", eventID: "260654", eventSlug: "btc-updown-5m-1773307200", volume: 9.999997, eligible: true},

	// Closed, UMA resolved (its umaResolutionStatuses history says
	// "proposed"), priced 0/1: resolved No at closedTime. It has neither
	// volumeNum nor volume, so a sync would not list it.
	{file: nautilus + "gamma_market_closed_binary_accepting_false.json", id: "1460332",
		status: arena.StatusResolved, resolution: "No", outcomes: yesNo, prices: []float64{0, 1},
		tokens: []string{"108872296183993054938831082799825620165440189659433018108548854929333464287226", "89711174926330519158043401581181146613785179104141808554061413232025882707365"},
		close:  "2028-01-01T05:00:00Z", resolved: "2026-03-19T23:20:15Z"},

	// Closed (by its recorders, still accepting orders) without a UMA
	// status, priced 1/0: the price rule resolves it Yes at closedTime.
	{file: nautilus + "gamma_market_closed_binary_accepting_true.json", id: "1812085",
		status: arena.StatusResolved, resolution: "Yes", outcomes: yesNo, prices: []float64{1, 0},
		tokens: []string{"22978793223071892222859460592277435458011604214087068523744633723809814935807", "108268928354766371660560153450121076545199284531791348447523752861907448942629"},
		close:  "2027-12-31T00:00:00Z", resolved: "2026-05-09T02:07:01Z", volume: 192817.4904490008},

	// Legacy scalar market 43 (Long/Short settled at 0.584/0.416).
	{file: nautilus + "gamma_market_closed_nonbinary_legacy.json", id: "43", skip: SkipScalar},

	// Resolved sports markets: team names are outcomes (multi-outcome).
	{file: nautilus + "gamma_market_sports_market_map_handicap.json", id: "1878156",
		status: arena.StatusResolved, resolution: "FaZe", outcomes: []string{"FaZe", "illwill"}, prices: []float64{1, 0},
		tokens: []string{"47614327674948554650113338538363888150821499552213302298732875136319525931648", "43341502537527404243762615980214558223125429784876480380195817335671883698477"},
		close:  "2026-04-05T21:10:00Z", resolved: "2026-04-05T19:38:35Z", eventID: "346898", eventSlug: "cs2-faze-ill-2026-04-05", volume: 16.991},
	{file: nautilus + "gamma_market_sports_market_money_line.json", id: "1878152",
		status: arena.StatusResolved, resolution: "FaZe", outcomes: []string{"FaZe", "illwill"}, prices: []float64{1, 0},
		tokens: []string{"89972346417086440659189114668296975440208562769200022591480064439842896371398", "90510951248295963583566830308208121966213462932425555585207203442852394431867"},
		close:  "2026-04-05T21:10:00Z", resolved: "2026-04-05T19:37:33Z", eventID: "346898", eventSlug: "cs2-faze-ill-2026-04-05", volume: 26458.188064999995},

	// The negRisk, negRiskAugmented event: its named markets are ordinary
	// binary markets; the category is the event's first tag.
	{file: nautilus + "gamma_event.json", event: "30829", id: "559657",
		status: arena.StatusOpen, outcomes: yesNo, prices: []float64{0.0105, 0.9895},
		tokens: []string{"60590045489347122735554346200880179420435533609307820342798544098823516727807", "76005700027045000587004110133818166617024719626220722682005164003117993034812"},
		close:  "2028-11-07T00:00:00Z", category: "World Elections", eventID: "30829", eventSlug: "democratic-presidential-nominee-2028", volume: 12232699.615479222, eligible: true},
	{file: nautilus + "gamma_event.json", event: "30829", id: "559659",
		status: arena.StatusOpen, outcomes: yesNo, prices: []float64{0.0145, 0.9855},
		tokens: []string{"57761428076807364758801249497410455358987881775226117256631754592198558850468", "64300336035644500626313522990854070672468621241744347587785777226296613235598"},
		close:  "2028-11-07T00:00:00Z", category: "World Elections", eventID: "30829", eventSlug: "democratic-presidential-nominee-2028", volume: 6313171.174692103, eligible: true},

	// The one event of a public search answer.
	{file: nautilus + "search_response.json", event: "246060", id: "1500056",
		status: arena.StatusOpen, outcomes: yesNo, prices: []float64{0.9995, 0.0005},
		tokens: []string{"82555365063909823996695225073951686953962263586871703887873293639797300021122", "114864044085275704824767724161446505770691378478296635109394628126577576954599"},
		close:  "2026-03-11T16:00:00Z", category: "Bitcoin", eventID: "246060", eventSlug: "bitcoin-above-on-march-11", volume: 1089793.929661999, eligible: true},
}

// decodeRecorded decodes a recorded market as a sync would meet it: a
// market inside a recorded event with that event as its listing event.
func decodeRecorded(t *testing.T, r polymarkettest.Recorded, events map[string]*gammaEvent) (*gammaEntry, error) {
	t.Helper()
	var ev *gammaEventRef
	if r.EventID != "" {
		e := events[r.EventID]
		if e == nil {
			t.Fatalf("%s: market of unknown event %s", r.File, r.EventID)
		}
		ev = &e.gammaEventRef
	}
	return decodeMarket(r.Raw, ev, decodeNow)
}

func recordedEvents(t *testing.T, evs []polymarkettest.RecordedEvent) map[string]*gammaEvent {
	t.Helper()
	out := map[string]*gammaEvent{}
	for _, e := range evs {
		ev, err := decodeEvent(e.Raw)
		if err != nil {
			t.Fatalf("%s: recorded event does not decode: %v", e.File, err)
		}
		out[string(ev.ID)] = ev
	}
	return out
}

func rfc3339(t *testing.T, s string) time.Time {
	t.Helper()
	if s == "" {
		return time.Time{}
	}
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// Every recorded Gamma market, bare or inside an event, decodes to the
// stated market or is skipped for the stated reason.
func TestRecordedGammaMarkets(t *testing.T) {
	recs, evs := polymarkettest.Recordings(t)
	events := recordedEvents(t, evs)
	if len(recs) != len(recordedMarkets) {
		t.Errorf("%d recorded markets, %d stated outcomes", len(recs), len(recordedMarkets))
	}
	for _, r := range recs {
		var id struct{ ID string }
		if err := json.Unmarshal(r.Raw, &id); err != nil {
			t.Fatalf("%s: %v", r.File, err)
		}
		i := slices.IndexFunc(recordedMarkets, func(w recordedWant) bool {
			return w.file == r.File && w.id == id.ID && w.event == r.EventID
		})
		if i < 0 {
			t.Errorf("%s: market %s has no stated outcome", r.File, id.ID)
			continue
		}
		w := recordedMarkets[i]
		t.Run(filepath.Base(w.file)+"/"+w.id, func(t *testing.T) {
			e, err := decodeRecorded(t, r, events)
			if w.skip != "" {
				if err == nil || skipReason(err) != w.skip {
					t.Fatalf("got %v, want skip %s", err, w.skip)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			m := e.M
			wantPrices := map[string]float64{}
			for i, o := range w.outcomes {
				wantPrices[o] = w.prices[i]
			}
			got := []any{m.SourceID, m.Status, m.Resolution, m.Ambiguous, m.Outcomes, m.Type, m.Prices, m.TokenIDs,
				m.CloseTime, m.ResolvedAt, m.Category, m.EventID, m.EventSlug, m.Volume, e.Eligible}
			want := []any{w.id, w.status, w.resolution, w.ambiguous, w.outcomes, arena.TypeOf(w.outcomes), wantPrices, w.tokens,
				rfc3339(t, w.close), rfc3339(t, w.resolved), w.category, w.eventID, w.eventSlug, w.volume, w.eligible}
			names := []string{"id", "status", "resolution", "ambiguous", "outcomes", "type", "prices", "tokens",
				"close", "resolved", "category", "event id", "event slug", "volume", "eligible"}
			for i := range got {
				if !reflect.DeepEqual(got[i], want[i]) {
					t.Errorf("%s: got %v, want %v", names[i], got[i], want[i])
				}
			}
		})
	}
}

// recordedOther says what the arena does with every recorded file that
// holds no Gamma market: each is checked by the test named, or is an
// answer of an endpoint the arena never calls.
var recordedOther = map[string]string{
	nautilus + "gamma_tags.json": "TestRecordedTags",
	"nautilus_trader/tests/integration_tests/adapters/polymarket/resources/http_responses/markets.json": "TestRecordedCLOBWinners",
	"nautilus_trader/tests/integration_tests/adapters/polymarket/resources/http_responses/market.json":  "TestRecordedCLOBWinners",
	nautilus + "clob_market_closed_binary_accepting_false.json":                                         "TestRecordedCLOBWinners",
	nautilus + "clob_market_closed_binary_accepting_true.json":                                          "TestRecordedCLOBWinners",
	"nautilus_trader/tests/integration_tests/adapters/polymarket/resources/http_responses/book.json":    "not read: the arena takes CLOB prices from /midpoints, not from order books",
	nautilus + "clob_book_response.json":                                                                "not read: the arena takes CLOB prices from /midpoints, not from order books",
	"nautilus_trader/tests/integration_tests/adapters/polymarket/resources/http_responses/trades.json":  "not read: the arena reads no trades",
	nautilus + "data_api_trades_response.json":                                                          "not read: the arena does not call the data API",
	nautilus + "data_api_positions_response.json":                                                       "not read: the arena does not call the data API",
	nautilus + "clob_fee_rate_response_zero.json":                                                       "not read: the arena places no orders, so pays no fees",
	nautilus + "clob_fee_rate_response_nonzero.json":                                                    "not read: the arena places no orders, so pays no fees",
}

// Every recorded file is accounted for: a Gamma file with stated market
// outcomes, or one of recordedOther. A file added to ../shared/data fails
// here until someone states what the arena does with it.
func TestRecordedFilesAccounted(t *testing.T) {
	dir := shareddata.Path(t, "polymarket")
	known := map[string]bool{}
	for _, f := range slices.Concat(polymarkettest.RecordedMarketFiles, polymarkettest.RecordedEventFiles) {
		known[f] = true
		if !slices.ContainsFunc(recordedMarkets, func(w recordedWant) bool { return w.file == f }) {
			t.Errorf("%s: no stated market outcome", f)
		}
	}
	for f := range recordedOther {
		known[f] = true
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		n++
		if !known[filepath.ToSlash(rel)] {
			t.Errorf("%s: recorded file without a stated outcome", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n != len(known) {
		t.Errorf("%d recorded files, %d accounted for", n, len(known))
	}
}

// The recorded /tags answer: tags are objects whose label the arena takes
// as a category.
func TestRecordedTags(t *testing.T) {
	b, err := os.ReadFile(shareddata.Path(t, "polymarket", nautilus+"gamma_tags.json"))
	if err != nil {
		t.Fatal(err)
	}
	var tags []gammaTag
	if err := json.Unmarshal(b, &tags); err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, tg := range tags {
		labels = append(labels, tg.Label)
	}
	want := []string{"Health and Human Services", "Sweeden", "attorney general", "Madrid Open", "Crypto Summit"}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("labels %q, want %q", labels, want)
	}
}

// The CLOB marks the winning token of a settled market (tokens[].winner);
// the arena reads resolutions from Gamma's prices instead. On every recorded
// CLOB market that marks a winner, the price rule alone finds the same
// one, so asking the CLOB as well would add nothing; the table states what
// the rule makes of each recorded CLOB market.
func TestRecordedCLOBWinners(t *testing.T) {
	const httpDir = "nautilus_trader/tests/integration_tests/adapters/polymarket/resources/http_responses/"
	type clobMarket struct {
		ConditionID string `json:"condition_id"`
		Closed      bool   `json:"closed"`
		Tokens      []struct {
			Outcome string  `json:"outcome"`
			Price   float64 `json:"price"`
			Winner  bool    `json:"winner"`
		} `json:"tokens"`
	}
	read := func(file string, v any) {
		b, err := os.ReadFile(shareddata.Path(t, "polymarket", file))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	var page struct {
		Data       []clobMarket `json:"data"`
		NextCursor string       `json:"next_cursor"`
	}
	read(httpDir+"markets.json", &page)
	if len(page.Data) != 100 || page.NextCursor != "MTAw" {
		t.Errorf("CLOB page: %d markets, next cursor %q", len(page.Data), page.NextCursor)
	}
	all := page.Data
	for _, f := range []string{httpDir + "market.json", nautilus + "clob_market_closed_binary_accepting_false.json", nautilus + "clob_market_closed_binary_accepting_true.json"} {
		var m clobMarket
		read(f, &m)
		all = append(all, m)
	}
	type tally struct {
		status    arena.MarketStatus
		ambiguous bool
		flagged   bool // the CLOB marks a winner
	}
	got := map[tally]int{}
	for _, m := range all {
		var outcomes, winners []string
		var prices []float64
		for _, tk := range m.Tokens {
			outcomes, prices = append(outcomes, tk.Outcome), append(prices, tk.Price)
			if tk.Winner {
				winners = append(winners, tk.Outcome)
			}
		}
		r := Resolve(m.Closed, "", outcomes, prices, nil)
		if len(winners) > 0 && (len(winners) != 1 || r.Resolution != winners[0]) {
			t.Errorf("%s: the CLOB marks %q the winner, the price rule says %+v", m.ConditionID, winners, r)
		}
		got[tally{r.Status, r.Ambiguous, len(winners) > 0}]++
	}
	want := map[tally]int{
		{arena.StatusResolved, false, true}:  26, // settled; the CLOB's winner agrees
		{arena.StatusResolved, false, false}: 54, // settled at ≥ 0.99 / ≤ 0.01; the CLOB marks no winner
		{arena.StatusClosed, true, false}:    18, // closed at 0/0: ambiguous
		{arena.StatusClosed, false, false}:   2,  // closed at 0.64/0.36 and 0.81/0.19: awaiting resolution
		{arena.StatusOpen, false, false}:     3,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("CLOB markets by the price rule: got %v, want %v", got, want)
	}
}
