// Package redact hides secrets in text: the one path by which connection
// strings, keys and tokens are masked in errors, logs, `arena config`,
// health answers and panics.
//
// It works on the text alone and never parses a URL, so a malformed one
// (a '%' or a space in the password, a bad escape) is masked as well as a
// good one; where the end of a secret is ambiguous it masks too much
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
	// key=value secrets, as in PostgreSQL DSNs (password=…, sslpassword=…)
	// and URL query strings (api_key=…, token=…).
	keyValue = regexp.MustCompile(`(?i)\b((?:ssl)?password|passwd|pwd|secret|api[_-]?key|access[_-]?token|auth[_-]?token|token)("?\s*[=:]\s*)("[^"]*"|'[^']*'|[^&\s'",;]*)`)
	// Authorization header values.
	bearer = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]+`)
	// Provider API keys that appear bare (sk-…, sk-ant-…, hf_…).
	apiKey = regexp.MustCompile(`\b(sk-[A-Za-z0-9_-]{12,}|hf_[A-Za-z0-9]{16,})`)
)

// String returns s with every secret it recognises replaced by Mask: the
// password of each scheme://user:password@host in it, key=value secrets,
// bearer and basic credentials, and bare provider API keys.
func String(s string) string {
	s = userinfo(s)
	s = keyValue.ReplaceAllStringFunc(s, func(m string) string {
		sub := keyValue.FindStringSubmatch(m)
		quote := ""
		if v := sub[3]; len(v) >= 2 && (v[0] == '"' || v[0] == '\'') {
			quote = v[:1] // keep a quoted value quoted (JSON stays JSON)
		}
		return sub[1] + sub[2] + quote + Mask + quote
	})
	s = bearer.ReplaceAllString(s, "${1} "+Mask)
	return apiKey.ReplaceAllString(s, Mask)
}

// userinfo masks the password of every "://user:password@" in s. The
// authority of a URL runs to the next '/' (or the end of the text); its
// userinfo ends at the last '@' within it, so a password holding '@', '%'
// or spaces is masked whole. An authority without '@' may be a password
// holding '/' (which ends the authority for a URL parser but not for the
// user who typed it), so then the userinfo ends at the last '@' before the
// next space or quote.
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
		end := strings.IndexAny(s, "/")
		if end < 0 {
			end = len(s)
		}
		at := strings.LastIndex(s[:end], "@")
		if at < 0 {
			word := strings.IndexAny(s, " \t\n\"'`")
			if word < 0 {
				word = len(s)
			}
			if at = strings.LastIndex(s[:word], "@"); at < 0 {
				continue
			}
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
