package web

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

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
