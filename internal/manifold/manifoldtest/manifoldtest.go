// Package manifoldtest is a local Manifold for tests: the /v0 endpoints
// the arena reads (GET /search-markets, /market/{id}, /bets) on a loopback
// server, speaking Manifold's wire format (arrays of LiteMarket,
// offset pages, epoch-millisecond times), with switches for rate limits
// and outages. Replay serves the recorded payloads of
// ../shared/data/venues/manifold, and the bodies written from Manifold's
// documentation for shapes no recording holds.
package manifoldtest

import (
	"cmp"
	"embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// Server is the local Manifold. Change its fields before the first
// request, or later inside Update.
type Server struct {
	venuetest.Base

	Markets []json.RawMessage            // GET /search-markets, in order
	Single  map[string]json.RawMessage   // GET /market/{id}
	Bets    map[string][]json.RawMessage // GET /bets?contractId=…: each market's bets
	PageCap int                          // the largest page served, so tests page (default 2)
}

// New starts an empty local Manifold; it stops when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{Single: map[string]json.RawMessage{}, Bets: map[string][]json.RawMessage{}, PageCap: 2}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /search-markets", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("filter") != "open" || q.Get("contractType") != "BINARY" {
			venuetest.Error(w, "the arena lists open binary markets", http.StatusBadRequest)
			return
		}
		limit, err1 := strconv.Atoi(q.Get("limit"))
		offset, err2 := strconv.Atoi(cmp.Or(q.Get("offset"), "0"))
		if err1 != nil || err2 != nil || limit < 0 || limit > 1000 || offset < 0 {
			venuetest.Error(w, "bad limit or offset", http.StatusBadRequest)
			return
		}
		// The filters are checked, not applied: what a recording holds
		// (multiple-choice markets, polls) reaches the sync, which must
		// skip it itself.
		lo := min(offset, len(s.Markets))
		hi := min(lo+min(limit, max(s.PageCap, 1)), len(s.Markets))
		venuetest.JSON(w, append([]json.RawMessage{}, s.Markets[lo:hi]...))
	})
	mux.HandleFunc("GET /market/{id}", func(w http.ResponseWriter, r *http.Request) {
		m, ok := s.Single[r.PathValue("id")]
		if !ok {
			venuetest.Error(w, "Contract not found", http.StatusNotFound)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(m)
	})
	mux.HandleFunc("GET /bets", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		limit, err := strconv.Atoi(cmp.Or(q.Get("limit"), "1000"))
		if err != nil || limit < 0 || limit > 1000 {
			venuetest.Error(w, "bad limit", http.StatusBadRequest)
			return
		}
		before := int64(1) << 62
		if b := q.Get("beforeTime"); b != "" {
			if before, err = strconv.ParseInt(b, 10, 64); err != nil {
				venuetest.Error(w, "bad beforeTime", http.StatusBadRequest)
				return
			}
		}
		// Bets before beforeTime, newest first, as Manifold orders them.
		var out []json.RawMessage
		for _, b := range s.Bets[q.Get("contractId")] {
			if createdTime(b) < before {
				out = append(out, b)
			}
		}
		slices.SortStableFunc(out, func(a, b json.RawMessage) int { return cmp.Compare(createdTime(b), createdTime(a)) })
		venuetest.JSON(w, append([]json.RawMessage{}, out[:min(limit, len(out))]...))
	})
	s.Start(t, mux)
	return s
}

func createdTime(b json.RawMessage) int64 {
	var v struct {
		CreatedTime int64 `json:"createdTime"`
	}
	_ = json.Unmarshal(b, &v)
	return v.CreatedTime
}

// Shape is what a Manifold payload holds.
type Shape string

// The shapes of Manifold's answers.
const (
	ShapeMarkets Shape = "markets" // GET /search-markets or /markets: an array of LiteMarket
	ShapeMarket  Shape = "market"  // GET /market/{id}: a FullMarket
	ShapeBets    Shape = "bets"    // GET /bets: an array of Bet
)

// Classify says which answer a payload is.
func Classify(body json.RawMessage) (Shape, error) {
	if list, ok := venuetest.Objects(body, ""); ok {
		if len(list) > 0 && venuetest.Field(list[0], "probAfter") != nil {
			return ShapeBets, nil
		}
		return ShapeMarkets, nil
	}
	if venuetest.Field(body, "question") != nil {
		return ShapeMarket, nil
	}
	return "", fmt.Errorf("not a Manifold answer the arena knows: %.80s", body)
}

