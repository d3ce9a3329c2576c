package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/web/pages"
)

// read serves a read of the resource the path names (param parses its id):
// get's answer as JSON.
func read[ID, T any](s *Server, param func(*http.Request) (ID, error), get func(context.Context, ID) (T, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := param(r)
		if err != nil {
			return err
		}
		v, err := get(r.Context(), id)
		if err != nil {
			return err
		}
		return s.writeJSON(w, r, v)
	}
}

// submit serves a JSON body Req sent to the resource the path names
// (param parses its id): do's answer with the given status.
func submit[ID, Req, Out any](param func(*http.Request) (ID, error), status int, do func(context.Context, ID, Req) (Out, error)) HandlerFunc {
	return submitChange(param, status, func(ctx context.Context, id ID, req Req) (Out, bool, error) {
		out, err := do(ctx, id, req)
		return out, true, err
	})
}

// submitChange is submit for a write that may find what it asks for in
// force already (do reports false): that answer carries the header
// Arena-Unchanged: true, and nothing was recorded or logged.
func submitChange[ID, Req, Out any](param func(*http.Request) (ID, error), status int, do func(context.Context, ID, Req) (Out, bool, error)) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := param(r)
		if err != nil {
			return err
		}
		var req Req
		if err := DecodeJSON(r, &req); err != nil {
			return err
		}
		out, changed, err := do(r.Context(), id, req)
		if err != nil {
			return err
		}
		if !changed {
			w.Header().Set(headerUnchanged, "true")
		}
		WriteJSON(w, status, out)
		return nil
	}
}

// headerUnchanged marks the answer to a write that changed nothing.
const headerUnchanged = "Arena-Unchanged"

// pathID parses the positive integer id in the path's wildcard; what names
// the resource in the error.
func pathID(r *http.Request, wildcard, what string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(wildcard), 10, 64)
	if err != nil || id <= 0 {
		return 0, arena.Errorf(arena.EINVALID, "%s id %q: want a positive integer", what, r.PathValue(wildcard))
	}
	return id, nil
}

// writeJSON answers a read with v as JSON and a strong ETag of the body; a
// request whose If-None-Match names that tag gets 304 Not Modified and no
// body. Hashing the encoded body is cheap next to building it.
func (s *Server) writeJSON(w http.ResponseWriter, r *http.Request, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return fmt.Errorf("web: encode %s: %w", r.URL.Path, err)
	}
	sum := sha256.Sum256(buf.Bytes())
	tag := `"` + base64.RawURLEncoding.EncodeToString(sum[:16]) + `"`
	h := w.Header()
	h.Set("ETag", tag)
	h.Set("Cache-Control", "no-cache") // revalidate every time: figures change when rounds are scored
	if etagMatch(r.Header.Get("If-None-Match"), tag) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, err := buf.WriteTo(w)
	return err
}

// etagMatch reports whether an If-None-Match header lists tag (or "*").
func etagMatch(header, tag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(t), "W/"))
		if t == tag || t == "*" {
			return true
		}
	}
	return false
}

// setNextLink advertises the next page of a list (RFC 8288): the same
// request with cursor set to the last item's id.
func setNextLink(w http.ResponseWriter, r *http.Request, cursor int64) {
	q := r.URL.Query()
	q.Del("offset")
	q.Set("cursor", strconv.FormatInt(cursor, 10))
	u := url.URL{Path: r.URL.Path, RawQuery: q.Encode()}
	w.Header().Set("Link", "<"+u.String()+`>; rel="next"`)
}

// writeErr answers err as writeError does, with the status of its kind.
func (s *Server) writeErr(w http.ResponseWriter, r *http.Request, err error) {
	s.writeError(w, r, Status(arena.ErrorKind(err)), arena.ErrorCode(err), arena.ErrorMessage(err))
}

// writeError is where every error answer is written. A browser (a request
// outside /api/ whose Accept header ranks text/html above
// application/json) gets an HTML page with the site's navigation, what
// went wrong and where to go next; every other client gets
// {"error":{"code","message"}}. The status is the same either way.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, status int, code, message string) {
	if !underAPI(r.URL.Path) {
		w.Header().Add("Vary", "Accept") // the same URL answers HTML or JSON
		if wantsHTML(r) {
			b, err := pages.ErrorPage(r, status, code, message, RequestID(r.Context()))
			if err == nil {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				w.WriteHeader(status)
				w.Write(b)
				return
			}
			s.logger.Error("http: error page", "path", r.URL.Path, "request_id", RequestID(r.Context()), "err", err)
		}
	}
	writeErrorBody(w, status, code, message)
}

func underAPI(path string) bool { return path == "/api" || strings.HasPrefix(path, "/api/") }

// wantsHTML reports whether the Accept header ranks text/html above
// application/json: a browser's does (text/html, …, */*;q=0.8); curl's
// */*, a client's application/json and no header at all do not.
func wantsHTML(r *http.Request) bool {
	accept := r.Header.Values("Accept")
	return acceptQ(accept, "text/html") > acceptQ(accept, "application/json")
}

// acceptQ is the weight Accept headers give a media type: the q of the
// most specific range that matches it (type/subtype, then type/*, then
// */*), 0 when none does.
func acceptQ(headers []string, media string) float64 {
	typ, _, _ := strings.Cut(media, "/")
	q, rank := 0.0, 0
	for _, h := range headers {
		for _, part := range strings.Split(h, ",") {
			mt, params, err := mime.ParseMediaType(part)
			if err != nil {
				continue
			}
			specific := 0
			switch mt {
			case media:
				specific = 3
			case typ + "/*":
				specific = 2
			case "*/*":
				specific = 1
			}
			if specific <= rank {
				continue
			}
			w := 1.0
			if v, ok := params["q"]; ok {
				if w, err = strconv.ParseFloat(v, 64); err != nil || w < 0 || w > 1 {
					continue
				}
			}
			q, rank = w, specific
		}
	}
	return q
}
