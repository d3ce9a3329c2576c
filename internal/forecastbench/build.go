package forecastbench

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
)

// PriceValue marks a price point taken from a resolution set row of a
// market question that had not resolved: ForecastBench reports the market's
// latest value on the row's date instead of an outcome.
const PriceValue arena.PriceSource = "forecastbench_value"

// Identity of imported items. ForecastBench asks each question afresh in
// every question set, with its own freeze value and its own scoring (the
// published leaderboard counts a market question once per question set:
// 623 market items from 428 distinct questions in its 12 sets), so the
// forecast due date is part of every SourceID:
//
//	market question:            <due>:<origin>:<id>                   e.g. 2025-10-26:manifold:K8qazyZJ3tXyuLlzkkyk
//	(dataset question, date):   <due>:<origin>:<id>:<resolution date> e.g. 2025-10-26:fred:DAAA:2025-11-02
//
// EventID is <origin>:<id>, grouping the copies of one upstream question
// across question sets and resolution dates (they are correlated).
func MarketSourceID(due time.Time, origin, id string) string {
	return due.Format(time.DateOnly) + ":" + origin + ":" + id
}

// DatasetSourceID is the SourceID of one (dataset question, resolution date) item.
func DatasetSourceID(due time.Time, origin, id string, resolutionDate time.Time) string {
	return MarketSourceID(due, origin, id) + ":" + resolutionDate.Format(time.DateOnly)
}

// Batch is the markets one import produces, in SourceID order, with what
// was read and skipped.
type Batch struct {
	Markets []*arena.Market
	Read    ReadStats
	Humans  []*HumanSet
	items   []*item
}

// ReadStats counts what the input files held.
type ReadStats struct {
	QuestionSets   int
	Questions      int
	ResolutionSets int
	Rows           int // resolution rows, combination rows included
	// Combination counts skipped combination rows by kind (market, dataset).
	Combination map[string]int
	// Duplicates counts questions or rows that appeared again, identically,
	// in another file with the same forecast due date.
	Duplicates int
}

// item is a market under construction with what is known about it.
type item struct {
	m       *arena.Market
	hasText bool // built from a question (not a placeholder)
	hasRow  bool // a resolution row was applied
	row     Resolution
}

// Build maps parsed question and resolution sets to markets. Questions and
// rows are joined on (forecast due date, source, id[, resolution date]).
// Either list may be empty. now is the import time: it stamps price points
// and decides open vs closed for unresolved markets (closed once the
// upstream close time, or a dataset question's resolution date, has passed).
func Build(qsets []*QuestionSet, rsets []*ResolutionSet, now time.Time) (*Batch, error) {
	b := &Batch{Read: ReadStats{Combination: map[string]int{}}}
	byID := map[string]*item{}
	// Dataset questions by <due>:<origin>:<id>, for rows whose resolution
	// date the question did not list.
	datasetQs := map[string]*Question{}
	add := func(it *item) error {
		if old, ok := byID[it.m.SourceID]; ok {
			if reflect.DeepEqual(old.m, it.m) {
				b.Read.Duplicates++
				return nil
			}
			return arena.Errorf(arena.EINVALID, "forecastbench: question %s appears twice with different content", it.m.SourceID)
		}
		byID[it.m.SourceID] = it
		return nil
	}
	for _, qs := range qsets {
		b.Read.QuestionSets++
		for i := range qs.Questions {
			q := &qs.Questions[i]
			b.Read.Questions++
			if q.Kind() == arena.KindMarket {
				if err := add(&item{m: marketFromQuestion(qs.ForecastDueDate, q, now), hasText: true}); err != nil {
					return nil, err
				}
				continue
			}
			datasetQs[MarketSourceID(qs.ForecastDueDate, q.Source, q.ID)] = q
			for _, rd := range q.ResolutionDates {
				if err := add(&item{m: datasetFromQuestion(qs.ForecastDueDate, q, rd), hasText: true}); err != nil {
					return nil, err
				}
			}
		}
	}
	for _, rs := range rsets {
		b.Read.ResolutionSets++
		for _, r := range rs.Resolutions {
			b.Read.Rows++
			kind, _ := KindOf(r.Source)
			if r.IsCombination() {
				b.Read.Combination[kind]++
				continue
			}
			var sid string
			if kind == arena.KindMarket {
				sid = MarketSourceID(rs.ForecastDueDate, r.Source, r.ID)
			} else {
				sid = DatasetSourceID(rs.ForecastDueDate, r.Source, r.ID, r.ResolutionDate)
			}
			it := byID[sid]
			if it == nil {
				if q := datasetQs[MarketSourceID(rs.ForecastDueDate, r.Source, r.ID)]; q != nil && kind == arena.KindDataset {
					it = &item{m: datasetFromQuestion(rs.ForecastDueDate, q, r.ResolutionDate), hasText: true}
				} else {
					it = &item{m: placeholder(rs.ForecastDueDate, kind, r)}
				}
				byID[sid] = it
			}
			if it.hasRow {
				if reflect.DeepEqual(it.row, r) {
					b.Read.Duplicates++
					continue
				}
				return nil, arena.Errorf(arena.EINVALID, "forecastbench: %s resolved twice with different rows (%+v, %+v)", sid, it.row, r)
			}
			it.hasRow, it.row = true, r
			applyRow(it.m, r, now)
		}
	}
	ids := make([]string, 0, len(byID))
	for id := range byID {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		it := byID[id]
		settle(it.m, now)
		b.items = append(b.items, it)
		b.Markets = append(b.Markets, it.m)
	}
	for _, m := range b.Markets {
		if err := m.Validate(); err != nil {
			return nil, fmt.Errorf("forecastbench: %w", err)
		}
	}
	return b, nil
}

