// Package testscale sizes the tests' long campaigns: the tamper catalogue,
// the on-chain parity rounds, the 50-round demo, the imports of every
// published ForecastBench set, the 64 MiB input bounds. The README's go
// test runs each at a size that keeps the whole suite fast; CI sets
// ARENA_TEST_FULL=1 and runs them whole.
package testscale

import "os"

// Full reports whether ARENA_TEST_FULL=1: the campaigns run at full size.
func Full() bool { return os.Getenv("ARENA_TEST_FULL") == "1" }

// Size returns full when Full(), else small.
func Size(small, full int) int {
	if Full() {
		return full
	}
	return small
}
