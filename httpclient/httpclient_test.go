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
// body that keeps arriving, a byte at a time, does not when a byte a
// window is all that is asked (MinBytes 0), and is stopped by the
// caller's deadline.
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

// The progress deadline: a body that trickles (a byte every 100 ms, as a
// hostile arena sent a byte every 5 s) fails in the first window that
// brings fewer than MinBytes, whatever the caller's deadline; bodies that
// keep the pace, or end within a window, are read whole.
func TestProgressDeadline(t *testing.T) {
	t.Parallel()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chunk, every, n := ".", 100*time.Millisecond, 1000
		switch r.URL.Path {
		case "/paced":
			chunk, every, n = strings.Repeat(".", 512), 20*time.Millisecond, 50
		case "/small":
			chunk, n = "tiny", 1
		}
		for i := range n {
			if i > 0 {
				select {
				case <-r.Context().Done():
					return
				case <-time.After(every):
				}
			}
			w.Write([]byte(chunk))
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	hc := httpclient.New(httpclient.Timeouts{Connect: time.Second, Header: time.Second, Idle: 300 * time.Millisecond, MinBytes: 1000})
	get := func(path string) ([]byte, time.Duration, error) {
		resp, err := hc.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		start := time.Now()
		b, err := io.ReadAll(resp.Body)
		return b, time.Since(start), err
	}
	b, took, err := get("/trickle")
	var idle *httpclient.ErrIdle
	if !errors.As(err, &idle) || idle.Got == 0 || idle.Got >= 1000 || took > 5*time.Second || !strings.Contains(err.Error(), "fewer than the 1000 a response must bring in that time: the server trickles") {
		t.Fatalf("a trickling body: read %d bytes, %v after %s", len(b), err, took)
	}
	if b, _, err := get("/paced"); err != nil || len(b) != 50*512 {
		t.Fatalf("a body at pace: read %d bytes, %v", len(b), err)
	}
	if b, _, err := get("/small"); err != nil || string(b) != "tiny" {
		t.Fatalf("a small body: read %q, %v", b, err)
	}
}