func base(kind, origin, id, sid string) *arena.Market {
	return &arena.Market{
		Source:   arena.SourceForecastBench,
		SourceID: sid,
		Kind:     kind,
		Origin:   origin,
		EventID:  origin + ":" + id,
		Type:     arena.Binary,
		Outcomes: []string{arena.Yes, arena.No},
		Status:   arena.StatusOpen,
	}
}

func binaryPrices(p float64) map[string]float64 {
	return map[string]float64{arena.Yes: p, arena.No: 1 - p}
}

// marketFromQuestion maps a market-source question: the freeze value is
// the benchmark price (FreezeValue, a PriceFreeze point at the freeze time,
// and the market's price until a resolution set says more).
func marketFromQuestion(due time.Time, q *Question, now time.Time) *arena.Market {
	m := base(arena.KindMarket, q.Source, q.ID, MarketSourceID(due, q.Source, q.ID))
	setText(m, q, q.Question)
	m.OpenTime, m.CloseTime = q.MarketOpen, q.MarketClose
	if p, ok := q.FreezeProbability(); ok {
		m.FreezeValue = &p
		m.Prices = binaryPrices(p)
		m.History = []arena.PricePoint{{Outcome: arena.Yes, Time: q.FreezeTime, Price: p, Source: arena.PriceFreeze, FetchedAt: now}}
	}
	return m
}

// datasetFromQuestion maps one (dataset question, resolution date) pair.
// The question's {forecast_due_date} and {resolution_date} placeholders are
// filled in so each item reads on its own. The freeze value of a dataset
// question is a series value, not a probability, so it is not a price and
// FreezeValue stays nil. The item "closes" on its resolution date.
func datasetFromQuestion(due time.Time, q *Question, rd time.Time) *arena.Market {
	m := base(arena.KindDataset, q.Source, q.ID, DatasetSourceID(due, q.Source, q.ID, rd))
	r := strings.NewReplacer("{forecast_due_date}", due.Format(time.DateOnly), "{resolution_date}", rd.Format(time.DateOnly))
	setText(m, q, r.Replace(q.Question))
	m.ResolutionDate, m.CloseTime = rd, rd
	return m
}

func setText(m *arena.Market, q *Question, text string) {
	m.Question = text
	m.Criteria = q.ResolutionCriteria
	m.Background = q.Background
	m.URL = q.URL
	m.FreezeTime = q.FreezeTime
}

