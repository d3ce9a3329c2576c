package pages

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// No template prints a count straight before a plural noun ("1 rounds"):
// counts go through plural.
func TestTemplatesPluralizeCounts(t *testing.T) {
	t.Parallel()
	count := regexp.MustCompile(`\{\{(len [^{}]*|\.[A-Z][A-Za-z.]*)\}\} [a-z]+s\b`)
	err := filepath.WalkDir("templates", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, m := range count.FindAllString(string(b), -1) {
			t.Errorf("%s: %q: say the count with plural", path, m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