// Recorded is one market object of a payload.
type Recorded struct {
	File     string
	Raw      json.RawMessage
	ID       string
	Resolved bool
	Close    time.Time
}

// Markets returns the market objects of the payloads.
func Markets(ps []venuetest.Payload) ([]Recorded, error) {
	var out []Recorded
	for _, p := range ps {
		shape, err := Classify(p.Body)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", p.File, err)
		}
		var raws []json.RawMessage
		switch shape {
		case ShapeMarkets:
			raws, _ = venuetest.Objects(p.Body, "")
		case ShapeMarket:
			raws = []json.RawMessage{p.Body}
		}
		for _, raw := range raws {
			var m struct {
				ID         string `json:"id"`
				IsResolved bool   `json:"isResolved"`
				CloseTime  int64  `json:"closeTime"`
			}
			_ = json.Unmarshal(raw, &m)
			out = append(out, Recorded{File: p.File, Raw: raw, ID: m.ID, Resolved: m.IsResolved, Close: time.UnixMilli(m.CloseTime).UTC()})
		}
	}
	return out, nil
}

// OpenTwin returns a recorded market as Manifold listed it before it
// resolved: isResolved false, without its resolution, resolution time and
// resolution probability; every other field as recorded.
func OpenTwin(r Recorded) (json.RawMessage, error) {
	if !r.Resolved {
		return r.Raw, nil
	}
	return venuetest.Edit(r.Raw, map[string]any{"isResolved": false, "resolution": nil, "resolutionTime": nil, "resolutionProbability": nil})
}

// Replay is a Server that plays payloads back as a live Manifold would
// show them to two successive syncs:
//
//   - the listing phase (NewReplay): GET /search-markets lists every
//     market, and GET /market/{id} answers it, the resolved ones as
//     their OpenTwin;
//   - the refresh phase (RefreshPhase): GET /search-markets lists only
//     the markets recorded unresolved that close after the phase's
//     instant, so the others drop out and a sync re-reads them, and GET
//     /market/{id} answers each market as recorded.
//
// A market recorded twice is answered as its first recording; GET /bets
// answers the recorded bets.
type Replay struct {
	*Server
	Markets []Recorded
	single  map[string]json.RawMessage
}

// NewReplay starts a Replay of ps in its listing phase.
func NewReplay(t testing.TB, ps []venuetest.Payload) *Replay {
	t.Helper()
	ms, err := Markets(ps)
	if err != nil {
		t.Fatal(err)
	}
	r := &Replay{Server: New(t), Markets: ms, single: map[string]json.RawMessage{}}
	twins, bets := map[string]json.RawMessage{}, map[string][]json.RawMessage{}
	var listed []json.RawMessage
	for _, m := range ms {
		twin, err := OpenTwin(m)
		if err != nil {
			t.Fatalf("%s: %s: %v", m.File, m.ID, err)
		}
		if _, dup := r.single[m.ID]; !dup {
			r.single[m.ID], twins[m.ID] = m.Raw, twin
		}
		listed = append(listed, twin)
	}
	for _, p := range ps {
		if shape, _ := Classify(p.Body); shape == ShapeBets {
			list, _ := venuetest.Objects(p.Body, "")
			for _, b := range list {
				var v struct {
					ContractID string `json:"contractId"`
				}
				_ = json.Unmarshal(b, &v)
				bets[v.ContractID] = append(bets[v.ContractID], b)
			}
		}
	}
	r.Update(func() { r.Server.Markets, r.Single, r.Bets = listed, twins, bets })
	return r
}

// RefreshPhase lists only the markets recorded unresolved that still
// trade at now, and answers every market as recorded.
func (r *Replay) RefreshPhase(now time.Time) {
	var listed []json.RawMessage
	for _, m := range r.Markets {
		if !m.Resolved && m.Close.After(now) {
			listed = append(listed, m.Raw)
		}
	}
	r.Update(func() { r.Server.Markets, r.Single = listed, r.single })
}

//go:embed testdata/documented/*.json
var documented embed.FS

// Documented returns the bodies written from Manifold's documentation for
// shapes no recording holds (resolved markets, a whole market, bets), each
// labelled with the page it follows.
func Documented(t testing.TB) []venuetest.Payload {
	return venuetest.Documented(t, documented, "testdata/documented")
}

// DocumentedSeeds returns the documented bodies, for fuzz seeds.
func DocumentedSeeds() [][]byte { return venuetest.DocumentedBodies(documented, "testdata/documented") }
