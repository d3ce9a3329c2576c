package web

import (
	"net/http"
	"strconv"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
)

// RegisterForecast mounts the forecast track's API.
func (s *Server) RegisterForecast(svc *forecast.Service) {
	s.Forecast = svc
	s.Mux.HandleFunc("GET /api/v1/domain", s.domain)
	s.Mux.HandleFunc("GET /api/v1/rounds", s.listRounds)
	s.Mux.HandleFunc("GET /api/v1/rounds/{id}", s.getRound)
	s.Mux.HandleFunc("GET /api/v1/rounds/{id}/scores", s.roundScores)
	s.Mux.HandleFunc("GET /api/v1/agents/{address}/nonce", s.nonce)
	s.Mux.HandleFunc("POST /api/v1/rounds/{id}/commits", s.commit)
	s.Mux.HandleFunc("POST /api/v1/rounds/{id}/reveals", s.reveal)
	s.Mux.HandleFunc("POST /api/v1/rounds/{id}/reasoning", s.uploadReasoning)
	s.Mux.HandleFunc("GET /api/v1/rounds/{id}/reasoning/{agent}", s.getReasoning)
	s.Mux.HandleFunc("POST /api/v1/admin/rounds", s.RequireAdmin(s.createRound))
	s.Mux.HandleFunc("POST /api/v1/admin/rounds/{id}/trigger", s.RequireAdmin(s.triggerRound))
	s.Mux.HandleFunc("POST /api/v1/admin/markets/{id}/resolve", s.RequireAdmin(s.resolveMarket))
}

func roundID(r *http.Request) (uint64, error) {
	id, err := strconv.ParseUint(r.PathValue("id"), 10, 64)
	if err != nil || id == 0 {
		return 0, arena.Rejectf(arena.ENOTFOUND, forecast.CodeRoundNotFound, "round %q not found", r.PathValue("id"))
	}
	return id, nil
}

func (s *Server) domain(w http.ResponseWriter, r *http.Request) {
	d := s.Forecast.Domain
	WriteJSON(w, http.StatusOK, forecast.DomainJSON{Name: forecast.DomainName, Version: forecast.DomainVersion,
		ChainID: d.ChainID, VerifyingContract: d.Contract.Hex()})
}

func (s *Server) listRounds(w http.ResponseWriter, r *http.Request) {
	status := r.URL.Query().Get("status")
	switch status {
	case "", arena.RoundOpen, arena.RoundRevealing, arena.RoundScoring, arena.RoundScored, arena.RoundInvalidated:
	default:
		WriteError(w, arena.Errorf(arena.EINVALID, "status %q: want open, revealing, scoring or scored", status))
		return
	}
	rounds, err := s.Forecast.Store.Rounds(r.Context(), arena.RoundFilter{Status: status, Now: s.Forecast.Clock(), Limit: 100})
	if err != nil {
		s.internal(w, err)
		return
	}
	out := make([]forecast.RoundJSON, 0, len(rounds))
	for _, rd := range rounds {
		v, err := s.Forecast.View(r.Context(), rd)
		if err != nil {
			s.internal(w, err)
			return
		}
		out = append(out, v)
	}
	WriteJSON(w, http.StatusOK, out)
}

