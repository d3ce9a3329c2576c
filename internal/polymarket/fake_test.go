package polymarket

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/forecast-arena/arena/internal/polymarket/polymarkettest"
)

func newFake(t testing.TB) *polymarkettest.Server { return polymarkettest.New(t) }

// fixedNow is the clock of test clients: prices are stamped with it.
var fixedNow = time.Date(2026, 2, 1, 12, 30, 45, 123456789, time.UTC)

// startClient returns a client pointed at the fake that never really
// sleeps between retries; it records the waits instead.
func startClient(t testing.TB, f *polymarkettest.Server) (*Client, *[]time.Duration) {
	var mu sync.Mutex
	waits := &[]time.Duration{}
	c := &Client{
		GammaURL: f.GammaURL, CLOBURL: f.CLOBURL,
		Logger:     slog.New(slog.NewTextHandler(io.Discard, nil)),
		MaxRetries: 3,
		Now:        func() time.Time { return fixedNow },
	}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, waits
}
