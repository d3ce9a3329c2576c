// Package kalshitest is a local Kalshi for tests: the trade API v2
// endpoints the arena reads (GET /markets, /events, /markets/{ticker},
// /series/{s}/markets/{t}/candlesticks) on a loopback server, speaking
// Kalshi's wire format (cursor pages, {"market": …} envelopes), with
// switches for rate limits and outages. Replay serves the recorded
// payloads of ../shared/data/venues/kalshi, and the bodies written from
// Kalshi's documentation for shapes no recording holds.
package kalshitest

import (
	"embed"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/forecast-arena/arena/internal/venue/venuetest"
)

// Server is the local Kalshi. Change its fields before the first
// request, or later inside Update.
type Server struct {
	venuetest.Base

	Markets []json.RawMessage          // GET /markets?status=open, in order
	Events  []json.RawMessage          // GET /events?status=open&with_nested_markets=true, each with its markets
	Single  map[string]json.RawMessage // GET /markets/{ticker}: the market object
	Candles map[string]json.RawMessage // "SERIES/TICKER" → the candlesticks body
	PageCap int                        // the largest page served, so tests page (default 2)
}

// New starts an empty local Kalshi; it stops when t ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{Single: map[string]json.RawMessage{}, Candles: map[string]json.RawMessage{}, PageCap: 2}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /markets", func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Get("status") != "open" || q.Get("mve_filter") != "exclude" {
			venuetest.Error(w, "the arena lists open markets without parlays", http.StatusBadRequest)
			return
		}
		// mve_filter is checked but not applied: the parlays a recording
		// holds reach the sync, which must skip them itself.
		s.page(w, r, "markets", s.Markets)
	})
	mux.HandleFunc("GET /events", func(w http.ResponseWriter, r *http.Request) {
		if q := r.URL.Query(); q.Get("status") != "open" || q.Get("with_nested_markets") != "true" {
			venuetest.Error(w, "the arena lists open events with their markets", http.StatusBadRequest)
			return
		}
		s.page(w, r, "events", s.Events)
	})
	mux.HandleFunc("GET /markets/{ticker}", func(w http.ResponseWriter, r *http.Request) {
		m, ok := s.Single[r.PathValue("ticker")]
		if !ok {
			venuetest.Error(w, "market not found", http.StatusNotFound)
			return
		}
		venuetest.JSON(w, map[string]json.RawMessage{"market": m})
	})
	mux.HandleFunc("GET /series/{series}/markets/{ticker}/candlesticks", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		if q.Get("start_ts") == "" || q.Get("end_ts") == "" || q.Get("period_interval") == "" {
			venuetest.Error(w, "start_ts, end_ts and period_interval are required", http.StatusBadRequest)
			return
		}
		b, ok := s.Candles[r.PathValue("series")+"/"+r.PathValue("ticker")]
		if !ok {
			b = json.RawMessage(`{"ticker":` + strconv.Quote(r.PathValue("ticker")) + `,"candlesticks":[]}`)
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	})
	s.Start(t, mux)
	return s
}

// page serves a cursor page of all under key: the cursor is the offset of
// the next page, "" after the last, as Kalshi's opaque cursor is.
func (s *Server) page(w http.ResponseWriter, r *http.Request, key string, all []json.RawMessage) {
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	if err != nil || limit <= 0 {
		venuetest.Error(w, "bad limit", http.StatusBadRequest)
		return
	}
	offset := 0
	if c := q.Get("cursor"); c != "" {
		n, ok := strings.CutPrefix(c, "next-")
		if offset, err = strconv.Atoi(n); !ok || err != nil || offset < 0 {
			venuetest.Error(w, "bad cursor", http.StatusBadRequest)
			return
		}
	}
	lo := min(offset, len(all))
	hi := min(lo+min(limit, max(s.PageCap, 1)), len(all))
	cursor := ""
	if hi < len(all) {
		cursor = "next-" + strconv.Itoa(hi)
	}
	items := all[lo:hi]
	if items == nil {
		items = []json.RawMessage{}
	}
	venuetest.JSON(w, map[string]any{key: items, "cursor": cursor})
}

//go:embed testdata/documented/*.json
var documented embed.FS

// Documented returns the bodies written from Kalshi's documentation for
// shapes no recording holds (a settled market, the legacy integer-cent
// form), each labelled with the page it follows.
func Documented(t testing.TB) []venuetest.Payload {
	return venuetest.Documented(t, documented, "testdata/documented")
}

// DocumentedSeeds returns the documented bodies, for fuzz seeds.
func DocumentedSeeds() [][]byte { return venuetest.DocumentedBodies(documented, "testdata/documented") }
