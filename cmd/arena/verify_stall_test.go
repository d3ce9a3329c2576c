package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// verify --url gives up at its --timeout on a server that accepts and
// never answers, and on one that answers a byte at a time, printing
// nothing that reads as success.
func TestVerifyURLCannotBeStalled(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	drip := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(200 * time.Millisecond):
				w.Write([]byte("x"))
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer drip.Close()
	for name, url := range map[string]string{"never answers": "http://" + ln.Addr().String(), "drips": drip.URL} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			out, _, err := cli(t, nil, "verify", "--url", url, "--timeout", "2s")
			if err == nil || !strings.Contains(err.Error(), "verification FAILED") || !strings.Contains(err.Error(), "--timeout 2s passed") || strings.Contains(out, "OK") {
				t.Fatalf("want a failure at the timeout: %v\n%s", err, out)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("gave up after %s", d)
			}
			t.Log(err)
		})
	}
	if _, _, err := cli(t, nil, "verify", "--url", drip.URL, "--timeout", "0s"); err == nil || !strings.Contains(err.Error(), "--timeout") {
		t.Errorf("--timeout 0s: %v", err)
	}
}

// verify --export of a directory that does not exist says so.
func TestVerifyExportMissingDirectory(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "no-export")
	out, _, err := cli(t, nil, "verify", "--export", dir)
	if err == nil || !strings.Contains(err.Error(), dir+": no such directory") || strings.Contains(err.Error(), "differences") || out != "" {
		t.Fatalf("verify of a missing directory: %v\n%s", err, out)
	}
}
