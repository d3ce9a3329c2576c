package web

import (
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/tlog"
)

// RegisterLog serves the tamper-evident log: the signed tree head, the
// entries, and inclusion and consistency proofs.
func (s *Server) RegisterLog(l *tlog.Log) {
	s.Log = l
	s.handle("GET /api/v1/log/sth", s.logHead)
	s.handle("GET /api/v1/log/sths", s.logHeads)
	s.handle("GET /api/v1/log/entries", s.logEntries)
	s.handle("GET /api/v1/log/proof/inclusion", s.logInclusion)
	s.handle("GET /api/v1/log/proof/consistency", s.logConsistency)
}

// maxLogPage bounds the entries one request returns.
const maxLogPage = 1000

func queryUint(r *http.Request, name string, def uint64, required bool) (uint64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		if required {
			return 0, arena.Rejectf(arena.EINVALID, "log_range", "query parameter %s is required", name)
		}
		return def, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, arena.Rejectf(arena.EINVALID, "log_range", "query parameter %s=%q is not a non-negative integer", name, v)
	}
	return n, nil
}

func (s *Server) logHead(w http.ResponseWriter, r *http.Request) error {
	h, err := s.Log.SignedHead(r.Context())
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, h)
	return nil
}

func (s *Server) logHeads(w http.ResponseWriter, r *http.Request) error {
	hs, err := s.Log.Heads(r.Context())
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"heads": hs})
	return nil
}

// LogEntryJSON is a log entry on the wire; Leaf is the exact leaf whose
// RFC 6962 hash is LeafHash.
type LogEntryJSON struct {
	Index    uint64          `json:"index"`
	Kind     string          `json:"kind"`
	Leaf     json.RawMessage `json:"leaf"`
	LeafHash string          `json:"leaf_hash"`
}

func (s *Server) logEntries(w http.ResponseWriter, r *http.Request) error {
	start, err := queryUint(r, "start", 0, false)
	if err != nil {
		return err
	}
	end, err := queryUint(r, "end", start+maxLogPage, false)
	if err != nil {
		return err
	}
	if end < start || end-start > maxLogPage {
		return arena.Rejectf(arena.EINVALID, "log_range", "at most %d entries per request, start ≤ end", maxLogPage)
	}
	es, err := s.Log.Entries(r.Context(), start, end)
	if err != nil {
		return err
	}
	out := make([]LogEntryJSON, len(es))
	for i, e := range es {
		out[i] = LogEntryJSON{Index: e.Index, Kind: e.Kind, Leaf: e.Data, LeafHash: hex.EncodeToString(e.LeafHash)}
	}
	WriteJSON(w, http.StatusOK, map[string]any{"entries": out})
	return nil
}

func hexes(p [][]byte) []string {
	out := make([]string, len(p))
	for i, h := range p {
		out[i] = hex.EncodeToString(h)
	}
	return out
}

func (s *Server) logInclusion(w http.ResponseWriter, r *http.Request) error {
	index, err := queryUint(r, "index", 0, true)
	if err != nil {
		return err
	}
	size, err := queryUint(r, "tree_size", 0, true)
	if err != nil {
		return err
	}
	p, err := s.Log.Inclusion(r.Context(), index, size)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"index": index, "tree_size": size, "proof": hexes(p)})
	return nil
}

func (s *Server) logConsistency(w http.ResponseWriter, r *http.Request) error {
	first, err := queryUint(r, "first", 0, true)
	if err != nil {
		return err
	}
	second, err := queryUint(r, "second", 0, true)
	if err != nil {
		return err
	}
	p, err := s.Log.Consistency(r.Context(), first, second)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusOK, map[string]any{"first": first, "second": second, "proof": hexes(p)})
	return nil
}
