package arena_test

import (
	"cmp"
	"go/doc"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/forecast-arena/arena"

// TestLayering checks the package graph against the one-way data flow
// (sources → store → tracks → agents → resolution → scoring → API): a
// package may not depend, even indirectly, on the packages listed for it;
// a rule on "pkg/..." holds for pkg and every package under it (public
// packages are checked by TestPublicAPISealed). Test files are not
// counted: tests may wire anything together.
func TestLayering(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}|{{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	deps := map[string]map[string]bool{} // package (relative) → its dependencies of ours
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, "|")
		pkg := rel(f[0])
		deps[pkg] = map[string]bool{}
		for _, d := range strings.Fields(f[1]) {
			if strings.HasPrefix(d, module) {
				deps[pkg][rel(d)] = true
			}
		}
	}
	if len(deps) < 10 {
		t.Fatalf("go list found only %d packages", len(deps))
	}
	forbid := func(pattern string, bad func(dep string) bool, why string) {
		t.Helper()
		root, tree := strings.CutSuffix(pattern, "/...")
		for pkg, ds := range deps {
			if pkg != root && (!tree || !strings.HasPrefix(pkg, root+"/")) {
				continue
			}
			for d := range ds {
				if bad(d) {
					t.Errorf("%s depends on %s: %s", pkg, d, why)
				}
			}
		}
	}
	any := func(string) bool { return true }
	is := func(names ...string) func(string) bool {
		return func(d string) bool {
			for _, n := range names {
				if d == n || strings.HasPrefix(d, n+"/") {
					return true
				}
			}
			return false
		}
	}
	forbid(".", any, "the domain package imports nothing of ours")
	forbid("score", any, "scoring is pure and imports nothing of ours")
	forbid("store/...", is("forecast", "trading", "agent", "oracle", "web", "jobs", "demo"), "storage knows no track")
	forbid("forecast/...", is("trading"), "the tracks do not import each other")
	forbid("trading/...", is("forecast"), "the tracks do not import each other")
	forbid("llm/...", is("store"), "the model layer does not touch storage")
	forbid("oracle/...", is("forecast", "trading"), "the oracle serves both tracks and imports neither")
	for pkg, ds := range deps {
		if ds["cmd/arena"] {
			t.Errorf("%s imports cmd/arena: nothing imports the command", pkg)
		}
		// Only the composition root (the command) wires the web server.
		if ds["web"] && pkg != "cmd/arena" && !strings.HasPrefix(pkg, "web") {
			t.Errorf("%s imports web: only cmd/arena wires the server", pkg)
		}
	}
}

// rel names a package by its path in the module, without "internal/":
// the rules are about concerns, wherever a package sits.
func rel(path string) string {
	if path == module {
		return "."
	}
	return strings.TrimPrefix(strings.TrimPrefix(path, module+"/"), "internal/")
}

// TestArchitectureLayout checks the package table of docs/architecture.md
// against the module: every package is named in it (a test helper package
// under its parent's row) and every package it names exists.
func TestArchitectureLayout(t *testing.T) {
	out, err := exec.Command("go", "list", "./...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	doc, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	_, table, ok := strings.Cut(string(doc), "| package | concern |")
	if !ok {
		t.Fatal("docs/architecture.md has no package table (| package | concern |)")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	named := map[string]bool{}
	for _, line := range strings.Split(table, "\n") {
		pkgs, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " |")
		for _, m := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(pkgs, -1) {
			named[strings.TrimSuffix(m[1], "/")] = true
		}
	}
	named["."] = named["arena"]
	delete(named, "arena")
	for _, path := range strings.Fields(string(out)) {
		p := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if p == "" {
			p = "."
		}
		if !named[p] {
			t.Errorf("package %s is not in the package table of docs/architecture.md", p)
		}
	}
	for p := range named {
		if st, err := os.Stat(p); err != nil || !st.IsDir() {
			t.Errorf("the package table of docs/architecture.md names %s, which does not exist", p)
		}
	}
}

// TestPublicAPISealed checks that every package a program outside the
// module may import (any not under internal/ or cmd/, tests aside) depends
// on nothing under internal/: such a program could not name those types,
// so a public signature that used one would be unusable.
func TestPublicAPISealed(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Deps " "}}`, "./...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	public := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")
		if strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "cmd/") {
			continue
		}
		public++
		for _, d := range f[1:] {
			if strings.HasPrefix(d, module+"/internal/") {
				t.Errorf("public package %q depends on %s", cmp.Or(pkg, "."), strings.TrimPrefix(d, module+"/"))
			}
		}
	}
	if public < 5 {
		t.Fatalf("found only %d public packages", public)
	}
}

// TestPublicAPIDocumented checks that every exported function, type and
// method of the public packages has a doc comment, but for the methods
// that only implement error and fmt.Stringer (Error, Unwrap, String),
// whose meaning the interface gives.
func TestPublicAPIDocumented(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}} {{.Dir}}`, "./...").Output()
	if err != nil {
		t.Skipf("go list unavailable: %v", err)
	}
	conventional := map[string]bool{"Error": true, "Unwrap": true, "String": true}
	checked := 0
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		path, dir, _ := strings.Cut(line, " ")
		pkg := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "chain/bindings") {
			continue // chain/bindings is generated by abigen
		}
		fset := token.NewFileSet()
		pkgs, err := parser.ParseDir(fset, dir, func(fi os.FileInfo) bool { return !strings.HasSuffix(fi.Name(), "_test.go") }, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pkgs {
			d := doc.New(p, path, 0)
			miss := func(name, docs string, pos token.Pos) {
				checked++
				if strings.TrimSpace(docs) == "" {
					t.Errorf("%s: %s has no doc comment", fset.Position(pos), name)
				}
			}
			for _, f := range d.Funcs {
				miss(f.Name, f.Doc, f.Decl.Pos())
			}
			for _, ty := range d.Types {
				miss(ty.Name, ty.Doc, ty.Decl.Pos())
				for _, f := range ty.Funcs {
					miss(f.Name, f.Doc, f.Decl.Pos())
				}
				for _, m := range ty.Methods {
					if !conventional[m.Name] {
						miss(ty.Name+"."+m.Name, m.Doc, m.Decl.Pos())
					}
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d exported names of the public packages", checked)
	}
}
