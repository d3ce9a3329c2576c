package polymarket

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// FuzzCLOBResponses serves arbitrary bodies as the CLOB's price-history and
// midpoint answers: the client must never panic, and whatever it accepts
// must be a price in [0,1], inside the asked window and in time order.
func FuzzCLOBResponses(f *testing.F) {
	f.Add([]byte(`{"history":[{"t":1767225600,"p":0.42},{"t":"1767225660","p":"0.43"}]}`))
	f.Add([]byte(`{"history":[{"t":1767225600,"p":1.5},{"t":-1,"p":0.5},{"p":0.2}]}`))
	f.Add([]byte(`{"history":null}`))
	f.Add([]byte(`{"tok":"0.515","other":"x"}`))
	f.Add([]byte(`{"mid":"0.5"}`))
	f.Add([]byte(`{"mid_price":0.25}`))
	f.Add([]byte(`[1,2`))
	start := time.Unix(1767225000, 0).UTC()
	end := start.Add(time.Hour)
	f.Fuzz(func(t *testing.T, body []byte) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(body)
		}))
		defer srv.Close()
		c := &Client{CLOBURL: srv.URL, MaxRetries: 0}
		ctx := context.Background()
		pts, err := c.PriceHistory(ctx, "tok", start, end)
		if err == nil {
			for i, p := range pts {
				if p.Price < 0 || p.Price > 1 || p.Time.Before(start) || p.Time.After(end) {
					t.Fatalf("accepted point %+v outside [0,1] × [%s,%s]", p, start, end)
				}
				if i > 0 && p.Time.Before(pts[i-1].Time) {
					t.Fatalf("points out of order at %d", i)
				}
			}
		}
		mids, err := c.Midpoints(ctx, []string{"tok"})
		if err == nil {
			for tok, p := range mids {
				if tok != "tok" || p < 0 || p > 1 {
					t.Fatalf("accepted midpoint %s=%v", tok, p)
				}
			}
		}
		if p, ok, err := c.Midpoint(ctx, "tok"); err == nil && ok && (p < 0 || p > 1) {
			t.Fatalf("accepted midpoint %v", p)
		}
	})
}
