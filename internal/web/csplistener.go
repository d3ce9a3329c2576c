package web

import (
	"bytes"
	"io"
	"net"
)

// cspListener wraps the server's listener so that the answers net/http
// writes itself, before any handler runs, carry the Content-Security-Policy
// as every handler's answer does: a request line it cannot parse ("GET
// /%zz", 400), headers too large (431), a transfer coding it does not
// know (501). It writes those straight to the connection, in one write of
// a fixed shape (a status line, the two header lines of serverErrorHeaders,
// a plain-text body), so that shape is what is rewritten, and nothing
// else: the handlers' answers always carry the policy and a request id,
// so they never have it, and files sent with sendfile (ReadFrom) never
// pass through Write.
type cspListener struct{ net.Listener }

func (l cspListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &cspConn{Conn: c}, nil
}

// serverErrorHeaders are the header lines net/http's own error answers
// carry (net/http's errorHeaders), up to the blank line.
const serverErrorHeaders = "\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"

type cspConn struct{ net.Conn }

func (c *cspConn) Write(p []byte) (int, error) {
	q, ok := withPolicy(p)
	if !ok {
		return c.Conn.Write(p)
	}
	n, err := c.Conn.Write(q)
	return min(n, len(p)), err
}

// ReadFrom keeps the connection's own ReadFrom (sendfile for files).
func (c *cspConn) ReadFrom(r io.Reader) (int64, error) {
	if rf, ok := c.Conn.(io.ReaderFrom); ok {
		return rf.ReadFrom(r)
	}
	return io.Copy(struct{ io.Writer }{c.Conn}, r)
}

// withPolicy returns p with the Content-Security-Policy header inserted
// after its status line, when p is one of net/http's own error answers
// (see cspListener).
func withPolicy(p []byte) ([]byte, bool) {
	if !bytes.HasPrefix(p, []byte("HTTP/1.1 ")) {
		return nil, false
	}
	eol := bytes.Index(p, []byte("\r\n"))
	if eol < 0 || !bytes.HasPrefix(p[eol:], []byte(serverErrorHeaders)) {
		return nil, false
	}
	q := make([]byte, 0, len(p)+len(ContentSecurityPolicy)+32)
	q = append(q, p[:eol]...)
	q = append(q, "\r\nContent-Security-Policy: "+ContentSecurityPolicy...)
	return append(q, p[eol:]...), true
}
