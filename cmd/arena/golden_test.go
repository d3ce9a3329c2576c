package main

import (
	"testing"

	"github.com/forecast-arena/arena/internal/golden"
)

// checkGolden compares got with testdata/NAME.golden (-update rewrites it).
func checkGolden(t *testing.T, name, got string) {
	t.Helper()
	golden.Check(t, name+".golden", []byte(got))
}
