package arena_test

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/doc"
	"go/parser"
	"go/token"
	"go/types"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/forecast-arena/arena"

// goPackage is what `go list` says of one package of the module.
type goPackage struct {
	ImportPath, Dir string
	GoFiles         []string
	Deps, Imports   []string
}

var listed struct {
	once sync.Once
	pkgs []goPackage
	err  error
}

// listPackages lists the module's packages once for every test here; a
// machine without the go command skips the test.
func listPackages(t *testing.T) []goPackage {
	t.Helper()
	listed.once.Do(func() {
		out, err := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,Deps,Imports", "./...").Output()
		if err != nil {
			listed.err = err
			return
		}
		for dec := json.NewDecoder(bytes.NewReader(out)); dec.More(); {
			var p goPackage
			if listed.err = dec.Decode(&p); listed.err != nil {
				return
			}
			listed.pkgs = append(listed.pkgs, p)
		}
	})
	if listed.err != nil {
		t.Skipf("go list unavailable: %v", listed.err)
	}
	return listed.pkgs
}

// TestLayering checks the rules the layers of docs/architecture.md (which
// TestArchitectureDrawing checks against every import) follow from: the
// tracks do not import each other, the store and the models know nothing
// above them, and so on. A package may not depend, even indirectly, on the
// packages listed for it; a rule on "pkg/..." holds for pkg and every
// package under it (public packages are checked by TestPublicAPISealed).
// Test files are not counted: tests may wire anything together.
func TestLayering(t *testing.T) {
	deps := map[string]map[string]bool{}    // package (relative) → its dependencies of ours
	imports := map[string]map[string]bool{} // package (relative) → the packages of ours it imports itself
	for _, p := range listPackages(t) {
		pkg := rel(p.ImportPath)
		deps[pkg], imports[pkg] = map[string]bool{}, map[string]bool{}
		for i, m := range []map[string]bool{deps[pkg], imports[pkg]} {
			for _, d := range [][]string{p.Deps, p.Imports}[i] {
				if strings.HasPrefix(d, module) {
					m[rel(d)] = true
				}
			}
		}
	}
	if len(deps) < 10 {
		t.Fatalf("go list found only %d packages", len(deps))
	}
	forbid := func(pattern string, bad func(dep string) bool, why string) {
		t.Helper()
		root, tree := strings.CutSuffix(pattern, "/...")
		matched := false
		for pkg, ds := range deps {
			if pkg != root && (!tree || !strings.HasPrefix(pkg, root+"/")) {
				continue
			}
			matched = true
			for d := range ds {
				if bad(d) {
					t.Errorf("%s depends on %s: %s", pkg, d, why)
				}
			}
		}
		if !matched { // a renamed package would escape its rule
			t.Errorf("the rule on %s matches no package", pattern)
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
	forbid("stats", any, "the statistics are pure and import nothing of ours")
	forbid("cache", any, "the cache computes what its callers give it and imports nothing of ours")
	forbid("config", only("redact", "safefile"), "configuration reads settings and wires nothing")
	forbid("store/...", only("store", "redact"), "storage knows no layer above it")
	forbid("forecast/...", is("trading"), "the tracks do not import each other")
	forbid("rounds/...", is("trading"), "the tracks do not import each other")
	forbid("trading/...", is("forecast", "rounds"), "the tracks do not import each other")
	forbid("oracle/...", is("forecast", "rounds", "trading"), "the oracle serves both tracks and imports neither")
	for _, track := range []string{"forecast/...", "rounds/...", "trading/...", "oracle/...", "backtest/..."} {
		forbid(track, is("app", "web", "backtest", "relay", "strategy", "demo", "cmd"), "a track knows nothing of the layers above it")
	}
	for _, low := range []string{"llm/...", "retrieve/...", "polymarket/...", "venue/...", "kalshi/...", "manifold/...", "metaculus/...", "sim/...", "forecastbench/..."} {
		forbid(low, is("app", "web", "oracle", "backtest", "relay", "strategy", "demo", "cmd", "store"), "models and sources sit below the tracks and the store")
	}
	forbid("agent/...", is("app", "web", "oracle", "rounds", "backtest", "relay", "strategy", "demo", "cmd", "store"),
		"the agents decide on the trading track's snapshots and forecast rounds; they store nothing and serve nothing")
	forbid("llm/...", is("store"), "the model layer does not touch storage")
	forbid("jobs/...", is("app", "web", "forecast", "rounds", "trading", "oracle", "demo", "cmd"), "the scheduler runs jobs it does not know")
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
		// TestCompositionRoot); the programs reach it only through app,
		// and render the wire types of the domain and the tracks.
		if ds["web"] && !programs(pkg) && pkg != "app" && !strings.HasPrefix(pkg, "web") {
			t.Errorf("%s imports web: only internal/app wires the server", pkg)
		}
		if imports[pkg]["web"] && programs(pkg) {
			t.Errorf("%s imports web itself: only internal/app wires the server; a program builds on app, "+
				"and the wire types it prints belong to the domain (arena) and the tracks (forecast, trading)", pkg)
		}
	}
}

// TestCompositionRoot checks that the arena is wired in one place:
// `arena serve` and the demo both build their services with app.New, the
// demo constructs none of them itself, no command constructs the trading
// engine, the oracle or the log, nothing but internal/app builds the
// HTTP server, and nothing but internal/app builds the trading agents'
// factory or lineup, a resolver panel from a registry, or the tracks'
// scheduled jobs. Test files are not counted.
func TestCompositionRoot(t *testing.T) {
	const (
		app   = module + "/internal/app"
		web   = module + "/internal/web"
		track = module + "/internal/rounds"
	)
	services := map[string][]string{track: {"Service"}, module + "/internal/trading": {"Engine"}, module + "/internal/oracle": {"Service", "PanelConfig"},
		module + "/tlog": {"Log"}, web: {"Parts", "Server"}, module + "/internal/agent": {"Factory"}}
	// built only by internal/app, wherever else they are named
	appOnly := []string{"agent.Factory", "oracle.PanelConfig", "agent.LLMLineup", "trading.Jobs", "rounds.Jobs"}
	wiring := map[string][]string{module + "/internal/agent": {"LLMLineup"}, module + "/internal/trading": {"Jobs"}, track: {"Jobs"}}
	type use struct{ literals, calls []string }
	// uses lists the services' composite literals and the calls of app.New
	// and web.New in the package in dir (or one file of it).
	uses := func(dir, only string) use {
		t.Helper()
		files, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		var u use
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") || (only != "" && filepath.Base(path) != only) {
				continue
			}
			f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			local := map[string]string{} // import name → path
			for _, im := range f.Imports {
				p, _ := strconv.Unquote(im.Path.Value)
				name := p[strings.LastIndex(p, "/")+1:]
				if im.Name != nil {
					name = im.Name.Name
				}
				local[name] = p
			}
			sel := func(e ast.Expr) (pkg, name string) {
				if s, ok := e.(*ast.SelectorExpr); ok {
					if x, ok := s.X.(*ast.Ident); ok {
						return local[x.Name], s.Sel.Name
					}
				}
				return "", ""
			}
			ast.Inspect(f, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.CompositeLit:
					if pkg, name := sel(n.Type); slices.Contains(services[pkg], name) {
						u.literals = append(u.literals, fmt.Sprintf("%s: %s.%s", filepath.Base(path), pkg[strings.LastIndex(pkg, "/")+1:], name))
					}
				case *ast.CallExpr:
					if pkg, name := sel(n.Fun); (pkg == app && name == "New") || (pkg == web && name == "New") || slices.Contains(wiring[pkg], name) {
						u.calls = append(u.calls, pkg[strings.LastIndex(pkg, "/")+1:]+"."+name)
					}
				}
				return true
			})
		}
		return u
	}
	demo, serve := uses("internal/demo", ""), uses("cmd/arena", "serve.go")
	if !slices.Contains(demo.calls, "app.New") || !slices.Contains(serve.calls, "app.New") {
		t.Errorf("the demo calls %v and arena serve %v: both must build their services with app.New", demo.calls, serve.calls)
	}
	if len(demo.literals) > 0 || slices.Contains(demo.calls, "web.New") {
		t.Errorf("the demo builds parts itself (%v, %v): app.New builds them", demo.literals, demo.calls)
	}
	for _, l := range uses("cmd/arena", "").literals {
		if !strings.Contains(l, "rounds.Service") { // a store's display names need no service of its own
			t.Errorf("cmd/arena builds %s itself: app.New builds it", l)
		}
	}
	wd, _ := os.Getwd()
	for _, p := range listPackages(t) {
		dir := p.Dir
		rel, _ := filepath.Rel(wd, dir)
		if rel == "internal/app" || rel == "internal/web" {
			continue
		}
		u := uses(dir, "")
		for _, c := range u.calls {
			if strings.HasPrefix(c, "web.") {
				t.Errorf("%s calls %s: only internal/app wires the server", rel, c)
			}
		}
		for _, c := range append(u.calls, u.literals...) {
			if name := c[strings.Index(c, " ")+1:]; slices.Contains(appOnly, name) {
				t.Errorf("%s builds %s: only internal/app builds it, once", rel, c)
			}
		}
	}
}

