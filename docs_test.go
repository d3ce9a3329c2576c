package arena_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The README stays a front page: what the arena is, the two commands, a
// short tour and links; the manual lives in docs/.
const readmeMaxLines = 200

func TestReadmeIsShort(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to docs/", n, readmeMaxLines)
	}
	for _, cmd := range []string{"go run ./cmd/arena demo", "go test ./..."} {
		if !strings.Contains(string(b), cmd) {
			t.Errorf("README.md does not show %q", cmd)
		}
	}
}

var (
	mdLink    = regexp.MustCompile(`!?\[[^\]]*\]\(([^)\s]+)\)`)
	mdHeading = regexp.MustCompile(`(?m)^#{1,6} (.+)$`)
	notAnchor = regexp.MustCompile(`[^\p{L}\p{N} _-]`)
)

// anchor is the fragment GitHub gives a heading: lower case, punctuation
// dropped, spaces as hyphens.
func anchor(heading string) string {
	return strings.ReplaceAll(notAnchor.ReplaceAllString(strings.ToLower(strings.TrimSpace(heading)), ""), " ", "-")
}

// TestDocLinks checks every relative link of the README and docs/: the file
// it names exists and, with a #fragment, has that heading.
func TestDocLinks(t *testing.T) {
	pages, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append(pages, "README.md")
	anchors := map[string]map[string]bool{}
	headings := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		a := map[string]bool{}
		if b, err := os.ReadFile(path); err == nil {
			for _, m := range mdHeading.FindAllStringSubmatch(stripFences(string(b)), -1) {
				a[anchor(m[1])] = true
			}
		}
		anchors[path] = a
		return a
	}
	links := 0
	for _, page := range pages {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(stripFences(string(b)), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			file, frag, _ := strings.Cut(target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
				if _, err := os.Stat(path); err != nil {
					t.Errorf("%s links to %s, which does not exist", page, target)
					continue
				}
			}
			if frag != "" && !headings(path)[frag] {
				t.Errorf("%s links to %s: %s has no heading #%s", page, target, path, frag)
			}
		}
	}
	if links < 20 {
		t.Errorf("found only %d relative links in the README and docs/: is the link pattern broken?", links)
	}
}

// stripFences drops fenced code blocks, whose text is not markdown.
func stripFences(s string) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(s, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			in = !in
			continue
		}
		if !in {
			b.WriteString(line)
			b.WriteByte('\n')
		}
	}
	return b.String()
}
