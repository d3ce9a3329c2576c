package web

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// The answers net/http gives before any handler runs carry the
// Content-Security-Policy too (GET /%zz once came back 400 without it),
// each with its status; a handler's answer keeps its one policy header,
// and a file whose bytes look like such an error answer is sent unchanged.
func TestContentSecurityPolicyOnServerErrors(t *testing.T) {
	t.Parallel()
	lookalike := "HTTP/1.1 400 Bad Request" + serverErrorHeaders + "400 Bad Request"
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", ContentSecurityPolicy)
		switch r.URL.Path {
		case "/file":
			http.ServeContent(w, r, "f.txt", time.Time{}, strings.NewReader(lookalike+strings.Repeat(".", 64<<10)))
		case "/big":
			io.WriteString(w, strings.Repeat("b", 8<<10)+lookalike)
		default:
			io.WriteString(w, "ok")
		}
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, ln, handler) }()
	defer func() { cancel(); <-done }()
	addr := ln.Addr().String()
	cases := []struct {
		name, request string
		status        int
	}{
		{"a path with a bad escape", "GET /%zz HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"no Host header", "GET / HTTP/1.1\r\n\r\n", 400},
		{"a malformed header line", "GET / HTTP/1.1\r\nHost: a\r\nno colon here\r\n\r\n", 400},
		{"a bad method", "G\x01T / HTTP/1.1\r\nHost: a\r\n\r\n", 400},
		{"HTTP/2.0 over HTTP/1", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
		{"an unknown transfer coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
		{"headers over a megabyte", "GET / HTTP/1.1\r\nHost: a\r\nX-Big: " + strings.Repeat("h", 1<<20+8<<10) + "\r\n\r\n", 431},
		{"a handler's answer", "GET / HTTP/1.1\r\nHost: a\r\n\r\n", 200},
	}
	for _, c := range cases {
		resp, body := rawRequest(t, addr, c.request)
		if resp.StatusCode != c.status {
			t.Errorf("%s: status %d, want %d (%s)", c.name, resp.StatusCode, c.status, body)
		}
		if got := resp.Header.Values("Content-Security-Policy"); len(got) != 1 || got[0] != ContentSecurityPolicy {
			t.Errorf("%s: Content-Security-Policy %q", c.name, got)
		}
	}
	// A bad request pipelined after a good one on one connection: the
	// server's 400 comes after the handler's answer, in a write of its own.
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	io.WriteString(c, "GET / HTTP/1.1\r\nHost: a\r\n\r\nGET /%zz HTTP/1.1\r\nHost: a\r\n\r\n")
	br := bufio.NewReader(c)
	for i, want := range []int{200, 400} {
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("pipelined answer %d: %v", i+1, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if got := resp.Header.Values("Content-Security-Policy"); resp.StatusCode != want || len(got) != 1 || got[0] != ContentSecurityPolicy {
			t.Errorf("pipelined answer %d: %d, Content-Security-Policy %q", i+1, resp.StatusCode, got)
		}
	}
	for _, path := range []string{"/file", "/big"} {
		resp, body := rawRequest(t, addr, "GET "+path+" HTTP/1.1\r\nHost: a\r\n\r\n")
		if resp.StatusCode != 200 || !strings.Contains(body, lookalike) || strings.Count(body, "Content-Security-Policy") != 0 {
			t.Errorf("GET %s: %d, the body's look-alike of an error answer changed", path, resp.StatusCode)
		}
	}
}

// rawRequest sends request as written on a new connection and reads the
// answer.
func rawRequest(t *testing.T, addr, request string) (*http.Response, string) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.Copy(c, strings.NewReader(request)) // a server may answer before it has read it all
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("%.40q: %v", request, err)
	}
	var b bytes.Buffer
	io.Copy(&b, resp.Body)
	resp.Body.Close()
	return resp, b.String()
}
