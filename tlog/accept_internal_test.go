package tlog

import (
	"net/http"
	"strings"
	"testing"
)

// Entry bundles are gzipped only for a client whose Accept-Encoding
// gives gzip (or x-gzip, or "*" when gzip is not listed) a weight above
// zero, weights parsed as RFC 9110 writes them.
func TestAcceptsGzip(t *testing.T) {
	for _, c := range []struct {
		header string
		want   bool
	}{
		{"gzip", true},
		{"GZIP", true},
		{"x-gzip", true},
		{"deflate, gzip;q=0.5", true},
		{"gzip;q=1.000", true},
		{"*", true},
		{"*;q=0.001", true},
		{"br, *;q=0.1", true},
		{"", false},
		{"gzip;q=0", false},
		{"gzip; q=0", false},
		{"gzip;Q=0", false},
		{"gzip;q=0.0", false},
		{"gzip;q=0.000", false},
		{"gzip;q=0, *", false},
		{"*, gzip;q=0", false},
		{"identity", false},
		{"identity;q=1", false},
		{"br, deflate", false},
		{"*;q=0", false},
		{"gzip;q=1.5", false},
		{"gzip;q=2", false},
		{"gzip;q=0.0001", false},
		{"gzip;q=-1", false},
		{"gzip;q=", false},
		{"gzip;q=abc", false},
		{"gzip;q", false},
		{"gzip;q=0.5;q=0", false},
		{"gzi p", false},
		{"gzipx", false},
	} {
		r, _ := http.NewRequest("GET", "/", nil)
		if c.header != "" {
			r.Header.Set("Accept-Encoding", c.header)
		}
		if got := acceptsGzip(r); got != c.want {
			t.Errorf("Accept-Encoding %q: gzip %v, want %v", c.header, got, c.want)
		}
	}
	// Two header lines are one list.
	r, _ := http.NewRequest("GET", "/", nil)
	r.Header.Add("Accept-Encoding", "br")
	r.Header.Add("Accept-Encoding", "gzip;q=0.2")
	if !acceptsGzip(r) {
		t.Error("gzip in a second Accept-Encoding line not seen")
	}
}

// Any header parses without panicking, and no header naming neither gzip
// nor "*" gets gzip.
func FuzzAcceptsGzip(f *testing.F) {
	for _, s := range []string{"gzip", "gzip;q=0", "*;q=0.5", "x-gzip;Q=1.0", "a;b=c;q=0.9,gzip"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, h string) {
		r, _ := http.NewRequest("GET", "/", nil)
		r.Header.Set("Accept-Encoding", h)
		if acceptsGzip(r) && !strings.Contains(strings.ToLower(h), "gzip") && !strings.Contains(h, "*") {
			t.Errorf("%q accepted gzip", h)
		}
	})
}
