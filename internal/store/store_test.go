package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/forecast-arena/arena"
	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

func TestOpenErrors(t *testing.T) {
	ctx := context.Background()
	for _, u := range []string{"", "mysql://x", "sqlite:", "postgres://nobody@127.0.0.1:1/none?connect_timeout=1"} {
		if db, err := store.Open(ctx, u); err == nil {
			db.Close()
			t.Errorf("Open(%q) succeeded", u)
		}
	}
	// A malformed URL is refused without echoing its password.
	for _, u := range []string{"postgres://arena:S3cretPW%@127.0.0.1:1/x", "postgres://arena:S3cret PW@127.0.0.1:1/x", "postgres://arena:S3cretPW@127.0.0.1:1/%zz"} {
		_, err := store.Open(ctx, u)
		if err == nil || strings.Contains(err.Error(), "S3cret") || !strings.Contains(err.Error(), "[redacted]") {
			t.Errorf("Open(%q): %v", u, err)
		}
	}
	// Each reason a connection failed is said once, however many attempts.
	_, err := store.Open(ctx, "postgres://nobody@127.0.0.1:1/none?connect_timeout=1")
	if n := strings.Count(fmt.Sprint(err), "connection refused"); n != 1 {
		t.Errorf("refused connection said %d times: %v", n, err)
	}
}

func TestReopenKeepsData(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			ctx := context.Background()
			u := storetest.URL(t, engine)
			db, err := store.Open(ctx, u)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.SaveMarkets(ctx, []*arena.Market{storetest.Binary("keep", 1)}); err != nil {
				t.Fatal(err)
			}
			db.Close()
			db, err = store.Open(ctx, u) // migrations are not re-applied
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			if l, _ := db.Markets(ctx, arena.MarketFilter{}); len(l) != 1 {
				t.Fatalf("data lost on reopen: %d", len(l))
			}
		})
	}
}