// placeholder stands in for a question whose text was not imported (the
// resolution set alone is enough to score constant baselines).
func placeholder(due time.Time, kind string, r Resolution) *arena.Market {
	var m *arena.Market
	if kind == arena.KindMarket {
		m = base(kind, r.Source, r.ID, MarketSourceID(due, r.Source, r.ID))
		m.Question = fmt.Sprintf("%s question %s (forecast due %s)", r.Source, r.ID, due.Format(time.DateOnly))
	} else {
		m = base(kind, r.Source, r.ID, DatasetSourceID(due, r.Source, r.ID, r.ResolutionDate))
		m.Question = fmt.Sprintf("%s question %s (forecast due %s, resolves %s)", r.Source, r.ID,
			due.Format(time.DateOnly), r.ResolutionDate.Format(time.DateOnly))
		m.ResolutionDate, m.CloseTime = r.ResolutionDate, r.ResolutionDate
	}
	return m
}

// applyRow records a resolution row. Outcome policy:
//   - resolved with resolved_to exactly 0 or 1: resolved No or Yes on the row's date;
//   - resolved with a fraction (a market resolved to a probability, or
//     annulled): resolved Void, which scoring excludes — never rounded;
//   - not resolved, market question: no outcome; resolved_to is the market's
//     latest value, kept as the current price and a PriceValue point;
//   - not resolved, dataset question: no outcome, and resolved_to means nothing.
func applyRow(m *arena.Market, r Resolution, now time.Time) {
	switch {
	case r.Resolved && (r.ResolvedTo == 0 || r.ResolvedTo == 1):
		m.Status, m.ResolvedAt = arena.StatusResolved, r.ResolutionDate
		m.Resolution = arena.No
		if r.ResolvedTo == 1 {
			m.Resolution = arena.Yes
		}
	case r.Resolved:
		m.Status, m.ResolvedAt, m.Resolution = arena.StatusResolved, r.ResolutionDate, arena.Void
	case m.Kind == arena.KindMarket:
		m.Prices = binaryPrices(r.ResolvedTo)
		m.History = append(m.History, arena.PricePoint{Outcome: arena.Yes, Time: r.ResolutionDate, Price: r.ResolvedTo, Source: PriceValue, FetchedAt: now})
	}
}

// settle sets the status of an unresolved market from its close time.
func settle(m *arena.Market, now time.Time) {
	if m.Resolution != "" {
		m.Status = arena.StatusResolved
		return
	}
	m.Status = arena.StatusOpen
	if !m.CloseTime.IsZero() && !m.CloseTime.After(now) {
		m.Status = arena.StatusClosed
	}
}

// Merge folds markets already stored (by SourceID) into the batch so that
// a partial import never erases what an earlier one brought: a resolution
// set imported alone keeps the question text, freeze value and times a
// question set import stored, and a question set imported alone keeps the
// outcome and latest value a resolution set import stored. What the batch
// itself read always wins.
func (b *Batch) Merge(existing map[string]*arena.Market, now time.Time) {
	for _, it := range b.items {
		e := existing[it.m.SourceID]
		if e == nil {
			continue
		}
		m := it.m
		if !it.hasText && !e.FreezeTime.IsZero() { // e was built from a question
			m.Question, m.Criteria, m.Background, m.URL = e.Question, e.Criteria, e.Background, e.URL
			m.FreezeTime, m.FreezeValue = e.FreezeTime, e.FreezeValue
			m.OpenTime, m.CloseTime = e.OpenTime, e.CloseTime
			if m.Prices == nil {
				m.Prices = e.Prices
			}
		}
		if !it.hasRow {
			if e.Resolution != "" {
				m.Resolution, m.ResolvedAt = e.Resolution, e.ResolvedAt
			}
			if e.Prices != nil {
				m.Prices = e.Prices
			}
		}
		settle(m, now)
	}
}

// Stats counts items by kind.
type Stats struct {
	Kind       string
	Items      int
	Resolved   int // resolved Yes or No: scoreable
	Void       int // resolved to a fraction: excluded from scoring
	Unresolved int // open or closed
	NoText     int // imported from a resolution set alone (placeholder question)
}

// Count returns the counts for market and dataset items, in that order.
func (b *Batch) Count() []Stats {
	out := []Stats{{Kind: arena.KindMarket}, {Kind: arena.KindDataset}}
	for _, it := range b.items {
		s := &out[0]
		if it.m.Kind == arena.KindDataset {
			s = &out[1]
		}
		s.Items++
		switch it.m.Resolution {
		case "":
			s.Unresolved++
		case arena.Void:
			s.Void++
		default:
			s.Resolved++
		}
		if !it.hasText && it.m.FreezeTime.IsZero() {
			s.NoText++
		}
	}
	return out
}
