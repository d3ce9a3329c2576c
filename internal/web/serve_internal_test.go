package web

import (
	"net/http"
	"testing"
)

// Serve's server bounds every phase of a connection, not only the
// headers (a slow-body or never-reading client must not hold it for ever).
func TestServerTimeouts(t *testing.T) {
	t.Parallel()
	srv := newHTTPServer(http.NotFoundHandler())
	for name, c := range map[string][2]int64{
		"read header": {int64(srv.ReadHeaderTimeout), int64(ReadHeaderTimeout)},
		"read":        {int64(srv.ReadTimeout), 15e9},
		"write":       {int64(srv.WriteTimeout), 30e9},
		"idle":        {int64(srv.IdleTimeout), 60e9},
	} {
		if c[0] != c[1] || c[0] <= 0 {
			t.Errorf("%s timeout %v, want %v", name, c[0], c[1])
		}
	}
}
