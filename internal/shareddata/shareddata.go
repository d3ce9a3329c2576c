// Package shareddata locates the published reference data that sits beside
// the checkout in ../shared/data. Tests skip cleanly when it is absent; the
// data is never copied into the repository.
package shareddata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the absolute path of ../shared/data relative to the module
// root, or skips the test when it does not exist.
func Dir(t testing.TB) string {
	t.Helper()
	d, ok := Find()
	if !ok {
		missing(t, "../shared/data not found beside the checkout")
	}
	return d
}

// Path joins elements under Dir and skips when that file is missing.
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Dir(t)}, elem...)...)
	if _, err := os.Stat(p); err != nil {
		missing(t, p+" not found")
	}
	return p
}

// missing skips the test, or fails it when ARENA_REQUIRE_SHARED_DATA=1
// (set by CI, so the reference checks cannot pass by being skipped).
func missing(t testing.TB, why string) {
	t.Helper()
	if os.Getenv("ARENA_REQUIRE_SHARED_DATA") == "1" {
		t.Fatalf("%s, and ARENA_REQUIRE_SHARED_DATA=1", why)
	}
	t.Skipf("%s; skipping test on published data", why)
}

// Find walks up from the working directory to the module root (go.mod)
// and reports ../shared/data from there.
func Find() (string, bool) {
	dir, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "data")
			if st, err := os.Stat(d); err == nil && st.IsDir() {
				return filepath.Clean(d), true
			}
			return "", false
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false
		}
		dir = parent
	}
}
