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
	"maps"
	"math"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/backtest"
	"github.com/forecast-arena/arena/internal/catalog"
	"github.com/forecast-arena/arena/internal/metrics"
	"github.com/forecast-arena/arena/internal/oracle"
	"github.com/forecast-arena/arena/internal/ratelimit"
	"github.com/forecast-arena/arena/internal/redact"
	"github.com/forecast-arena/arena/internal/rounds"
	"github.com/forecast-arena/arena/internal/trading"
	"github.com/forecast-arena/arena/internal/web/view"
	"github.com/forecast-arena/arena/tlog"
)

// MaxBodyBytes bounds every request body.
const MaxBodyBytes = 256 << 10

// Pinger reports whether the store is reachable.
type Pinger interface {
	Ping(ctx context.Context) error
}

// Parts are what a server is built from. Markets and DB are required; a
// nil track is not served (its routes answer 404 in the JSON error shape).
type Parts struct {
	Markets    arena.MarketStore
	DB         Pinger
	AdminToken string
	// AdminTokenNext is accepted as well as AdminToken, so the token can
	// be rotated without downtime: add the new one here on every replica,
	// move the clients, then make it AdminToken and clear this.
	AdminTokenNext string
	Logger         *slog.Logger
	Forecast       *rounds.Service
	Trading        *trading.Engine
	// Forecasters serves traces and round market context.
	Forecasters ForecasterStore
	// Boards serves the backtest track and, when its store keeps human
	// forecasts, the human board pages; whoever builds it closes it,
	// after the server's Wait.
	Boards *backtest.Boards
	// Oracle serves oracle resolutions and the arbitration queue.
	Oracle *oracle.Service
	// Log serves the tamper-evident log's entries and proofs. LogVKey,
	// when set, is the note verifier key of the log's published
	// checkpoints (under /log/), and PublicURL the arena's public URL
	// (else the request's host): the methodology page says how to verify
	// the arena with them.
	Log       *tlog.Log
	LogVKey   string
	PublicURL string
	// Mounts are protocol endpoints other packages define, served for GET
	// under their prefix (such as "/log/"), the prefix stripped, through
	// the server's middleware (request ids, rate limits, metrics): the
	// log's C2SP tiles and the published exports.
	Mounts map[string]http.Handler
	// Metrics is exported at /metrics (nil: the server makes its own).
	Metrics *metrics.Metrics
	// Health answers /readyz beyond a ping: schema and job runs.
	Health arena.HealthStore
	// Rates keeps the rate limits' buckets; nil or zero Limits: no limits.
	// Limits apply to every route but the probes (/healthz, /readyz,
	// /metrics); the per-agent limit to the commits, reveals and profile
	// updates the agent signed.
	Rates  arena.RateStore
	Limits ratelimit.Limits
}

// Server serves the routes of the parts it was built from (see New); its
// parts are fixed once built.
type Server struct {
	markets        *catalog.Service
	db             Pinger
	adminToken     string
	adminTokenNext string
	logger         *slog.Logger
	mux            *http.ServeMux
	forecast       *rounds.Service
	trading        *trading.Engine
	traces         *rounds.Traces // nil without the forecast track or the forecasters' store
	boards         *backtest.Boards
	oracle         *oracle.Service
	log            *tlog.Log
	publicURL      string
	views          *view.Service
	metrics        *metrics.Metrics
	health         arena.HealthStore
	rates          arena.RateStore
	limits         ratelimit.Limits

	internalErrors atomic.Int64
	routes         []string // "METHOD /path" of every handle call
	// limiters are the rate limiters of the handlers built (see Wait).
	limiters []*ratelimit.Limiter
}

// HandlerFunc is a handler that returns its error instead of writing it:
// the server writes every error the same way (see Server.Error).
type HandlerFunc func(w http.ResponseWriter, r *http.Request) error

