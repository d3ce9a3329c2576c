package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/testscale"
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
	if _, _, err := cli(t, nil, "verify", "--url", drip.URL, "--timeout", "-1s"); err == nil || !strings.Contains(err.Error(), "--timeout -1s: want a positive duration") {
		t.Errorf("--timeout -1s: %v", err)
	}
	// Without --timeout the bounds are the download's and each request's,
	// and the help says which.
	_, help, _ := cli(t, nil, "verify", "-h")
	for _, want := range []string{"within 2m plus 4s per MiB its index lists, 256 KiB/s", "its body brings less than 16 KiB in any 30s"} {
		if !strings.Contains(help, want) {
			t.Errorf("verify -h does not say %q:\n%s", want, help)
		}
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

// Without --timeout, verify --url against an arena that sends a byte
// every 5 s gives up at the first request's progress deadline (30 s),
// where it once ran for 30 minutes. It takes that long, so it runs in the
// full suite only (ARENA_TEST_FULL=1, which CI sets).
func TestVerifyURLTrickleDefaultBound(t *testing.T) {
	if !testscale.Full() {
		t.Skip("takes 30 s: ARENA_TEST_FULL=1 runs it")
	}
	t.Parallel()
	trickle := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for {
			w.Write([]byte("x"))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(5 * time.Second):
			}
		}
	}))
	defer trickle.Close()
	start := time.Now()
	out, _, err := cli(t, nil, "verify", "--url", trickle.URL)
	if err == nil || !strings.Contains(err.Error(), "verification FAILED") || !strings.Contains(err.Error(), "the server trickles") || strings.Contains(out, "OK") {
		t.Fatalf("want a failure at the progress deadline: %v\n%s", err, out)
	}
	if d := time.Since(start); d > 50*time.Second {
		t.Fatalf("gave up after %s", d)
	}
}
