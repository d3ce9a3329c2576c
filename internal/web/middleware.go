package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/redact"
)

// RequestIDHeader carries a request's id in and out: a client's sane id is
// kept (so its logs and ours line up), anything else is replaced by a
// fresh one; the response always echoes the id used.
const RequestIDHeader = "X-Request-Id"

// requestInfo is what the root handler learns of a request as it runs.
type requestInfo struct {
	id   string
	code string // the error code written by Server.Error, if any
}

type requestInfoKey struct{}

// RequestID returns the id of the request ctx belongs to ("" outside one).
func RequestID(ctx context.Context) string {
	if ri, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return ri.id
	}
	return ""
}

func infoOf(r *http.Request) *requestInfo {
	ri, _ := r.Context().Value(requestInfoKey{}).(*requestInfo)
	return ri
}

// saneRequestID accepts 1–128 characters of letters, digits and . _ - :
// (enough for UUIDs and tracing ids, nothing that could forge a log line).
func saneRequestID(s string) bool {
	if len(s) == 0 || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' || c == ':') {
			return false
		}
	}
	return true
}

func newRequestID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// ContentSecurityPolicy is sent with every answer. The pages use only
// what it allows: the stylesheet at /assets/style.css, inline SVG charts
// (markup, no style attributes), links and GET forms to this host; no
// script, inline style, font, frame or image from anywhere else. Framing
// is allowed to this host's own pages only.
const ContentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'self'"

// begin gives the request its id, echoed in the response header, and
// sets the headers every answer carries.
func (s *Server) begin(w http.ResponseWriter, r *http.Request) (*http.Request, *requestInfo) {
	ri := &requestInfo{id: r.Header.Get(RequestIDHeader)}
	if !saneRequestID(ri.id) {
		ri.id = newRequestID()
	}
	h := w.Header()
	h.Set(RequestIDHeader, ri.id)
	h.Set("Content-Security-Policy", ContentSecurityPolicy)
	return r.WithContext(context.WithValue(r.Context(), requestInfoKey{}, ri)), ri
}

// submissionRoutes are the routes whose answers count as accepted or
// rejected submissions, by kind.
var submissionRoutes = map[string]string{
	"POST /api/v1/rounds/{id}/commits":   "commit",
	"POST /api/v1/rounds/{id}/reveals":   "reveal",
	"POST /api/v1/rounds/{id}/reasoning": "reasoning",
}

// finish runs deferred after every request: it turns a handler's panic
// into a logged internal error (the panic value and stack redacted of
// secrets), counts the request and logs it with its id.
func (s *Server) finish(sw *statusWriter, r *http.Request, ri *requestInfo, route string, start time.Time) {
	if p := recover(); p != nil {
		if p == http.ErrAbortHandler {
			panic(p) // the server's own signal to drop the connection
		}
		s.internalErrors.Add(1)
		s.logger.Error("http: panic", "method", r.Method, "path", r.URL.Path, "request_id", ri.id,
			"panic", redact.String(fmt.Sprint(p)), "stack", redact.String(string(debug.Stack())))
		if !sw.wrote {
			s.writeErr(sw, r, arena.Errorf(arena.EINTERNAL, "internal error"))
		}
	}
	took := time.Since(start)
	s.metrics.HTTPRequest(route, r.Method, sw.status, took)
	if kind, ok := submissionRoutes[route]; ok {
		s.metrics.Submission(kind, sw.status < 400, ri.code)
	}
	s.logger.Debug("http", "method", r.Method, "path", r.URL.Path, "route", route, "status", sw.status,
		"took", took, "request_id", ri.id)
}

// LogHandler adds the request id to every record logged with a request's
// context (slog's …Context methods), so that what the services log while
// handling a request carries the same request_id as the server's lines.
func LogHandler(h slog.Handler) slog.Handler { return requestIDHandler{h} }

type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r.AddAttrs(slog.String("request_id", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(as)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
