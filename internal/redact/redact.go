// Package redact hides secrets in text: the one path by which connection
// strings, keys and tokens are masked in errors, logs, `arena config`,
// health answers and panics.
//
// It works on the text alone and never parses a URL, so a malformed one
// (a '%' or a space in the password, a bad escape) is masked as well as a
// good one; values are delimited as the PostgreSQL driver (pgx) delimits
// them, and where the end of a secret is ambiguous it masks too much
// rather than too little.
package redact

import (
	"context"
	"log/slog"
	"regexp"
	"strings"
)

// Mask replaces every secret.
const Mask = "[redacted]"

var (
	// The key and separator of key=value secrets, as in PostgreSQL's
	// keyword/value DSNs (password=…, sslpassword=…), environment
	// assignments (PGPASSWORD=…), URL query strings (api_key=…,
	// token=…) and JSON; the value is found by kvValue.
	keyValue = regexp.MustCompile(`(?i)\b((?:ssl|pg)?password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)("?\s*[=:]\s*)`)
	// Authorization header values.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	// Provider API keys that appear bare (sk-…, sk-ant-…, hf_…).
	apiKey = regexp.MustCompile(`\b(sk-[A-Za-z0-9_-]{12,}|hf_[A-Za-z0-9]{16,})`)
)

// String returns s with every secret it recognises replaced by Mask: the
// password of each scheme://user:password@host in it, key=value secrets,
// bearer and basic credentials, and bare provider API keys.
func String(s string) string {
	s = bearer.ReplaceAllString(keyValues(userinfo(s)), "${1} "+Mask)
	return apiKey.ReplaceAllString(s, Mask)
}

// keyValues masks the value of every key=value secret in s.
func keyValues(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range keyValue.FindAllStringSubmatchIndex(s, -1) {
		if m[0] < last {
			continue // inside a value already masked
		}
		start := m[1]
		// A key after '?' or '&' is a URL query parameter: its value
		// ends at the next '&' or '#' (a password holding them is
		// percent-encoded there).
		query := m[0] > 0 && (s[m[0]-1] == '?' || s[m[0]-1] == '&')
		end, quote := kvValue(s[start:], query)
		b.WriteString(s[last:start])
		b.WriteString(quote + Mask + quote)
		last = start + end
	}
	b.WriteString(s[last:])
	return b.String()
}

// kvValue returns the length of the value at the start of v and its
// quote ("" when unquoted). A quoted value runs to its closing quote, a
// backslash escaping the next character, as libpq and pgx read
// keyword/value DSNs and as JSON strings are written; an unclosed quote
// runs to the end of the text. An unquoted value runs to the next space
// (pgx's rule: ',', ';', quotes and '&' are part of a password there),
// or in a URL query to the next '&' or '#'.
func kvValue(v string, query bool) (n int, quote string) {
	if v != "" && (v[0] == '"' || v[0] == '\'') {
		for i := 1; i < len(v); i++ {
			switch v[i] {
			case '\\':
				i++
			case v[0]:
				return i + 1, v[:1]
			}
		}
		return len(v), ""
	}
	for i := 0; i < len(v); i++ {
		switch c := v[i]; {
		case c == '\\' && !query:
			i++
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f':
			return i, ""
		case query && (c == '&' || c == '#' || c == '"' || c == '\''):
			return i, ""
		}
	}
	return len(v), ""
}

// userinfo masks the password of every "://user:password@" in s. The
// userinfo of a URL ends at the last '@' of its authority, which runs
// to the next '/', so a password holding '@', '%', '#', '?' or spaces is
// masked whole. A password may also hold '/' (which ends the authority
// for a URL parser, and made pgx read the rest as a host, but not for the
// user who typed it), so the userinfo runs to the last '@' before the
// next space or quote when that is further: it masks too much rather than
// too little.
func userinfo(s string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, "://")
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i+3])
		s = s[i+3:]
		end := strings.IndexByte(s, '/')
		if end < 0 {
			end = len(s)
		}
		word := strings.IndexAny(s, " \t\n\"'`")
		if word < 0 {
			word = len(s)
		}
		at := max(strings.LastIndex(s[:end], "@"), strings.LastIndex(s[:word], "@"))
		if at < 0 {
			continue
		}
		user, _, hasPass := strings.Cut(s[:at], ":")
		if !hasPass {
			continue
		}
		b.WriteString(user + ":" + Mask)
		s = s[at:]
	}
}

// Handler wraps h so every string and error attribute, and the message,
// of every record is redacted: no log line carries a secret, whoever
// logged it.
func Handler(h slog.Handler) slog.Handler { return handler{h} }

type handler struct{ next slog.Handler }

func (h handler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, String(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h handler) WithAttrs(as []slog.Attr) slog.Handler {
	red := make([]slog.Attr, len(as))
	for i, a := range as {
		red[i] = attr(a)
	}
	return handler{h.next.WithAttrs(red)}
}

func (h handler) WithGroup(name string) slog.Handler { return handler{h.next.WithGroup(name)} }

func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, String(v.String()))
	case slog.KindGroup:
		g := v.Group()
		red := make([]any, len(g))
		for i, ga := range g {
			red[i] = attr(ga)
		}
		return slog.Group(a.Key, red...)
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.String(a.Key, String(x.Error()))
		case interface{ String() string }:
			return slog.String(a.Key, String(x.String()))
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
