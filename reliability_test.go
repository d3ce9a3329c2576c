package arena_test

import (
	"bufio"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// catalogueGroups are the sections of docs/reliability.md, in order;
// sections added after them are free.
var catalogueGroups = []string{"protocol", "input", "auth", "abuse", "crash", "data", "upstream"}

// minCatalogue is the least number of distinct cases the catalogue lists.
const minCatalogue = 300

type catalogueEntry struct {
	line                    int
	group, what, dir, fn, c string
}

// TestReliabilityCatalogue keeps docs/reliability.md honest: every row
// names a function that exists in the named package directory and, when
// it names a case, that case is a string literal inside that function, so
// a renamed or deleted test breaks this test instead of leaving the
// catalogue claiming a defence nothing proves any more.
func TestReliabilityCatalogue(t *testing.T) {
	entries := readCatalogue(t, "docs/reliability.md")
	if len(entries) < minCatalogue {
		t.Errorf("docs/reliability.md lists %d cases, want at least %d", len(entries), minCatalogue)
	}
	funcs := map[string]map[string]map[string]bool{} // dir → function → string literals in it
	seen := map[string]int{}
	whats := map[string]int{}
	for _, e := range entries {
		if funcs[e.dir] == nil {
			funcs[e.dir] = literalsByFunc(t, e.dir)
		}
		lits, ok := funcs[e.dir][e.fn]
		switch {
		case !ok:
			t.Errorf("docs/reliability.md:%d: no function %s in %s", e.line, e.fn, e.dir)
		case e.c != "" && !lits[e.c]:
			t.Errorf("docs/reliability.md:%d: %s.%s has no case %q", e.line, e.dir, e.fn, e.c)
		}
		key := e.dir + " " + e.fn + " " + e.c
		if prev, dup := seen[key]; dup {
			t.Errorf("docs/reliability.md:%d: same proof as line %d", e.line, prev)
		}
		seen[key] = e.line
		if prev, dup := whats[strings.ToLower(e.what)]; dup {
			t.Errorf("docs/reliability.md:%d: same case as line %d: %q", e.line, prev, e.what)
		}
		whats[strings.ToLower(e.what)] = e.line
	}
}

// readCatalogue parses the tables of the catalogue: under a "## group"
// heading, rows "| what | dir | function | case |" (case may be empty);
// cells may be wrapped in backticks.
func readCatalogue(t *testing.T, path string) []catalogueEntry {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []catalogueEntry
	group, next := "", 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if h, ok := strings.CutPrefix(line, "## "); ok {
			g := strings.ToLower(strings.TrimRight(strings.Fields(h)[0], ":"))
			if next < len(catalogueGroups) && g != catalogueGroups[next] {
				t.Fatalf("%s:%d: section %q out of order; want the sections %v", path, n, g, catalogueGroups)
			}
			group, next = g, next+1
			continue
		}
		if !strings.HasPrefix(line, "|") || strings.HasPrefix(line, "|---") || strings.HasPrefix(line, "| Case |") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 || group == "" {
			t.Fatalf("%s:%d: want a row | what | dir | function | case | under a section, got %q", path, n, line)
		}
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		if cells[0] == "" || cells[1] == "" || cells[2] == "" {
			t.Fatalf("%s:%d: empty cell in %q", path, n, line)
		}
		out = append(out, catalogueEntry{line: n, group: group, what: cells[0], dir: cells[1], fn: cells[2], c: strings.ReplaceAll(cells[3], `\|`, "|")})
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if next < len(catalogueGroups) {
		t.Fatalf("%s: %d of the sections %v present", path, next, catalogueGroups)
	}
	return out
}

// literalsByFunc maps each function declared in the Go files of dir to the
// set of string literals in its body.
func literalsByFunc(t *testing.T, dir string) map[string]map[string]bool {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	out := map[string]map[string]bool{}
	fset := token.NewFileSet()
	for _, name := range files {
		f, err := parser.ParseFile(fset, name, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			lits := map[string]bool{}
			ast.Inspect(fd.Body, func(n ast.Node) bool {
				if bl, ok := n.(*ast.BasicLit); ok && bl.Kind == token.STRING {
					if s, err := strconv.Unquote(bl.Value); err == nil {
						lits[s] = true
					}
				}
				return true
			})
			out[fd.Name.Name] = lits
		}
	}
	return out
}