// New builds the server of p with every route of its parts: the one
// composition of routes that `arena serve`, `arena demo` and the tests
// share.
func New(p Parts) *Server {
	s := &Server{markets: &catalog.Service{Store: p.Markets}, db: p.DB, adminToken: p.AdminToken, adminTokenNext: p.AdminTokenNext,
		logger: p.Logger, mux: http.NewServeMux(), forecast: p.Forecast, trading: p.Trading,
		boards: p.Boards, oracle: p.Oracle, log: p.Log, publicURL: p.PublicURL,
		metrics: p.Metrics, health: p.Health, rates: p.Rates, limits: p.Limits}
	if p.Forecasters != nil && p.Forecast != nil {
		s.traces = &rounds.Traces{Rounds: p.Forecast, Store: p.Forecasters}
	}
	s.views = &view.Service{Markets: s.markets, Forecast: p.Forecast, Trading: p.Trading, Traces: s.traces, Boards: p.Boards, Oracle: p.Oracle,
		LogVKey: p.LogVKey, PublicURL: p.PublicURL}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.metrics == nil {
		s.metrics = metrics.New()
	}
	s.mux.HandleFunc("GET /healthz", s.healthz)
	s.mux.HandleFunc("GET /readyz", s.readyz)
	s.mux.HandleFunc("GET /metrics", func(w http.ResponseWriter, r *http.Request) { s.metrics.Handler().ServeHTTP(w, r) })
	s.handle("GET /api/v1/markets", s.listMarkets)
	s.handle("GET /api/v1/markets/{id}", s.getMarket)
	s.handle("GET /api/v1/leaderboard", s.leaderboard)
	s.handle("GET /api/v1/openapi.json", s.openAPI)
	s.registerDashboard()
	if p.Forecast != nil {
		s.registerForecast()
	}
	if p.Trading != nil {
		s.registerTrading()
	}
	if p.Forecasters != nil {
		s.registerForecasters()
	}
	if p.Boards != nil && p.Boards.Humans() {
		s.registerHumans()
	}
	if p.Oracle != nil {
		s.registerOracle()
	}
	if p.Log != nil {
		s.registerLog()
	}
	for _, prefix := range slices.Sorted(maps.Keys(p.Mounts)) {
		s.mux.Handle("GET "+prefix, http.StripPrefix(strings.TrimSuffix(prefix, "/"), p.Mounts[prefix]))
	}
	return s
}

// handle registers h for pattern; its error goes through Server.Error. A
// documented route's query is checked against its declaration first.
func (s *Server) handle(pattern string, h HandlerFunc) {
	s.routes = append(s.routes, pattern)
	op := apiOpOf(pattern)
	s.mux.HandleFunc(pattern, func(w http.ResponseWriter, r *http.Request) {
		err := op.CheckQuery(r)
		if err == nil {
			err = h(w, r)
		}
		if err != nil {
			s.Error(w, r, err)
		}
	})
}

// Error writes err as {"error":{"code","message"}} with the status of its
// kind. Internal errors (anything not an *arena.Error of a user-facing
// kind) are logged once here, with method, path and cause, and counted;
// their message is not leaked.
func (s *Server) Error(w http.ResponseWriter, r *http.Request, err error) {
	if ri := infoOf(r); ri != nil {
		ri.code = arena.ErrorCode(err)
	}
	// A refusal that may pass later says when (a rate limit sets its own).
	var later interface{ RetryAfter() time.Duration }
	if errors.As(err, &later) {
		w.Header().Set("Retry-After", strconv.FormatInt(int64(math.Ceil(later.RetryAfter().Seconds())), 10))
	}
	if arena.ErrorKind(err) == arena.EINTERNAL {
		s.internalErrors.Add(1)
		s.logger.Error("http: internal error", "method", r.Method, "path", r.URL.Path, "request_id", RequestID(r.Context()), "err", redact.String(err.Error()))
	}
	s.writeErr(w, r, err)
}

// Wait returns when nothing a handler of s started is still reading or
// writing the store: no rate-limit settlement. Call it after the HTTP
// server has shut down and before the store closes (the boards of
// Parts.Boards are closed by whoever built them).
func (s *Server) Wait() {
	for _, l := range s.limiters {
		l.Wait()
	}
}

// Handler returns the root handler: request ids, body limits, metrics,
// panic recovery and request logging. Requests no route matches get the
// JSON error shape: 404, or 405 with the Allow header.
func (s *Server) Handler() http.Handler {
	var lim *ratelimit.Limiter
	if s.rates != nil {
		lim = &ratelimit.Limiter{Store: s.rates}
		s.limiters = append(s.limiters, lim)
	}
	limits := s.rateLimits(lim)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		r, ri := s.begin(w, r)
		r.Body = http.MaxBytesReader(w, r.Body, MaxBodyBytes)
		sw := &statusWriter{ResponseWriter: w, status: 200}
		h, route := s.mux.Handler(r)
		if route == "" {
			route = "unmatched"
		}
		defer s.finish(sw, r, ri, route, start)
		var err error
		if err = checkText(r); err == nil {
			if !unlimited[route] {
				r, err = limits.Check(sw, r, route)
			}
		}
		switch {
		case err != nil:
			s.Error(sw, r, err)
		case route == "unmatched":
			s.unrouted(sw, r, h)
		default:
			s.mux.ServeHTTP(sw, r)
		}
	})
}

