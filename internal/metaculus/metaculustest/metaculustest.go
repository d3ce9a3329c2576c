// Package metaculustest is a local Metaculus for tests: the posts API the
// arena reads (GET /posts/ and /posts/{id}/) on a loopback server,
// speaking Metaculus's wire format (offset pages of {count, next,
// previous, results}, posts holding their question), refusing requests
// without its token, with switches for rate limits and outages. Replay
// serves the recorded payloads of ../shared/data/venues/metaculus, and
// the bodies written from Metaculus's documentation for shapes no
// recording holds.
package metaculustest

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// Token is the API token the local Metaculus accepts.
const Token = "local-metaculus-token"

// Server is the local Metaculus. Change its fields before the first
// request, or later inside Update.
type Server struct {
	venuetest.Base

	Posts   []json.RawMessage          // GET /posts/?statuses=open&forecast_type=binary, in order
	Single  map[string]json.RawMessage // GET /posts/{id}/
	PageCap int                        // the largest page served, so tests page (default 2)
}

// New starts an empty local Metaculus; it stops when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{Single: map[string]json.RawMessage{}, PageCap: 2}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /posts/", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("statuses") != "open" || q.Get("forecast_type") != "binary" {
			venuetest.Error(w, "the arena lists open binary questions", http.StatusBadRequest)
			return
		}
		limit, err1 := strconv.Atoi(q.Get("limit"))
		offset, err2 := strconv.Atoi(cmp.Or(q.Get("offset"), "0"))
		if err1 != nil || err2 != nil || limit <= 0 || limit > 100 || offset < 0 {
			venuetest.Error(w, "bad limit or offset", http.StatusBadRequest)
			return
		}
		// The filters are checked, not applied: what a recording holds
		// reaches the sync, which must skip what it cannot read itself.
		lo := min(offset, len(s.Posts))
		hi := min(lo+min(limit, max(s.PageCap, 1)), len(s.Posts))
		var next *string
		if hi < len(s.Posts) {
			q.Set("offset", strconv.Itoa(hi))
			u := (&url.URL{Scheme: "http", Host: r.Host, Path: r.URL.Path, RawQuery: q.Encode()}).String()
			next = &u
		}
		venuetest.JSON(w, map[string]any{"count": len(s.Posts), "next": next, "previous": nil, "results": append([]json.RawMessage{}, s.Posts[lo:hi]...)})
	})
	mux.HandleFunc("GET /posts/{id}/", func(w http.ResponseWriter, r *http.Request) {
		p, ok := s.Single[r.PathValue("id")]
		if !ok {
			venuetest.Error(w, "No Post matches the given query.", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(p)
	})
	s.Start(t, auth(mux))
	return s
}

// auth refuses a request without the token, as Metaculus does.
func auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Token "+Token {
			venuetest.Error(w, "Authentication credentials were not provided.", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Recorded is one post of a payload.
type Recorded struct {
	File   string
	Raw    json.RawMessage
	ID     string
	Status string // the question's status, else the post's, lower case
}

// Open reports whether the post takes forecasts as recorded.
func (r Recorded) Open() bool { return r.Status == "open" }

// Posts returns the posts of the payloads: a page {results: […]}, a bare
// list of posts, or one post (GET /posts/{id}/).
func Posts(ps []venuetest.Payload) ([]Recorded, error) {
	var out []Recorded
	for _, p := range ps {
		raws, ok := venuetest.Objects(p.Body, "results")
		if !ok {
			if venuetest.Field(p.Body, "id") == nil {
				return nil, fmt.Errorf("%s: not a Metaculus answer the arena knows: %.80s", p.File, p.Body)
			}
			raws = []json.RawMessage{p.Body}
		}
		for _, raw := range raws {
			var v struct {
				ID       json.Number `json:"id"`
				Status   string      `json:"status"`
				Question *struct {
					Status string `json:"status"`
				} `json:"question"`
			}
			if err := json.Unmarshal(raw, &v); err != nil {
				return nil, fmt.Errorf("%s: %w", p.File, err)
			}
			st := v.Status
			if v.Question != nil && v.Question.Status != "" {
				st = v.Question.Status
			}
			out = append(out, Recorded{File: p.File, Raw: raw, ID: v.ID.String(), Status: strings.ToLower(st)})
		}
	}
	return out, nil
}

// OpenTwin returns a recorded post as Metaculus listed it while it took
// forecasts: post and question open and unresolved, without their
// resolution and its times; every other field as recorded. A post
// recorded open, or not yet open, is returned unchanged.
func OpenTwin(r Recorded) (json.RawMessage, error) {
	if r.Open() || r.Status == "upcoming" || r.Status == "approved" || r.Status == "" {
		return r.Raw, nil
	}
	q := venuetest.Field(r.Raw, "question")
	if q == nil {
		return venuetest.Edit(r.Raw, map[string]any{"status": "open", "resolved": false})
	}
	twinQ, err := venuetest.Edit(q, map[string]any{"status": "open", "resolution": nil, "actual_resolve_time": nil, "resolution_set_time": nil})
	if err != nil {
		return nil, err
	}
	return venuetest.Edit(r.Raw, map[string]any{"status": "open", "resolved": false, "actual_resolve_time": nil, "question": json.RawMessage(twinQ)})
}

// Replay is a Server that plays payloads back as a live Metaculus would
// show them to two successive syncs:
//
//   - the listing phase (NewReplay): GET /posts/ lists every post, and
//     GET /posts/{id}/ answers it, the closed and resolved ones as their
//     OpenTwin;
//   - the refresh phase (RefreshPhase): GET /posts/ lists only the posts
//     recorded open, so the others drop out and a sync re-reads them,
//     and GET /posts/{id}/ answers each post as recorded.
type Replay struct {
	*Server
	Posts  []Recorded
	single map[string]json.RawMessage
}

// NewReplay starts a Replay of ps in its listing phase.
func NewReplay(t testing.TB, ps []venuetest.Payload) *Replay {
	t.Helper()
	posts, err := Posts(ps)
	if err != nil {
		t.Fatal(err)
	}
	r := &Replay{Server: New(t), Posts: posts, single: map[string]json.RawMessage{}}
	twins := map[string]json.RawMessage{}
	var listed []json.RawMessage
	for _, p := range posts {
		twin, err := OpenTwin(p)
		if err != nil {
			t.Fatalf("%s: post %s: %v", p.File, p.ID, err)
		}
		if _, dup := r.single[p.ID]; !dup {
			r.single[p.ID], twins[p.ID] = p.Raw, twin
		}
		listed = append(listed, twin)
	}
	r.Update(func() { r.Server.Posts, r.Single = listed, twins })
	return r
}

// RefreshPhase lists only the posts recorded open and answers each post
// as recorded.
func (r *Replay) RefreshPhase() {
	var listed []json.RawMessage
	for _, p := range r.Posts {
		if p.Open() {
			listed = append(listed, p.Raw)
		}
	}
	r.Update(func() { r.Server.Posts, r.Single = listed, r.single })
}

//go:embed testdata/documented/*.json
var documented embed.FS

// Documented returns the bodies written from Metaculus's documentation
// for shapes no recording holds (resolved, annulled and closed questions,
// a revealed community prediction with its history, a group post), each
// labelled with the page it follows.
func Documented(t testing.TB) []venuetest.Payload {
	return venuetest.Documented(t, documented, "testdata/documented")
}

// DocumentedSeeds returns the documented bodies, for fuzz seeds.
func DocumentedSeeds() [][]byte { return venuetest.DocumentedBodies(documented, "testdata/documented") }
