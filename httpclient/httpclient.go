// Package httpclient is the HTTP client of the verifiers (arena verify
// --url and the log's remote reader): every request bounded in time, so
// that a server that accepts and never answers, or answers a byte at a
// time, cannot stall them.
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
	// Idle bounds the wait for each read of the response's body: a body
	// that stops arriving for that long fails.
	Idle time.Duration
}

// Default are the timeouts of the verifiers' requests: far above what a
// server that works needs, short enough that a stalled one is soon given
// up. The total time is bounded by the caller's context (verify's
// --timeout), since a server can keep every phase within these while
// sending a byte at a time.
var Default = Timeouts{Connect: 10 * time.Second, Header: 30 * time.Second, Idle: 30 * time.Second}

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
	return &http.Client{Transport: &idleTransport{rt: tr, idle: t.Idle}}
}

// idleTransport gives each response a body that fails once no byte of it
// arrived for idle.
type idleTransport struct {
	rt   http.RoundTripper
	idle time.Duration
}

func (t *idleTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx, cancel := context.WithCancelCause(req.Context())
	resp, err := t.rt.RoundTrip(req.WithContext(ctx))
	if err != nil {
		cancel(nil)
		return nil, err
	}
	b := &idleBody{rc: resp.Body, cancel: cancel, idle: t.idle, url: req.URL.Redacted()}
	b.timer = time.AfterFunc(t.idle, b.expire)
	resp.Body = b
	return resp, nil
}

// ErrIdle is the cause of a body read that failed because the body stopped
// arriving.
type ErrIdle struct {
	URL  string
	Idle time.Duration
}

func (e *ErrIdle) Error() string {
	return fmt.Sprintf("GET %s: no data for %s: the server stalled", e.URL, e.Idle)
}

type idleBody struct {
	rc     io.ReadCloser
	cancel context.CancelCauseFunc
	idle   time.Duration
	url    string
	timer  *time.Timer

	mu      sync.Mutex
	expired bool
}

func (b *idleBody) expire() {
	b.mu.Lock()
	b.expired = true
	b.mu.Unlock()
	b.cancel(&ErrIdle{URL: b.url, Idle: b.idle})
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	b.mu.Lock()
	expired := b.expired
	b.mu.Unlock()
	if expired {
		return n, &ErrIdle{URL: b.url, Idle: b.idle}
	}
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.timer.Stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
