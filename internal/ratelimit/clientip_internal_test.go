package ratelimit

import (
	"net/http/httptest"
	"net/netip"
	"testing"
)

// The per-address limit's client: the peer, unless the peer is a trusted
// proxy; X-Forwarded-For from anyone else is ignored, so a client cannot
// choose its own bucket.
func TestClientIP(t *testing.T) {
	t.Parallel()
	trusted := []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8"), netip.MustParsePrefix("2001:db8::/32")}
	for _, c := range []struct {
		name, peer, xff, want string
	}{
		{"no proxy", "192.0.2.1:5000", "", "192.0.2.1"},
		{"forwarded header from an untrusted peer is ignored", "192.0.2.1:5000", "203.0.113.9", "192.0.2.1"},
		{"trusted proxy names the client", "10.0.0.1:5000", "203.0.113.9", "203.0.113.9"},
		{"trusted proxies in the chain are skipped", "10.0.0.1:5000", "203.0.113.9, 10.0.0.2", "203.0.113.9"},
		{"a client's own forged entry left of the real one is not believed", "10.0.0.1:5000", "198.51.100.1, 203.0.113.9", "203.0.113.9"},
		{"malformed entry stops at the last good address", "10.0.0.1:5000", "203.0.113.9, garbage", "10.0.0.1"},
		{"trusted proxy without the header", "10.0.0.1:5000", "", "10.0.0.1"},
		{"IPv6 proxy", "[2001:db8::1]:5000", "2001:db8:1::5, 203.0.113.7", "203.0.113.7"},
		{"IPv4-mapped peer", "[::ffff:10.0.0.1]:5000", "203.0.113.9", "203.0.113.9"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("GET", "/", nil)
			r.RemoteAddr = c.peer
			if c.xff != "" {
				r.Header.Set("X-Forwarded-For", c.xff)
			}
			if got := ClientIP(r, trusted); got != c.want {
				t.Errorf("ClientIP = %q, want %q", got, c.want)
			}
		})
	}
	r := httptest.NewRequest("GET", "/", nil)
	r.RemoteAddr = "10.0.0.1:5000"
	r.Header.Set("X-Forwarded-For", "203.0.113.9")
	if got := ClientIP(r, nil); got != "10.0.0.1" {
		t.Errorf("no trusted proxies: clientIP = %q, want the peer", got)
	}
}

// IPv6 clients share a bucket per prefix (a /64 unless configured);
// IPv4 clients, also written as IPv4-mapped IPv6, one per address.
func TestIPBucket(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		host string
		bits int
		want string
	}{
		{"192.0.2.1", 0, "192.0.2.1"},
		{"::ffff:192.0.2.1", 0, "192.0.2.1"},
		{"2001:db8:1:2:3:4:5:6", 0, "2001:db8:1:2::/64"},
		{"2001:db8:1:2:ffff::1", 0, "2001:db8:1:2::/64"},
		{"2001:db8:1:2:3:4:5:6", 48, "2001:db8:1::/48"},
		{"2001:db8:1:2:3:4:5:6", 128, "2001:db8:1:2:3:4:5:6/128"},
		{"fe80::1%eth0", 0, "fe80::/64"},
		{"not an address", 0, "not an address"},
	} {
		if got := ipBucket(c.host, c.bits); got != c.want {
			t.Errorf("ipBucket(%q, %d) = %q, want %q", c.host, c.bits, got, c.want)
		}
	}
}