func (s *Server) getRound(w http.ResponseWriter, r *http.Request) {
	id, err := roundID(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	rd, err := s.Forecast.Store.Round(r.Context(), id)
	if err != nil {
		WriteError(w, err)
		return
	}
	v, err := s.Forecast.View(r.Context(), rd)
	if err != nil {
		s.internal(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, v)
}

func (s *Server) roundScores(w http.ResponseWriter, r *http.Request) {
	id, err := roundID(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	sc, err := s.Forecast.Scores(r.Context(), id)
	if err != nil {
		WriteError(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, sc)
}

func (s *Server) nonce(w http.ResponseWriter, r *http.Request) {
	addr := r.PathValue("address")
	a, err := forecast.ParseAddress(addr)
	if err != nil {
		WriteError(w, err)
		return
	}
	n, err := s.Forecast.Store.Nonce(r.Context(), a.Hex())
	if err != nil {
		s.internal(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, forecast.NonceJSON{Nonce: n})
}

func (s *Server) commit(w http.ResponseWriter, r *http.Request) {
	id, err := roundID(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	var req forecast.CommitRequest
	if err := DecodeJSON(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	out, err := s.Forecast.Commit(r.Context(), id, req)
	if err != nil {
		s.reply(w, err)
		return
	}
	WriteJSON(w, http.StatusCreated, out)
}

func (s *Server) reveal(w http.ResponseWriter, r *http.Request) {
	id, err := roundID(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	var req forecast.RevealRequest
	if err := DecodeJSON(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	out, err := s.Forecast.Reveal(r.Context(), id, req)
	if err != nil {
		s.reply(w, err)
		return
	}
	WriteJSON(w, http.StatusCreated, out)
}

func (s *Server) uploadReasoning(w http.ResponseWriter, r *http.Request) {
	id, err := roundID(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	var req forecast.ReasoningRequest
	if err := DecodeJSON(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	if err := s.Forecast.UploadReasoning(r.Context(), id, req); err != nil {
		s.reply(w, err)
		return
	}
	a, _ := forecast.ParseAddress(req.Agent) // valid: the upload was accepted
	WriteJSON(w, http.StatusCreated, map[string]any{"round_id": id, "agent": a.Hex()})
}

func (s *Server) getReasoning(w http.ResponseWriter, r *http.Request) {
	id, err := roundID(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	out, err := s.Forecast.Reasoning(r.Context(), id, r.PathValue("agent"))
	if err != nil {
		s.reply(w, err)
		return
	}
	a, _ := forecast.ParseAddress(r.PathValue("agent")) // valid: Reasoning parsed it
	WriteJSON(w, http.StatusOK, map[string]any{"round_id": id, "agent": a.Hex(), "reasoning": out})
}

func (s *Server) createRound(w http.ResponseWriter, r *http.Request) {
	var req forecast.CreateRoundRequest
	if err := DecodeJSON(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	rd, err := s.Forecast.CreateRound(r.Context(), req)
	if err != nil {
		s.reply(w, err)
		return
	}
	v, err := s.Forecast.View(r.Context(), rd)
	if err != nil {
		s.internal(w, err)
		return
	}
	WriteJSON(w, http.StatusCreated, v)
}

func (s *Server) triggerRound(w http.ResponseWriter, r *http.Request) {
	id, err := roundID(r)
	if err != nil {
		WriteError(w, err)
		return
	}
	if err := s.Forecast.Trigger(r.Context(), id); err != nil {
		s.reply(w, err)
		return
	}
	sc, err := s.Forecast.Scores(r.Context(), id)
	if err != nil {
		s.internal(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, sc)
}

func (s *Server) resolveMarket(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		WriteError(w, arena.Errorf(arena.ENOTFOUND, "market %q not found", r.PathValue("id")))
		return
	}
	var req struct {
		Outcome string `json:"outcome"`
	}
	if err := DecodeJSON(r, &req); err != nil {
		WriteError(w, err)
		return
	}
	res := map[string]string{"YES": arena.Yes, "NO": arena.No, "VOID": arena.Void}[req.Outcome]
	if res == "" {
		WriteError(w, arena.Errorf(arena.EINVALID, "outcome %q: want YES, NO or VOID", req.Outcome))
		return
	}
	if err := s.Forecast.ResolveMarket(r.Context(), id, res); err != nil {
		s.reply(w, err)
		return
	}
	m, err := s.Markets.Market(r.Context(), id)
	if err != nil {
		s.internal(w, err)
		return
	}
	WriteJSON(w, http.StatusOK, NewMarketJSON(m))
}

// reply writes a user error as is and logs anything else.
func (s *Server) reply(w http.ResponseWriter, err error) {
	if arena.ErrorKind(err) == arena.EINTERNAL {
		s.internal(w, err)
		return
	}
	WriteError(w, err)
}

func (s *Server) internal(w http.ResponseWriter, err error) {
	s.Logger.Error("internal error", "err", err)
	WriteError(w, err)
}
