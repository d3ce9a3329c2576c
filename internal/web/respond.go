package web

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/forecast-arena/arena"
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
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := param(r)
		if err != nil {
			return err
		}
		var req Req
		if err := DecodeJSON(r, &req); err != nil {
			return err
		}
		out, err := do(r.Context(), id, req)
		if err != nil {
			return err
		}
		WriteJSON(w, status, out)
		return nil
	}
}

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
