package web

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"math"
	"net/http"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/web/openapi"
)

// registerLog serves the tamper-evident log's entries, and inclusion and
// consistency proofs between the trees of its checkpoints. The log's
// signed head is its C2SP checkpoint, served with its tiles by
// tlog.Publisher's handler under /log/ (mounted beside the API).
func (s *Server) registerLog() {
	s.handle("GET /api/v1/log/entries", s.logEntries)
	s.handle("GET /api/v1/log/proof/inclusion", s.logInclusion)
	s.handle("GET /api/v1/log/proof/consistency", s.logConsistency)
}

// Response bodies of the log routes.
type (
	LogEntriesJSON struct {
		Entries []LogEntryJSON `json:"entries"`
	}
	LogInclusionJSON struct {
		Index    uint64   `json:"index"`
		TreeSize uint64   `json:"tree_size"`
		Proof    []string `json:"proof"`
	}
	LogConsistencyJSON struct {
		First  uint64   `json:"first"`
		Second uint64   `json:"second"`
		Proof  []string `json:"proof"`
	}
)

func init() {
	apiOps = append(apiOps,
		openapi.Op{Method: "GET", Path: "/api/v1/log/entries", ID: "listLogEntries", Tag: tagLog, Summary: "Log entries",
			Desc: "Log entries [start, end), at most 1000: each leaf and its RFC 6962 leaf hash (a commit or reveal of a round not triggered yet by its hash alone); " +
				"400 log_range for a range past the bound or reversed.", Query: []openapi.Param{
				openapi.Int("start", 0, math.MaxInt64, "0", "0", "index of the first entry"),
				openapi.Int("end", 0, math.MaxInt64, "", "10", "index after the last entry (default: start + 1000)")},
			Response: LogEntriesJSON{}},
		openapi.Op{Method: "GET", Path: "/api/v1/log/proof/inclusion", ID: "getInclusionProof", Tag: tagLog, Summary: "An inclusion proof",
			Desc: "The RFC 6962 inclusion proof of entry index in the tree of tree_size (the log's signed head is its C2SP checkpoint at /log/checkpoint); 400 unless index < tree_size ≤ the log's size.", Query: []openapi.Param{
				openapi.Int("index", 0, math.MaxInt64, "", "0", "index of the entry").Require(),
				openapi.Int("tree_size", 1, math.MaxInt64, "", "1", "size of the tree (a checkpoint's, from /log/checkpoint), above index").Require()},
			Response: LogInclusionJSON{}},
		openapi.Op{Method: "GET", Path: "/api/v1/log/proof/consistency", ID: "getConsistencyProof", Tag: tagLog, Summary: "A consistency proof",
			Desc: "The RFC 6962 consistency proof between the trees of sizes first and second; 400 unless first ≤ second ≤ the log's size.", Query: []openapi.Param{
				openapi.Int("first", 0, math.MaxInt64, "", "1", "size of the older tree").Require(),
				openapi.Int("second", 0, math.MaxInt64, "", "1", "size of the newer tree, at least first").Require()},
			Response: LogConsistencyJSON{}},
	)
}

// maxLogPage bounds the entries one request returns.
const maxLogPage = 1000

// LogEntryJSON is a log entry on the wire; Leaf is the exact leaf whose
// RFC 6962 hash is LeafHash.
type LogEntryJSON struct {
	Index uint64 `json:"index"`
	Kind  string `json:"kind"`
	// Leaf is null while Sealed: a commit or reveal of a round whose
	// outcomes are not triggered yet is published by its hash only.
	Leaf     json.RawMessage `json:"leaf"`
	LeafHash string          `json:"leaf_hash"`
	Sealed   bool            `json:"sealed,omitempty"`
}

func (s *Server) logEntries(w http.ResponseWriter, r *http.Request) error {
	start, _ := queryInt(r, "start")
	end, given := queryInt(r, "end")
	if !given {
		end = start + maxLogPage
	}
	if end < start || end-start > maxLogPage {
		return arena.Rejectf(arena.EINVALID, "log_range", "at most %d entries per request, start ≤ end", maxLogPage)
	}
	es, err := s.log.Entries(r.Context(), uint64(start), uint64(end))
	if err != nil {
		return err
	}
	out := make([]LogEntryJSON, len(es))
	sealed := map[uint64]bool{} // round id → not triggered yet
	for i, e := range es {
		out[i] = LogEntryJSON{Index: e.Index, Kind: e.Kind, Leaf: e.Data, LeafHash: hex.EncodeToString(e.LeafHash)}
		hide, err := s.sealedEntry(r.Context(), e.Kind, e.Data, sealed)
		if err != nil {
			return err
		}
		if hide {
			out[i].Leaf, out[i].Sealed = nil, true
		}
	}
	return s.writeJSON(w, r, LogEntriesJSON{Entries: out})
}

// sealedEntry reports whether an entry's leaf must wait for its round's
// trigger (rounds.Service.Sealed); without the forecast track, it does.
func (s *Server) sealedEntry(ctx context.Context, kind string, leaf []byte, sealed map[uint64]bool) (bool, error) {
	if s.forecast == nil {
		_, sealable, _ := forecast.SealedUntilTrigger(kind, leaf)
		return sealable, nil
	}
	return s.forecast.Sealed(ctx, kind, leaf, sealed)
}

func hexes(p [][]byte) []string {
	out := make([]string, len(p))
	for i, h := range p {
		out[i] = hex.EncodeToString(h)
	}
	return out
}

func (s *Server) logInclusion(w http.ResponseWriter, r *http.Request) error {
	i, _ := queryInt(r, "index")
	n, _ := queryInt(r, "tree_size")
	index, size := uint64(i), uint64(n)
	p, err := s.log.Inclusion(r.Context(), index, size)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, LogInclusionJSON{Index: index, TreeSize: size, Proof: hexes(p)})
}

func (s *Server) logConsistency(w http.ResponseWriter, r *http.Request) error {
	a, _ := queryInt(r, "first")
	b, _ := queryInt(r, "second")
	first, second := uint64(a), uint64(b)
	p, err := s.log.Consistency(r.Context(), first, second)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, LogConsistencyJSON{First: first, Second: second, Proof: hexes(p)})
}