// checkText refuses a request whose path or query holds text no column
// can store: invalid UTF-8 or a NUL byte. PostgreSQL rejects both with an
// error (which would answer 500 and fill the log) where SQLite stores
// them, so the check keeps the engines alike and the log quiet.
func checkText(r *http.Request) error {
	bad := func(s string) bool { return !utf8.ValidString(s) || strings.ContainsRune(s, 0) }
	if bad(r.URL.Path) {
		return arena.Rejectf(arena.EINVALID, "invalid_text", "the path is not valid UTF-8 text")
	}
	for k, vs := range r.URL.Query() {
		if bad(k) || slices.ContainsFunc(vs, bad) {
			return arena.Rejectf(arena.EINVALID, "invalid_text", "query parameter %q is not valid UTF-8 text", strings.ToValidUTF8(strings.ReplaceAll(k, "\x00", ""), "?"))
		}
	}
	return nil
}

// unrouted runs the mux's own answer for an unmatched request (404, 405
// or a redirect to the canonical path) and rewrites its plain-text errors
// as every other error (see writeError).
func (s *Server) unrouted(w http.ResponseWriter, r *http.Request, h http.Handler) {
	rec := &headerRecorder{header: http.Header{}}
	h.ServeHTTP(rec, r)
	switch rec.status {
	case http.StatusNotFound:
		s.writeErr(w, r, arena.Rejectf(arena.ENOTFOUND, "route_not_found", "no route for %s %s", r.Method, r.URL.Path))
	case http.StatusMethodNotAllowed:
		w.Header().Set("Allow", rec.header.Get("Allow"))
		s.writeError(w, r, http.StatusMethodNotAllowed, "method_not_allowed",
			fmt.Sprintf("method %s not allowed on %s (allowed: %s)", r.Method, r.URL.Path, rec.header.Get("Allow")))
	default:
		s.mux.ServeHTTP(w, r) // redirects and anything else: as the mux answers
	}
}

// headerRecorder keeps a handler's status and headers, discarding its body.
type headerRecorder struct {
	header http.Header
	status int
}

func (h *headerRecorder) Header() http.Header { return h.header }
func (h *headerRecorder) WriteHeader(code int) {
	if h.status == 0 {
		h.status = code
	}
}
func (h *headerRecorder) Write(b []byte) (int, error) {
	if h.status == 0 {
		h.status = http.StatusOK
	}
	return len(b), nil
}

type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool // the header is sent
}

func (w *statusWriter) WriteHeader(code int) {
	w.status, w.wrote = code, true
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
	defer cancel()
	if err := s.db.Ping(ctx); err != nil {
		s.logger.Error("healthz: database unreachable", "request_id", RequestID(r.Context()), "err", redact.String(err.Error()))
		// Say what is wrong without leaking connection details.
		WriteJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "database": "unreachable"})
		return
	}
	WriteJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// admin wraps h with a constant-time bearer-token check against each
// configured token (AdminToken and AdminTokenNext). Without a configured
// token, admin endpoints are disabled.
func (s *Server) admin(h HandlerFunc) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if s.adminToken == "" && s.adminTokenNext == "" {
			return arena.Rejectf(arena.EFORBIDDEN, "admin_disabled", "admin endpoints are disabled: no admin token configured")
		}
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !tokenMatches(got, s.adminToken, s.adminTokenNext) {
			return arena.Rejectf(arena.EUNAUTHORIZED, "unauthorized", "missing or wrong admin bearer token")
		}
		return h(w, r)
	}
}

// tokenMatches compares got with every non-empty token in constant time,
// all of them every time, so the answer's timing tells neither whether a
// token matched nor which.
func tokenMatches(got string, tokens ...string) bool {
	match := 0
	for _, t := range tokens {
		if t != "" {
			match |= subtle.ConstantTimeCompare([]byte(got), []byte(t))
		}
	}
	return match == 1
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
	case arena.EFORBIDDEN:
		return http.StatusForbidden
	case arena.ETOOLARGE:
		return http.StatusRequestEntityTooLarge
	case arena.EUNAVAILABLE:
		return http.StatusBadGateway
	case arena.ETOOMANY:
		return http.StatusTooManyRequests
	}
	return http.StatusInternalServerError
}

func writeErrorBody(w http.ResponseWriter, status int, code, message string) {
	WriteJSON(w, status, ErrorJSON{ErrorDetailJSON{Code: code, Message: message}})
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
// gracefully, letting in-flight requests finish. Every answer carries the
// Content-Security-Policy, the server's own errors included (cspListener).
func Serve(ctx context.Context, ln net.Listener, handler http.Handler) error {
	srv := newHTTPServer(handler)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(cspListener{ln}) }()
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
