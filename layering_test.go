package arena_test

import (
	"cmp"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

const module = "github.com/forecast-arena/arena"

// TestLayering checks the package graph against the layering (see
// docs/architecture.md): the programs (cmd/arena, demo) → the composition
// root (app) → the server and the scheduler (web, jobs) → the tracks and
// the oracle (forecast, trading, oracle, backtest) → agents, models,
// scoring and sources → store → the domain. A package may not depend,
// even indirectly, on the packages listed for it; a rule on "pkg/..."
// holds for pkg and every package under it (public packages are checked by
// TestPublicAPISealed). Test files are not counted: tests may wire
// anything together.
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
	only := func(names ...string) func(string) bool {
		allowed := is(names...)
		return func(d string) bool { return d != "." && !allowed(d) }
	}
	programs := is("cmd", "demo")
	forbid(".", any, "the domain package imports nothing of ours")
	forbid("score", any, "scoring is pure and imports nothing of ours")
	forbid("config", only("redact"), "configuration reads settings and wires nothing")
	forbid("store/...", only("store", "redact"), "storage knows no layer above it")
	forbid("forecast/...", is("trading"), "the tracks do not import each other")
	forbid("trading/...", is("forecast"), "the tracks do not import each other")
	forbid("oracle/...", is("forecast", "trading"), "the oracle serves both tracks and imports neither")
	for _, track := range []string{"forecast/...", "trading/...", "oracle/...", "backtest/..."} {
		forbid(track, is("app", "web", "backtest", "relay", "strategy", "demo", "cmd"), "a track knows nothing of the layers above it")
	}
	for _, low := range []string{"agent/...", "llm/...", "retrieve/...", "polymarket/...", "sim/...", "forecastbench/..."} {
		forbid(low, is("app", "web", "oracle", "backtest", "relay", "strategy", "demo", "cmd", "store"), "agents, models and sources sit below the tracks and the store")
	}
	forbid("llm/...", is("store"), "the model layer does not touch storage")
	forbid("jobs/...", is("app", "web", "forecast", "trading", "oracle", "demo", "cmd"), "the scheduler runs jobs it does not know")
	forbid("web/...", is("app", "relay", "strategy", "demo", "cmd"), "the server serves the tracks it is given")
	forbid("app/...", programs, "the programs import the composition root, never the reverse")
	for pkg, ds := range deps {
		if ds["cmd/arena"] {
			t.Errorf("%s imports cmd/arena: nothing imports the command", pkg)
		}
		if ds["app"] && !programs(pkg) {
			t.Errorf("%s imports app: only the programs (cmd/arena, demo) build on the composition root", pkg)
		}
		// The server is wired by the composition root alone (see
		// TestCompositionRoot); the command renders the API's JSON views.
		if ds["web"] && !programs(pkg) && pkg != "app" && !strings.HasPrefix(pkg, "web") {
			t.Errorf("%s imports web: only internal/app wires the server", pkg)
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
