package metaculus

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/venue"
)

// post is one Metaculus post as GET /api/posts/ and /api/posts/{id}/
// serve it: a page of the site, whose id is the one in its URL, holding
// one question (whose own id differs) or a group of them, a conditional
// pair or a notebook. Fields the arena does not use are not decoded;
// docs/operations.md lists what is read and why.
type post struct {
	ID                 json.Number     `json:"id"`
	Title              string          `json:"title"`
	Slug               string          `json:"slug"`
	Status             string          `json:"status"`
	OpenTime           string          `json:"open_time"`
	ScheduledCloseTime string          `json:"scheduled_close_time"`
	NrForecasters      venue.Number    `json:"nr_forecasters"`
	Projects           projects        `json:"projects"`
	Question           *question       `json:"question"`
	Group              json.RawMessage `json:"group_of_questions"`
	Conditional        json.RawMessage `json:"conditional"`
	Notebook           json.RawMessage `json:"notebook"`
}

type projects struct {
	Category []struct {
		Name string `json:"name"`
	} `json:"category"`
}

type question struct {
	ID                 json.Number `json:"id"`
	PostID             json.Number `json:"post_id"`
	Title              string      `json:"title"`
	Type               string      `json:"type"`
	Status             string      `json:"status"`
	Resolution         *string     `json:"resolution"`
	OpenTime           string      `json:"open_time"`
	ScheduledCloseTime string      `json:"scheduled_close_time"`
	ActualCloseTime    string      `json:"actual_close_time"`
	ActualResolveTime  string      `json:"actual_resolve_time"`
	ResolutionSetTime  string      `json:"resolution_set_time"`
	ResolutionCriteria string      `json:"resolution_criteria"`
	FinePrint          string      `json:"fine_print"`
	Description        string      `json:"description"`
	DefaultAggregation string      `json:"default_aggregation_method"`
	// Aggregations holds the community prediction by method
	// (recency_weighted, unweighted, …): the latest and, when asked, its
	// history. latest is null while the prediction is hidden.
	Aggregations map[string]aggregation `json:"aggregations"`
}

type aggregation struct {
	Latest  *aggregate  `json:"latest"`
	History []aggregate `json:"history"`
}

// aggregate is the community prediction over [start_time, end_time)
// (epoch seconds; end_time null while it holds); centers[0] is the
// median forecast of Yes for a binary question.
type aggregate struct {
	StartTime venue.Number   `json:"start_time"`
	EndTime   venue.Number   `json:"end_time"`
	Centers   []venue.Number `json:"centers"`
}

// entry is a decoded, mapped market with the listing fact Sync needs.
type entry struct {
	M        *arena.Market
	Eligible bool // open for forecasting
	q        *question
}

// Question statuses. A post's status is its question's, or a curation
// state ("approved" before it opens, "pending", "rejected", "deleted").
var statuses = map[string]arena.MarketStatus{"open": arena.StatusOpen, "closed": arena.StatusClosed, "resolved": arena.StatusResolved}

// decode decodes one post and maps its question to an arena.Market;
// fetched stamps its price points. Errors are *venue.SkipError.
func decode(raw []byte, fetched time.Time) (*entry, error) {
	var p post
	if err := venue.Decode(Venue, raw, &p, salvage); err != nil {
		return nil, err
	}
	return p.toEntry(fetched.UTC())
}

func salvage(raw []byte) string {
	var p struct {
		ID json.Number `json:"id"`
	}
	_ = json.Unmarshal(raw, &p)
	id, _ := postID(p.ID)
	return id
}

// postID reads a post or question id: a positive integer.
func postID(n json.Number) (string, bool) {
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil || v <= 0 {
		return "", false
	}
	return strconv.FormatInt(v, 10), true
}

