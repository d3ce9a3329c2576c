// Package web serves Forecast Arena's JSON API and dashboard over net/http.
package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/forecast"
	"github.com/forecast-arena/arena/trading"
)

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = 256 << 10

// Pinger reports whether the store is reachable.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Server holds the handlers' dependencies. Tracks register their routes on
// Mux before Handler is called.
type Server struct {
	Markets    arena.MarketStore
	DB         Pinger
	AdminToken string
	Logger     *slog.Logger
	Mux        *http.ServeMux
	// Forecast is set by RegisterForecast.
	Forecast *forecast.Service
	// Trading and TradingLeaderboard (?track=trading) are set by
	// RegisterTrading.
	Trading            *trading.Engine
	TradingLeaderboard http.HandlerFunc
}

// New returns a server with the base routes registered.
func New(markets arena.MarketStore, db Pinger, adminToken string, logger *slog.Logger) *Server {
	if logger == nil {
		logger = slog.Default()
	}
	s := &Server{Markets: markets, DB: db, AdminToken: adminToken, Logger: logger, Mux: http.NewServeMux()}
	s.Mux.HandleFunc("GET /healthz", s.healthz)
	s.Mux.HandleFunc("GET /api/v1/markets", s.listMarkets)
	s.Mux.HandleFunc("GET /api/v1/markets/{id}", s.getMarket)
	s.Mux.HandleFunc("GET /api/v1/leaderboard", s.leaderboard)
	s.Mux.HandleFunc("GET /{$}", s.leaderboardPage)
	return s
}

// Handler returns the root handler with body limits and request logging.
func (s *Server) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, status: 200}
		s.Mux.ServeHTTP(sw, r)
		s.Logger.Debug("http", "method", r.Method, "path", r.URL.Path, "status", sw.status, "took", time.Since(start))
	})
}

type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) { w.status = code; w.ResponseWriter.WriteHeader(code) }

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.DB.Ping(ctx); err != nil {
		s.Logger.Error("healthz: database unreachable", "err", err)
		// Say what is wrong without leaking connection details.
		WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
		return
	}
	WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// RequireAdmin wraps h with a constant-time bearer-token check. Without a
// configured token, admin endpoints are disabled.
func (s *Server) RequireAdmin(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.AdminToken == "" {
			WriteError(w, arena.Rejectf(arena.EUNAUTHORIZED, "admin_disabled", "admin endpoints are disabled: no admin token configured"))
			return
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(s.AdminToken)) != 1 {
			WriteError(w, arena.Rejectf(arena.EUNAUTHORIZED, "unauthorized", "missing or wrong admin bearer token"))
			return
		}
		h(w, r)
	}
}

// Status maps an error kind to its HTTP status.
func Status(kind string) int {
	switch kind {
	case arena.EINVALID:
		return http.StatusBadRequest
	case arena.ENOTFOUND:
		return http.StatusNotFound
	case arena.ECONFLICT:
		return http.StatusConflict
	case arena.EUNAUTHORIZED:
		return http.StatusUnauthorized
	case arena.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case arena.EUNAVAILABLE:
		return http.StatusBadGateway
	}
	return http.StatusInternalServerError
}

// WriteError writes {"error":{"code","message"}} with the kind's status.
func WriteError(w http.ResponseWriter, err error) {
	WriteJSON(w, Status(arena.ErrorKind(err)), map[string]any{
		"error": map[string]string{"code": arena.ErrorCode(err), "message": arena.ErrorMessage(err)},
	})
}

// WriteJSON writes v as JSON with the given status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.Encode(v)
}

// DecodeJSON strictly decodes a request body into v: unknown fields,
// trailing data and oversized bodies are errors with stable codes.
func DecodeJSON(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return arena.Rejectf(arena.ETOOLARGE, "body_too_large", "request body exceeds %d bytes", tooBig.Limit)
		}
		return arena.Rejectf(arena.EINVALID, "malformed_json", "malformed JSON body: %w", err)
	}
	// Only whitespace may follow the value: dec.More is false before a
	// stray '}' or ']', so read the next token and require the end.
	if _, err := dec.Token(); err != io.EOF {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return arena.Rejectf(arena.ETOOLARGE, "body_too_large", "request body exceeds %d bytes", tooBig.Limit)
		}
		return arena.Rejectf(arena.EINVALID, "malformed_json", "malformed JSON body: trailing data")
	}
	return nil
}

// Server timeouts: a client that trickles its headers or body, stops
// reading the response, or idles on a kept-alive connection is cut off
// instead of holding a connection and goroutine for ever. Bodies are at
// most MaxBodyBytes, so 15 s to read one is generous.
const (
	ReadHeaderTimeout = 10 * time.Second
	ReadTimeout       = 15 * time.Second
	WriteTimeout      = 30 * time.Second
	IdleTimeout       = 60 * time.Second
)

func newHTTPServer(handler http.Handler) *http.Server {
	return &http.Server{Handler: handler, ReadHeaderTimeout: ReadHeaderTimeout, ReadTimeout: ReadTimeout,
		WriteTimeout: WriteTimeout, IdleTimeout: IdleTimeout}
}

// Serve runs handler on ln until ctx is cancelled, then shuts down
// gracefully, letting in-flight requests finish.
func Serve(ctx context.Context, ln net.Listener, handler http.Handler) error {
	srv := newHTTPServer(handler)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return fmt.Errorf("web: serve: %w", err)
	case <-ctx.Done():
	}
	shutCtx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutCtx); err != nil {
		return fmt.Errorf("web: shutdown: %w", err)
	}
	return nil
}