// TestOneServerConstructor checks that the HTTP server is built one way:
// web.New from its Parts returns it complete, every route of every part
// registered. No other function of internal/web returns a Server, the
// Server has no exported field to edit after it is built, and no exported
// method adds routes or parts to it (Register…, Mount…, Set…, Add…,
// Handle…), so no caller can assemble a second, different server. The
// server holds services, not stores (but for its probes and rate limits).
func TestOneServerConstructor(t *testing.T) {
	fset := token.NewFileSet()
	var files []*ast.File
	paths, err := filepath.Glob("internal/web/*.go")
	if err != nil || len(paths) == 0 {
		t.Fatalf("internal/web: no Go files (%v)", err)
	}
	for _, path := range paths {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	d, err := doc.NewFromFiles(fset, files, module+"/internal/web")
	if err != nil {
		t.Fatal(err)
	}
	var server *doc.Type
	for _, ty := range d.Types {
		if ty.Name == "Server" {
			server = ty
		}
	}
	if server == nil {
		t.Fatal("internal/web has no type Server")
	}
	// go/doc files the functions returning a Server under the type.
	var ctors []string
	for _, fn := range server.Funcs {
		ctors = append(ctors, fn.Name)
	}
	if !slices.Equal(ctors, []string{"New"}) {
		t.Errorf("the functions returning a web.Server are %v: web.New(web.Parts) is the only way to build one", ctors)
	}
	for _, spec := range server.Decl.Specs {
		st, ok := spec.(*ast.TypeSpec).Type.(*ast.StructType)
		if !ok {
			t.Fatal("web.Server is not a struct")
		}
		for _, f := range st.Fields.List {
			for _, n := range f.Names {
				if n.IsExported() {
					t.Errorf("web.Server has the exported field %s: a built server's parts are fixed (give it in web.Parts)", n.Name)
				}
			}
			if len(f.Names) == 0 {
				t.Errorf("web.Server embeds %s, whose fields a caller could edit", types.ExprString(f.Type))
			}
			// The handlers call services (catalog, rounds, trading,
			// oracle, backtest), never a store: what they may do is
			// the services' methods. The probes ping the database and
			// read its health, and the rate limits keep their buckets
			// in it; nothing else holds a store.
			for _, n := range f.Names {
				if ty := types.ExprString(f.Type); strings.HasSuffix(ty, "Store") && n.Name != "health" && n.Name != "rates" {
					t.Errorf("web.Server's field %s is a store (%s): give the handlers a service's methods instead", n.Name, ty)
				}
			}
		}
	}
	for _, m := range server.Methods {
		for _, prefix := range []string{"Register", "Mount", "Set", "Add", "Handle"} {
			if strings.HasPrefix(m.Name, prefix) && m.Name != "Handler" {
				t.Errorf("web.Server has the method %s: routes and parts are given to web.New in web.Parts", m.Name)
			}
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
	pkgs := listPackages(t)
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
	for _, pkg := range pkgs {
		p := strings.TrimPrefix(strings.TrimPrefix(pkg.ImportPath, module), "/")
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
	public := 0
	for _, p := range listPackages(t) {
		pkg := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		if strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "cmd/") {
			continue
		}
		public++
		for _, d := range p.Deps {
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
	conventional := map[string]bool{"Error": true, "Unwrap": true, "String": true}
	checked := 0
	for _, p := range listPackages(t) {
		path, dir := p.ImportPath, p.Dir
		pkg := strings.TrimPrefix(strings.TrimPrefix(path, module), "/")
		if strings.HasPrefix(pkg, "internal/") || strings.HasPrefix(pkg, "cmd/") || strings.HasPrefix(pkg, "chain/bindings") {
			continue // chain/bindings is generated by abigen
		}
		fset := token.NewFileSet()
		var files []*ast.File
		for _, name := range p.GoFiles {
			file, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, file)
		}
		d, err := doc.NewFromFiles(fset, files, path)
		if err != nil {
			t.Fatal(err)
		}
		miss := func(name, docs string, pos token.Pos) {
			checked++
			if strings.TrimSpace(docs) == "" {
				t.Errorf("%s: %s has no doc comment", fset.Position(pos), name)
			}
		}
		for _, fn := range d.Funcs {
			miss(fn.Name, fn.Doc, fn.Decl.Pos())
		}
		for _, ty := range d.Types {
			miss(ty.Name, ty.Doc, ty.Decl.Pos())
			for _, fn := range ty.Funcs {
				miss(fn.Name, fn.Doc, fn.Decl.Pos())
			}
			for _, m := range ty.Methods {
				if !conventional[m.Name] {
					miss(ty.Name+"."+m.Name, m.Doc, m.Decl.Pos())
				}
			}
		}
	}
	if checked < 100 {
		t.Fatalf("checked only %d exported names of the public packages", checked)
	}
}

// TestClientDependencies checks what the reference client (participant)
// and the protocol it is built on (forecast) pull into a program that
// imports them, tests aside: the crypto, text and file helpers the
// protocol needs, never the arena's statistics (score and its gonum),
// caches, databases, metrics or model clients. A dependency added to
// either must be one an agent author would accept to build.
func TestClientDependencies(t *testing.T) {
	forbidden := map[string]string{
		"gonum.org/v1/gonum":                  "the statistics of the arena's analyses",
		"github.com/hashicorp/golang-lru":     "the server's caches",
		"github.com/jackc/pgx":                "the server's PostgreSQL store",
		"modernc.org/sqlite":                  "the server's SQLite store",
		"github.com/prometheus":               "the server's metrics",
		"github.com/openai":                   "the arena's model client",
		"github.com/getkin/kin-openapi":       "the server's API description checks",
		"github.com/schollz/progressbar":      "the command's progress bars",
		"github.com/cockroachdb":              "the chain simulator's storage",
		module + "/score":                     "the arena's statistics (and gonum)",
		module + "/forecast/scoring":          "the leaderboard analysis (and gonum)",
		module + "/export":                    "the export verifier",
		module + "/chain":                     "the chain bindings",
		"github.com/ethereum/go-ethereum/eth": "a chain node",
	}
	var checked int
	for _, p := range listPackages(t) {
		if p.ImportPath != module+"/participant" && p.ImportPath != module+"/forecast" {
			continue
		}
		checked++
		var third []string // the dependencies outside the standard library
		for _, d := range p.Deps {
			if first, _, _ := strings.Cut(d, "/"); strings.Contains(first, ".") {
				third = append(third, d)
			}
			for prefix, what := range forbidden {
				if d == prefix || strings.HasPrefix(d, prefix+"/") {
					t.Errorf("%s depends on %s (%s)", rel(p.ImportPath), d, what)
				}
			}
		}
		t.Logf("%s: %d dependencies outside the standard library: %s", rel(p.ImportPath), len(third), strings.Join(third, " "))
	}
	if checked != 2 {
		t.Fatalf("found %d of participant and forecast", checked)
	}
}

// TestArchitectureDrawing checks the layers drawn in docs/architecture.md
// against the import graph: every package of the module is drawn, once,
// and none imports a package drawn in a layer above its own.
func TestArchitectureDrawing(t *testing.T) {
	b, err := os.ReadFile("docs/architecture.md")
	if err != nil {
		t.Fatal(err)
	}
	block := regexp.MustCompile("(?s)## Layout.*?```\n(.*?)```").FindSubmatch(b)
	if block == nil {
		t.Fatal("docs/architecture.md has no drawing under ## Layout")
	}
	layer := map[string]int{} // package (as rel names it) → its layer, 0 the top
	n := 0
	for _, line := range strings.Split(string(block[1]), "\n") {
		if strings.TrimSpace(line) == "│" {
			n++
			continue
		}
		// Packages start a line; an indented line goes on describing.
		left, _, _ := strings.Cut(line, "  ")
		if strings.HasPrefix(line, " ") {
			continue
		}
		for _, name := range strings.Split(left, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			if name == "arena (root)" {
				name = module
			} else {
				name = module + "/" + name
			}
			if _, ok := layer[rel(name)]; ok {
				t.Errorf("%s is drawn twice", name)
			}
			layer[rel(name)] = n
		}
	}
	listed := map[string]bool{}
	for _, p := range listPackages(t) {
		pkg := rel(p.ImportPath)
		listed[pkg] = true
		l, ok := layer[pkg]
		if !ok {
			t.Errorf("%s is not drawn in docs/architecture.md", p.ImportPath)
			continue
		}
		for _, d := range p.Imports {
			if dl, ok := layer[rel(d)]; ok && strings.HasPrefix(d, module) && dl < l {
				t.Errorf("%s imports %s, drawn in a layer above its own", p.ImportPath, d)
			}
		}
	}
	for pkg := range layer {
		if !listed[pkg] {
			t.Errorf("docs/architecture.md draws %s, which is no package of the module", pkg)
		}
	}
}
