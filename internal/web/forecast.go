package web

import (
	"net/http"
	"strconv"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/internal/rounds"
)

// registerForecast mounts the forecast track's API.
func (s *Server) registerForecast() {
	svc := s.forecast
	s.handle("GET /api/v1/domain", s.domain)
	s.handle("GET /api/v1/rounds", s.listRounds)
	s.handle("GET /api/v1/leaderboard/venues", s.venueBoard)
	s.handle("GET /api/v1/rounds/{id}", read(s, roundID, svc.Round))
	s.handle("GET /api/v1/rounds/{id}/scores", read(s, roundID, svc.Scores))
	s.handle("GET /api/v1/agents/{address}/nonce", s.nonce)
	s.handle("GET /api/v1/agents/{address}/profile", read(s, address, svc.Profile))
	s.handle("POST /api/v1/agents/{address}/profile", submit(address, http.StatusOK, svc.SetProfile))
	s.handle("POST /api/v1/rounds/{id}/commits", submit(roundID, http.StatusCreated, svc.Commit))
	s.handle("POST /api/v1/rounds/{id}/reveals", submit(roundID, http.StatusCreated, svc.Reveal))
	s.handle("POST /api/v1/rounds/{id}/reasoning", s.uploadReasoning)
	s.handle("GET /api/v1/rounds/{id}/reasoning/{agent}", s.getReasoning)
	s.handle("POST /api/v1/admin/rounds", s.admin(s.createRound))
	s.handle("POST /api/v1/admin/rounds/{id}/trigger", s.admin(s.triggerRound))
	s.handle("POST /api/v1/admin/markets/{id}/resolve", s.admin(s.resolveMarket))
	s.registerExport()
}

// venueBoard serves GET /api/v1/leaderboard/venues?window=&category=:
// the forecast track's board of each venue side by side, with the
// combined score weighing the venues equally.
func (s *Server) venueBoard(w http.ResponseWriter, r *http.Request) error {
	f, err := leaderboardFilter(r)
	if err != nil {
		return err
	}
	b, err := s.forecast.VenueBoard(r.Context(), f)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, b)
}

func roundID(r *http.Request) (uint64, error) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, arena.Rejectf(arena.ENOTFOUND, forecast.CodeRoundNotFound, "round %q not found", r.PathValue("id"))
	}
	return id, nil
}

// address is the agent address in the path, as given (the service
// parses it).
func address(r *http.Request) (string, error) { return r.PathValue("address"), nil }

func (s *Server) domain(w http.ResponseWriter, r *http.Request) error {
	d := s.forecast.Domain
	return s.writeJSON(w, r, forecast.DomainJSON{Name: forecast.DomainName, Version: forecast.DomainVersion,
		ChainID: d.ChainID, VerifyingContract: d.Contract.Hex()})
}

// listRounds serves GET /api/v1/rounds?status=&limit=&cursor=, newest
// first; a Link header with rel="next" names the next page.
func (s *Server) listRounds(w http.ResponseWriter, r *http.Request) error {
	limit, _ := queryInt(r, "limit")
	cursor, _ := queryInt(r, "cursor")
	out, err := s.forecast.RoundPage(r.Context(), r.URL.Query().Get("status"), uint64(cursor), int(limit))
	if err != nil {
		return err
	}
	if len(out) == int(limit) && out[len(out)-1].ID > 1 {
		setNextLink(w, r, int64(out[len(out)-1].ID))
	}
	return s.writeJSON(w, r, out)
}

func (s *Server) nonce(w http.ResponseWriter, r *http.Request) error {
	n, err := s.forecast.Nonce(r.Context(), r.PathValue("address"))
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, forecast.NonceJSON{Nonce: n})
}

func (s *Server) uploadReasoning(w http.ResponseWriter, r *http.Request) error {
	id, err := roundID(r)
	if err != nil {
		return err
	}
	var req forecast.ReasoningRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	if err := s.forecast.UploadReasoning(r.Context(), id, req); err != nil {
		return err
	}
	a, _ := forecast.ParseAddress(req.Agent) // valid: the upload was accepted
	WriteJSON(w, http.StatusCreated, map[string]any{"round_id": id, "agent": a.Hex()})
	return nil
}

func (s *Server) getReasoning(w http.ResponseWriter, r *http.Request) error {
	id, err := roundID(r)
	if err != nil {
		return err
	}
	out, err := s.forecast.Reasoning(r.Context(), id, r.PathValue("agent"))
	if err != nil {
		return err
	}
	a, _ := forecast.ParseAddress(r.PathValue("agent")) // valid: Reasoning parsed it
	return s.writeJSON(w, r, map[string]any{"round_id": id, "agent": a.Hex(), "reasoning": out})
}

func (s *Server) createRound(w http.ResponseWriter, r *http.Request) error {
	var req rounds.CreateRoundRequest
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	rd, err := s.forecast.CreateRound(r.Context(), req)
	if err != nil {
		return err
	}
	v, err := s.forecast.View(r.Context(), rd)
	if err != nil {
		return err
	}
	WriteJSON(w, http.StatusCreated, v)
	return nil
}

func (s *Server) triggerRound(w http.ResponseWriter, r *http.Request) error {
	id, err := roundID(r)
	if err != nil {
		return err
	}
	if err := s.forecast.Trigger(r.Context(), id); err != nil {
		return err
	}
	sc, err := s.forecast.Scores(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, sc)
}

func (s *Server) resolveMarket(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id", "market")
	if err != nil {
		return err
	}
	var req struct {
		Outcome string `json:"outcome"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		return err
	}
	// The store accepts the market's own outcome names and VOID, in any
	// case. The resolution the market already has (such as its source's,
	// sent again, or by two admins at once) is recorded and logged
	// nowhere: the answer says so.
	changed, err := s.forecast.ResolveMarket(r.Context(), id, req.Outcome)
	if err != nil {
		return err
	}
	if !changed {
		w.Header().Set(headerUnchanged, "true")
	}
	m, err := s.markets.Market(r.Context(), id)
	if err != nil {
		return err
	}
	return s.writeJSON(w, r, arena.NewMarketJSON(m))
}
