package forecastbench

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
)

var now = time.Date(2026, 8, 21, 12, 0, 0, 0, time.UTC)

func mustQS(t *testing.T, s string) *QuestionSet {
	t.Helper()
	set, err := ReadQuestionSet(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func mustRS(t *testing.T, s string) *ResolutionSet {
	t.Helper()
	set, err := ReadResolutionSet(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func bySID(b *Batch) map[string]*arena.Market {
	out := map[string]*arena.Market{}
	for _, m := range b.Markets {
		out[m.SourceID] = m
	}
	return out
}

const (
	manifoldSID = "2025-10-26:manifold:K8qazyZJ3tXyuLlzkkyk"
	polySID     = "2025-10-26:polymarket:0x3e6cb7ad03e2687d0befe8706bb9ac276b3d74c0a8c7e02bf3c6b796e25601c0"
	polyID      = "0x3e6cb7ad03e2687d0befe8706bb9ac276b3d74c0a8c7e02bf3c6b796e25601c0"
)

func TestBuildQuestionsOnly(t *testing.T) {
	b, err := Build([]*QuestionSet{mustQS(t, questionSet("2025-10-26", marketQ, polyQ, datasetQ))}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Markets) != 2+3 {
		t.Fatalf("%d markets, want 2 market questions + 3 dataset dates", len(b.Markets))
	}
	ms := bySID(b)
	m := ms[manifoldSID]
	if m == nil {
		t.Fatalf("no %s in %v", manifoldSID, ms)
	}
	fv := 0.979920031255855
	want := &arena.Market{
		Source: "forecastbench", SourceID: manifoldSID, Kind: "market", Origin: "manifold",
		Question: "Will San Diego FC make the playoffs in 2025?",
		Criteria: "Resolves to the outcome of the question found at https://manifold.markets/x.",
		URL:      "https://manifold.markets/UniversalFC/will-san-diego-fc-make-the-playoffs",
		EventID:  "manifold:K8qazyZJ3tXyuLlzkkyk",
		Type:     arena.Binary, Outcomes: []string{"Yes", "No"},
		Prices:     map[string]float64{"Yes": fv, "No": 1 - fv},
		OpenTime:   time.Date(2023, 11, 16, 18, 37, 14, 0, time.UTC),
		CloseTime:  time.Date(2026, 1, 1, 4, 59, 0, 0, time.UTC),
		Status:     arena.StatusClosed, // closed upstream before now, no resolution known
		FreezeTime: time.Date(2025, 10, 16, 0, 0, 0, 0, time.UTC), FreezeValue: &fv,
		History: []arena.PricePoint{{Outcome: "Yes", Time: time.Date(2025, 10, 16, 0, 0, 0, 0, time.UTC), Price: fv, Source: arena.PriceFreeze, FetchedAt: now}},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("market question\n got %+v\nwant %+v", m, want)
	}
	d := ms["2025-10-26:fred:DAAA:2025-11-25"]
	if d == nil {
		t.Fatal("no dataset item for 2025-11-25")
	}
	if d.Kind != "dataset" || d.Origin != "fred" || d.FreezeValue != nil || d.Prices != nil || len(d.History) != 0 {
		t.Errorf("dataset item %+v", d)
	}
	if wantQ := "Will Moody's Seasoned Aaa Corporate Bond Yield have increased by 2025-11-25 as compared to its value on 2025-10-26?"; d.Question != wantQ {
		t.Errorf("question %q", d.Question)
	}
	if !d.ResolutionDate.Equal(date("2025-11-25")) || !d.CloseTime.Equal(date("2025-11-25")) || d.EventID != "fred:DAAA" {
		t.Errorf("dataset dates/event %+v", d)
	}
	if d.Status != arena.StatusClosed {
		t.Errorf("past resolution date without resolution: status %s, want closed", d.Status)
	}
	// Before the close time the same question is open.
	b2, _ := Build([]*QuestionSet{mustQS(t, questionSet("2025-10-26", marketQ))}, nil, date("2025-10-20"))
	if s := b2.Markets[0].Status; s != arena.StatusOpen {
		t.Errorf("status before close %s", s)
	}
	counts := b.Count()
	if counts[0] != (Stats{Kind: "market", Items: 2, Unresolved: 2}) || counts[1] != (Stats{Kind: "dataset", Items: 3, Unresolved: 3}) {
		t.Errorf("counts %+v", counts)
	}
}

func TestBuildWithResolutions(t *testing.T) {
	qs := mustQS(t, questionSet("2025-10-26", marketQ, polyQ, datasetQ))
	rs := mustRS(t, resolutionSet("2025-10-26",
		row("K8qazyZJ3tXyuLlzkkyk", "manifold", "2025-12-30", "1.0", true),
		row(polyID, "polymarket", "2026-03-01", "0.0346", false),
		row("DAAA", "fred", "2025-11-02", "0.0", true),
		row("DAAA", "fred", "2025-11-25", "1.0", true),
		row(`["DAAA", "K8qazyZJ3tXyuLlzkkyk"]`, "fred", "2025-11-02", "1.0", true),
		row(`["a", "b"]`, "manifold", "2025-12-30", "0.0", false),
	))
	b, err := Build([]*QuestionSet{qs}, []*ResolutionSet{rs}, now)
	if err != nil {
		t.Fatal(err)
	}
	ms := bySID(b)
	if m := ms[manifoldSID]; m.Status != arena.StatusResolved || m.Resolution != arena.Yes || !m.ResolvedAt.Equal(date("2025-12-30")) {
		t.Errorf("resolved market %+v", m)
	}
	p := ms[polySID]
	if p.Status != arena.StatusClosed || p.Resolution != "" {
		t.Errorf("unresolved market: status %s resolution %q", p.Status, p.Resolution)
	}
	if p.Prices[arena.Yes] != 0.0346 || *p.FreezeValue != 0.42 {
		t.Errorf("unresolved market prices %v freeze %v", p.Prices, *p.FreezeValue)
	}
	if len(p.History) != 2 || p.History[1] != (arena.PricePoint{Outcome: "Yes", Time: date("2026-03-01"), Price: 0.0346, Source: PriceValue, FetchedAt: now}) {
		t.Errorf("history %+v", p.History)
	}
	if d := ms["2025-10-26:fred:DAAA:2025-11-02"]; d.Resolution != arena.No || !d.ResolvedAt.Equal(date("2025-11-02")) {
		t.Errorf("dataset 11-02 %+v", d)
	}
	if d := ms["2025-10-26:fred:DAAA:2025-11-25"]; d.Resolution != arena.Yes {
		t.Errorf("dataset 11-25 %+v", d)
	}
	if d := ms["2025-10-26:fred:DAAA:2026-01-24"]; d.Resolution != "" || d.Status != arena.StatusClosed {
		t.Errorf("dataset 01-24 without a row %+v", d)
	}
	if b.Read.Combination["dataset"] != 1 || b.Read.Combination["market"] != 1 || b.Read.Rows != 6 {
		t.Errorf("read %+v", b.Read)
	}
	c := b.Count()
	if c[0] != (Stats{Kind: "market", Items: 2, Resolved: 1, Unresolved: 1}) || c[1] != (Stats{Kind: "dataset", Items: 3, Resolved: 2, Unresolved: 1}) {
		t.Errorf("counts %+v", c)
	}
}

func TestBuildResolutionsOnly(t *testing.T) {
	rs := mustRS(t, resolutionSet("2025-03-02",
		row("1401", "infer", "2025-06-01", "0.0", true),
		row("DAAA", "fred", "2025-03-09", "1.0", true),
		row("x", "manifold", "2025-06-01", "0.25", false),
	))
	b, err := Build(nil, []*ResolutionSet{rs}, now)
	if err != nil {
		t.Fatal(err)
	}
	ms := bySID(b)
	m := ms["2025-03-02:infer:1401"]
	if m == nil || m.Question != "infer question 1401 (forecast due 2025-03-02)" || m.Resolution != arena.No || m.Kind != "market" {
		t.Errorf("placeholder market %+v", m)
	}
	d := ms["2025-03-02:fred:DAAA:2025-03-09"]
	if d == nil || d.Question != "fred question DAAA (forecast due 2025-03-02, resolves 2025-03-09)" || d.Resolution != arena.Yes || !d.ResolutionDate.Equal(date("2025-03-09")) {
		t.Errorf("placeholder dataset %+v", d)
	}
	if u := ms["2025-03-02:manifold:x"]; u.Status != arena.StatusOpen || u.FreezeValue != nil || u.Prices[arena.Yes] != 0.25 {
		t.Errorf("unresolved placeholder %+v", u)
	}
	c := b.Count()
	if c[0] != (Stats{Kind: "market", Items: 2, Resolved: 1, Unresolved: 1, NoText: 2}) || c[1] != (Stats{Kind: "dataset", Items: 1, Resolved: 1, NoText: 1}) {
		t.Errorf("counts %+v", c)
	}
}

// A row for a date the dataset question did not list still gets the
// question's text.
func TestBuildRowForUnlistedDate(t *testing.T) {
	qs := mustQS(t, questionSet("2025-10-26", datasetQ))
	rs := mustRS(t, resolutionSet("2025-10-26", row("DAAA", "fred", "2025-12-01", "1.0", true)))
	b, err := Build([]*QuestionSet{qs}, []*ResolutionSet{rs}, now)
	if err != nil {
		t.Fatal(err)
	}
	m := bySID(b)["2025-10-26:fred:DAAA:2025-12-01"]
	if m == nil || m.Resolution != arena.Yes || !strings.Contains(m.Question, "increased by 2025-12-01 as compared to its value on 2025-10-26") {
		t.Fatalf("item %+v", m)
	}
	if c := b.Count(); c[1].Items != 4 || c[1].NoText != 0 {
		t.Errorf("counts %+v", c)
	}
}

func TestBuildFractionalResolutionIsVoid(t *testing.T) {
	rs := mustRS(t, resolutionSet("2025-03-02",
		row("a", "manifold", "2025-06-01", "0.5", true),
		row("b", "fred", "2025-03-09", "0.73", true),
	))
	b, err := Build(nil, []*ResolutionSet{rs}, now)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range b.Markets {
		if m.Status != arena.StatusResolved || m.Resolution != arena.Void {
			t.Errorf("%s: %s %q, want resolved VOID", m.SourceID, m.Status, m.Resolution)
		}
	}
	if c := b.Count(); c[0].Void != 1 || c[1].Void != 1 || c[0].Resolved+c[1].Resolved != 0 {
		t.Errorf("counts %+v", c)
	}
}

func TestBuildSameQuestionInTwoSetsIsTwoItems(t *testing.T) {
	a := mustQS(t, questionSet("2025-10-26", marketQ))
	b2 := mustQS(t, questionSet("2025-11-09", strings.Replace(marketQ, "0.979920031255855", "0.99", 1)))
	b, err := Build([]*QuestionSet{a, b2}, nil, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Markets) != 2 || b.Markets[0].EventID != b.Markets[1].EventID || *b.Markets[1].FreezeValue != 0.99 {
		t.Fatalf("markets %+v", b.Markets)
	}
}

func TestBuildDuplicates(t *testing.T) {
	qs := mustQS(t, questionSet("2025-10-26", marketQ))
	rs := mustRS(t, resolutionSet("2025-10-26", row("K8qazyZJ3tXyuLlzkkyk", "manifold", "2025-12-30", "1.0", true)))
	b, err := Build([]*QuestionSet{qs, qs}, []*ResolutionSet{rs, rs}, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Markets) != 1 || b.Read.Duplicates != 2 {
		t.Fatalf("%d markets, %d duplicates", len(b.Markets), b.Read.Duplicates)
	}
	other := mustQS(t, questionSet("2025-10-26", strings.Replace(marketQ, "0.979920031255855", "0.5", 1)))
	if _, err := Build([]*QuestionSet{qs, other}, nil, now); err == nil || !strings.Contains(err.Error(), "appears twice with different content") {
		t.Errorf("conflicting questions: %v", err)
	}
	rs2 := mustRS(t, resolutionSet("2025-10-26", row("K8qazyZJ3tXyuLlzkkyk", "manifold", "2025-12-30", "0.0", true)))
	if _, err := Build(nil, []*ResolutionSet{rs, rs2}, now); err == nil || !strings.Contains(err.Error(), "resolved twice") {
		t.Errorf("conflicting rows: %v", err)
	}
}

// A partial import merged with what is stored must give exactly what one
// import of everything gives, in either order.
func TestMergeMatchesFullImport(t *testing.T) {
	qs := []*QuestionSet{mustQS(t, questionSet("2025-10-26", marketQ, polyQ, datasetQ))}
	rs := []*ResolutionSet{mustRS(t, resolutionSet("2025-10-26",
		row("K8qazyZJ3tXyuLlzkkyk", "manifold", "2025-12-30", "1.0", true),
		row(polyID, "polymarket", "2026-03-01", "0.0346", false),
		row("DAAA", "fred", "2025-11-02", "0.0", true),
	))}
	full, err := Build(qs, rs, now)
	if err != nil {
		t.Fatal(err)
	}
	store := func(bs ...*Batch) map[string]*arena.Market {
		st := map[string]*arena.Market{}
		for _, b := range bs {
			for _, m := range b.Markets {
				c := *m
				c.History = nil // not loaded back from the store
				st[m.SourceID] = &c
			}
		}
		return st
	}
	strip := func(ms []*arena.Market) map[string]arena.Market {
		out := map[string]arena.Market{}
		for _, m := range ms {
			c := *m
			c.History = nil
			out[m.SourceID] = c
		}
		return out
	}
	for _, order := range []string{"questions first", "resolutions first"} {
		t.Run(order, func(t *testing.T) {
			qOnly, _ := Build(qs, nil, now)
			rOnly, _ := Build(nil, rs, now)
			first, second := qOnly, rOnly
			if order == "resolutions first" {
				first, second = rOnly, qOnly
			}
			second.Merge(store(first), now)
			merged := store(first, second)
			got := map[string]arena.Market{}
			for k, v := range merged {
				got[k] = *v
			}
			if want := strip(full.Markets); !reflect.DeepEqual(got, want) {
				for k := range want {
					if !reflect.DeepEqual(got[k], want[k]) {
						t.Errorf("%s\n got %+v\nwant %+v", k, got[k], want[k])
					}
				}
			}
		})
	}
	// Re-importing resolutions alone over a full import changes nothing.
	rOnly, _ := Build(nil, rs, now)
	rOnly.Merge(store(full), now)
	for _, m := range rOnly.Markets {
		c := *m
		c.History = nil
		if w := strip(full.Markets)[m.SourceID]; !reflect.DeepEqual(c, w) {
			t.Errorf("re-import of resolutions changed %s\n got %+v\nwant %+v", m.SourceID, c, w)
		}
	}
	if c := rOnly.Count(); c[0].NoText != 0 || c[1].NoText != 0 {
		t.Errorf("merged items still counted without text: %+v", c)
	}
}