func (p *post) toEntry(fetched time.Time) (*entry, error) {
	id, ok := postID(p.ID)
	if !ok {
		return nil, venue.Skip(Venue, venue.SkipMissingID, "", "post id %.40q", p.ID)
	}
	q := p.Question
	if q == nil {
		kind := "no question"
		switch {
		case len(p.Group) > 0 && string(p.Group) != "null":
			kind = "a group of questions"
		case len(p.Conditional) > 0 && string(p.Conditional) != "null":
			kind = "a conditional pair"
		case len(p.Notebook) > 0 && string(p.Notebook) != "null":
			kind = "a notebook"
		}
		return nil, venue.Skip(Venue, venue.SkipGroupPost, id, "%s", kind)
	}
	// The market is the post, named by the id in its URL; its question's
	// own id differs, and names the post it belongs to.
	if q.PostID != "" {
		if qp, ok := postID(q.PostID); !ok || qp != id {
			return nil, venue.Skip(Venue, venue.SkipIDMismatch, id, "question %s says it is of post %.40q", q.ID, q.PostID)
		}
	}
	if t := strings.ToLower(strings.TrimSpace(q.Type)); t != "binary" {
		return nil, venue.Skip(Venue, venue.SkipNotBinary, id, "question type %.40q", q.Type)
	}
	status := strings.ToLower(venue.Or(q.Status, p.Status))
	st, known := statuses[status]
	switch {
	case status == "upcoming" || status == "approved":
		return nil, venue.Skip(Venue, venue.SkipUnopened, id, "status %q", status)
	case !known:
		return nil, venue.Skip(Venue, venue.SkipUnknownStatus, id, "status %.40q", status)
	}
	question := venue.Text(venue.Or(p.Title, q.Title), venue.MaxQuestion)
	if question == "" {
		return nil, venue.Skip(Venue, venue.SkipMissingQuestion, id, "empty title")
	}
	var openT, closeT, scheduledT, resolvedT, setT time.Time
	if err := venue.Times(Venue, id, venue.Time, venue.TimeField[string]{Name: "open_time", Value: venue.Or(q.OpenTime, p.OpenTime), Dst: &openT},
		venue.TimeField[string]{Name: "actual_close_time", Value: q.ActualCloseTime, Dst: &closeT},
		venue.TimeField[string]{Name: "scheduled_close_time", Value: venue.Or(q.ScheduledCloseTime, p.ScheduledCloseTime), Dst: &scheduledT},
		venue.TimeField[string]{Name: "actual_resolve_time", Value: q.ActualResolveTime, Dst: &resolvedT},
		venue.TimeField[string]{Name: "resolution_set_time", Value: q.ResolutionSetTime, Dst: &setT}); err != nil {
		return nil, err
	}
	cp, hasCP, err := q.latest()
	if err != nil {
		return nil, venue.Skip(Venue, venue.SkipBadPrice, id, "%v", err)
	}
	m := &arena.Market{
		Source: arena.SourceMetaculus, SourceID: id, Kind: arena.KindMarket,
		Question:   question,
		Criteria:   venue.Text(strings.TrimSpace(q.ResolutionCriteria)+"\n\n"+strings.TrimSpace(q.FinePrint), venue.MaxCriteria),
		Background: venue.Text(q.Description, venue.MaxCriteria),
		URL:        "https://www.metaculus.com/questions/" + id + "/",
		Slug:       venue.Text(p.Slug, venue.MaxLabel),
		Type:       arena.Binary, Outcomes: []string{arena.Yes, arena.No},
		// The actual close time is set while a question is open (to the
		// scheduled one) and moves when it closes early.
		OpenTime: openT, CloseTime: venue.FirstSet(closeT, scheduledT),
		Status: st,
	}
	for _, c := range p.Projects.Category {
		if m.Category = venue.Text(c.Name, venue.MaxLabel); m.Category != "" {
			break
		}
	}
	if hasCP {
		m.Prices = venue.BinaryPrices(cp)
		m.History = []arena.PricePoint{venue.YesPoint(fetched, cp, arena.PriceCommunity, fetched)}
	}
	if st == arena.StatusResolved {
		res := ""
		if q.Resolution != nil {
			res = strings.ToLower(strings.TrimSpace(*q.Resolution))
		}
		resolve(m, res, venue.FirstSet(resolvedT, setT, m.CloseTime, fetched), fetched)
	}
	if err := m.Validate(); err != nil {
		return nil, venue.Skip(Venue, venue.SkipInvalid, id, "%v", err)
	}
	return &entry{M: m, Eligible: st == arena.StatusOpen, q: q}, nil
}

// resolve applies a resolved question's resolution: yes and no resolve
// it; annulled and ambiguous (the question's premise failed, or its
// answer cannot be told) resolve it VOID. Any other resolution of a
// binary question leaves it closed and ambiguous, for the oracle.
func resolve(m *arena.Market, resolution string, at, fetched time.Time) {
	switch resolution {
	case "yes":
		venue.Settle(m, arena.Yes, 1, true, at, fetched)
	case "no":
		venue.Settle(m, arena.No, 0, true, at, fetched)
	case "annulled", "ambiguous":
		venue.Settle(m, arena.Void, 0, false, at, fetched)
	default:
		m.Status, m.Ambiguous = arena.StatusClosed, true
	}
}

// aggregation is the question's community prediction by its default
// method, else the recency-weighted one, else the unweighted one.
func (q *question) aggregation() aggregation {
	for _, name := range []string{q.DefaultAggregation, "recency_weighted", "unweighted"} {
		if a, ok := q.Aggregations[name]; ok && name != "" {
			return a
		}
	}
	return aggregation{}
}

// latest is the community prediction of Yes now; ok is false while it
// is hidden (latest null, before cp_reveal_time).
func (q *question) latest() (float64, bool, error) {
	a := q.aggregation()
	if a.Latest == nil || len(a.Latest.Centers) == 0 {
		return 0, false, nil
	}
	return a.Latest.Centers[0].Probability("community prediction")
}

// at is the community prediction of Yes in force at t, from the history:
// the aggregate whose [start_time, end_time) holds t.
func (q *question) at(t time.Time) (float64, bool) {
	for _, g := range q.aggregation().History {
		start, err1 := venue.Seconds(g.StartTime)
		end, err2 := venue.Seconds(g.EndTime)
		if err1 != nil || err2 != nil || start.IsZero() || len(g.Centers) == 0 || t.Before(start) || !end.IsZero() && !t.Before(end) {
			continue
		}
		if p, ok, err := g.Centers[0].Probability("center"); err == nil && ok {
			return p, true
		}
	}
	return 0, false
}
