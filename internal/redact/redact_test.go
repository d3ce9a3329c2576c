package redact

import (
	"bytes"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestString(t *testing.T) {
	for in, want := range map[string]string{
		"postgres://u:p@h/db":                           "postgres://u:[redacted]@h/db",
		"postgres://u@h/db":                             "postgres://u@h/db",
		"sqlite:arena.db":                               "sqlite:arena.db",
		"postgres://u:p:q@h/d":                          "postgres://u:[redacted]@h/d",
		"postgres://h/db?sslmode=disable&password=leak": "postgres://h/db?sslmode=disable&password=[redacted]",
		"host=h password=leak dbname=x":                 "host=h password=[redacted] dbname=x",
		// Malformed URLs: no parser is involved, so these are masked too.
		"postgres://arena:S3cretPW%@127.0.0.1:1/x":                                     "postgres://arena:[redacted]@127.0.0.1:1/x",
		"postgres://arena:pass word@127.0.0.1/x":                                       "postgres://arena:[redacted]@127.0.0.1/x",
		"postgres://arena:pw%zz@127.0.0.1/x%zz":                                        "postgres://arena:[redacted]@127.0.0.1/x%zz",
		"postgres://arena:p@ss@w0rd@h:5432/x":                                          "postgres://arena:[redacted]@h:5432/x",
		"postgresql://a:b@h":                                                           "postgresql://a:[redacted]@h",
		"postgres://arena:a/b@h/x":                                                     "postgres://arena:[redacted]@h/x", // an unescaped '/' in the password
		"store: bad postgres URL postgres://u:AB/CD@127.0.0.1:5432/x: not a valid URL": "store: bad postgres URL postgres://u:[redacted]@127.0.0.1:5432/x: not a valid URL",
		"http://127.0.0.1:8080/v1/chat then mail a@b":                                  "http://127.0.0.1:8080/v1/chat then mail a@b",
		`parse "postgres://arena:S3cretPW%@127.0.0.1:1/x": invalid URL escape "%"`:     `parse "postgres://arena:[redacted]@127.0.0.1:1/x": invalid URL escape "%"`,
		"two: postgres://a:one@h/x and https://b:two@k/y":                              "two: postgres://a:[redacted]@h/x and https://b:[redacted]@k/y",
		"Authorization: Bearer abc.DEF-123":                                            "Authorization: Bearer [redacted]",
		"https://api.example/v1?api_key=XYZ&q=1":                                       "https://api.example/v1?api_key=[redacted]&q=1",
		`{"password":"hunter2","user":"u"}`:                                            `{"password":"[redacted]","user":"u"}`,
		"key sk-proj-abcdefghijklmnop1234 leaked":                                      "key [redacted] leaked",
		"no secrets here: 12 input_tokens, 3 output_tokens":                            "no secrets here: 12 input_tokens, 3 output_tokens",
	} {
		if got := String(in); got != want {
			t.Errorf("String(%q)\n = %q\nwant %q", in, got, want)
		}
	}
}

// The log handler redacts messages, string and error attributes, groups
// and attributes attached with With.
func TestHandler(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(Handler(slog.NewTextHandler(&buf, nil))).With("db", "postgres://u:one@h/x")
	l.Info("connect postgres://u:two@h/x", "err", errors.New("dial postgres://u:three@h/x"),
		slog.Group("g", "dsn", "password=four"), "n", 7)
	out := buf.String()
	for _, secret := range []string{"one", "two", "three", "four"} {
		if strings.Contains(out, ":"+secret+"@") || strings.Contains(out, "="+secret) {
			t.Errorf("log line leaks %q: %s", secret, out)
		}
	}
	if strings.Count(out, Mask) != 4 || !strings.Contains(out, "n=7") {
		t.Errorf("log line %s", out)
	}
}

// Every character a password can hold, in every form a DSN takes (a URL
// typed raw or percent-encoded, keyword/value quoted or with escapes):
// no piece of the password survives. Where pgx parses the DSN, the
// password it would send is checked absent too.
func TestDSNPasswords(t *testing.T) {
	specials := []string{"@", ":", "/", "%", "#", "?", "&", "'", `"`, `\`, ",", ";", "=", " ", "@x/y:", "/@", "?x=1&"}
	for _, sp := range specials {
		pw := "Zq1" + sp + "Xw2" + sp + "Vb3"
		forms := map[string]string{
			"URL, typed raw":            "postgres://arena:" + pw + "@127.0.0.1:5432/x?sslmode=disable",
			"URL, percent-encoded":      "postgres://arena:" + url.QueryEscape(pw) + "@127.0.0.1:5432/x",
			"URL query parameter":       "postgres://arena@127.0.0.1:5432/x?sslmode=disable&password=" + url.QueryEscape(pw),
			"keyword/value, quoted":     "host=127.0.0.1 password='" + strings.NewReplacer(`\`, `\\`, "'", `\'`).Replace(pw) + "' dbname=x",
			"keyword/value, escaped":    "host=127.0.0.1 password=" + strings.NewReplacer(`\`, `\\`, " ", `\ `, "'", `\'`).Replace(pw) + " dbname=x",
			"in an error message":       `store: connect "postgres://arena:` + pw + `@127.0.0.1:5432/x": refused`,
			"environment, PGPASSWORD=":  "PGPASSWORD=" + strings.ReplaceAll(pw, " ", `\ `) + " psql",
			"JSON":                      `{"password":"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(pw) + `","user":"arena"}`,
			"the issue's DSN, verbatim": "postgres://arena:top@secret/part@127.0.0.1:5432/x",
		}
		for form, dsn := range forms {
			got := String(dsn)
			pieces := []string{"Zq1", "Xw2", "Vb3"}
			if strings.Contains(dsn, "top@secret") {
				pieces = []string{"top", "secret", "part"}
			}
			for _, p := range pieces {
				if strings.Contains(got, p) {
					t.Errorf("%q, %s: %q shows %q", sp, form, got, p)
				}
			}
			if !strings.Contains(got, Mask) {
				t.Errorf("%q, %s: %q not masked", sp, form, got)
			}
			if cfg, err := pgconn.ParseConfig(dsn); err == nil && cfg.Password != "" && strings.Contains(got, cfg.Password) {
				t.Errorf("%q, %s: %q shows the password pgx reads, %q", sp, form, got, cfg.Password)
			}
		}
	}
}
