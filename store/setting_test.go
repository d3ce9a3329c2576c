package store_test

import (
	"context"
	"testing"

	"github.com/forecast-arena/arena/store"
	"github.com/forecast-arena/arena/store/storetest"
)

func TestSettings(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		if v, ok, err := db.Setting(ctx, "k"); err != nil || ok || v != "" {
			t.Fatalf("missing setting: %q %v %v", v, ok, err)
		}
		for _, v := range []string{"one", "two"} {
			if err := db.PutSetting(ctx, "k", v); err != nil {
				t.Fatal(err)
			}
			if got, ok, err := db.Setting(ctx, "k"); err != nil || !ok || got != v {
				t.Fatalf("after put %q: %q %v %v", v, got, ok, err)
			}
		}
	})
}
