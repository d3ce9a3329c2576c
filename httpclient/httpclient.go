// Package httpclient is the HTTP client of the verifiers (arena verify
// --url and the log's remote reader): every request bounded in time, so
// that a server that accepts and never answers, or answers a byte at a
// time, cannot stall them: a body must keep a least pace, not merely
// keep arriving.
package httpclient

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Timeouts bound each phase of a request.
type Timeouts struct {
	// Connect bounds the TCP connection and the TLS handshake, each.
	Connect time.Duration
	// Header bounds the wait for the response's headers once the request
	// is sent.
	Header time.Duration
	// Idle is the window of the response body's progress deadline: in
	// every Idle from the headers on, the body must bring at least
	// MinBytes (or end), else its next read fails with an *ErrIdle. A
	// body that stops arriving fails after Idle, and so does one that
	// trickles (a byte every 5 s would otherwise hold a download for as
	// long as the caller's deadline allows).
	Idle time.Duration
	// MinBytes is what the body must bring in each Idle window (1 when
	// zero: Idle is then a plain idle timeout).
	MinBytes int64
}

// Default are the timeouts of the verifiers' requests: far above what a
// server that works needs (16 KiB in 30 s is about 550 bytes a second),
// short enough that a stalled or trickling one is soon given up.
var Default = Timeouts{Connect: 10 * time.Second, Header: 30 * time.Second, Idle: 30 * time.Second, MinBytes: 16 << 10}

// New returns a client with the timeouts t, proxies taken from the
// environment as http.DefaultTransport does.
func New(t Timeouts) *http.Client {
	d := &net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   t.Connect,
		ResponseHeaderTimeout: t.Header,
		ExpectContinueTimeout: time.Second,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: &idleTransport{rt: tr, idle: t.Idle, min: t.MinBytes}}
}

// idleTransport gives each response a body that fails once a window of
// idle brought fewer than min bytes.
type idleTransport struct {
	rt   http.RoundTripper
	idle time.Duration
	min  int64
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	b := &idleBody{rc: resp.Body, cancel: cancel, idle: t.idle, min: max(t.min, 1), url: req.URL.Redacted()}
	b.timer = time.AfterFunc(t.idle, b.window)
	resp.Body = b
	return resp, nil
}

// ErrIdle is the cause of a body read that failed because the body fell
// behind the progress deadline: Got bytes in the last window of Idle,
// fewer than Min.
type ErrIdle struct {
	URL      string
	Idle     time.Duration
	Got, Min int64
}

func (e *ErrIdle) Error() string {
	if e.Got == 0 {
		return fmt.Sprintf("GET %s: no data for %s: the server stalled", e.URL, e.Idle)
	}
	return fmt.Sprintf("GET %s: %d bytes in %s, fewer than the %d a response must bring in that time: the server trickles", e.URL, e.Got, e.Idle, e.Min)
}

type idleBody struct {
	rc     io.ReadCloser
	cancel context.CancelCauseFunc
	idle   time.Duration
	min    int64
	url    string
	timer  *time.Timer

	mu      sync.Mutex
	got     int64 // bytes in the current window
	expired *ErrIdle
}

// window ends a window of idle: the body fails if it brought fewer than
// min bytes in it, else the next window starts.
func (b *idleBody) window() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.got < b.min {
		b.expired = &ErrIdle{URL: b.url, Idle: b.idle, Got: b.got, Min: b.min}
		b.cancel(b.expired)
		return
	}
	b.got = 0
	b.timer.Reset(b.idle)
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.expired != nil {
		return n, b.expired
	}
	b.got += int64(n)
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
