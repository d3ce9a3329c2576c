package metaculus

import (
	"encoding/json"
	"math"
	"testing"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/metaculus/metaculustest"
	"github.com/forecast-arena/arena/internal/venue"
	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// obj is an open binary post with its question's fields set replaced (a
// nil value removes a field); the key "post" replaces the post's own.
func obj(t testing.TB, set map[string]any) []byte {
	t.Helper()
	q := map[string]any{
		"id": 12, "post_id": 10, "title": "Will it?", "type": "binary", "status": "open", "resolution": nil,
		"open_time": "2026-01-01T00:00:00Z", "scheduled_close_time": "2026-03-01T00:00:00Z", "actual_close_time": "2026-03-01T00:00:00Z",
		"resolution_criteria": "Yes if it does.", "default_aggregation_method": "recency_weighted",
		"aggregations": map[string]any{"recency_weighted": map[string]any{"latest": map[string]any{"centers": []float64{0.25}}}},
	}
	p := map[string]any{"id": 10, "title": "Will it?", "status": "open", "question": q}
	for k, v := range set {
		switch {
		case k == "post":
			for pk, pv := range v.(map[string]any) {
				if pv == nil {
					delete(p, pk)
				} else {
					p[pk] = pv
				}
			}
		case v == nil:
			delete(q, k)
		default:
			q[k] = v
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeRules(t *testing.T) {
	res := func(r string) map[string]any {
		return map[string]any{"status": "resolved", "resolution": r, "actual_resolve_time": "2026-03-02T00:00:00Z"}
	}
	for _, c := range []struct {
		name   string
		set    map[string]any
		raw    string
		skip   venue.SkipReason
		status arena.MarketStatus
		res    string
		amb    bool
		yes    float64
		check  func(t *testing.T, m *arena.Market)
	}{
		{name: "open with its community prediction", status: arena.StatusOpen, yes: 0.25},
		{name: "hidden: no price", set: map[string]any{"aggregations": map[string]any{"recency_weighted": map[string]any{"latest": nil}}}, status: arena.StatusOpen, yes: math.NaN()},
		{name: "the default aggregation first", set: map[string]any{"default_aggregation_method": "unweighted",
			"aggregations": map[string]any{"recency_weighted": map[string]any{"latest": map[string]any{"centers": []float64{0.25}}},
				"unweighted": map[string]any{"latest": map[string]any{"centers": []float64{0.4}}}}}, status: arena.StatusOpen, yes: 0.4},
		{name: "closed", set: map[string]any{"status": "closed"}, status: arena.StatusClosed, yes: 0.25},
		{name: "yes", set: res("yes"), status: arena.StatusResolved, res: arena.Yes, yes: 1},
		{name: "no", set: res("no"), status: arena.StatusResolved, res: arena.No, yes: 0},
		{name: "annulled", set: res("annulled"), status: arena.StatusResolved, res: arena.Void, yes: math.NaN()},
		{name: "ambiguous", set: res("ambiguous"), status: arena.StatusResolved, res: arena.Void, yes: math.NaN()},
		{name: "a numeric resolution of a binary question", set: res("1.0"), status: arena.StatusClosed, amb: true, yes: 0.25},
		{name: "resolved without a resolution", set: map[string]any{"status": "resolved"}, status: arena.StatusClosed, amb: true, yes: 0.25},
		{name: "closed early: the actual close time", set: map[string]any{"actual_close_time": "2026-02-01T00:00:00Z"}, status: arena.StatusOpen, yes: 0.25,
			check: func(t *testing.T, m *arena.Market) {
				if !m.CloseTime.Equal(time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)) {
					t.Errorf("close %v", m.CloseTime)
				}
			}},
		{name: "the post's status without the question's", set: map[string]any{"status": nil, "post": map[string]any{"status": "closed"}}, status: arena.StatusClosed, yes: 0.25},
		{name: "upcoming", set: map[string]any{"status": "upcoming"}, skip: venue.SkipUnopened},
		{name: "pending curation", set: map[string]any{"status": nil, "post": map[string]any{"status": "pending"}}, skip: venue.SkipUnknownStatus},
		{name: "a question of another post", set: map[string]any{"post_id": 11}, skip: venue.SkipIDMismatch},
		{name: "a multiple-choice question", set: map[string]any{"type": "multiple_choice"}, skip: venue.SkipNotBinary},
		{name: "a group post", set: map[string]any{"post": map[string]any{"question": nil, "group_of_questions": map[string]any{"id": 3}}}, skip: venue.SkipGroupPost},
		{name: "a notebook", set: map[string]any{"post": map[string]any{"question": nil, "notebook": map[string]any{"id": 3}}}, skip: venue.SkipGroupPost},
		{name: "no id", set: map[string]any{"post": map[string]any{"id": nil}}, skip: venue.SkipMissingID},
		{name: "a negative id", set: map[string]any{"post": map[string]any{"id": -4}}, skip: venue.SkipMissingID},
		{name: "no title", set: map[string]any{"title": "", "post": map[string]any{"title": " "}}, skip: venue.SkipMissingQuestion},
		{name: "a prediction above 1", set: map[string]any{"aggregations": map[string]any{"recency_weighted": map[string]any{"latest": map[string]any{"centers": []float64{3}}}}}, skip: venue.SkipBadPrice},
		{name: "an unreadable time", set: map[string]any{"open_time": "yesterday"}, skip: venue.SkipBadDate},
		{name: "a status of the wrong type", set: map[string]any{"status": 3}, skip: venue.SkipBadField},
		{name: "not an object", raw: `[10]`, skip: venue.SkipInvalidJSON},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := []byte(c.raw)
			if c.raw == "" {
				raw = obj(t, c.set)
			}
			e, err := decode(raw, fetchedAt)
			var m *arena.Market
			if err == nil {
				m = e.M
			}
			if m = (venuetest.Want{Skip: c.skip, Status: c.status, Resolution: c.res, Ambiguous: c.amb, Yes: c.yes}).Check(t, m, err); m == nil {
				return
			}
			if m.SourceID != "10" {
				t.Errorf("id %s", m.SourceID)
			}
			if c.check != nil {
				c.check(t, m)
			}
		})
	}
}

// Any bytes as a post: a valid market or a typed skip; its history's
// prediction at any instant is a probability.
func FuzzDecode(f *testing.F) {
	bodies := append(venuetest.RecordedSeeds(Venue), metaculustest.DocumentedSeeds()...)
	var ps []venuetest.Payload
	for _, b := range bodies {
		ps = append(ps, venuetest.Payload{Body: b})
	}
	posts, _ := metaculustest.Posts(ps)
	for _, p := range posts {
		f.Add([]byte(p.Raw))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		e, err := decode(raw, fetchedAt)
		if err != nil {
			if _, ok := err.(*venue.SkipError); !ok {
				t.Fatalf("untyped error %T %v", err, err)
			}
			return
		}
		if err := e.M.Validate(); err != nil || e.M.Source != Venue || e.M.Type != arena.Binary {
			t.Fatalf("invalid market %+v: %v", e.M, err)
		}
		for _, at := range []time.Time{time.Unix(0, 0), time.Unix(1775865600, 0), fetchedAt} {
			if p, ok := e.q.at(at); ok && !(p >= 0 && p <= 1) {
				t.Fatalf("prediction %v at %v", p, at)
			}
		}
	})
}
