package httpclient_test

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/forecast-arena/arena/httpclient"
)

var short = httpclient.Timeouts{Connect: time.Second, Header: 300 * time.Millisecond, Idle: 300 * time.Millisecond}

// A server that accepts and never answers fails the request once the
// header timeout passes.
func TestHeaderTimeout(t *testing.T) {
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
			defer c.Close() // held open, never answered
		}
	}()
	start := time.Now()
	resp, err := httpclient.New(short).Get("http://" + ln.Addr().String() + "/")
	if err == nil {
		resp.Body.Close()
		t.Fatal("a server that never answers: no error")
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("gave up after %s", d)
	}
	t.Log(err)
}

// A body that stops arriving fails once it idled for the idle timeout; a
// body that keeps arriving, a byte at a time, does not, and is stopped by
// the caller's deadline.
func TestIdleBody(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte("first "))
		w.(http.Flusher).Flush()
		every := time.Hour
		if r.URL.Path == "/drip" {
			every = 100 * time.Millisecond
		}
		for {
			select {
			case <-r.Context().Done():
				return
			case <-time.After(every):
				w.Write([]byte("."))
				w.(http.Flusher).Flush()
			}
		}
	}))
	defer srv.Close()
	hc := httpclient.New(short)
	resp, err := hc.Get(srv.URL + "/stall")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	var idle *httpclient.ErrIdle
	if !errors.As(err, &idle) || string(b) != "first " || time.Since(start) > 5*time.Second {
		t.Fatalf("a stalled body: read %q, %v after %s", b, err, time.Since(start))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+"/drip", nil)
	resp, err = hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, err = io.ReadAll(resp.Body)
	resp.Body.Close()
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(string(b), "first ..") {
		t.Fatalf("a dripping body: read %q, %v", b, err)
	}
}
