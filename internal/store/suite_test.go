package store_test

import (
	"testing"

	"github.com/forecast-arena/arena/internal/store"
	"github.com/forecast-arena/arena/internal/store/storetest"
)

// TestSuite runs the store's conformance suite on every engine.
func TestSuite(t *testing.T) {
	for _, engine := range storetest.Engines() {
		t.Run(engine, func(t *testing.T) {
			storetest.Suite(t, func(t *testing.T) *store.DB { return storetest.Open(t, engine) })
		})
	}
}
